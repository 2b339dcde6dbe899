"""The LAPACK routines torch's ``linalg`` calls for one matrix (``getrf``, ``getri`` through
``getrs``; ``aten/src/ATen/native/BatchLinearAlgebra.cpp`` calls them per batch element), written
once and compiled for both devices: ``cpu/batch_linalg.py`` runs one matrix per parallel task,
``cuda/batch_linalg.py`` one per thread.

Matrices lie column-major (LAPACK's layout, and the strides of torch's ``LU`` and ``inverse``):
element (i, j) of the matrix at ``base`` is ``a[base + j * n + i]``. Pivots are 1-based, as
LAPACK's ``ipiv``. The host sized every buffer from the batch shape: no index leaves it.
"""
from numba.extending import register_jitable


@register_jitable
def getrf(a, base, n, piv, pbase):
    """LU with partial pivoting, in place (``getrf``: ``P A = L U``, L with a unit diagonal below,
    U on and above). The pivot is the first entry of largest magnitude in its column. Returns
    LAPACK's ``info``: 0, or k + 1 for the first zero pivot U[k, k] (the factoring goes on)."""
    info = 0
    for k in range(n):
        p, best = k, abs(a[base + k * n + k])
        for i in range(k + 1, n):
            if abs(a[base + k * n + i]) > best:
                p, best = i, abs(a[base + k * n + i])
        piv[pbase + k] = p + 1
        if p != k:
            for j in range(n):
                a[base + j * n + k], a[base + j * n + p] = a[base + j * n + p], a[base + j * n + k]
        pivot = a[base + k * n + k]
        if pivot == 0:
            if info == 0:
                info = k + 1
            continue
        for i in range(k + 1, n):
            a[base + k * n + i] /= pivot
        for j in range(k + 1, n):
            u = a[base + j * n + k]
            for i in range(k + 1, n):
                a[base + j * n + i] -= a[base + k * n + i] * u
    return info


@register_jitable
def getri(lu, base, n, piv, pbase, out):
    """The inverse from the LU factors, solving ``A X = I`` column by column (``getrs``): the
    identity's rows swapped as the pivots say, then ``L y = P e``, then ``U x = y``. ``out``
    holds the result at ``base``, column-major."""
    for j in range(n):
        for i in range(n):
            out[base + j * n + i] = 1 if i == j else 0
    for k in range(n):                              # P I: the row swaps, in order
        p = piv[pbase + k] - 1
        if p != k:
            for j in range(n):
                out[base + j * n + k], out[base + j * n + p] = out[base + j * n + p], out[base + j * n + k]
    for j in range(n):
        for k in range(n):                          # forward: L has ones on its diagonal
            x = out[base + j * n + k]
            for i in range(k + 1, n):
                out[base + j * n + i] -= x * lu[base + k * n + i]
        for k in range(n - 1, -1, -1):              # back: U
            out[base + j * n + k] /= lu[base + k * n + k]
            x = out[base + j * n + k]
            for i in range(k):
                out[base + j * n + i] -= x * lu[base + k * n + i]
