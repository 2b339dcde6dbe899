"""complex32 (``torch.chalf``, ScalarType ComplexHalf) against torch: the dtype and its promotion.

torch calls complex32 support experimental (it warns when one is made, and most CPU kernels
raise "not implemented for 'ComplexHalf'"). internals has the dtype object -- its names, item
size, category, its parts' type float16 and its place in type promotion -- and no kernels for
it: making a tensor of it (a factory, a cast, a promotion's result, ``view_as_complex`` of a
float16 tensor, ``view(complex32)``) raises NotImplementedError naming complex32, where torch
makes the tensor. These tests pin both halves.
"""
import pickle
import warnings

import pytest
import torch
from helpers import DTYPE_PAIRS

import internals

PAIRS = DTYPE_PAIRS + [(internals.complex64, torch.complex64), (internals.complex128, torch.complex128),
                       (internals.complex32, torch.complex32)]
TO_INTERNALS = {theirs: ours for ours, theirs in PAIRS}


def test_the_dtype_object():
    ours, theirs = internals.complex32, torch.complex32
    assert internals.chalf is ours and torch.chalf is theirs
    assert (ours.itemsize, ours.is_complex, ours.is_floating_point, ours.is_signed) == (
        theirs.itemsize, theirs.is_complex, theirs.is_floating_point, theirs.is_signed)
    assert ours.to_real() is internals.float16 and theirs.to_real() is torch.float16
    assert internals.float16.to_complex() is ours and torch.float16.to_complex() is theirs
    assert ours.to_complex() is ours and theirs.to_complex() is theirs
    assert repr(ours).replace("internals.", "torch.") == repr(theirs) == "torch.complex32"
    assert pickle.loads(pickle.dumps(ours)) is ours


@pytest.mark.parametrize("a", [theirs for _, theirs in PAIRS], ids=str)
def test_promote_types_with_complex32(a):
    """complex32 with every dtype, both ways: a float16 or narrower part stays complex32, a wider
    one (float32, bfloat16's meeting with float16 in float32, float64) widens the parts."""
    for x, y in ((a, torch.complex32), (torch.complex32, a)):
        assert internals.promote_types(TO_INTERNALS[x], TO_INTERNALS[y]) is TO_INTERNALS[torch.promote_types(x, y)]
        assert internals.can_cast(TO_INTERNALS[x], TO_INTERNALS[y]) == torch.can_cast(x, y)


def test_result_type_of_a_half_tensor_and_a_complex_number():
    assert torch.result_type(torch.ones(2, dtype=torch.float16), 1j) is torch.complex32
    assert internals.result_type(internals.ones(2, dtype=internals.float16), 1j) is internals.complex32


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(2, dtype=L.complex32),
    lambda L: L.empty(0, dtype=L.chalf),
    lambda L: L.tensor([1 + 2j], dtype=L.chalf),
    lambda L: L.ones(2, dtype=L.complex64).to(L.complex32),
    lambda L: L.ones(2, dtype=L.complex64).chalf(),
    lambda L: L.ones(2, dtype=L.float16) * 1j,
    lambda L: L.view_as_complex(L.ones(3, 2, dtype=L.float16)),
    lambda L: L.ones(3, 2, dtype=L.float16).view(L.complex32),
    lambda L: L.complex(L.ones(2, dtype=L.float16), L.ones(2, dtype=L.float16)),
])
def test_a_complex32_tensor_is_refused_where_torch_makes_one(make):
    """torch makes the tensor (warning once that its support is experimental); internals says it
    cannot."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert make(torch).dtype is torch.complex32
    with pytest.raises(NotImplementedError, match=r"complex32 \(ComplexHalf\)"):
        make(internals)


def test_the_default_complex_dtype_follows_a_float16_default():
    """Under a float16 default, a Python complex becomes complex32 in both (internals refuses to
    make the tensor, as above)."""
    previous = (torch.get_default_dtype(), internals.get_default_dtype())
    try:
        torch.set_default_dtype(torch.float16)
        internals.set_default_dtype(internals.float16)
        assert torch.tensor(1j).dtype is torch.complex32
        with pytest.raises(NotImplementedError, match="complex32"):
            internals.tensor(1j)
    finally:
        torch.set_default_dtype(previous[0])
        internals.set_default_dtype(previous[1])
