"""Shared fixtures and helpers for the differential tests against torch."""
import os
import warnings

import matplotlib

matplotlib.use("Agg")   # no display in tests: before any test module imports pyplot

import hypothesis  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import internals  # noqa: E402

# Derandomized: CI and a developer see the same examples. No deadline: the first call of a
# kernel compiles it (or loads it from Numba's cache), which takes far longer than a run.
hypothesis.settings.register_profile("course", derandomize=True, deadline=None, max_examples=60,
                                     suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))

# internals dtype <-> torch dtype, for the ten dtypes the course covers.
DTYPE_PAIRS = [(getattr(internals, n), getattr(torch, n)) for n in
               ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")]
TO_TORCH = {ours: theirs for ours, theirs in DTYPE_PAIRS}
TO_INTERNALS = {theirs: ours for ours, theirs in DTYPE_PAIRS}

# Where torch's last bits follow the CPU, results are compared within these units in the last
# place (``internals.testing.assert_within_ulps``; CONTRIBUTING.md says which ops are which).
# A library math function: SLEEF's vectorised 1-ulp functions or the C library's, by CPU path.
LIBM_ULPS = 2
# A BLAS product or a vector-width reduction order: its sums group differently on each path.
PRODUCT_ULPS = 4
# A complex power, logarithm or trigonometric function: torch's vector path or std::complex by
# capability, fused multiply-adds where the CPU has them; a power's exponent amplifies the
# rounding of its logarithm (complex64 ** 2.5 of |z| ~ 1e3 is 12 ulps apart between paths).
COMPLEX_ULPS = 32


@pytest.fixture
def close_figures():
    """Close every figure a picture test drew (``pytestmark = pytest.mark.usefixtures(...)``)."""
    yield
    plt.close("all")


def assert_same(ours, theirs, *, exact_layout=True, rtol=None, atol=None, ulps=None):
    """Values, shape, strides, storage offset and dtype of an internals tensor equal torch's
    (the values within ``ulps`` units in the last place when given)."""
    internals.testing.check(ours, theirs, exact_layout=exact_layout, rtol=rtol, atol=atol, ulps=ulps)


def assert_same_error(fn_ours, fn_theirs):
    """Both raise, and with the same exception class (RuntimeError, IndexError, ...)."""
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(Exception) as ours:
        fn_ours()
    assert type(ours.value) is type(theirs.value), (
        f"internals raised {type(ours.value).__name__}: {ours.value}\n"
        f"torch raised {type(theirs.value).__name__}: {theirs.value}")
    return ours.value, theirs.value


def same_error(fn):
    """``fn(lib)`` raises the same class with the same message in both libraries."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours) == str(theirs)


def same_or_same_error(fn):
    """``fn(lib)`` raises the same error in both libraries, or gives the same tensor (or the same
    tensors and other values) with the same layout. Warnings are not compared here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = fn(torch)
        except Exception:
            return same_error(fn)
        ours = fn(internals)
    if isinstance(theirs, torch.Tensor):
        return assert_same(ours, theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, torch.Tensor):
            assert_same(o, t)
        else:
            assert o == t


def logging_modes(log_t, log_i):
    """The classic operation-logger mode, once for torch and once for internals: each appends
    ``str(func)`` of every operator it sees to its list."""
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from internals.utils._python_dispatch import TorchDispatchMode

    class Theirs(TorchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log_t.append(str(func))
            return func(*args, **(kwargs or {}))

    class Ours(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log_i.append(str(func))
            return func(*args, **(kwargs or {}))
    return Theirs(), Ours()


def dispatch_table(dump):
    """{key: (fallthrough?, kind)} from a printed dispatch table (``_dispatch_dump_table``)."""
    out = {}
    for line in dump.strip().splitlines():
        key, rest = line.split(": ", 1)
        out[key] = (rest.startswith("fallthrough"), rest.rsplit("[", 1)[1].rstrip("]"))
    return out
