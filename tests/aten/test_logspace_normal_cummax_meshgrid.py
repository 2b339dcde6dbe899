"""Operators readers reach for -- ``logspace``, ``normal`` (all four
overloads), ``nan_to_num``, ``cummax``/``cummin``, ``meshgrid``, ``fill_diagonal_``,
``F.l1_loss``/``nn.L1Loss`` and ``optim.RMSprop`` -- compared with torch.

As ``tests/aten/test_einsum_scatter_reduce_tensor_split.py``: PyTorch's OpInfo samples (as given and
non-contiguous) where
op_db has the operator, then everyday calls compared for values, strides, dtypes, grad_fn names,
gradients, warnings and error messages. ``normal`` draws from the generator as torch's does, so
a seed gives torch's values exactly.
"""

import pytest
import torch
from helpers import (  # noqa: F401
    INF,
    NAN,
    TORCH_DTYPES,
    Adapter,
    assert_same,
    assert_same_error,
    check_opinfo_samples,
    compare_call,
    logging_modes,
    opinfo_cases,
    run_opinfo_samples,
    run_trajectory,
)
from helpers import run as _run

import internals

ADAPTERS = {
    "nan_to_num": Adapter(internals.nan_to_num, "nan_to_num", kwargs=("nan", "posinf", "neginf")),
    "cummax": Adapter(internals.cummax, "cummax", kwargs=("dim",)),
    "cummin": Adapter(internals.cummin, "cummin", kwargs=("dim",)),
    "meshgrid.variadic_tensors": Adapter(lambda *ts, **kw: internals.meshgrid(*ts, **kw), kwargs=("indexing",)),
    "meshgrid.list_of_tensors": Adapter(lambda ts, **kw: internals.meshgrid(ts, **kw), kwargs=("indexing",)),
    "nn.functional.l1_loss": Adapter(internals.nn.functional.l1_loss, kwargs=("reduction",)),
}


# no complex nan_to_num here
OPINFO_CASES = opinfo_cases(ADAPTERS, TORCH_DTYPES,
                            exclude={"nan_to_num": [d for d in TORCH_DTYPES if d.is_complex]})


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])






def _same(program, **env):
    assert _run(internals, program, **env) == _run(torch, program, **env)


# ---------------------------------------------------------------------------------- logspace
LOGSPACE = [
    "lib.logspace(0, 2, 5)", "lib.logspace(-1.3, 2.7, 7, base=2)", "lib.logspace(0, 3, 4, dtype=lib.long)",
    "lib.logspace(0.1, 3.3, 6, dtype=lib.float64)", "lib.logspace(0.5, 3, 1)", "lib.logspace(0.5, 3, 0)",
    "lib.logspace(1, 10, 10, base=3, dtype=lib.int32)", "lib.logspace(2, -2, 9, base=0.5)",
    "lib.logspace(0, 1, 101, dtype=lib.float64)", "lib.logspace(-3, 3, 13)", "lib.logspace(0, 2, -1)",
    "lib.logspace(0, 2, 3, out=lib.empty(0))", "lib.logspace(0, 2, 3, out=lib.empty(5, dtype=lib.float64))",
    "lib.logspace(0, 2, 3, requires_grad=True)",
]


@pytest.mark.parametrize("program", LOGSPACE)
def test_logspace(program):
    _same(program)


