"""Settle Numba's environment before Numba is imported: GPU or simulator, and the kernel cache.

Numba reads its settings once, when it is imported, so they are made here, first thing:

* ``NUMBA_ENABLE_CUDASIM``: a GPU is present when the driver library loads and reports a
  device; otherwise cuda kernels run on Numba's CUDA simulator.
* ``NUMBA_CACHE_DIR``: Numba's on-disk cache checks only the timestamp of the file that defines
  a kernel, not of the files it calls into (``scalar_ops.py``). Keying the cache directory by a
  hash of all kernel sources means an edited op can never be served a stale compiled loop.
* ``NUMBA_THREADING_LAYER`` is left to Numba, which takes OpenMP when the system has it (as
  torch does for ``at::parallel_for``). Its idle threads spin a moment before they sleep, so the
  next parallel loop starts in a few microseconds. (Numba's own workqueue pool sleeps at once:
  about 30 us to start a loop; and on this course's VM a 256 x 512 x 512 matrix product that
  followed 2 ms of Python took 1.7 ms instead of 0.9, while the sleeping core woke up.)

Settings the user made (any of these variables already set, or Numba already imported) are left alone.
"""
import ctypes
import hashlib
import os
import sys
from pathlib import Path

_NATIVE = Path(__file__).parent / "aten" / "native"


def _driver_reports_a_gpu():
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


def _kernel_sources_hash():
    digest = hashlib.sha256()
    for path in sorted(_NATIVE.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


if "numba" not in sys.modules:
    if "NUMBA_ENABLE_CUDASIM" not in os.environ and not _driver_reports_a_gpu():
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    if "NUMBA_CACHE_DIR" not in os.environ:
        os.environ["NUMBA_CACHE_DIR"] = str(Path.home() / ".cache" / "internals-numba" / _kernel_sources_hash())

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"
