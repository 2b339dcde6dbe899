"""``torch.polar(abs, angle)`` and its out= form against torch (TensorFactories.cpp): values
within LIBM_ULPS (torch's loop calls the C library's cos and sin), broadcasting and layouts
exactly, torch's dtype checks and messages, the CUDA simulator. Its gradient (PolarBackward0,
``polar_backward``) is compared in tests/autograd/test_complex_autograd.py."""
import math

import pytest
import torch
from helpers import LIBM_ULPS, assert_same, assert_same_error, both_with_warnings, opinfo_samples
from torch.testing._internal.common_methods_invocations import op_db

import internals

(POLAR,) = [op for op in op_db if op.name == "polar"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_opinfo_samples(dtype):
    samples = list(opinfo_samples(POLAR, dtype))
    assert samples
    for sample in samples:
        theirs = torch.polar(sample.input, *sample.args)
        ours = internals.polar(internals.from_torch(sample.input), *map(internals.from_torch, sample.args))
        assert_same(ours, theirs, ulps=LIBM_ULPS)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_broadcast_layouts_and_special_values(dtype):
    """A transposed modulus against a row of angles (the output laid out as TensorIterator lays
    it out), and inf * 0 parts that are NaN as in torch's term-by-term kernel."""
    gen = torch.Generator().manual_seed(0)
    r = (torch.rand(5, 3, generator=gen, dtype=dtype) * 4).t()
    a = torch.randn(5, generator=gen, dtype=dtype) * 10
    assert_same(internals.polar(internals.from_torch(r), internals.from_torch(a)), torch.polar(r, a),
                ulps=LIBM_ULPS)
    inf, nan = math.inf, math.nan
    r = torch.tensor([inf, inf, 0.0, -0.0, nan, 1.0, 1.0, 2.0, -1.0], dtype=dtype)
    a = torch.tensor([0.0, 1.0, inf, 1.0, 0.5, nan, -inf, -0.0, math.pi], dtype=dtype)
    assert_same(internals.polar(internals.from_torch(r), internals.from_torch(a)), torch.polar(r, a),
                ulps=LIBM_ULPS)


def test_out_is_resized_and_checked_as_torchs():
    def program(lib):
        out = lib.empty(2, dtype=lib.complex64)
        r = lib.polar(lib.tensor([[1.0], [2.0]]), lib.tensor([0.5, -1.0, 3.0]), out=out)
        assert r is out
        return out
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(program)
    assert_same(ours, theirs, ulps=LIBM_ULPS)
    assert our_warnings == their_warnings and their_warnings      # the resize of a non-empty out warns


ERRORS = {
    "integer modulus": lambda L: L.polar(L.tensor([1]), L.tensor([1.0])),
    "integer angle": lambda L: L.polar(L.tensor([1.0]), L.tensor([1])),
    "complex modulus": lambda L: L.polar(L.tensor([1j]), L.tensor([1.0])),
    "float and double": lambda L: L.polar(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64)),
    "out of the wrong dtype": lambda L: L.polar(L.tensor([1.0]), L.tensor([1.0]), out=L.empty(1, dtype=L.complex128)),
    "out real": lambda L: L.polar(L.tensor([1.0]), L.tensor([1.0]), out=L.empty(1)),
    "shapes that do not broadcast": lambda L: L.polar(L.ones(2), L.ones(3)),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors(case):
    ours, theirs = assert_same_error(lambda: ERRORS[case](internals), lambda: ERRORS[case](torch))
    assert str(ours) == str(theirs)


def test_on_the_cuda_simulator():
    r, a = torch.tensor([1.0, 2.0, math.inf]), torch.tensor([0.5, -3.0, 0.0])
    ours = internals.polar(internals.from_torch(r).cuda(), internals.from_torch(a).cuda())
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), torch.polar(r, a), ulps=LIBM_ULPS)
