"""``tensor_split`` against torch: PyTorch's OpInfo samples (as given and non-contiguous), then
the views it makes (one ``slice.Tensor`` per piece) compared for values, strides, bases, grad_fn
names, dispatched operators, gradients and error messages.

Then ``diagflat`` and NumPy's names and compositions (``swapdims``, ``atleast_*d``,
``hsplit``/``vsplit``/``dsplit``, ``Tensor.H``/``mH``/``adjoint``), CompositeImplicitAutograd in
torch: OpInfo samples and everyday calls; then
``meshgrid`` and ``fill_diagonal_``: OpInfo samples, everyday calls and the operators they dispatch.

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
    run,
    run_described,
)
from helpers import run_everyday_call as _run

import internals

TENSOR_SPLIT_ADAPTERS = {
    "tensor_split": Adapter(internals.tensor_split, "tensor_split"),
}
COMPOSITION_ADAPTERS = {
    "diagflat": Adapter(internals.diagflat, "diagflat", kwargs=("offset",)),
    # NumPy's names and compositions, at the same dtypes
    "atleast_3d": Adapter(internals.atleast_3d),
    "hsplit": Adapter(internals.hsplit, "hsplit"), "vsplit": Adapter(internals.vsplit, "vsplit"),
    "dsplit": Adapter(internals.dsplit, "dsplit"),
    "H": Adapter(lambda x: x.H), "mH": Adapter(lambda x: x.mH),
}
MESHGRID_ADAPTERS = {
    "meshgrid.variadic_tensors": Adapter(lambda *ts, **kw: internals.meshgrid(*ts, **kw), kwargs=("indexing",)),
    "meshgrid.list_of_tensors": Adapter(lambda ts, **kw: internals.meshgrid(ts, **kw), kwargs=("indexing",)),
}
ADAPTERS = {**TENSOR_SPLIT_ADAPTERS, **COMPOSITION_ADAPTERS, **MESHGRID_ADAPTERS}


OPINFO_CASES = (opinfo_cases({**TENSOR_SPLIT_ADAPTERS, **MESHGRID_ADAPTERS}, TORCH_DTYPES)
                + opinfo_cases(COMPOSITION_ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool)))


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


# NumPy's names and compositions: swapdims, atleast_*d (varargs too), hsplit/vsplit/dsplit and
# Tensor.H/mH/adjoint (a complex tensor's H is a lazy conjugate view, as torch's)
X = "lib.arange(12.).reshape(3, 4)"
G = "lib.ones(2, 2, requires_grad=True)"
NUMPY_NAME_PROGRAMS = [
    f"lib.swapdims({X}, 0, 1)", f"{X}.swapdims(1, 0)", f"{X}.swapdims_(0, 1)", f"lib.atleast_3d({X})",
    "lib.atleast_3d(lib.tensor(1.))", "lib.atleast_3d(lib.ones(3))", "lib.atleast_3d(lib.ones(1, 2, 3, 4))",
    "lib.atleast_3d([lib.ones(2), lib.tensor(3.)])", "lib.atleast_3d(lib.ones(2), lib.ones(3, 3))", "lib.atleast_2d()",
    "lib.atleast_1d([lib.ones(2)])", "lib.atleast_2d(lib.tensor(1.), lib.ones(2))", f"lib.hsplit({X}, 2)",
    f"lib.hsplit({X}, [1, 3])", f"{X}.hsplit(3)", "lib.hsplit(lib.tensor(1.), 2)", f"lib.hsplit({X}, 0)",
    "lib.hsplit(lib.arange(6), 3)", f"lib.vsplit({X}, 3)", f"lib.vsplit({X}, [1])", "lib.vsplit(lib.ones(3), 1)",
    f"lib.vsplit({X}, 2)", "lib.dsplit(lib.ones(2, 2, 4), [1, 3])", "lib.dsplit(lib.ones(2, 2, 4), 2)",
    f"lib.dsplit({X}, 2)", f"{X}.H", f"{X}.mH", f"{X}.adjoint()", f"lib.adjoint({X})", "lib.ones(2, 3, 4).mH",
    "lib.ones(2, 3, 4).H", "lib.ones(3).H", "lib.ones(3).mH", "lib.ones(3).adjoint()", "lib.tensor(1.).H",
    "lib.tensor(1.).mH", f"{G}.H", f"{G}.mH", f"lib.swapdims({G}, 0, 1)", f"lib.atleast_3d({G})",
    f"lib.hsplit({G}, 2)",
]


@pytest.mark.parametrize("program", DIAGFLAT_PROGRAMS + NUMPY_NAME_PROGRAMS)
def test_everyday_calls(program):
    """The NumPy names' results described with their offset and whether they are views, the
    others' exactly (torch warns once a process of what a NumPy name does, so each program
    runs once)."""
    run = run_described if program in NUMPY_NAME_PROGRAMS else _run
    assert run(internals, program) == run(torch, program)


def _same(program, **env):
    assert run(internals, program, **env) == run(torch, program, **env)


# ---------------------------------------------------------------------------------- meshgrid
MESHGRID = [
    "lib.meshgrid(lib.arange(3), lib.arange(2))", "lib.meshgrid(lib.arange(3), lib.arange(2), indexing='xy')",
    "lib.meshgrid([lib.arange(3), lib.tensor(5), lib.arange(2)], indexing='ij')",
    "lib.meshgrid((lib.arange(3.), lib.arange(2.)), indexing='xy')", "lib.meshgrid(lib.arange(4), indexing='xy')",
    "lib.meshgrid(lib.arange(3), lib.arange(2.), indexing='ij')", "lib.meshgrid(lib.arange(3), indexing='ab')",
    "lib.meshgrid([], indexing='ij')",
    "lib.meshgrid(lib.arange(3.).requires_grad_(), lib.arange(2.), indexing='ij')",
]


@pytest.mark.parametrize("program", MESHGRID)
def test_meshgrid(program):
    _same(program)


def test_meshgrid_of_a_matrix_is_refused():
    """torch prints the offending tensor with its C++ printer; internals has none: the message
    starts as torch's and ends with the tensor as Python prints it."""
    prefix = "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
    ours, theirs = assert_same_error(lambda: internals.meshgrid(internals.ones(2, 2), indexing="ij"),
                                     lambda: torch.meshgrid(torch.ones(2, 2), indexing="ij"))
    assert str(theirs).startswith(prefix) and str(ours) == prefix + str(internals.ones(2, 2))


