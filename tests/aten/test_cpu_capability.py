"""Same seed, same numbers under each build of torch's CPU kernels.

torch runs one of several builds of its CPU kernels (``ATEN_CPU_CAPABILITY``: default, avx2,
avx512), and two random kernels round differently in them: ``normal_fill``'s float chunks (Cephes
polynomials in the AVX2 build, the C library's logf/cosf/sinf in the default one) and every
``a * b + c`` of a transform (fused in the FMA builds, two roundings in the default one: uniform,
normal, log-normal, cauchy). The
package follows the build torch picks. ``linspace`` and ``cdist`` (p = 2) fuse multiply-adds
in the FMA builds only, and are checked here too. Each capability runs in one subprocess (torch reads the
variable once per process) that draws every case from torch and from internals after the same
seed and reports the cases whose bytes, shape, strides, dtype or following draws differ.
"""
import json
import os
import subprocess
import sys

import pytest

import internals

PROGRAM = r'''
import json, sys
import torch
import internals
from internals.aten.native import dispatch_stub

def cases(lib):
    """Every case seeds, draws, then draws 3 more uniforms (the generators must stay in step)."""
    F = lib.nn.functional
    init = lib.nn.init
    draws = {
        **{f"randn({n})": (lambda n=n: lib.randn(n)) for n in (1, 15, 16, 17, 100)},
        "randn(4, 8) (normal_fill, 32 contiguous)": lambda: lib.randn(4, 8),
        "normal_ non-contiguous (6, 40).t()": lambda: lib.empty(6, 40).t().normal_(),
        "randn float64 (33)": lambda: lib.randn(33, dtype=lib.float64),
        "randn bfloat16 (37)": lambda: lib.randn(37, dtype=lib.bfloat16),
        "randn float16 (9)": lambda: lib.randn(9, dtype=lib.float16),
        "normal_(2.5, 0.3) (7)": lambda: lib.empty(7).normal_(2.5, 0.3),
        "normal_(2.5, 0.3) (40)": lambda: lib.empty(40).normal_(2.5, 0.3),
        "normal_(-1.1, 3.7) float64 (11)": lambda: lib.empty(11, dtype=lib.float64).normal_(-1.1, 3.7),
        "normal_(0.2, 1.9) non-contiguous": lambda: lib.empty(5, 8).t().normal_(0.2, 1.9),
        "normal(mean tensor, std tensor)": lambda: lib.normal(lib.arange(6.0), lib.full((6,), 0.7)),
        "rand(50)": lambda: lib.rand(50),
        "rand float64 (20)": lambda: lib.rand(20, dtype=lib.float64),
        "uniform_(-0.37, 0.21)": lambda: lib.empty(50).uniform_(-0.37, 0.21),
        "uniform_(-0.37, 0.21) float64": lambda: lib.empty(50, dtype=lib.float64).uniform_(-0.37, 0.21),
        "uniform_(-3, 5) bfloat16": lambda: lib.empty(30, dtype=lib.bfloat16).uniform_(-3, 5),
        "randint(-7, 1000)": lambda: lib.randint(-7, 1000, (50,)),
        "randperm(50)": lambda: lib.randperm(50),
        "bernoulli_(p tensor)": lambda: lib.empty(40).bernoulli_(lib.linspace(0, 1, 40)),
        "bernoulli(p float64 tensor)": lambda: lib.bernoulli(lib.linspace(0, 1, 40, dtype=lib.float64)),
        "exponential_(1.7)": lambda: lib.empty(30).exponential_(1.7),
        "cauchy_(0.5, 2) (median + sigma * tan: fused or not)": lambda: lib.empty(30).cauchy_(0.5, 2.0),
        "cauchy_ float64": lambda: lib.empty(30, dtype=lib.float64).cauchy_(-1.0, 0.3),
        "log_normal_(0.5, 0.3) (40)": lambda: lib.empty(40).log_normal_(0.5, 0.3),
        "geometric_(0.2)": lambda: lib.empty(30).geometric_(0.2),
        "poisson": lambda: lib.poisson(lib.linspace(0, 40, 30)),
        "multinomial": lambda: lib.multinomial(lib.tensor([0.1, 0.2, 0.7]), 20, replacement=True),
        "kaiming_uniform_(a=sqrt 5)": lambda: init.kaiming_uniform_(lib.empty(8, 9), a=5 ** 0.5),
        "kaiming_normal_ (8, 9)": lambda: init.kaiming_normal_(lib.empty(8, 9)),
        "xavier_uniform_": lambda: init.xavier_uniform_(lib.empty(7, 5)),
        "xavier_normal_ (8, 9)": lambda: init.xavier_normal_(lib.empty(8, 9)),
        "Linear(9, 5) weight and bias": lambda: lib.cat([p.detach().reshape(-1)
                                                         for p in lib.nn.Linear(9, 5).parameters()]),
        "Conv2d(3, 4, 3) weight": lambda: lib.nn.Conv2d(3, 4, 3).weight.detach(),
    }
    draws["bernoulli_(0.3)"] = lambda: lib.empty(50).bernoulli_(0.3)
    draws["dropout(p=0.3)"] = lambda: F.dropout(lib.ones(50), 0.3)
    out = {}
    for name, draw in draws.items():
        lib.manual_seed(7)
        with lib.no_grad():
            out[name] = (draw(), lib.rand(3))
    return out


def record(t):
    t = t if isinstance(t, torch.Tensor) else t.to_torch()
    return (str(t.dtype), tuple(t.shape), t.stride(), t.contiguous().view(-1).view(torch.uint8).tolist())


def fused_or_not(lib):
    """Kernels outside the random streams whose roundings follow the FMA builds."""
    x = lib.arange(60.0).reshape(6, 10) * 0.37 - 5.1        # one rounding per operator, in both
    y = lib.arange(70.0).reshape(7, 10) * -0.21 + 3.3
    return {"linspace(-3.3, 7.1, 101)": (lib.linspace(-3.3, 7.1, 101),),
            "linspace float64": (lib.linspace(-3.3, 7.1, 101, dtype=lib.float64),),
            "cdist p=2 (6, 10) (7, 10)": (lib.cdist(x, y),),
            "cdist p=2 float64": (lib.cdist(x.double(), y.double()),)}


theirs = {**cases(torch), **fused_or_not(torch)}
ours = {**cases(internals), **fused_or_not(internals)}
differ = [name for name in theirs
          if [record(t) for t in theirs[name]] != [record(t) for t in ours[name]]]
print(json.dumps({"torch": torch.backends.cpu.get_cpu_capability().lower(),
                  "internals": dispatch_stub.cpu_capability(), "cases": len(theirs), "differ": differ}))
'''


