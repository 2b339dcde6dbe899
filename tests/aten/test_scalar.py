"""``item()`` (``_local_scalar_dense``) and the Python conversions ``float()``, ``int()``,
``complex()`` and ``bool()`` of a tensor against torch: the element read, its Python type, and
torch's errors for several elements.

Tests ``internals.aten.native.scalar`` (aten/src/ATen/native/Scalar.cpp) and the conversions of
``internals._tensor``.
"""

import pytest
import torch
from helpers import error_text

import internals

DEVICES = ["cpu", "cuda"]


# ---------------------------------------------------------------------------------- item and friends
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int64", "int8", "uint8", "bool",
                                   "complex64", "complex128"])
def test_item_reads_the_element_as_torch(dtype, device):
    """``_local_scalar_dense`` (what ``item()`` calls): the element at the storage offset, of
    torch's Python type, the 16-bit floats widened exactly."""
    theirs = torch.tensor([1.5, -2.7, 3.0, 0.1]).to(getattr(torch, dtype))
    ours = internals.from_torch(theirs).to(device)
    for index in (1, 3):
        value, expected = ours[index].item(), theirs[index].item()
        assert type(value) is type(expected) and value == expected
        assert internals.ops.aten._local_scalar_dense(ours[index]) == torch.ops.aten._local_scalar_dense(theirs[index])
    assert ours.reshape(2, 2).t()[1, 0].item() == theirs.reshape(2, 2).t()[1, 0].item()


@pytest.mark.parametrize("convert", [float, int, complex, bool, lambda t: t.item()], ids=["float", "int", "complex",
                                                                                            "bool", "item"])
@pytest.mark.parametrize("make", [lambda lib: lib.ones(2), lambda lib: lib.ones(0), lambda lib: lib.ones(1, 1),
                                  lambda lib: lib.tensor([1.5 + 1j]), lambda lib: lib.tensor(2.5),
                                  lambda lib: lib.tensor([[3]])])
def test_python_conversions_and_their_errors(make, convert):
    """``float()``, ``int()`` and ``complex()`` refuse several elements with a ValueError of their
    own; ``item()`` and ``bool()`` with torch's RuntimeErrors."""
    try:
        expected = convert(make(torch))
    except Exception:
        return error_text(lambda: convert(make(internals)), lambda: convert(make(torch)))
    value = convert(make(internals))
    assert type(value) is type(expected) and value == expected
