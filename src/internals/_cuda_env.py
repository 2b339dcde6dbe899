"""Choose, before Numba is imported, between a real GPU and Numba's CUDA simulator.

Numba reads ``NUMBA_ENABLE_CUDASIM`` once, when it is imported, so the choice has to be made
here, first thing. A GPU is present when the driver library loads and reports a device.
"""
import ctypes
import os
import sys


def _driver_reports_a_gpu():
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


if "NUMBA_ENABLE_CUDASIM" not in os.environ and "numba" not in sys.modules:
    if not _driver_reports_a_gpu():
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"
