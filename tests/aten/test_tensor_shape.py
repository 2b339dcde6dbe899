"""``tensor_split`` against torch: PyTorch's OpInfo samples (as given and non-contiguous), then
the views it makes (one ``slice.Tensor`` per piece) compared for values, strides, bases, grad_fn
names, dispatched operators, gradients and error messages.

Then ``diagflat`` (CompositeImplicitAutograd in torch): OpInfo samples and everyday calls.

Tests ``internals.aten.native.tensor_shape`` (aten/src/ATen/native/TensorShape.cpp).
"""
import pytest
import torch
from helpers import (
    TORCH_DTYPES,
    Adapter,
    assert_same,
    assert_same_error,
    check_opinfo_samples,
    logging_modes,
    opinfo_cases,
)
from helpers import run_everyday_call as _run

import internals

TENSOR_SPLIT_ADAPTERS = {
    "tensor_split": Adapter(internals.tensor_split, "tensor_split"),
}
DIAGFLAT_ADAPTERS = {
    "diagflat": Adapter(internals.diagflat, "diagflat", kwargs=("offset",)),
}
ADAPTERS = {**TENSOR_SPLIT_ADAPTERS, **DIAGFLAT_ADAPTERS}


OPINFO_CASES = (opinfo_cases(TENSOR_SPLIT_ADAPTERS, TORCH_DTYPES)
                + opinfo_cases(DIAGFLAT_ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool)))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


# =============================================================================================
# tensor_split: views made by slice.Tensor, one per piece
# =============================================================================================

SPLITS = {
    "sections": (3,),
    "sections, uneven": (3, 1),
    "more sections than elements": (7, 1),
    "indices": ([1, 4],),
    "indices, negative and past the end": ([-3, 9], -1),
    "indices, decreasing": ([3, 1], 1),
    "indices as a tuple": ((1, 2),),
    "no indices": ([],),
    "tensor sections": (lambda lib: lib.tensor(2), 1),
    "tensor indices": (lambda lib: lib.tensor([1, 3]), 1),
    "tensor indices, strided": (lambda lib: lib.tensor([0, 1, 2, 3])[::2], 1),
}


def _split_args(lib, args):
    return tuple(a(lib) if callable(a) else a for a in args)


@pytest.mark.parametrize("case", SPLITS)
def test_tensor_split_views(case):
    x_t = torch.arange(10.0, dtype=torch.float64).reshape(2, 5).requires_grad_()
    x_o = internals.from_torch(x_t.detach()).requires_grad_()
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    args_t, args_o = _split_args(torch, SPLITS[case]), _split_args(internals, SPLITS[case])
    with mode_t:
        theirs = torch.tensor_split(x_t, *args_t)
    with mode_i:
        ours = internals.tensor_split(x_o, *args_o)
    # a 0-dim sections tensor is read with item(), which both modes see as _local_scalar_dense
    assert log_i == log_t
    assert type(ours) is tuple and len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t)
        assert o._base is x_o and type(o.grad_fn).__name__ == type(t.grad_fn).__name__
    assert [tuple(p.shape) for p in x_o.tensor_split(*args_o)] == [tuple(p.shape) for p in theirs]
    weights = torch.arange(1.0, 11.0, dtype=torch.float64)
    sum(((p * weights[:p.numel()].reshape(p.shape)).sum() for p in theirs),
        torch.zeros((), dtype=torch.float64)).backward()
    sum(((p * internals.from_torch(weights[:p.numel()].reshape(p.shape))).sum() for p in ours),
        internals.zeros((), dtype=internals.float64)).backward()
    assert_same(x_o.grad, x_t.grad)


def test_tensor_split_gradcheck():
    x = internals.from_torch(torch.randn(3, 5, dtype=torch.float64)).requires_grad_()
    assert internals.autograd.gradcheck(lambda x: internals.tensor_split(x, [1, 3], 1), (x,))
    assert internals.autograd.gradcheck(lambda x: x.tensor_split(2), (x,))


SPLIT_ERRORS = {
    "0-dim input": lambda lib: lib.tensor(1.0).tensor_split(2),
    "0-dim input, tensor": lambda lib: lib.tensor(1.0).tensor_split(lib.tensor(2)),
    "zero sections": lambda lib: lib.ones(4).tensor_split(0),
    "dim out of range": lambda lib: lib.ones(4).tensor_split(2, 1),
    "float tensor": lambda lib: lib.ones(4).tensor_split(lib.tensor([1.0])),
    "2-d tensor": lambda lib: lib.ones(4).tensor_split(lib.tensor([[1]])),
    "keyword of the docs": lambda lib: lib.tensor_split(lib.ones(4), indices_or_sections=2),
}


@pytest.mark.parametrize("case", SPLIT_ERRORS)
def test_tensor_split_errors(case):
    ours, theirs = assert_same_error(lambda: SPLIT_ERRORS[case](internals), lambda: SPLIT_ERRORS[case](torch))
    assert str(ours) == str(theirs)


# =============================================================================================
# diagflat: CompositeImplicitAutograd in torch (a diag of the flattened input); its gradients
# and graph are compared with take_along_dim's (tests/aten/test_indexing.py)
# =============================================================================================
DIAGFLAT_PROGRAMS = [
    "lib.diagflat(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), 1)", "lib.diagflat(lib.tensor(3.0))",
    "lib.diagflat(lib.tensor([[1, 2]]).t(), -1)", "lib.tensor([1, 2, 3]).diagflat(offset=2)",
    "lib.diagflat(lib.zeros(0))", "lib.diagflat(lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t().requires_grad_())",
    "lib.diagflat(lib.tensor([True, False]))",
]


@pytest.mark.parametrize("program", DIAGFLAT_PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)
