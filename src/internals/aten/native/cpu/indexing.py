"""CPU loops of the indexing operators (``aten/src/ATen/native/cpu/IndexKernel.cpp``,
``ScatterGatherKernel.cpp``).

The host (``native/indexing.py``) has already checked every index and turned it into element
offsets into the operands' flat buffers, so a loop only moves elements: ``out[out_at[i]] =
src[src_at[i]]``, or ``+=`` to accumulate. Numba checks no bounds: the offsets must be valid.
"""
from numba import njit, prange


@njit(parallel=True, cache=True)
def _copy_indexed(out, src, out_at, src_at):
    for i in prange(out_at.size):
        out[out_at[i]] = src[src_at[i]]


@njit(cache=True)
def _add_indexed(out, src, out_at, src_at):
    # Serial: two offsets may name the same element of ``out`` (a repeated index), and the sums
    # must not race. torch's CPU index_put_(accumulate=True) is serial for the same reason.
    for i in range(out_at.size):
        out[out_at[i]] += src[src_at[i]]


def indexed_copy_loop(out, src, out_at, src_at, accumulate):
    """Move (or add) ``src[src_at[i]]`` to ``out[out_at[i]]`` for every i."""
    (_add_indexed if accumulate else _copy_indexed)(out, src, out_at, src_at)
