"""Will the GPU's driver load the PTX Numba makes? Decide before Numba is imported.

``@cuda.jit`` kernels are lowered to PTX by the CUDA toolkit's compiler (libNVVM), and the PTX
carries the ISA version of that toolkit (``.version 8.5`` from CUDA 12.5). A driver older than the
toolkit cannot assemble it: on Colab's T4 runtimes the driver speaks CUDA 12.4 and the toolkit is
12.5, and the driver's linker stops with ``CUDA_ERROR_UNSUPPORTED_PTX_VERSION`` ("Unsupported
.version 8.5; current version is '8.4'"; googlecolab/colabtools#5081, NVIDIA/numba-cuda#120).

CUDA's minor version compatibility is the way out within one major version: link with nvJitLink,
which carries its own PTX assembler, instead of the driver. numba-cuda's linker
(``numba/cuda/cudadrv/driver.py``, through ``cuda.core``'s ``Linker``) uses nvJitLink whenever the
library loads, so nothing needs setting there, only an nvJitLink at least as new as the toolkit
(NVIDIA/numba-cuda#163: an older one fails the same way). Releases of numba-cuda before that linker
used the separate ``pynvjitlink`` package, switched on by ``NUMBA_CUDA_ENABLE_PYNVJITLINK=1``.
Across major versions nothing links, and the kernels fall back to Numba's CUDA simulator with one
message that says what to install.

``link_plan`` is the decision, a pure function of the versions; ``probe`` reads them on this machine.
"""
import ctypes
import glob
import os
import sys
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec

# The numba-cuda release that links through cuda.core (nvJitLink when present) and dropped pynvjitlink
# (NVIDIA/numba-cuda#357); 0.21, Colab's, has no trace of pynvjitlink left. Earlier releases used
# pynvjitlink, by default from 0.14 (NVIDIA/numba-cuda#263), before that with the setting below.
CORE_LINKER_SINCE = (0, 17)


@dataclass(frozen=True)
class LinkPlan:
    """Environment settings to make before Numba is imported, and a message for the reader (or None)."""
    env: dict = field(default_factory=dict)
    message: str = None


def _v(version_tuple):
    return ".".join(map(str, version_tuple))


def link_plan(driver, toolkit, numba_cuda, nvjitlink=None, pynvjitlink=False):
    """The settings under which the driver runs this toolkit's kernels.

    driver, toolkit, nvjitlink: (major, minor) CUDA versions (nvjitlink None when absent; toolkit
    None when unknown); numba_cuda: its version as a tuple; pynvjitlink: whether that package is
    installed.
    """
    if toolkit is None or tuple(driver) >= tuple(toolkit):
        return LinkPlan()  # the driver's own linker reads PTX of its version or older
    if driver[0] == toolkit[0]:
        new_enough = nvjitlink is not None and tuple(nvjitlink) >= tuple(toolkit)
        if new_enough and tuple(numba_cuda) >= CORE_LINKER_SINCE:
            return LinkPlan()  # numba-cuda links with nvJitLink by itself
        if new_enough and pynvjitlink:
            return LinkPlan(env={"NUMBA_CUDA_ENABLE_PYNVJITLINK": "1"})
        fix = (f'pip install "nvidia-nvjitlink-cu{toolkit[0]}=={_v(toolkit)}.*"'
               if tuple(numba_cuda) >= CORE_LINKER_SINCE else f"pip install pynvjitlink-cu{toolkit[0]}")
    else:
        fix = f"install the CUDA {driver[0]} build of numba-cuda (pip install \"numba-cuda[cu{driver[0]}]\")"
    message = (f"internals: this GPU's driver supports CUDA {_v(driver)}, older than the CUDA {_v(toolkit)} "
               f"compiler Numba found, so it cannot load the kernels Numba compiles. device='cuda' runs on "
               f"Numba's CUDA simulator instead. To use the GPU: {fix}, then restart the runtime.")
    return LinkPlan(env={"NUMBA_ENABLE_CUDASIM": "1"}, message=message)


def _load(names):
    """The first of ``names`` (sonames or glob patterns) that loads, else None."""
    for name in names:
        for path in (sorted(glob.glob(name)) if "*" in name else [name]):
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
    return None


def _two_ints(library, function):
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    if library is None or getattr(library, function)(ctypes.byref(major), ctypes.byref(minor)) != 0:
        return None
    return major.value, minor.value


def _site_libraries(pattern):
    return [os.path.join(p, "nvidia", pattern) for p in sys.path if os.path.isdir(os.path.join(p, "nvidia"))]


def probe(driver_library):
    """The versions link_plan needs, read on this machine without importing Numba."""
    number = ctypes.c_int(0)
    driver_library.cuDriverGetVersion(ctypes.byref(number))
    driver = (number.value // 1000, number.value % 1000 // 10)
    nvrtc = _load(["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", *_site_libraries("cu*/lib/libnvrtc.so*"),
                   "/usr/local/cuda/lib64/libnvrtc.so*"])
    nvjitlink = _load(["libnvJitLink.so", "libnvJitLink.so.13", "libnvJitLink.so.12",
                       *_site_libraries("*/lib/libnvJitLink.so*")])
    try:
        numba_cuda = tuple(int(p) for p in version("numba-cuda").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        numba_cuda = CORE_LINKER_SINCE
    return dict(driver=driver, toolkit=_two_ints(nvrtc, "nvrtcVersion"), numba_cuda=numba_cuda,
                nvjitlink=_two_ints(nvjitlink, "nvJitLinkVersion"), pynvjitlink=find_spec("pynvjitlink") is not None)
