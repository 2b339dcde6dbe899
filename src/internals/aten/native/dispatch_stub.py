"""DispatchStub: one op implementation, a loop per device (``aten/src/ATen/native/DispatchStub.h``).

An ATen native function registered for both CPU and CUDA calls e.g. ``add_stub(device, iter)``,
which jumps to the loop compiled for that device. ``loops(device)`` is that jump. On the CPU
the stub also chooses among builds of the same loop for different instruction sets (the CPU
capability, :func:`cpu_capability`); a few kernels round differently in each.
"""
import functools
import importlib
import os
import platform
import sys

from ...c10 import scalar_type as st


def loops(device, family="loops", package="internals.aten.native"):
    """The module of ``family`` loops ("loops", "reduce", "linalg") for ``device``, in ``package``'s
    ``cpu`` or ``cuda`` folder (``internals.aten.native.sparse`` has its own)."""
    return _module(package, "cpu" if device.type == "cpu" else "cuda", family)


@functools.cache                # a stub is a table lookup in ATen too: every op call comes here
def _module(package, backend, family):
    return importlib.import_module(f"{package}.{backend}.{family}")


# ---------------------------------------------------------------------- CPU capability
# ``DispatchStub.cpp`` (``compute_cpu_capability``) picks one of several builds of each CPU
# kernel once per process: the ``ATEN_CPU_CAPABILITY`` variable first, then the CPU's features
# as cpuinfo reports them. Kernels whose last bits differ between those builds ask here.
X86_CAPABILITIES = ("default", "avx2", "avx512")
ARM_CAPABILITIES = ("default", "sve256")


@functools.cache
def cpu_capability():
    """The kernel build torch runs on this CPU, in ``ATEN_CPU_CAPABILITY``'s spelling
    ("default", "avx2", "avx512" on x86-64; "default", "sve256" on aarch64). Read once, as
    torch's ``get_cpu_capability`` caches it: set the variable before the first random call."""
    arm = platform.machine().lower() in ("arm64", "aarch64")
    detected = _arm_capability() if arm else _x86_capability(_host_cpu_features())
    forced = os.environ.get("ATEN_CPU_CAPABILITY")
    if forced is None or forced not in (ARM_CAPABILITIES if arm else X86_CAPABILITIES):
        return detected          # torch warns about a value it does not know, then ignores it
    if forced == "sve256" and detected != "sve256":
        return "default"         # torch falls back (with a warning) when the vectors are not 256 bits
    return forced                # x86: torch trusts the variable, even above what the CPU has


def fma_contracted():
    """Whether torch's CPU kernels fuse ``a * b + c`` into one rounding. The x86-64 avx2 and avx512
    builds are compiled with FMA enabled and GCC contracts such expressions; the x86-64 default build
    targets CPUs without FMA, so it rounds the product and the sum apart; every aarch64 CPU has FMA
    and its compilers contract (GCC always, clang within one expression, which covers the
    transforms in ``TransformationHelper.h``)."""
    return cpu_capability() != "default" or platform.machine().lower() in ("arm64", "aarch64")


def _x86_capability(features):
    """cpuinfo's tests: avx512 wants AVX-512 VL, BW and DQ plus FMA; avx2 wants AVX2 plus FMA."""
    if {"avx512vl", "avx512bw", "avx512dq", "fma"} <= features:
        return "avx512"
    return "avx2" if {"avx2", "fma"} <= features else "default"


def _host_cpu_features():
    """The CPU's feature names (lower case), from LLVM's host query (what Numba compiles for),
    else Linux's /proc/cpuinfo."""
    try:
        from llvmlite import binding  # LLVM's host query, loaded when the capability is first asked
        return {name.lstrip("+") for name, on in binding.get_host_cpu_features().items() if on}
    except (ImportError, RuntimeError):
        return set(_proc_cpuinfo_flags())


def _proc_cpuinfo_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].split()
    except OSError:
        pass
    return []


def _arm_capability():
    """sve256 where Linux reports SVE vectors of 32 bytes (the length a process starts with);
    otherwise (no SVE, other lengths, macOS) the default build."""
    if "sve" not in _proc_cpuinfo_flags():
        return "default"
    try:
        with open("/proc/sys/abi/sve_default_vector_length") as f:
            return "sve256" if int(f.read().split()[0]) == 32 else "default"
    except (OSError, ValueError, IndexError):
        return "default"


