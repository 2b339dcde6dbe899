"""Decompositions trace to torch's operator sequences (``torch/_decomp``).

Each program runs through torch's ``make_fx`` with torch's table and through internals' with
internals' table; the graphs must call the same operators in the same order, and compute the
same values.
"""
import operator

import numpy as np
import pytest
import torch
from torch._decomp import core_aten_decompositions as torch_core_aten_decompositions
from torch._decomp import get_decompositions as torch_get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import internals
from internals._decomp import _core_only_table, core_aten_decompositions, decomposition_table, get_decompositions
from internals.fx.experimental.proxy_tensor import make_fx


def _targets(gm):
    return ["operator.getitem" if n.target is operator.getitem else str(n.target)
            for n in gm.graph.nodes if n.op == "call_function"]


def _inputs(lib, shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]


def _torch_core_table():
    """torch's table is filled lazily; its items() are the whole table."""
    return dict(torch_core_aten_decompositions().items())


def _compare(program, shapes, ours_table, theirs_table):
    theirs = torch_make_fx(program(torch), decomposition_table=theirs_table)(*_inputs(torch, shapes))
    ours = make_fx(program(internals), decomposition_table=ours_table)(*_inputs(internals, shapes))
    assert ours.graph.call_targets() == _targets(theirs)
    got, want = ours(*_inputs(internals, shapes, 1)), theirs(*_inputs(torch, shapes, 1))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    return ours.graph.call_targets()


def _aten(name, *extra):
    """A program calling the aten operator ``name`` directly, ``extra`` after its tensors."""
    base, _, overload = name.partition(".")
    return lambda T: lambda *tensors: getattr(getattr(T.ops.aten, base), overload or "default")(*tensors, *extra)


