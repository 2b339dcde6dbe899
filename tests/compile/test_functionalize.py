"""Functionalization through views against torch's (``torch.func.functionalize`` under
``make_fx``, and eager torch for the values).

Each program writes through a view -- a column, a diagonal, a slice, a strided view of a
reshape, a view of a view, a transpose, an input, one output of split or unbind, an expand.
internals traces it and runs its functionalize pass; torch traces it functionalized. The graphs
must call the same operators in the same order (the view's functional op, its ``*_scatter``
into the base, the views replayed from the new base), and ``internals.compile`` must return
eager torch's values, with the written inputs written.
"""
import operator

import numpy as np
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import internals
from internals.fx.experimental.proxy_tensor import make_fx
from internals.fx.passes import functionalize


def column(x, y):
    h = x.clone()
    h[:, 0].mul_(3)
    return h


def diagonal(x, y):
    h = x.clone()
    h.diagonal().add_(1)
    return h


def rows(x, y):
    h = x.clone()
    h[1:].zero_()
    return h


def strided_reshape(x, y):
    h = x.clone()
    h.view(-1)[::2].fill_(0)
    return h


def view_of_view(x, y):
    h = x.clone()
    v = h[1:]
    v[:, 1].add_(2)
    return h, v


def other_view_read_later(x, y):
    h = x.clone()
    a, b = h[0], h[:, 1]
    a.add_(1)
    return b * 2, a + 1


def transposed(x, y):
    h = x.clone()
    h.t()[0].fill_(5)
    return h


def copy_then_write_again(x, y):
    h = x.clone()
    h[0].copy_(y)
    a = h[1]
    a.add_(1)
    return a * 2, h.fill_(2)


def permuted(x, y):
    h = x.clone()
    h.unsqueeze(0).permute(2, 0, 1)[1].sub_(1)
    return h * 1


def as_strided_window(x, y):
    h = x * 1
    h.as_strided((2, 2), (4, 1), 1).add_(5)
    return h


def input_through_view(x, y):
    x[:, 0].mul_(3)
    return x + 1


def input_whole(x, y):
    x.add_(y)
    return x.sum()


def split_piece(x, y):
    h = x.clone()
    a, b = h.split(2)
    b.mul_(3)
    return h + 1, a, b


def chunk_of_transpose(x, y):
    h = x.clone()
    h.t().chunk(2)[1].add_(y[:3])
    return h


def split_with_sizes_piece(x, y):
    h = x.clone()
    h.split_with_sizes([1, 2], 0)[1].mul_(2)
    return h


def unbind_then_slice(x, y):
    h = x.clone()
    h.unbind(0)[2][1:].zero_()
    return h


def unfold_windows(x, y):
    h = x.clone()
    h.unfold(1, 2, 2)[..., 0].mul_(2)
    return h


def squeeze_all(x, y):
    h = x.clone()
    h.unsqueeze(0).squeeze().add_(1)
    return h


def through_expand(x, y):
    h = x.clone()
    h.expand(2, 3, 4)[0].add_(y)
    return h


def complex_real_part(x, y):
    """``.real`` is ``select(view_as_real(h), -1, 0)``: the write goes back through ``select_scatter``
    and then ``view_as_complex``, ``view_as_real``'s inverse."""
    h = x * (1 + 2j)
    h.real.mul_(2)
    return h


def complex_imag_part_of_a_row(x, y):
    h = x * (2 - 1j)
    h[1].imag.add_(y)
    return h * 1, h.real


def view_taken_after_a_write(x, y):
    """A view made after its memory was written is replayed at its first read even when its
    input was just synced: torch's new views start at generation 0."""
    h = x.clone()
    h[0].add_(1)
    b = h * 1
    return h[1][1:] * 2, b


def base_written_then_viewed(x, y):
    h = x.clone()
    h.add_(y)
    return h[0] * 2


