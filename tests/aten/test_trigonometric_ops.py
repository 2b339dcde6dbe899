"""The inverse and hyperbolic trigonometric functions (``asin``, ``acos``,
``atan``, ``sinh``, ``cosh``, ``asinh``, ``acosh``, ``atanh``), ``log2`` and ``log10``, and
NumPy's names for them (``arcsin``, ...), CompositeImplicitAutograd aliases in torch.

PyTorch's OpInfo samples; then the domain's edges (NaN outside it, +-inf at a pole, overflow
past float32's and float64's range) on CPU and CUDA in every floating dtype; nodes and
gradients, twice; in place, out= and the alias names. torch's float32/float64 CPU loops call
SLEEF's 1-ulp functions where internals calls the C library's: the last bit may differ there.
"""
import warnings

import numpy as np
import pytest
import torch
from helpers import Adapter, check_opinfo_samples, compare_gradients_and_nodes, opinfo_cases
from helpers import run_everyday_call as _run

import internals

OPS = ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10")
ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
           "arctanh": "atanh"}
LAST_BIT = {torch.float32: (2.5e-7, 1e-7), torch.float64: (5e-16, 1e-15)}


@pytest.mark.parametrize("name, dtype", opinfo_cases(OPS, (torch.float32, torch.float64, torch.int64, torch.bool)))
def test_opinfo_samples(name, dtype):
    adapter = Adapter(getattr(internals, name), name, tol=LAST_BIT)
    check_opinfo_samples(name, dtype, adapter)


EDGES = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -2.0, 10.0, 88.5, -89.0, 100.0, 709.5, 710.5, -711.0, 1e-30,
         1e300, float("inf"), float("-inf"), float("nan"), 3e38]


def _close_to_the_last_bit(ours, theirs, dtype):
    """Same dtype and shape; NaN, infinities and signed zeros where torch has them; finite values
    exact for the 16-bit floats (computed in float32 and rounded), else to torch's last bit."""
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    o, t = ours.double().numpy(), theirs.double().numpy()
    finite = np.isfinite(t)
    assert np.array_equal(o[~finite], t[~finite], equal_nan=True)
    assert np.array_equal(np.signbit(o[t == 0]), np.signbit(t[t == 0]))
    rtol = {torch.float32: 2.5e-7, torch.float64: 5e-16}.get(dtype, 0)
    np.testing.assert_allclose(o[finite], t[finite], rtol=rtol, atol=0)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", OPS)
def test_domain_edges(name, dtype, device):
    edges = EDGES
    if name in ("sinh", "cosh") and dtype is torch.float32:
        # where e^|x| overflows float32 but e^|x| / 2 does not (88.72 < |x| < 89.42), torch's
        # vectorised float32 loop returns inf on an AVX2 CPU and the finite value on an AVX-512 one
        edges = [e for e in EDGES if not 88.7 < abs(e) < 89.5]
    theirs = getattr(torch, name)(torch.tensor(edges, dtype=dtype))
    x = internals.tensor(edges, dtype=getattr(internals, str(dtype)[6:]), device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # the CUDA simulator's NumPy scalars warn of overflow
        ours = getattr(internals, name)(x).cpu()
    _close_to_the_last_bit(torch.from_numpy(np.array(ours.double().tolist())).to(dtype), theirs, dtype)
    assert ours.dtype.name == str(theirs.dtype)[6:]


@pytest.mark.parametrize("name", OPS)
def test_integers_and_bool_compute_in_the_default_float(name):
    for values, dtype in (([0, 1, -1, 2, 5], "int64"), ([0, 1, -1, 100], "int8"), ([True, False], "bool")):
        theirs = getattr(torch, name)(torch.tensor(values, dtype=getattr(torch, dtype)))
        ours = getattr(internals, name)(internals.tensor(values, dtype=getattr(internals, dtype)))
        _close_to_the_last_bit(torch.tensor(ours.tolist()), theirs, torch.float32)


X = "lib.tensor([0.5, -0.25, 0.75])"
PROGRAMS = [f"{X}.asin_()", f"lib.acos_({X})", "lib.tensor([0.5, -0.25]).t().atanh()",
            f"lib.log2({X}.abs(), out=lib.empty(3))",
            f"lib.log10({X}, out=lib.empty(0, dtype=lib.float64))", f"lib.sinh({X}, out=lib.empty(3, dtype=lib.int64))",
            "lib.tensor([1, 2]).cosh_()", "lib.asinh(lib.tensor([[1.0, 2.0]]).expand(3, 2))",
            f"lib.cosh({X}.requires_grad_())", f"lib.arcsin({X})", f"{X}.arccos()", f"lib.arctan_({X})",
            f"lib.arcsinh({X}, out=lib.empty(3))", f"lib.arccosh({X} + 2)", "lib.tensor([0.5, -0.25]).arctanh_()",
            f"lib.arcsin({X}.requires_grad_())",
            f"[type(f).__name__ for f, _ in lib.atan({X}.requires_grad_()).grad_fn.next_functions]"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    ours, theirs = _run(internals, program), _run(torch, program)
    assert ours == theirs


GRADIENTS = {
    "asin": lambda lib, x, t: lib.asin(x * t / 4), "acos": lambda lib, x, t: lib.acos(x * t / 4),
    "atan": lambda lib, x, t: lib.atan(x * t), "sinh": lambda lib, x, t: lib.sinh(x * t),
    "cosh": lambda lib, x, t: lib.cosh(x * t), "asinh": lambda lib, x, t: lib.asinh(x * t),
    "acosh": lambda lib, x, t: lib.acosh(x * x * t + 1.5), "atanh": lambda lib, x, t: lib.atanh(x * t / 4),
    "log2": lambda lib, x, t: lib.log2(x * x * t + 1), "log10": lambda lib, x, t: lib.log10(x * x * t + 1),
    "arcsin": lambda lib, x, t: lib.arcsin(x * t / 4), "arctanh": lambda lib, x, t: (x * t / 4).arctanh(),
}


@pytest.mark.parametrize("name", list(GRADIENTS))
def test_gradients_and_nodes(name):
    compare_gradients_and_nodes(GRADIENTS[name], atol=1e-13)


@pytest.mark.parametrize("alias", list(ALIASES))
def test_aliases_are_the_operators_they_rename(alias):
    """A mode below autograd sees the renamed operator, as torch's CompositeImplicitAutograd alias."""
    from internals.utils._python_dispatch import TorchDispatchMode

    class Names(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    seen = []
    with Names():
        getattr(internals, alias)(internals.tensor([0.5]) + 1 if alias == "arccosh" else internals.tensor([0.5]))
    assert seen[-1] == ALIASES[alias] + ".default"


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_exp_overflows_only_past_the_largest_double(device):
    """exp is finite up to log(DBL_MAX) = 709.78 in float64 (internals had cut it off at 709)."""
    values = [709.0, 709.5, 709.78, 709.79, -709.5, -746.0]
    for name in ("exp", "sigmoid"):
        theirs = getattr(torch, name)(torch.tensor(values, dtype=torch.float64))
        ours = getattr(internals, name)(internals.tensor(values, dtype=internals.float64, device=device))
        assert ours.cpu().tolist() == theirs.tolist()
