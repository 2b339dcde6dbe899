"""Settle Numba's environment before Numba is imported: GPU or simulator, and the kernel cache.

Numba reads its settings once, when it is imported, so they are made here, first thing:

* ``NUMBA_ENABLE_CUDASIM``: a GPU is present when the driver library loads and reports a
  device; otherwise cuda kernels run on Numba's CUDA simulator. With a GPU whose driver is older
  than the CUDA compiler, ``_cuda_link`` picks the linker that still loads the kernels, or the
  simulator and a message saying what to install.
* ``NUMBA_CACHE_DIR``: Numba's on-disk cache checks only the timestamp of the file that defines
  a kernel, not of the files it calls into (``scalar_ops.py``), nor the settings it was compiled
  under (``NUMBA_BOUNDSCHECK=1`` would be served loops built without bounds checks). Keying the
  cache directory by a hash of all kernel sources, the Numba version and every ``NUMBA_*`` setting
  that changes the machine code means an edited op or a new setting never meets a stale loop.
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
from importlib.metadata import version
from pathlib import Path

from ._cuda_link import link_plan, probe

_NATIVE = Path(__file__).parent / "aten" / "native"


def _driver_with_a_gpu():
    """The CUDA driver library when it loads and reports a device, else None."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    count = ctypes.c_int(0)
    if driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0:
        return driver
    return None


def _settle_linking(driver):
    """Settings under which the driver loads Numba's kernels (see _cuda_link), or the simulator and why."""
    try:
        plan = link_plan(**probe(driver))
    except (OSError, AttributeError, ValueError):  # a library without the expected entry point: leave it to Numba
        return
    for name, value in plan.env.items():
        os.environ.setdefault(name, value)
    if plan.message:
        print(plan.message, file=sys.stderr)


# Settings that change the code a kernel compiles to (read from the environment, as Numba does).
_CODEGEN_SETTINGS = ("NUMBA_BOUNDSCHECK", "NUMBA_OPT", "NUMBA_DEBUGINFO", "NUMBA_FASTMATH", "NUMBA_CPU_NAME",
                     "NUMBA_CPU_FEATURES", "NUMBA_LOOP_VECTORIZE", "NUMBA_SLP_VECTORIZE", "NUMBA_ENABLE_AVX",
                     "NUMBA_ENABLE_CUDASIM", "NUMBA_CUDA_DEFAULT_PTX_CC", "NUMBA_FULL_TRACEBACKS",
                     # torch's CPU capability decides, while compiling, whether a * b + c is fused
                     "ATEN_CPU_CAPABILITY")


def _kernel_sources_hash():
    """A hash of what the compiled kernels depend on: their sources, Numba's version, its settings."""
    digest = hashlib.sha256()
    for path in sorted(_NATIVE.rglob("*.py")):
        digest.update(path.read_bytes())
    digest.update(version("numba").encode())
    for name in _CODEGEN_SETTINGS:
        digest.update(f"{name}={os.environ.get(name, '')};".encode())
    return digest.hexdigest()[:12]


if "numba" not in sys.modules:
    if "NUMBA_ENABLE_CUDASIM" not in os.environ:
        _driver = _driver_with_a_gpu()
        if _driver is None:
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        else:
            _settle_linking(_driver)
    if "NUMBA_CACHE_DIR" not in os.environ:
        os.environ["NUMBA_CACHE_DIR"] = str(Path.home() / ".cache" / "internals-numba" / _kernel_sources_hash())

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"