PROGRAMS = [column, diagonal, rows, strided_reshape, view_of_view, other_view_read_later, transposed,
            copy_then_write_again, permuted, as_strided_window, input_through_view, input_whole,
            split_piece, chunk_of_transpose, split_with_sizes_piece, unbind_then_slice, unfold_windows,
            squeeze_all, through_expand, complex_real_part, complex_imag_part_of_a_row,
            view_taken_after_a_write, base_written_then_viewed]


def _inputs(lib, seed=0):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    return lib.tensor(x), lib.tensor(y)


def _targets(gm):
    return ["operator.getitem" if n.target is operator.getitem else str(n.target).replace("internals.ops.", "")
            for n in gm.graph.nodes if n.op == "call_function"]


def _as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


def _same(got, want):
    """Bit for bit, except a sum, whose order of additions follows the CPU: a few ulps."""
    assert tuple(got.shape) == tuple(want.shape)
    rtol = 4 * np.finfo(np.float32).eps if got.dim() == 0 else 0
    np.testing.assert_allclose(got.detach().to_torch().numpy(), want.detach().numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_graph_calls_torchs_functionalized_sequence(program):
    theirs = torch_make_fx(torch.func.functionalize(program))(*_inputs(torch))
    ours = functionalize(make_fx(program)(*_inputs(internals)))
    assert _targets(ours) == _targets(theirs)
    assert not any(t.split(".")[1].endswith("_") and t != "aten.copy_.default" for t in _targets(ours))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_compiled_values_and_written_inputs_equal_eager_torchs(program):
    (x, y), (tx, ty) = _inputs(internals), _inputs(torch)
    compiled = internals.compile(program)
    got, want = _as_tuple(compiled(x, y)), _as_tuple(program(tx, ty))
    assert not compiled.break_reasons          # compiled, not run eagerly
    for g, w in zip(got, want, strict=True):
        _same(g, w)
    _same(x, tx)                               # a written input holds torch's values
    _same(y, ty)


@pytest.mark.parametrize("program", [complex_real_part, complex_imag_part_of_a_row], ids=lambda p: p.__name__)
def test_complex_parts_select_the_last_dim_by_its_number_as_torch_does(program):
    """``real``/``imag`` select the last dim of ``view_as_real`` by its count from the front
    (``real_tensor.dim() - 1``), so the graphs' ``select`` and ``select_scatter`` arguments match."""
    def selects(gm):
        return [[a for a in n.args if not isinstance(a, (torch.fx.Node, internals.fx.Node))]
                for n in gm.graph.nodes if n.op == "call_function" and "select" in str(n.target)]
    theirs = torch_make_fx(torch.func.functionalize(program))(*_inputs(torch))
    ours = functionalize(make_fx(program)(*_inputs(internals)))
    assert selects(ours) == selects(theirs)


def views_of_one_written_input(x, y):
    flat = x.view(-1)[1:]
    flat.add_(1)
    return x.t(), flat.unsqueeze(0), x.diagonal(), x.t() + 1


def views_without_writes(x, y):
    a, b, c = x.split(1)
    d = x.unbind(1)
    return a.expand(3, 4), b.squeeze(0), d[0].unsqueeze(1), x.permute(1, 0), x.transpose(0, 1).select(0, 1), c


def many_views_of_a_written_copy(x, y):
    h = x.clone()
    h[:, 0].mul_(2)
    return h.view(12), h.unfold(1, 2, 1), h.as_strided((2,), (1,)), h.narrow(0, 0, 1), h.detach()


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("program", [*PROGRAMS, views_of_one_written_input, views_without_writes,
                                     many_views_of_a_written_copy], ids=lambda p: p.__name__)
def test_traced_func_functionalize_calls_torchs_sequence(program, remove):
    """``make_fx(functionalize(f, remove=...))``: the operators torch's trace records, in its order
    (the views after a write replayed, dead or not; with ``mutations_and_views`` each view its
    ``{view}_copy``, the copy back into an input reading one), and nothing of the inner trace."""
    theirs = torch_make_fx(torch.func.functionalize(program, remove=remove))(*_inputs(torch))
    ours = make_fx(internals.func.functionalize(program, remove=remove))(*_inputs(internals))
    assert _targets(ours) == _targets(theirs)


def test_functionalized_graph_runs_on_new_inputs():
    """The graph is a function of its inputs: traced on one pair, run on another."""
    gm = functionalize(make_fx(view_of_view)(*_inputs(internals)))
    for g, w in zip(gm(*_inputs(internals, 1)), view_of_view(*_inputs(torch, 1)), strict=True):
        _same(g, w)


def test_stale_views_replayed_torch_way_are_dropped_as_dead_code():
    """torch's tracer replays the written view after the scatter even when nobody reads it
    (``select_1``); the compiler's dead-code pass drops it, and keeps the copy_ into the input."""
    gm = functionalize(make_fx(input_through_view)(*_inputs(internals)))
    assert _targets(gm).count("aten.select.int") == 2
    gm.graph.eliminate_dead_code()
    assert _targets(gm) == ["aten.select.int", "aten.mul.Tensor", "aten.select_scatter.default",
                            "aten.add.Tensor", "aten.copy_.default"]


def test_gradients_through_a_compiled_write_through_views_equal_torchs():
    """AOTAutograd traces the joint graph, functionalized: the scatters' backward nodes
    (SelectScatterBackward0, DiagonalScatterBackward0) are differentiated as torch's."""
    def f(x):
        h = x * 1
        h[:, 0].mul_(3)
        h.diagonal().add_(h[0, 1])
        return (h * h).sum()
    x, tx = _inputs(internals)[0].requires_grad_(), _inputs(torch)[0].requires_grad_()
    compiled = internals.compile(f)
    out, want = compiled(x), f(tx)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward" and not compiled.break_reasons
    out.backward(), want.backward()
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.to_torch().numpy(), tx.grad.numpy(), rtol=1e-6)