# one program per entry of core_aten_decompositions(): the operator it reaches, and how
CORE_PROGRAMS = {
    "aten::addcmul": (lambda T: lambda x, a, b: T.addcmul(x, a, b, value=0.5), [(3, 4)] * 3),
    "aten::addcdiv": (lambda T: lambda x, a, b: T.addcdiv(x, a, b.abs() + 1, value=2), [(3, 4)] * 3),
    "aten::silu": (lambda T: lambda x: T.nn.functional.silu(x), [(3, 4)]),
    "aten::silu_backward": (_aten("silu_backward"), [(3, 4)] * 2),
    "aten::tanh_backward": (_aten("tanh_backward"), [(3, 4)] * 2),
    "aten::sigmoid_backward": (_aten("sigmoid_backward"), [(3, 4)] * 2),
    "aten::threshold_backward": (_aten("threshold_backward", 0.0), [(3, 4)] * 2),
    "aten::leaky_relu_backward": (_aten("leaky_relu_backward", 0.2, False), [(3, 4)] * 2),
    "aten::hardtanh_backward": (_aten("hardtanh_backward", -0.5, 0.5), [(3, 4)] * 2),
    "aten::mse_loss_backward": (_aten("mse_loss_backward", 1), [(), (3, 4), (3, 4)]),
    "aten::_softmax_backward_data": (lambda T: lambda g, x: T.ops.aten._softmax_backward_data.default(
        g, T.softmax(x, 1), 1, T.float32), [(3, 4)] * 2),
    "aten::_log_softmax_backward_data": (lambda T: lambda g, x: T.ops.aten._log_softmax_backward_data.default(
        g, T.log_softmax(x, 0), 0, T.float32), [(3, 4)] * 2),
    "aten::rsub.Scalar": (lambda T: lambda x: T.rsub(x, 2, alpha=3), [(3, 4)]),
    "aten::square": (lambda T: lambda x: T.square(x), [(3, 4)]),
    "aten::mv": (lambda T: lambda a, v: T.mv(a, v), [(3, 4), (4,)]),
    "aten::dot": (lambda T: lambda a, b: T.dot(a, b), [(4,), (4,)]),
    "aten::select_backward": (_aten("select_backward", [3, 4], 1, -1), [(3,)]),
    "aten::slice_backward": (_aten("slice_backward", [5, 4], 0, 1, 4, 2), [(2, 4)]),
    "aten::diagonal_backward": (_aten("diagonal_backward", [3, 4], 1, 0, 1), [(3,)]),
    "aten::select_scatter": (lambda T: lambda x, s: T.select_scatter(x, s, 0, -2), [(3, 4), (4,)]),
    "aten::new_zeros": (lambda T: lambda x: x.new_zeros((3, 4)) + x, [(3, 4)]),
    "aten::zero": (_aten("zero"), [(3, 4)]),
    "aten::fill.Scalar": (_aten("fill.Scalar", 2.5), [(3, 4)]),
    "aten::fill.Tensor": (lambda T: lambda x, v: T.ops.aten.fill.Tensor(x, v[0, 1]), [(3, 4), (2, 3)]),
    "aten::sum": (lambda T: lambda x: x.sum() + (x > 0).sum(), [(3, 4)]),
    "aten::floor_divide": (lambda T: lambda x, y: x // y + x // 2, [(3, 4), (4,)]),
    "aten::aminmax": (lambda T: lambda x: sum(T.aminmax(x, dim=1, keepdim=True)) + T.aminmax(x)[0], [(3, 4)]),
    "aten::all.dim": (lambda T: lambda x: (x > -1).all(1) & (x > 0).all(0, keepdim=True).T, [(3, 4)]),
    "aten::std.correction": (lambda T: lambda x: x.std(1, keepdim=True) + x.std(0, correction=0).sum(), [(3, 4)]),
    "aten::baddbmm": (lambda T: lambda c, a, b: T.baddbmm(c, a, b, beta=0.5, alpha=2) + T.baddbmm(c, a, b),
                      [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "aten::transpose.int": (lambda T: lambda x: x.transpose(0, 1) * 2 + x.transpose(1, 1).T, [(3, 4)]),
    "aten::t": (lambda T: lambda x, v: x.t().t() * 2 + v.t(), [(3, 4), (4,)]),
    "aten::_unsafe_view": (_aten("_unsafe_view", [4, 3]), [(3, 4)]),
    "aten::arange": (lambda T: lambda x: T.arange(4) + x, [(3, 4)]),
    "aten::arange.start": (lambda T: lambda x: T.arange(1, 5) + x, [(3, 4)]),
    "aten::detach": (lambda T: lambda x: x.detach() * 2, [(3, 4)]),
    "aten::new_ones": (lambda T: lambda x: x.new_ones((3, 4)) + x + (x > 0).new_ones(4), [(3, 4)]),
    "aten::ones_like": (lambda T: lambda x: T.ones_like(x) + x, [(3, 4)]),
    "aten::zeros_like": (lambda T: lambda x: T.zeros_like(x) + x + T.zeros_like(x, dtype=T.bool), [(3, 4)]),
    "aten::eye": (lambda T: lambda x: T.eye(4) + x, [(4, 4)]),
    "aten::eye.m": (lambda T: lambda x: T.eye(3, 5) + x, [(3, 5)]),
    "aten::stack": (lambda T: lambda x, y: T.stack([x, y], 1) + T.stack([x, y], -1).permute(0, 2, 1),
                    [(3, 4), (3, 4)]),
    "aten::unbind.int": (lambda T: lambda x: T.unbind(x, 1)[2] * 2, [(3, 4)]),
    "aten::roll": (lambda T: lambda x: T.roll(x, 1, 0) + T.roll(x, (1, -2), (0, 1)) + T.roll(x, 5), [(3, 4)]),
    "aten::tril": (lambda T: lambda x: T.tril(x, 1), [(2, 3, 4)]),
    "aten::triu": (lambda T: lambda x: T.triu(x, -1), [(3, 4)]),
    "aten::logsumexp": (lambda T: lambda x: T.logsumexp(x, 1) + T.logsumexp(x, (0, 1), keepdim=True), [(3, 4)]),
    "aten::lerp.Scalar": (lambda T: lambda x, y: T.lerp(x, y, 0.3) + T.lerp(x, y, 0.75), [(3, 4), (3, 4)]),
    "aten::lerp.Tensor": (lambda T: lambda x, y, w: T.lerp(x, y, w), [(3, 4), (3, 4), (4,)]),
    "aten::hardswish": (lambda T: lambda x: T.nn.functional.hardswish(x * 4), [(3, 4)]),
    "aten::softplus": (lambda T: lambda x: T.nn.functional.softplus(x, 2, 1) + T.nn.functional.softplus(x),
                       [(3, 4)]),
    "aten::mse_loss": (lambda T: lambda x, y: T.nn.functional.mse_loss(x, y) + T.nn.functional.mse_loss(
        x, y, reduction="sum") + T.nn.functional.mse_loss(x, y, reduction="none"), [(3, 4), (3, 4)]),
    "aten::smooth_l1_loss": (lambda T: lambda x, y: T.nn.functional.smooth_l1_loss(x, y, beta=0.5), [(3, 4), (3, 4)]),
    "aten::binary_cross_entropy_with_logits": (lambda T: lambda x, y, w, p: (
        T.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid())
        + T.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid(), w, pos_weight=p, reduction="sum")),
        [(3, 4), (3, 4), (4,), (4,)]),
    "aten::nll_loss_forward": (lambda T: lambda x, w: (
        T.nn.functional.nll_loss(x.log_softmax(1), T.tensor([0, 2, 1]))
        + T.nn.functional.nll_loss(x, T.tensor([3, -100, 1]), w.abs(), reduction="sum")
        + T.nn.functional.nll_loss(x, T.tensor([3, 1, 1]), w.abs(), reduction="none").sum()
        + T.nn.functional.nll_loss(x[0], T.tensor(2))), [(3, 4), (4,)]),
    "aten::index_add": (lambda T: lambda x, s: x.index_add(0, T.tensor([0, 2]), s, alpha=2)
                        + x.index_add(1, T.tensor([3]), s[:1, :1].expand(3, 1)),
                        [(3, 4), (2, 4)]),
    "aten::linspace": (lambda T: lambda x: x + T.linspace(0, 1, 4) + T.linspace(-2, 3.5, 4, dtype=T.float64).float(),
                       [(3, 4)]),
}


def test_core_table_is_the_part_of_torchs_core_table_internals_decomposes():
    torch_core = {op.name() for op in _torch_core_table()}
    ours = {op.name() for op in core_aten_decompositions()}
    assert ours == set(CORE_PROGRAMS)
    assert ours <= torch_core
    # a core decomposition is the compiler's too, or one the compiler does without
    assert all(op in decomposition_table or op in _core_only_table for op in core_aten_decompositions())


@pytest.mark.parametrize("name", sorted(CORE_PROGRAMS))
def test_core_decomposition_traces_torchs_sequence(name):
    program, shapes = CORE_PROGRAMS[name]
    targets = _compare(program, shapes, core_aten_decompositions(), _torch_core_table())
    base, _, overload = name.split("::")[1].partition(".")
    assert f"aten.{base}.{overload or 'default'}" not in targets


def test_linear_decomposes_as_torchs_addmm():
    """``view, t, mm, mul, mul, add, view``: torch keeps alpha's and beta's multiplies even at 1,
    and adds the product first."""
    def program(T):
        return lambda x, w, b: T.nn.functional.linear(x, w, b)
    targets = _compare(program, [(2, 3, 4), (5, 4), (5,)], get_decompositions([internals.ops.aten.addmm]),
                       torch_get_decompositions([torch.ops.aten.addmm]))
    assert targets == ["aten.view.default", "aten.t.default", "aten.mm.default", "aten.mul.Tensor",
                       "aten.mul.Tensor", "aten.add.Tensor", "aten.view.default"]


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0, 2), (0.5, -3)])
def test_addmm_with_scalings_decomposes_as_torchs(beta, alpha):
    def program(T):
        return lambda b, x, w: T.addmm(b, x, w, beta=beta, alpha=alpha)
    _compare(program, [(3, 5), (3, 4), (4, 5)], get_decompositions([internals.ops.aten.addmm]),
             torch_get_decompositions([torch.ops.aten.addmm]))


