"""``linalg.vector_norm`` (and ``matrix_norm``'s Frobenius norm, ``Tensor.norm``) of complex
tensors against torch: the norm of the moduli, in the matching real dtype (it raised a
RuntimeError saying that complex input was expected but got ComplexDouble)."""
import math

import pytest
import torch
from helpers import assert_same

import internals


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("ord", [2, 1, 0, 3, math.inf, -math.inf], ids=str)
def test_complex_vector_norm(ord, dtype):
    seen = []
    for lib in (torch, internals):
        lib.manual_seed(0)
        z = lib.randn(3, 4, dtype=getattr(lib, dtype))
        seen.append([lib.linalg.vector_norm(z, ord), lib.linalg.vector_norm(z, ord, dim=1, keepdim=True),
                     lib.linalg.matrix_norm(z), z.norm()])
    for ours, theirs in zip(seen[1], seen[0]):
        assert_same(ours, theirs, rtol=2e-6 if dtype == "complex64" else 1e-13, atol=0)


def _zero_norm_gradients(lib, dtype):
    x = lib.tensor([[1.0, 0.0, -2.0], [0.0, 0.0, 3.0]], dtype=getattr(lib, dtype), requires_grad=True)
    lib.linalg.vector_norm(x, 0).abs().backward()
    after_backward = x.grad
    (lib.linalg.vector_norm(x, 0, dim=1).abs() + x.abs().sum(1)).sum().backward()
    unused = lib.autograd.grad(x.norm(p=0, dim=0).abs().sum(), x, allow_unused=True)
    try:
        lib.autograd.grad(lib.linalg.vector_norm(x, 0).abs(), x)
        refused = None
    except RuntimeError as error:
        refused = str(error)
    return after_backward, x.grad, unused, refused


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_the_zero_norm_sends_no_gradient_as_torch(dtype):
    """torch's norm_backward returns an undefined tensor for ord=0: ``.grad`` stays None,
    ``autograd.grad`` gives None (with allow_unused) or refuses; a tensor of zeros used to come back."""
    ours, theirs = _zero_norm_gradients(internals, dtype), _zero_norm_gradients(torch, dtype)
    assert ours[0] is None and theirs[0] is None
    assert_same(ours[1], theirs[1], rtol=0, atol=0)
    assert ours[2] == (None,) and theirs[2] == (None,)
    assert ours[3] == theirs[3] is not None