def test_a_write_through_overlapping_unfold_windows_is_refused_and_runs_eagerly():
    """Eagerly each window's write lands in turn (an element in two windows is tripled twice);
    one scatter cannot say that, so torch's ``unfold_inverse`` refuses (size > step) and the
    compiler runs the function eagerly, with eager torch's values."""
    def f(T):
        def g(x):
            h = x.clone()
            h.unfold(0, 2, 1).mul_(3)
            return h
        return g
    with pytest.raises(RuntimeError, match="internal overlap"):
        torch_make_fx(torch.func.functionalize(f(torch)))(torch.arange(6.))
    with pytest.raises(NotImplementedError, match="overlap"):
        functionalize(make_fx(f(internals))(internals.arange(6.)))
    compiled = internals.compile(f(internals))
    np.testing.assert_array_equal(compiled(internals.arange(6.)).to_torch().numpy(), f(torch)(torch.arange(6.)).numpy())
    assert "overlap" in compiled.break_reasons[0]


def test_an_input_written_beside_one_that_requires_grad_is_written_in_the_forward():
    """Under AOTAutograd the copy_ into the written input belongs to the forward graph: the
    caller sees the write as soon as the call returns, as under eager torch."""
    def f(x, w):
        x[0].add_(1)
        return (x * w).sum()
    (x, w), (tx, tw) = _inputs(internals), _inputs(torch)
    w.requires_grad_(), tw.requires_grad_()
    compiled = internals.compile(f)
    out, want = compiled(x, w), f(tx, tw)
    _same(x, tx)
    assert compiled.aot.forward_graph.graph.call_targets()[-1] == "aten.copy_.default"
    out.backward(), want.backward()
    np.testing.assert_allclose(w.grad.to_torch().numpy(), tw.grad.numpy(), rtol=1e-6)
