"""internals.compile never answers from a stale graph: every value the traced function read is
guarded (closure cells, globals, module attributes, closed-over tensors, grad mode, default dtype),
and what cannot be guarded or traced runs eagerly with the reason recorded. Compared with eager
torch; torch.compile itself runs once, with its eager backend, where its guards are the point."""
import dataclasses
import math
import types

import numpy as np
import pytest
import torch
from torch._dynamo.testing import CompileCounter

import internals
from internals._dynamo import config, explain


def _same(got, want, rtol=0, atol=0):
    """Values, shape, dtype and strides of an internals tensor against a torch tensor."""
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.stride()) == tuple(want.stride())
    np.testing.assert_allclose(got.detach().to_torch().float().numpy(), want.detach().float().numpy(),
                               rtol=rtol, atol=atol)


def _rand(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return internals.tensor(a), torch.tensor(a)


def test_closure_change_recompiles_like_torch_compile():
    k = 2
    ours = internals.compile(lambda x: x * k)
    theirs = torch.compile(lambda x: x * k, backend="eager")   # Dynamo's guards without Inductor
    for value in (2, 7, 7.5):
        k = value
        want = theirs(torch.ones(2))
        torch.testing.assert_close(want, torch.ones(2) * k)
        _same(ours(internals.ones(2)), want)
    assert ours.recompiles == 3


def _closing_over(value):
    """A function closing over a number, and how to change the number."""
    k = value

    def scaled(x):
        return x * k

    def set_k(v):
        nonlocal k
        k = v
    return scaled, set_k


def test_a_closed_over_number_that_changed_becomes_a_symbol():
    """torch's frame state covers a closure variable as an argument: the first graph bakes the
    number in (guarded ``k == 1.0``), the recompile after a change takes it as an input, and
    that graph serves every later value (torch's 1, 2, 2, 2 graphs)."""
    for values in ((1.0, 2.0, 3.0, -0.5), (1, 2, 3, 4)):
        torch._dynamo.reset()
        counter = CompileCounter()
        (theirs, set_t), (ours, set_i) = _closing_over(values[0]), _closing_over(values[0])
        theirs, ours = torch.compile(theirs, backend=counter), internals.compile(ours)
        counts = []
        for v in values:
            set_t(v)
            set_i(v)
            x, tx = _rand(3)
            _same(ours(x), theirs(tx), rtol=1e-6)
            counts.append((counter.frame_count, len(ours.graphs)))
        assert [o for _, o in counts] == [t for t, _ in counts] == [1, 2, 2, 2]
        assert ours.recompile_reasons == [[f"0/0: k == {values[0]!r}"]]
        assert [n.name for n in ours.graphs[1].graph.nodes if n.op == "placeholder"] == ["x_1", "k_1"]


_TABLE = {"scale": 1.5}


def test_global_dict_entry_change():
    ours = internals.compile(lambda x: x * _TABLE["scale"])
    x, tx = _rand(3)
    for value in (1.5, -4.0):
        _TABLE["scale"] = value
        _same(ours(x), tx * _TABLE["scale"], rtol=1e-6)
    _TABLE["scale"] = 1.5


def test_module_attribute_change():
    settings = types.ModuleType("settings")
    settings.shift = 1.0
    ours = internals.compile(lambda x: x + settings.shift)
    x, tx = _rand(4)
    for value in (1.0, 10.0):
        settings.shift = value
        _same(ours(x), tx + value, rtol=1e-6)


def test_closed_over_tensor_replaced_and_mutated():
    c, tc = _rand(3, seed=1)
    ours = internals.compile(lambda x: x + c)
    x, tx = _rand(3)
    _same(ours(x), tx + tc)
    c, tc = _rand(2, 3, seed=2)                      # a new shape: the graph's constant is stale
    _same(ours(x), tx + tc)
    s = internals.tensor(2.0)                          # a one-element constant may be baked in
    scaled = internals.compile(lambda x: x * s)
    _same(scaled(x), tx * 2.0)
    s.fill_(5.0)
    _same(scaled(x), tx * 5.0)


def test_grad_mode_of_first_call_is_guarded():
    """A graph compiled under no_grad is not reused with grad on: the closed-over ``w`` that
    requires grad is an input of the graph compiled then, and its gradient arrives, as under
    torch.compile (``CompiledFunctionBackward``)."""
    w, tw = _rand(3, seed=3)
    w.requires_grad_(), tw.requires_grad_()
    ours = internals.compile(lambda x: x * w)
    theirs = torch.compile(lambda x: x * tw, backend="aot_eager")
    x, tx = _rand(3)
    with internals.no_grad(), torch.no_grad():
        assert ours(x).grad_fn is None and theirs(tx).grad_fn is None
    out, want = ours(x), theirs(tx)
    assert type(out.grad_fn).__name__ == type(want.grad_fn).__name__ == "CompiledFunctionBackward"
    out.sum().backward()
    want.sum().backward()
    _same(w.grad, tw.grad)


def test_autocast_state_is_guarded():
    a, ta = _rand(4, 4)
    ours = internals.compile(lambda a: a @ a)
    assert ours(a).dtype == internals.float32
    with internals.autocast("cpu", dtype=internals.bfloat16), torch.autocast("cpu", dtype=torch.bfloat16):
        _same(ours(a), ta @ ta, rtol=1e-2, atol=1e-2)      # bfloat16: a few ulps of tolerance
    _same(ours(a), ta @ ta, rtol=1e-5, atol=1e-6)
    assert ours.recompiles == 2


def test_default_dtype_is_guarded():
    ours = internals.compile(lambda x: x + internals.ones(2))
    x = internals.ones(2, dtype=internals.float64)
    before = ours(x).dtype
    internals.set_default_dtype(internals.float64)
    try:
        got = ours(internals.ones(2, dtype=internals.float64))
    finally:
        internals.set_default_dtype(internals.float32)
    torch.set_default_dtype(torch.float64)
    try:
        want = torch.ones(2, dtype=torch.float64) + torch.ones(2)
    finally:
        torch.set_default_dtype(torch.float32)
    assert before == internals.float64 and str(got.dtype) == str(want.dtype).replace("torch", "internals")
    assert ours.recompiles == 2


def test_object_attributes_read_are_guarded():
    """A closed-over object of a user class: its type and the attributes the function reads are
    guarded, as Dynamo's; a change recompiles (twice, as torch.compile), an unread one does not."""
    class Settings:
        pass
    s = Settings()
    s.k, s.unread = 3.0, 0
    ours = internals.compile(lambda x: x * s.k)
    graphs = []
    theirs = torch.compile(lambda x: x * s.k, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
    x, tx = _rand(2)
    for k, unread in ((3.0, 0), (3.0, 1), (-1.0, 1)):
        s.k, s.unread = k, unread
        _same(ours(x), theirs(tx))
    assert ours.recompiles == len(graphs) == 2


def test_object_without_equality_or_attributes_runs_eagerly():
    class Settings:
        __slots__ = ("k",)
    s = Settings()
    s.k = 3.0
    ours = internals.compile(lambda x: x * s.k)
    x, tx = _rand(2)
    _same(ours(x), tx * 3.0)
    s.k = -1.0
    _same(ours(x), tx * -1.0)
    assert ours.recompiles == 0 and "no equality" in ours.break_reasons[0]


def test_arguments_that_are_not_tensors():
    x, tx = _rand(2, 3)
    y, ty = _rand(3, seed=1)
    _same(internals.compile(lambda x, s: x * s)(x, 2.5), tx * 2.5, rtol=1e-6)
    scale = internals.compile(lambda x, s: x * s)
    _same(scale(x, 2), tx * 2)
    _same(scale(x, 3), tx * 3)                       # a new constant: recompiled, not reused
    kw = internals.compile(lambda x, *, ys, alpha=1.0: x * alpha + ys[0] - ys[1])
    _same(kw(x, ys=[y, y * 2], alpha=0.5), tx * 0.5 + ty - ty * 2, rtol=1e-6, atol=1e-6)
    d = internals.compile(lambda inputs: inputs["a"] @ inputs["b"].t())
    _same(d({"a": x, "b": x}), tx @ tx.t(), rtol=1e-5, atol=1e-5)


def test_nan_inf_constants_and_half_precision():
    x, tx = _rand(5)
    got = internals.compile(lambda x: internals.where(x > 0, x * math.inf, x * 0 + math.nan))(x)
    _same(got, torch.where(tx > 0, tx * math.inf, tx * 0 + math.nan))
    halves = ((internals.float16, torch.float16, 1e-3), (internals.bfloat16, torch.bfloat16, 8e-3))
    for ours_dtype, torch_dtype, ulp in halves:     # exp may round differently by an ulp across CPUs
        got = internals.compile(lambda x: (x * 2 + 1).exp())(x.to(ours_dtype))
        _same(got, (tx.to(torch_dtype) * 2 + 1).exp(), rtol=ulp)


def test_in_place_write_to_an_input():
    def f(T):
        def step(x):
            x.add_(1)
            return x * 2
        return step
    x, tx = _rand(4)
    ours = internals.compile(f(internals))
    _same(ours(x), f(torch)(tx))
    _same(x, tx)
    # compiled, as torch.compile does: the write becomes an add, copied back into x at the end
    assert not ours.break_reasons
    assert ours.graph_module.graph.call_targets() == ["aten.add.Tensor", "aten.mul.Tensor", "aten.copy_.default"]


def test_module_with_parameters_backpropagates():
    internals.manual_seed(0)
    lin = internals.nn.Linear(3, 2)
    tlin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        tlin.weight.copy_(lin.weight.detach().to_torch()), tlin.bias.copy_(lin.bias.detach().to_torch())
    x, tx = _rand(4, 3)
    out, tout = internals.compile(lin)(x), tlin(tx)
    # the parameters are lifted to inputs of an AOTAutograd graph, as torch.compile lifts them
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    out.sum().backward(), tout.sum().backward()
    _same(lin.weight.grad, tlin.weight.grad, rtol=1e-6)
    _same(lin.bias.grad, tlin.bias.grad, rtol=1e-6)


def test_devices_that_differ_raise_as_eager():
    if not internals.cuda.is_available():
        pytest.skip("no CUDA (real or simulated)")
    x = internals.ones(2)
    f = lambda x, y: x * 2 + y  # noqa: E731
    with pytest.raises(Exception) as eager:
        f(x.cuda(), x)
    with pytest.raises(type(eager.value)):
        internals.compile(f)(x.cuda(), x)


@pytest.mark.parametrize("call", [lambda c: c(3), lambda c: c(abs, mode="nope"), lambda c: c(abs, foo=1)],
                         ids=["not callable", "unknown mode", "unknown option"])
def test_bad_arguments_raise_as_torch_compile(call):
    with pytest.raises(Exception) as want:
        call(torch.compile)
    with pytest.raises(type(want.value)) as got:
        call(internals.compile)
    assert str(got.value) == str(want.value)


def test_explain_lists_graphs_and_breaks():
    """torch counts the graphs less one as breaks. A closed-over tensor that requires grad is an
    input of the graph in both (one graph, 0 breaks). Given an argument that shares its memory,
    torch compiles one graph; this package runs the function eagerly, no graph, so -1 breaks by
    the same count, the reason listed."""
    from torch._dynamo.backends.debugging import ExplainOutput
    ours_fields = [f.name for f in dataclasses.fields(internals._dynamo.ExplainOutput)]
    assert ours_fields == [f.name for f in dataclasses.fields(ExplainOutput)]
    x, x_t = _rand(3)
    torch._dynamo.reset()
    want = torch._dynamo.explain(lambda x: (x * 2).relu())(x_t)
    whole = explain(lambda x: (x * 2).relu())(x)
    assert (whole.graph_count, whole.graph_break_count) == (want.graph_count, want.graph_break_count) == (1, 0)
    assert whole.op_count == want.op_count == 1     # the user's calls as Dynamo's graph holds them: mul, not relu()
    w, w_t = internals.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    torch._dynamo.reset()
    want = torch._dynamo.explain(lambda x: x * w_t)(x_t)
    broken = explain(lambda x: x * w)(x)
    assert (want.graph_count, want.graph_break_count) == (1, 0)
    assert (broken.graph_count, broken.graph_break_count) == (1, 0)
    torch._dynamo.reset()
    want = torch._dynamo.explain(lambda x: x * w_t)(w_t.detach())
    broken = explain(lambda x: x * w)(w.detach())
    assert (want.graph_count, want.graph_break_count) == (1, 0)
    assert (broken.graph_count, broken.graph_break_count) == (0, -1)
    assert "shares memory with another input" in broken.break_reasons[0].reason


def test_recompile_limit_then_eager():
    assert config.recompile_limit == torch._dynamo.config.recompile_limit == 8
    f = internals.compile(lambda x: x * 2, dynamic=False)   # static: each size a graph of its own
    for n in range(1, 12):
        _same(f(internals.ones(n)), torch.ones(n) * 2)
    assert f.recompiles == 8 and "recompile_limit" in f.break_reasons[0]


class _Scaled(internals.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = 2.0

    def forward(self, x):
        return x * self.a


a = 1.0     # a global of the same name as the module's attribute: no value the forward reads


def test_an_attribute_name_is_no_global_the_function_reads():
    """``self.a`` loads an attribute, not the global ``a``: a change of the global keeps the
    graph, as Dynamo guards only the names the code loads as globals."""
    global a
    compiled = internals.compile(_Scaled())
    for value in (1.0, 5.0):
        a = value
        assert compiled(internals.ones(2)).tolist() == [2.0, 2.0]
    assert len(compiled.graphs) == 1 and compiled.recompile_reasons == []


def test_reset_forgets_the_cache_and_the_frame_state_as_torchs():
    """After ``reset`` the next call compiles again, static: a size that had made a dim
    dynamic is first-seen again (torch: 1, 2, 3, 4 graphs over sizes 3, 4, reset, 4, 5)."""
    counter = CompileCounter()
    torch._dynamo.reset()
    theirs, ours = torch.compile(lambda x: x * 2, backend=counter), internals.compile(lambda x: x * 2)
    counts = []
    for n in (3, 4, None, 4, 5):
        if n is None:
            torch._dynamo.reset()
            internals._dynamo.reset()
            continue
        np.testing.assert_array_equal(ours(internals.ones(n)).to_torch().numpy(), theirs(torch.ones(n)).numpy())
        counts.append((counter.frame_count, len(ours.graphs)))
    assert [o for _, o in counts] == [t for t, _ in counts] == [1, 2, 3, 4]
