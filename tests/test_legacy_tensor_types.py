"""``Tensor.type()`` and ``nelement()`` against torch: the legacy class names (internals' module
name in place of torch's), conversions by dtype and by legacy name, and torch's errors for bad names;
the legacy constructor ``torch.Tensor(...)`` and the typed ones (``FloatTensor``), subclasses too.

Tests ``internals._legacy_tensor_types`` and ``Tensor.type`` of ``internals._tensor``
(torch/_tensor.py, torch/csrc/utils/tensor_types.cpp).
"""

import pytest
import torch
from helpers import (
    assert_same,
    error_text,
    ours_and_torchs,
)
from helpers import run_everyday_call as _run

import internals


def test_tensor_type_and_nelement():
    """``x.type()`` names the legacy class (internals' module name in place of torch's);
    ``x.type(dtype)`` and ``x.type("torch.IntTensor")`` convert; bad names are torch's errors."""
    for make in (lambda lib: lib.tensor([1.5]), lambda lib: lib.tensor([True]), lambda lib: lib.tensor([1j]),
                 lambda lib: lib.tensor([1.5]).bfloat16(), lambda lib: lib.tensor([[1, 2]])):
        ours, theirs = make(internals), make(torch)
        assert ours.type() == theirs.type().replace("torch.", "internals.")
        assert ours.nelement() == theirs.nelement()
    x, xt = ours_and_torchs([1.5, -2.5], torch.float32)
    assert_same(x.type(internals.int32), xt.type(torch.int32))
    assert_same(x.type("torch.IntTensor"), xt.type("torch.IntTensor"))
    assert x.type(internals.float32) is x and x.type("internals.FloatTensor") is x
    assert x.type("torch.cuda.DoubleTensor").device.type == "cuda"
    assert x.cuda().type() == "internals.cuda.FloatTensor"
    for bad in ("foo", "torch.FooTensor", 3):
        error_text(lambda bad=bad: x.type(bad), lambda bad=bad: xt.type(bad))


# the legacy constructor torch.Tensor(...) and the typed ones
PROGRAMS = [
    "lib.Tensor([1, 2])",
    "lib.Tensor([[1, 2], [3, 4.5]])",
    "lib.Tensor(2, 3).shape",
    "lib.Tensor()",
    "lib.Tensor(lib.Size([2, 1])).shape",
    "lib.Tensor((1, 2))",
    "lib.Tensor(0)",
    "lib.Tensor([True, False])",
    "lib.Tensor(lib.tensor([1, 2]))",
    "lib.Tensor(-1)",
    "lib.Tensor(2.5)",
    "lib.FloatTensor((1, 2))",
    "type(lib.Tensor([1]))",
    "lib.Tensor([1, 2], device='cuda')",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


def test_legacy_constructor_of_a_subclass():
    for lib in (torch, internals):
        class Mine(lib.Tensor):
            pass
        t = Mine([1, 2])
        assert type(t) is Mine and t.dtype is lib.float32 and t.tolist() == [1.0, 2.0]
