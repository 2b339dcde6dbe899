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
import os

import numba
from llvmlite.binding import ffi
from numba.core.compiler_lock import global_compiler_lock
from numba.np.ufunc import parallel as numba_parallel

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


# ---------------------------------------------------------------------- fork safety
# A fork copies only the forking thread. A lock another thread held at that moment stays held in
# the child for ever, and the child's first Numba call waits on it: a DataLoader started in one
# thread while another compiles or launches kernels hung its worker (Numba's compiler lock,
# its thread-pool start lock, and llvmlite's lock around every LLVM call). So a fork waits until
# it can hold all three itself, and both processes release them afterwards: CPython's own
# os.register_at_fork treatment of the import lock, applied to Numba's.
def _numba_locks():
    """Numba's locks in the order its own calls take them (compile, pool start, LLVM), so that
    holding them for a fork cannot deadlock with a thread taking them."""
    found = [getattr(global_compiler_lock, "_lock", None), getattr(numba_parallel, "_backend_init_thread_lock", None),
             getattr(getattr(ffi.lib, "_lock", None), "_lock", None)]
    return [lock for lock in found if lock is not None]


_FORK_LOCKS = _numba_locks()


def _hold_numba_locks():
    for lock in _FORK_LOCKS:
        lock.acquire()


def _release_numba_locks():
    for lock in reversed(_FORK_LOCKS):
        lock.release()


os.register_at_fork(before=_hold_numba_locks, after_in_parent=_release_numba_locks,
                    after_in_child=_release_numba_locks)
