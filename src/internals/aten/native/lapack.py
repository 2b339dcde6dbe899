"""The LAPACK routines torch's ``linalg`` calls for one matrix (``getrf``, ``getri`` through
``getrs``; ``aten/src/ATen/native/BatchLinearAlgebra.cpp`` calls them per batch element), written
once and compiled for both devices: ``cpu/batch_linalg.py`` runs one matrix per parallel task,
``cuda/batch_linalg.py`` one per thread.

Matrices lie column-major (LAPACK's layout, and the strides of torch's ``LU`` and ``inverse``):
element (i, j) of the m by n matrix at ``base`` is ``a[base + j * m + i]``. Pivots are 1-based, as
LAPACK's ``ipiv``. The host sized every buffer from the batch shape: no index leaves it.
The same code serves real and complex buffers (Numba compiles one version per element type):
nothing here conjugates, as ``getrf`` and a plain-transposed ``getrs`` do not.
"""
from numba.extending import register_jitable


@register_jitable
def _cabs1(v):
    """LAPACK's ``cabs1``, the size ``i?amax`` picks a pivot by: |Re| + |Im| (|v| for a real v),
    cheaper than the modulus, and the reason a complex pivot may differ from the largest modulus."""
    return abs(v.real) + abs(v.imag)


@register_jitable
def getrf(a, base, m, n, piv, pbase):
    """LU with partial pivoting of an m by n matrix, in place (``getrf``: ``P A = L U``, L m by
    k with a unit diagonal, U k by n, k = min(m, n)). The pivot is the first entry of largest
    ``cabs1`` in its column. Returns LAPACK's ``info``: 0, or j + 1 for the first zero pivot
    U[j, j] (the factoring goes on). Element (i, j) is ``a[base + j * m + i]``."""
    info = 0
    for k in range(min(m, n)):
        p, best = k, _cabs1(a[base + k * m + k])
        for i in range(k + 1, m):
            if _cabs1(a[base + k * m + i]) > best:
                p, best = i, _cabs1(a[base + k * m + i])
        piv[pbase + k] = p + 1
        if p != k:
            for j in range(n):
                a[base + j * m + k], a[base + j * m + p] = a[base + j * m + p], a[base + j * m + k]
        pivot = a[base + k * m + k]
        if pivot == 0:
            if info == 0:
                info = k + 1
            continue
        for i in range(k + 1, m):
            a[base + k * m + i] /= pivot
        for j in range(k + 1, n):
            u = a[base + j * m + k]
            for i in range(k + 1, m):
                a[base + j * m + i] -= a[base + k * m + i] * u
    return info


@register_jitable
def getri(lu, base, n, piv, pbase, out, trans):
    """The inverse from the LU factors, solving ``A X = I`` column by column (``getrs``). With
    ``P A = L U``: the identity's rows swapped as the pivots say, then ``L y = P e``, then
    ``U x = y``. With ``trans``, the factors are A^T's (``P A^T = L U``, torch's choice for a
    row-major A): ``U^T y = e``, then ``L^T z = y``, then the swaps undone, last first.
    ``out`` holds the result at ``base``, column-major."""
    for j in range(n):
        for i in range(n):
            out[base + j * n + i] = 1 if i == j else 0
    if not trans:
        _swap_rows(out, base, n, piv, pbase, 0, n, 1)
    for j in range(n):
        col = base + j * n
        if trans:
            for i in range(n):                      # U^T: lower, through U's columns
                x = out[col + i]
                for k in range(i):
                    x -= lu[base + i * n + k] * out[col + k]
                out[col + i] = x / lu[base + i * n + i]
            for i in range(n - 1, -1, -1):          # L^T: upper, ones on its diagonal
                x = out[col + i]
                for k in range(i + 1, n):
                    x -= lu[base + i * n + k] * out[col + k]
                out[col + i] = x
        else:
            for k in range(n):                      # L: ones on its diagonal
                x = out[col + k]
                for i in range(k + 1, n):
                    out[col + i] -= x * lu[base + k * n + i]
            for k in range(n - 1, -1, -1):          # U
                out[col + k] /= lu[base + k * n + k]
                x = out[col + k]
                for i in range(k):
                    out[col + i] -= x * lu[base + k * n + i]
    if trans:
        _swap_rows(out, base, n, piv, pbase, n - 1, -1, -1)


@register_jitable
def _swap_rows(out, base, n, piv, pbase, first, stop, step):
    """LAPACK's ``laswp``: row k swapped with row ``piv[k] - 1``, k from ``first`` by ``step``."""
    for k in range(first, stop, step):
        p = piv[pbase + k] - 1
        if p != k:
            for j in range(n):
                out[base + j * n + k], out[base + j * n + p] = out[base + j * n + p], out[base + j * n + k]
