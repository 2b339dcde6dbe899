"""How many threads an operator may use (``aten/src/ATen/Parallel.h``: ``set_num_threads``,
``get_num_threads``).

Numba's parallel loops run on its thread pool; ``set_num_threads`` caps the pool for the calling
thread. One thread means more here: every parallel CPU loop is compiled twice
(``native/cpu/parallel_for``), and after ``set_num_threads(1)`` each call takes the build that never
enters the pool, as ``at::parallel_for`` runs inline when there is one thread. That is what a
forked DataLoader worker needs: torch's worker calls ``torch.set_num_threads(1)`` first, and a
child forked from a process whose GNU OpenMP pool has started may not start it again (Numba
terminates such a child rather than let it hang).
"""
import numba

__all__ = ["set_num_threads", "get_num_threads", "one_thread"]

_requested = None       # what set_num_threads was last given


def set_num_threads(n):
    """torch's checks and messages; Numba's pool cannot grow past its size, so a larger request
    uses all of it (and ``get_num_threads`` reports the request, as torch does)."""
    global _requested
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    _requested = n


def get_num_threads():
    return numba.get_num_threads() if _requested is None else _requested


def one_thread():
    """True after ``set_num_threads(1)``: loops run on the calling thread."""
    return _requested == 1