def _avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512f" in f.read()
    except OSError:
        return False


def _x86():
    import platform
    return platform.machine().lower() in ("x86_64", "amd64")


CAPABILITIES = [None, "default", "avx2",
                pytest.param("avx512", marks=pytest.mark.skipif(not _avx512(), reason="the CPU lacks AVX-512"))]


@pytest.mark.slow
@pytest.mark.skipif(not _x86(), reason="the forced capabilities are x86-64's")
@pytest.mark.parametrize("capability", CAPABILITIES, ids=lambda c: c or "detected")
def test_bit_equal_under_capability(capability):
    from internals.aten.native import dispatch_stub
    if capability == dispatch_stub._x86_capability(dispatch_stub._host_cpu_features()):
        # Forcing the build the CPU has runs the very kernels the detected run checked (how the
        # variable is read is test_variable_forces_a_build_and_an_unknown_value_is_ignored's).
        pytest.skip(f"{capability} is this CPU's own build: the detected run checks it")
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    package_root = os.path.dirname(os.path.dirname(internals.__file__))      # the internals under test
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")])
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    run = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["internals"] == report["torch"]          # the package picks torch's build
    assert report["cases"] >= 34
    assert report["differ"] == []


def test_cpu_features_map_to_torch_builds():
    """cpuinfo's tests as ``compute_cpu_capability`` applies them: AVX-512 needs VL, BW and DQ
    (F alone is not enough) and FMA; AVX2 needs FMA too."""
    from internals.aten.native import dispatch_stub
    full = {"avx2", "fma", "avx512f", "avx512vl", "avx512bw", "avx512dq"}
    assert dispatch_stub._x86_capability(full) == "avx512"
    assert dispatch_stub._x86_capability(full - {"avx512dq"}) == "avx2"
    assert dispatch_stub._x86_capability({"avx2", "fma", "avx512f"}) == "avx2"
    assert dispatch_stub._x86_capability({"avx2", "avx"}) == "default"
    assert dispatch_stub._x86_capability(set()) == "default"


@pytest.mark.skipif(not _x86(), reason="the forced capabilities are x86-64's")
def test_variable_forces_a_build_and_an_unknown_value_is_ignored(monkeypatch):
    from internals.aten.native import dispatch_stub
    detected = dispatch_stub._x86_capability(dispatch_stub._host_cpu_features())
    try:
        for value, expected in (("default", "default"), ("avx512", "avx512"), ("sve256", detected),
                                ("AVX2", detected)):        # torch compares the exact lower-case names
            monkeypatch.setenv("ATEN_CPU_CAPABILITY", value)
            dispatch_stub.cpu_capability.cache_clear()
            assert dispatch_stub.cpu_capability() == expected, value
            assert dispatch_stub.fma_contracted() == (expected != "default")
    finally:
        monkeypatch.undo()
        dispatch_stub.cpu_capability.cache_clear()