def _calls(gm):
    """Every call's target and arguments, the dtypes and devices as torch writes them."""
    return [(str(n.target), repr(n.args), repr(n.kwargs).replace("internals.", "torch."))
            for n in gm.graph.nodes if n.op == "call_function"]


LINSPACE = {
    "default dtype": lambda T: T.linspace(0, 1, 5),
    "float64": lambda T: T.linspace(-2, 3.5, 5, dtype=T.float64),
    "int64, in floats then converted": lambda T: T.linspace(0, 10, 5, dtype=T.int64),
    "uint8 going down": lambda T: T.linspace(7, 0, 4, dtype=T.uint8),
    "float16, in float32": lambda T: T.linspace(0, 10, 5, dtype=T.float16),
    "bfloat16": lambda T: T.linspace(3, -1.5, 6, dtype=T.bfloat16),
    "complex": lambda T: T.linspace(1j, 2, 5),
    "one step": lambda T: T.linspace(2, 3, 1, dtype=T.float64),
    "no steps": lambda T: T.linspace(2, 3, 0),
}


def _no_inputs(program, T):
    """``program(T)`` as a function of no arguments, for make_fx."""
    return lambda: program(T)


@pytest.mark.parametrize("name", LINSPACE)
def test_linspace_decomposes_as_torchs_node_for_node(name):
    """``core_aten_decompositions()``'s linspace: an ``arange`` of the step numbers, counted up
    from ``start`` for the first half and down from ``end`` for the rest, in torch's nodes with
    torch's arguments; the graph's values are torch's."""
    graphs = {T: fx(_no_inputs(LINSPACE[name], T), decomposition_table=table)()
              for T, fx, table in ((torch, torch_make_fx, _torch_core_table()),
                                   (internals, make_fx, core_aten_decompositions()))}
    assert _calls(graphs[internals]) == _calls(graphs[torch])
    assert "aten.linspace.default" not in _calls(graphs[internals])
    internals.testing.check(graphs[internals](), graphs[torch](), exact_layout=False)


