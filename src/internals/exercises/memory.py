"""Build-it exercises for chapter 7 (memory): the caching allocator's two size rules.

``check_round_size(fn)``: ``fn(nbytes, config)`` is the size of the block handed out for a request
(``round_size`` in ``c10/cuda/CUDACachingAllocator.cpp``, default settings: ``config`` may be
ignored): at least 512 bytes, a multiple of 512. It is the chapter's core exercise: plug it in with
``internals.exercises.use_mine("round_size", fn)`` and the caching allocator rounds with it.
``check_allocation_size(fn)``: ``fn(rounded)`` is the size of the segment
``cudaMalloc``'d when no cached block fits (``get_allocation_size``). Both are compared with the
package's functions of the same names, which the test suite checks against torch's allocator on
a GPU (torch's CPU build does not expose these rules).
"""
from ..cuda.allocator_config import AllocatorConfig
from ..cuda.caching_allocator import get_allocation_size, round_size
from ._runner import run_generated

__all__ = ["check_allocation_size", "check_round_size"]


def _sizes():
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    edges = [0, 1, 2, 511, 512, 513, 1023, 1024, 1025, 1536, 1024**2 - 1, 1024**2, 1024**2 + 1,
             10 * 1024**2 - 1, 10 * 1024**2, 10 * 1024**2 + 1, 2**31 + 1]
    return st.one_of(st.sampled_from(edges), st.integers(0, 64 * 1024**2))


def _check(name, fn, truth, sizes):
    def check_one(n):
        answer, expected = fn(n), truth(n)
        assert answer == expected, f"for {n:,} bytes you said {answer!r}, the allocator uses {expected:,}"
    return run_generated(name, sizes, check_one, max_examples=60)


def check_round_size(fn):
    """Check ``fn(nbytes, config) -> rounded bytes`` against the allocator's ``round_size`` (default settings)."""
    default = AllocatorConfig()
    return _check("check_round_size", lambda n: fn(n, default), lambda n: round_size(n, default), _sizes())


def check_allocation_size(fn):
    """Check ``fn(rounded bytes) -> segment bytes`` against the allocator's ``get_allocation_size``."""
    rounded = _sizes().map(lambda n: 512 * -(-max(n, 1) // 512))
    return _check("check_allocation_size", fn, get_allocation_size, rounded)