def test_meshgrid_logs_torchs_operators():
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    with mode_t:
        torch.meshgrid(torch.arange(3), torch.arange(2), indexing="xy")
    with mode_i:
        internals.meshgrid(internals.arange(3), internals.arange(2), indexing="xy")
    assert log_i == log_t


# ---------------------------------------------------------------------------------- fill_diagonal_
FILL_DIAGONAL = [
    "lib.zeros(3, 4).fill_diagonal_(5)", "lib.zeros(7, 3).fill_diagonal_(5, wrap=True)",
    "lib.zeros(7, 3).fill_diagonal_(5)", "lib.zeros(2, 2, 2).fill_diagonal_(1)",
    "lib.zeros(2, 3, 2).fill_diagonal_(1)", "lib.zeros(3).fill_diagonal_(1)",
    "lib.zeros(4, 5).t().fill_diagonal_(2.5)", "lib.zeros(4, 4)[1:].fill_diagonal_(3)",
    "lib.zeros(3, 3, dtype=lib.long).fill_diagonal_(7)", "lib.zeros(8, 2).fill_diagonal_(1, True)",
    "lib.zeros(3, 3, requires_grad=True).fill_diagonal_(1)",
    "(lambda x: x.mul(2).fill_diagonal_(0))(lib.ones(3, 3, requires_grad=True))",
]


@pytest.mark.parametrize("program", FILL_DIAGONAL)
def test_fill_diagonal_(program):
    _same(program)


def test_fill_diagonal_logs_torchs_operators():
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    with mode_t:
        torch.zeros(7, 3).fill_diagonal_(5, wrap=True)
    with mode_i:
        internals.zeros(7, 3).fill_diagonal_(5, wrap=True)
    assert log_i == log_t
