"""CPU loops of the indexing operators (``aten/src/ATen/native/cpu/IndexKernel.cpp``,
``ScatterGatherKernel.cpp``).

The host (``native/indexing.py``) has already checked every index and turned it into element
offsets into the operands' flat buffers, so a loop only moves elements: ``out[out_at[i]] =
src[src_at[i]]``, or ``+=`` / ``*=`` to reduce. Numba checks no bounds: the offsets must be valid.
Up to one grain a copy runs on the calling thread, as the elementwise loops do (``parallel_for.pick``).
"""
from numba import njit, prange

from .parallel_for import GRAIN, parallel_loop, pick


@njit(inline="always")
def _copy_range(out, src, out_at, src_at, lo, hi):
    for i in range(lo, hi):
        out[out_at[i]] = src[src_at[i]]


@parallel_loop()
def _copy(out, src, out_at, src_at):
    n = out_at.size
    for chunk in prange((n + GRAIN - 1) // GRAIN):
        _copy_range(out, src, out_at, src_at, chunk * GRAIN, min(n, (chunk + 1) * GRAIN))


@njit(cache=True)
def _add_serial(out, src, out_at, src_at):
    # Serial: two offsets may name the same element of ``out`` (a repeated index), and the sums
    # must not race. torch's CPU index_put_(accumulate=True) is serial for the same reason.
    for i in range(out_at.size):
        out[out_at[i]] += src[src_at[i]]


@njit(cache=True)
def _mul_serial(out, src, out_at, src_at):
    for i in range(out_at.size):        # serial, as _add_serial
        out[out_at[i]] *= src[src_at[i]]


@njit(cache=True)
def _max_serial(out, src, out_at, src_at):
    # scatter_reduce's amax (``ReduceMaximum``): a NaN source wins, a NaN already there stays.
    for i in range(out_at.size):
        s = src[src_at[i]]
        if s != s or s > out[out_at[i]]:
            out[out_at[i]] = s


@njit(cache=True)
def _min_serial(out, src, out_at, src_at):
    for i in range(out_at.size):        # as _max_serial
        s = src[src_at[i]]
        if s != s or s < out[out_at[i]]:
            out[out_at[i]] = s


_REDUCE_LOOPS = {"add": _add_serial, "multiply": _mul_serial, "amax": _max_serial, "amin": _min_serial}


def indexed_copy_loop(out, src, out_at, src_at, reduce):
    """Move ``src[src_at[i]]`` to ``out[out_at[i]]`` for every i, or combine it with what is
    there when ``reduce`` is ``"add"``, ``"multiply"``, ``"amax"`` or ``"amin"``."""
    if reduce:
        _REDUCE_LOOPS[reduce](out, src, out_at, src_at)
    else:
        pick(_copy, out_at.shape)(out, src, out_at, src_at)