# oneDNN's tests of its native 16-bit float support (``has_data_type_support`` behind ideep's
# ``has_bf16_type_support``/``has_fp16_type_support``): an AVX-512 instruction set, or AVX2-VNNI-2,
# by x86 feature name without underscores.
_AVX512_ROUTE = {"BFloat16": {"avx512f", "avx512bw", "avx512vl", "avx512dq"},
                 "Half": {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512bf16", "avx512vnni", "avx512fp16"}}
_VNNI2_ROUTE = {"avx2", "avxvnni", "avxvnniint8", "avxneconvert"}
_ARM_16BIT = {"BFloat16": {"bf16"}, "Half": {"fphp", "asimdhp"}}
# ``ONEDNN_MAX_CPU_ISA`` caps the instruction sets oneDNN may use (``get_max_cpu_isa``). Its
# AVX-512 caps in order; bfloat16 needs the first (avx512_core), half the fourth (avx512_core_fp16).
_AVX512_CAPS = ("AVX512_CORE", "AVX512_CORE_VNNI", "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX10_1_512",
                "AVX512_CORE_AMX", "AVX10_1_512_AMX", "AVX512_CORE_AMX_FP16", "AVX10_1_512_AMX_FP16", "AVX10_2_512",
                "AVX10_2_512_AMX_2")
_BELOW_AVX512 = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2")


def _routes_under_cap(dtype_name):
    """(AVX-512 route open, AVX2-VNNI-2 route open) under ``ONEDNN_MAX_CPU_ISA``; unset, ALL or a
    value oneDNN does not know leaves both open."""
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    if cap in _AVX512_CAPS:
        return _AVX512_CAPS.index(cap) >= (3 if dtype_name == "Half" else 0), False
    if cap in _BELOW_AVX512:
        return False, cap == "AVX2_VNNI_2"
    return True, True


@functools.cache
def onednn_native(dtype_name):
    """``mkldnn_bf16_device_check`` / ``mkldnn_fp16_device_check`` (``ATen/native/mkldnn/Utils.h``):
    whether oneDNN computes ``"BFloat16"`` or ``"Half"`` natively on this CPU. Where it does,
    torch sends those convolutions to oneDNN, which checks its operands' types before anything
    else, so the same call raises on one CPU and runs on another. x86: AVX-512 (core) for
    bfloat16, AVX-512 FP16 for half, or AVX2-VNNI-2 for both; aarch64 Linux: the CPU's bf16 and
    half-precision arithmetic flags. ``ATEN_CPU_CAPABILITY`` does not change it (oneDNN reads the
    CPU itself); ``ONEDNN_MAX_CPU_ISA`` does, for torch and here alike, so one machine can play
    another (``make portability``)."""
    machine = platform.machine().lower()
    if machine in ("arm64", "aarch64"):
        return sys.platform.startswith("linux") and _ARM_16BIT[dtype_name] <= set(_proc_cpuinfo_flags())
    if machine not in ("x86_64", "amd64"):
        return False
    features = {f.replace("_", "") for f in _host_cpu_features()}
    avx512_open, vnni2_open = _routes_under_cap(dtype_name)
    return (avx512_open and _AVX512_ROUTE[dtype_name] <= features) or (vnni2_open and _VNNI2_ROUTE <= features)


# ---------------------------------------------------------------------- dtypes a kernel lacks
def refuse_float8(kernel, *tensors_or_dtypes):
    """A kernel whose dispatch lists every dtype but the float8 types (and so takes complex32 and
    uint16-64 where internals has a loop for them): a float8 tensor is refused by its name."""
    refuse_unlisted_dtypes(kernel, *tensors_or_dtypes, complex32=False, limited_unsigned=False)


def refuse_unlisted_dtypes(kernel, *tensors_or_dtypes, complex32=True, limited_unsigned=True, float8=True):
    """A kernel's ``AT_DISPATCH_...`` list without ComplexHalf, and without uint16, uint32 and
    uint64 (torch compiles few kernels for those: flip, gather and scatter, take, the scans,
    arange, the products, nonzero, topk, tril...): such a tensor (or dtype) is refused by the
    kernel's name, where a loop of ours that only moves words, or one Numba compiles for any
    NumPy type, would otherwise run. The float8 types are in fewer lists still. ``complex32=False``,
    ``limited_unsigned=False`` or ``float8=False`` where torch's list has those."""
    for t in tensors_or_dtypes:
        d = getattr(t, "dtype", t)
        if ((complex32 and d is st.complex32) or (limited_unsigned and d in st.LIMITED_UNSIGNED)
                or (float8 and d.is_float8)):
            raise NotImplementedError(f'"{kernel}" not implemented for \'{d.torch_name}\'')