def test_linspace_decomposition_refuses_what_torchs_refuses():
    for T, fx, table in ((torch, torch_make_fx, _torch_core_table()), (internals, make_fx, core_aten_decompositions())):
        with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
            fx(_no_inputs(lambda T: T.linspace(0, 1, -1), T), decomposition_table=table)()


def _bf16(lib, seed=0):
    return lib.tensor(np.random.default_rng(seed).standard_normal((3, 4)).astype(np.float32)).to(lib.bfloat16)


# Decompositions of a half-precision input compute in float32 and round once, as the eager
# kernels do: each starts with a _to_copy to float32 and ends with one back (torch's
# pw_cast_for_opmath), where rounding after every step gave other values.
HALF_PRECISION = {
    "_softmax": lambda T: lambda x: x.softmax(-1),
    "_log_softmax": lambda T: lambda x: x.log_softmax(-1),
    "silu": lambda T: lambda x: T.nn.functional.silu(x),
    "tanh_backward": lambda T: lambda x: T.ops.aten.tanh_backward(x, x),
    "sigmoid_backward": lambda T: lambda x: T.ops.aten.sigmoid_backward(x, x),
    "silu_backward": lambda T: lambda x: T.ops.aten.silu_backward(x, x),
    "_softmax_backward_data": lambda T: lambda x: T.ops.aten._softmax_backward_data(x, x, 1, x.dtype),
    "_log_softmax_backward_data": lambda T: lambda x: T.ops.aten._log_softmax_backward_data(x, x, 1, x.dtype),
    "leaky_relu_backward": lambda T: lambda x: T.ops.aten.leaky_relu_backward(x, x, 0.1, False),
    "hardtanh_backward": lambda T: lambda x: T.ops.aten.hardtanh_backward(x, x, -0.5, 0.5),
    "mse_loss_backward": lambda T: lambda x: T.ops.aten.mse_loss_backward(x[0, 0], x, x, 1),
    "mv": lambda T: lambda x: T.mv(x, x[0]),
    "addcmul": lambda T: lambda x: T.addcmul(x, x, x, value=0.5),
    "addcdiv": lambda T: lambda x: T.addcdiv(x, x, x, value=0.5),
}


@pytest.mark.parametrize("name", HALF_PRECISION)
def test_a_bfloat16_decomposition_computes_in_float32_as_torchs(name):
    program = HALF_PRECISION[name]
    theirs = torch_make_fx(program(torch), decomposition_table=torch_get_decompositions(
        [getattr(torch.ops.aten, name)]))(_bf16(torch))
    ours = make_fx(program(internals), decomposition_table=get_decompositions(
        [getattr(internals.ops.aten, name)]))(_bf16(internals))
    assert ours.graph.call_targets() == _targets(theirs)
    assert "aten._to_copy.default" in _targets(theirs)
    got, want = ours(_bf16(internals, 1)), theirs(_bf16(torch, 1))
    assert got.dtype is internals.bfloat16
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2 ** -7)


@pytest.mark.parametrize("program", [lambda x: x.softmax(-1), lambda x: x.mean(-1), lambda x: x.sigmoid() * 3],
                         ids=["softmax", "mean", "sigmoid"])
def test_compiled_bfloat16_rows_are_torchs(program):
    """The compiler's own table (mean.dim and sigmoid are in it, not in torch's) computes a
    bfloat16 softmax, mean or sigmoid in float32: its values are torch's compiled ones."""
    got = internals.compile(program)(_bf16(internals))
    want = torch.compile(program, backend="aot_eager")(_bf16(torch))
    assert got.dtype is internals.bfloat16
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2 ** -9)