# ---------------------------------------------------------------------------------- normal
NORMAL = [
    "lib.normal(lib.arange(4.), 2.)", "lib.normal(lib.arange(20.).reshape(4, 5).t(), 0.5)",
    "lib.normal(1., lib.arange(20.))", "lib.normal(lib.arange(3.).reshape(3, 1), lib.ones(4))",
    "lib.normal(lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64))",
    "lib.normal(2., 3., (2, 3))", "lib.normal(2., 3., size=(20,), dtype=lib.float64)",
    "lib.normal(0., 1., (5,), generator=lib.Generator().manual_seed(3))",
    "lib.normal(lib.zeros(17), 1., generator=lib.Generator().manual_seed(3))",
    "lib.normal(lib.arange(3.), -1.)", "lib.normal(lib.arange(3.), -lib.ones(3))",
    "lib.normal(-1., -lib.ones(3))", "lib.normal(lib.arange(3), 1.)",
    "(lambda m: (m, lib.normal(m, 1.)))(lib.zeros(3, requires_grad=True))[1]",
    "(lambda s: lib.normal(1., s))(lib.ones(3, requires_grad=True))",
    "(lambda m: lib.normal(m, lib.ones(3)))(lib.zeros(3, requires_grad=True))",
]


@pytest.mark.parametrize("program", NORMAL)
def test_normal_draws_torchs_values(program):
    """Seeded the same, both draw the same values (the standard draw is ``normal_``'s), and give
    the same grad_fn (NormalBackward1/2/3)."""
    results = []
    for lib in (internals, torch):
        lib.manual_seed(0)
        results.append(_run(lib, program))
    assert results[0] == results[1]


@pytest.mark.parametrize("overload", ["mean", "std", "both"])
def test_normal_gradients_are_zero(overload):
    grads = []
    for lib in (internals, torch):
        m, s = lib.zeros(3, requires_grad=True), lib.ones(3, requires_grad=True)
        args = {"mean": (m, 1.0), "std": (0.0, s), "both": (m, s)}[overload]
        lib.normal(*args).sum().backward()
        grads.append([None if t.grad is None else t.grad.tolist() for t in (m, s)])
    assert grads[0] == grads[1]


# ---------------------------------------------------------------------------------- nan_to_num
SPECIAL = "lib.tensor([[1., NAN, 3.], [INF, -INF, 0.5]])"
NAN_TO_NUM = [
    f"lib.nan_to_num({SPECIAL})", f"{SPECIAL}.nan_to_num(1., 2., -3.)",
    f"lib.nan_to_num({SPECIAL}.double(), posinf=1e300)", f"lib.nan_to_num({SPECIAL}.half())",
    f"lib.nan_to_num({SPECIAL}.bfloat16())", "lib.nan_to_num(lib.arange(3))",
    f"{SPECIAL}.nan_to_num_(posinf=1e40)", f"lib.nan_to_num({SPECIAL}.t(), nan=-1.)",
    "lib.nan_to_num(lib.tensor([True, False]))", f"lib.nan_to_num({SPECIAL}, neginf=-7)",
]


@pytest.mark.parametrize("program", NAN_TO_NUM)
def test_nan_to_num(program):
    _same(program)


