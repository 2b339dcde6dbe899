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
