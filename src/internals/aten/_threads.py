"""Operators called from several Python threads, whatever Numba threading layer runs the loops.

Numba's parallel loops run on one of three threading layers. TBB and OpenMP accept launches from
several threads at once; the ``workqueue`` layer, Numba's fallback when neither is available
(or the one a user picks with ``NUMBA_THREADING_LAYER=workqueue``), does not: a second concurrent
launch terminates the process ("Concurrent access has been detected"). torch has no such layer,
so its operators may always be called from several threads. Here, when Numba would choose
workqueue, the dispatcher runs one operator at a time (``ONE_AT_A_TIME``, a recursive lock:
operators call operators); with TBB or OpenMP it is ``None`` and nothing is serialised.

Numba's CUDA simulator is not thread-safe either: while a kernel runs, it swaps every global
``cuda`` of the kernel's module for a fake module that knows that launch's thread indices, so a
second launch from the same module (or host code there calling ``cuda.to_device``) meets the
fake. Under the simulator, the CUDA backend kernels run one at a time (``ONE_CUDA_KERNEL``).

The choice is worked out from Numba's settings and the layers that can be imported, without
starting Numba's threads (started before a ``fork``, OpenMP's threads would hang the child).
"""
import importlib
import threading

from numba import config

from .._cuda_env import SIMULATED

__all__ = ["ONE_AT_A_TIME", "ONE_CUDA_KERNEL", "numba_would_use_workqueue"]

# numba/np/ufunc/parallel.py: the layers each NUMBA_THREADING_LAYER setting may pick, in order.
_CANDIDATES = {"default": ("tbbpool", "omppool"), "safe": ("tbbpool",), "threadsafe": ("tbbpool", "omppool"),
               "forksafe": ("tbbpool", "omppool"), "tbb": ("tbbpool",), "omp": ("omppool",), "workqueue": ()}


def numba_would_use_workqueue():
    """True when Numba's parallel loops would run on its workqueue layer."""
    for module in _CANDIDATES.get(config.THREADING_LAYER, ()):
        try:
            importlib.import_module(f"numba.np.ufunc.{module}")
            return False
        except ImportError:         # the library behind the layer (libtbb, libgomp) is missing
            continue
    return True


ONE_AT_A_TIME = threading.RLock() if numba_would_use_workqueue() else None
ONE_CUDA_KERNEL = threading.RLock() if SIMULATED else None