def test_nan_to_num_gradient_is_zero_where_not_finite():
    grads = []
    for lib in (internals, torch):
        x = lib.tensor([1.0, NAN, INF, -INF, 2.0], requires_grad=True)
        y = lib.nan_to_num(x)
        assert type(y.grad_fn).__name__ == "NanToNumBackward0"
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
    x = internals.tensor([0.5, 1.5, -2.0], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(internals.nan_to_num, (x,))


# ---------------------------------------------------------------------------------- cummax / cummin
ROWS = "lib.tensor([[1., 3., 2., 3., NAN, 5.], [0., -1., 2., 2., 1., 7.]])"
CUMMAXMIN = [
    f"lib.cummax({ROWS}, 1)", f"lib.cummin({ROWS}, 1)", f"lib.cummin({ROWS}, 0)", f"{ROWS}.cummax(-1)",
    "lib.tensor([3, 1, 1, 2]).cummin(0)", "lib.cummax(lib.tensor(2.), 0)", "lib.cummax(lib.tensor([True, False]), 0)",
    "lib.cummax(lib.arange(12.).reshape(3, 4).t() % 5, 1)", "lib.cummax(lib.ones(2, 0), 1)",
    "lib.cummax(lib.ones(2, 3), 2)", "lib.cummin(lib.tensor([2., -0., 0.]), 0)",
    "lib.cummax(lib.tensor([1., 2., 0.5], dtype=lib.float16), 0)",
]


@pytest.mark.parametrize("program", CUMMAXMIN)
def test_cummax_cummin(program):
    _same(program)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_backward(name):
    grads = []
    for lib in (internals, torch):
        x = lib.tensor([[1.0, 3.0, 2.0, 3.0], [4.0, -1.0, 5.0, 0.0]], requires_grad=True)
        values, _ = getattr(lib, name)(x, 1)
        assert type(values.grad_fn).__name__ == f"{name.capitalize()}Backward0"
        (values * lib.arange(4.0)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
    x = internals.tensor([[0.3, 1.2, -0.5], [2.0, 0.1, 0.7]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(lambda t: getattr(internals, name)(t, 1).values, (x,))


def test_cummax_on_cuda():
    x = torch.tensor([[1.0, 3.0, NAN, 3.0], [4.0, -1.0, 5.0, 5.0]])
    for name in ("cummax", "cummin"):
        ours, theirs = getattr(internals, name)(internals.from_torch(x).cuda(), 1), getattr(torch, name)(x, 1)
        assert_same(ours.values.cpu(), theirs.values)
        assert_same(ours.indices.cpu(), theirs.indices)


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


# ---------------------------------------------------------------------------------- L1 loss
L1 = [
    "lib.nn.functional.l1_loss(lib.arange(6.).reshape(2, 3), lib.ones(2, 3))",
    "lib.nn.L1Loss(reduction='none')(lib.arange(6.).reshape(2, 3), lib.ones(3))",
    "lib.nn.L1Loss(reduction='sum')(lib.arange(6.).reshape(2, 3), lib.ones(2, 3))",
    "lib.nn.L1Loss()(lib.arange(6.).reshape(2, 3).requires_grad_(), lib.ones(2, 3))",
    "lib.nn.L1Loss(reduction='bad')(lib.ones(2), lib.ones(2))",
]


@pytest.mark.parametrize("program", L1)
def test_l1_loss(program):
    _same(program)


def test_l1_loss_gradient():
    grads = []
    for lib in (internals, torch):
        x = lib.tensor([[0.5, 2.0, 1.0], [-1.0, 3.0, 1.5]], requires_grad=True)
        lib.nn.L1Loss()(x, lib.ones(2, 3)).backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


# ---------------------------------------------------------------------------------- RMSprop
RMSPROP_CONFIGS = [
    dict(), dict(lr=0.01, alpha=0.9), dict(lr=0.01, momentum=0.9), dict(lr=0.01, centered=True),
    dict(lr=0.01, weight_decay=0.1, momentum=0.5, centered=True, maximize=True), dict(lr=0.001, eps=1e-3),
]


@pytest.mark.parametrize("config", RMSPROP_CONFIGS,
                         ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_rmsprop_trajectory(config):
    """Twenty steps of the same gradients: parameters and state (in torch's key order) equal torch's."""
    ours, theirs = run_trajectory(lambda p: internals.optim.RMSprop(p, **config),
                                  lambda p: torch.optim.RMSprop(p, foreach=False, **config))
    assert ours.param_groups[0].keys() == theirs.param_groups[0].keys()
    for o, t in zip(ours.state.values(), theirs.state.values()):
        assert list(o) == list(t)
        for key in t:
            assert_same(o[key], t[key], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bad", [dict(lr=-1), dict(eps=-1), dict(momentum=-1), dict(weight_decay=-1), dict(alpha=-1)])
def test_rmsprop_refuses_bad_hyperparameters(bad):
    ours, theirs = assert_same_error(lambda: internals.optim.RMSprop([internals.ones(2, requires_grad=True)], **bad),
                                     lambda: torch.optim.RMSprop([torch.ones(2, requires_grad=True)], **bad))
    assert str(ours) == str(theirs)
