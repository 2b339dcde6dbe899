"""AOTAutograd (``internals._functorch``): the joint graph, its partition, and compiled functions
whose gradients equal torch's, with torch's ``CompiledFunctionBackward`` as their grad_fn."""
import numpy as np
import pytest
import torch
from torch._functorch.aot_autograd import aot_function as torch_aot_function
from torch._functorch.partitioners import default_partition as torch_default_partition

import internals
from internals._functorch import AOTCompiled, trace_joint
from internals._inductor import compile_fx


def _close(got, want):
    """float32 through matrix products and sums: a tolerance for reordered sums (cancellation
    makes ulps of a result near zero meaningless)."""
    torch.testing.assert_close(got.detach().to_torch(), want.detach(), rtol=1e-5, atol=1e-6)


def _data(*shape, seed=0, requires_grad=False):
    a = np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(np.float32)
    return internals.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


def _lib(x):
    return internals if isinstance(x, internals.Tensor) else torch


def relu_tanh(x, w, b):
    return _lib(x).relu(x @ w + b).tanh() * 2


def gelu_ish(x, b):
    return (x * _lib(x).sigmoid(1.702 * x) + b) * 0.5


def layer_norm(x):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / _lib(x).sqrt(var + 1e-5)


def mse(x, w, y):
    return ((x @ w - y) ** 2).mean()


def two_outputs(x, w):
    h = x @ w
    return h.exp(), h.relu()


# name: (function, shapes, which inputs require grad)
PROGRAMS = {
    "relu_tanh": (relu_tanh, [(6, 3), (3, 5), (5,)], [False, True, True]),
    "gelu_ish": (gelu_ish, [(8, 7), (7,)], [True, True]),
    "layer_norm": (layer_norm, [(4, 9)], [True]),
    "mse": (mse, [(6, 4), (4, 2), (6, 2)], [False, True, False]),
    "two_outputs": (two_outputs, [(3, 4), (4, 5)], [True, True]),
}


def _inputs(name):
    _, shapes, grads = PROGRAMS[name]
    pairs = [_data(*s, seed=i, requires_grad=g) for i, (s, g) in enumerate(zip(shapes, grads))]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _loss(out):
    outs = out if isinstance(out, tuple) else (out,)
    return sum((o * (i + 1)).sum() for i, o in enumerate(outs))


def _grads(args):
    return [a.grad for a in args if a.requires_grad]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_gradients_equal_torchs_and_eager_internals(name):
    fn = PROGRAMS[name][0]
    ours, theirs = _inputs(name)
    compiled = internals.compile(fn)
    out = compiled(*ours)
    outs = out if isinstance(out, tuple) else (out,)
    assert all(type(o.grad_fn).__name__ == "CompiledFunctionBackward" for o in outs)
    assert compiled.break_reasons == []
    _loss(out).backward()
    _loss(fn(*theirs)).backward()
    eager = [a.detach().requires_grad_(a.requires_grad) for a in ours]
    _loss(fn(*eager)).backward()
    for got, want, plain in zip(_grads(ours), _grads(theirs), _grads(eager)):
        _close(got, want)
        _close(got, plain.to_torch())
    for o, t in zip(outs, fn(*theirs) if isinstance(out, tuple) else (fn(*theirs),)):
        _close(o, t)


def _torch_saved(fn, args):
    """The names torch's default_partition saves for backward on the same program."""
    seen = {}

    def partition(joint, inputs, **kwargs):
        fwd, bwd = torch_default_partition(joint, inputs, **kwargs)
        seen["saved"] = [n.name for n in bwd.graph.nodes if n.op == "placeholder" and "tangents" not in n.name]
        return fwd, bwd
    torch_aot_function(fn, fw_compiler=lambda gm, _: gm, bw_compiler=lambda gm, _: gm,
                       partition_fn=partition)(*args)
    return seen["saved"]


@pytest.mark.parametrize("name", ["relu_tanh", "two_outputs", "mse"])
def test_the_saved_values_are_torchs(name):
    fn = PROGRAMS[name][0]
    ours, theirs = _inputs(name)
    compiled = AOTCompiled(fn, ours, lambda gm: gm)
    assert compiled.saved == _torch_saved(fn, theirs)


def test_nn_linear_compiled_trains_like_torch():
    torch.manual_seed(0)
    lin_t = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    lin_i = internals.nn.Sequential(internals.nn.Linear(4, 8), internals.nn.ReLU(), internals.nn.Linear(8, 3))
    lin_i.load_state_dict({k: internals.from_torch(v) for k, v in lin_t.state_dict().items()})
    x, x_t = _data(5, 4)
    compiled = internals.compile(lin_i)
    out = compiled(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    out.pow(2).sum().backward()
    lin_t(x_t).pow(2).sum().backward()
    for p_t, p_i in zip(lin_t.parameters(), lin_i.parameters()):
        _close(p_i.grad, p_t.grad)
    assert compiled.aot.saved[:1] == ["primals_1"]       # the input, for the weight's gradient


def test_the_partition_splits_at_the_forward():
    ours, _ = _inputs("relu_tanh")
    joint, info = trace_joint(relu_tanh, ours)
    compiled = AOTCompiled(relu_tanh, ours, lambda gm: gm)
    fwd_inputs = [n.name for n in compiled.forward_graph.graph.nodes if n.op == "placeholder"]
    bwd_inputs = [n.name for n in compiled.backward_graph.graph.nodes if n.op == "placeholder"]
    assert fwd_inputs == ["primals_1", "primals_2", "primals_3"]
    assert bwd_inputs == compiled.saved + ["tangents_1"]
    # relu's backward, as the core decomposition table writes threshold_backward: where(out <= 0, 0, grad)
    backward_ops = compiled.backward_graph.graph.call_targets()
    assert {"aten.le.Scalar", "aten.where.self"} <= set(backward_ops)
    assert "aten.threshold_backward.default" not in backward_ops
    assert not any("backward" in t for t in compiled.forward_graph.graph.call_targets())
    assert info.differentiable == [True]
    # one gradient per primal: None for the input that does not require grad
    assert compiled.backward_graph.graph.nodes[-1].args[0][0] is None


def test_an_unused_output_gets_a_zero_gradient():
    ours, theirs = _inputs("two_outputs")
    a, _ = internals.compile(two_outputs)(*ours)
    a.sum().backward()
    a_t, _ = two_outputs(*theirs)
    a_t.sum().backward()
    _close(ours[1].grad, theirs[1].grad)


def test_fused_kernels_compute_both_halves():
    ours, _ = _inputs("gelu_ish")
    compiled = AOTCompiled(gelu_ish, ours, lambda gm: compile_fx(gm, "cpu"))
    assert compiled.forward_compiled.kernels and compiled.backward_compiled.kernels


def _closing_over_a_linear_in_a_list(T):
    T.manual_seed(0)
    layers = [T.nn.Linear(3, 2)]

    def f(x):
        return layers[0](x).relu()
    return f, layers[0]


def test_a_closed_over_module_in_a_list_has_its_parameters_lifted():
    """A function closing over a list holding an nn.Linear: the Linear's parameters become
    inputs of the joint graph (Dynamo lifts them), so it compiles where it ran eagerly, the
    batch size changing as torch's (1, 2, 2, 2 graphs) and every gradient torch's."""
    from torch._dynamo.testing import CompileCounter
    torch._dynamo.reset()
    counter = CompileCounter()
    (theirs_fn, theirs_lin), (ours_fn, ours_lin) = (_closing_over_a_linear_in_a_list(T) for T in (torch, internals))
    theirs, ours = torch.compile(theirs_fn, backend=counter), internals.compile(ours_fn)
    counts = []
    for n in (2, 3, 4, 5):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        xt, xo = torch.tensor(x, requires_grad=True), internals.tensor(x, requires_grad=True)
        want, got = theirs(xt), ours(xo)
        assert type(got.grad_fn).__name__ == "CompiledFunctionBackward"     # torch's with an AOT backend
        want.sum().backward()
        got.sum().backward()
        for g, w in [(got, want), (xo.grad, xt.grad), (ours_lin.weight.grad, theirs_lin.weight.grad),
                     (ours_lin.bias.grad, theirs_lin.bias.grad)]:
            _close(g, w.detach())
        counts.append((len(ours.graphs), counter.frame_count))
    assert [a for a, _ in counts] == [b for _, b in counts] == [1, 2, 2, 2] and not ours.break_reasons


# A global tensor that requires grad: not lifted to an input of the graph here (torch lifts it).
_GLOBAL_WEIGHT = internals.ones(3, requires_grad=True)


def test_what_is_not_lifted_runs_eagerly_and_no_grad_compiles_forward_only():
    """A closed-over tensor that requires grad is an input of the joint graph, as torch lifts
    it: its gradient arrives. A global one is not lifted here: the function runs eagerly."""
    w = internals.ones(3, requires_grad=True)
    closure = internals.compile(lambda x: x * w)
    y = closure(internals.ones(2, 3))
    assert type(y.grad_fn).__name__ == "CompiledFunctionBackward" and not closure.break_reasons
    y.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    by_global = internals.compile(lambda x: x * _GLOBAL_WEIGHT)
    assert type(by_global(internals.ones(2, 3)).grad_fn).__name__ == "MulBackward0"
    assert "closed over requires grad" in by_global.break_reasons[0]
    x = internals.ones(2, 3, requires_grad=True)
    with internals.no_grad():
        assert internals.compile(gelu_ish)(x, internals.ones(3)).grad_fn is None


def test_aot_function_takes_torchs_compilers():
    """``aot_function(fn, fw_compiler, bw_compiler)``: each compiler gets its graph and the
    graph's example inputs (one per placeholder, of the placeholders' sizes), as torch's does;
    outputs and gradients are torch's."""
    seen = {}

    def compiler(kind):
        def compile_graph(gm, example_inputs):
            placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
            seen[kind] = [tuple(v.shape) for v in example_inputs]
            assert seen[kind] == [tuple(n.meta["val"].shape) for n in placeholders]
            return gm
        return compile_graph

    (x, tx), (w, tw) = _data(3, 4, requires_grad=True), _data(4, seed=1, requires_grad=True)
    ours = internals._functorch.aot_function(lambda a, b: (a * b).tanh(), compiler("fw"), compiler("bw"))(x, w)
    theirs = (tx * tw).tanh()
    ours.sum().backward()
    theirs.sum().backward()
    assert seen["fw"] == [(3, 4), (4,)] and seen["bw"][-1] == (3, 4)      # the tangent comes last
    assert type(ours.grad_fn).__name__ == "CompiledFunctionBackward"
    for got, want in ((ours, theirs), (x.grad, tx.grad), (w.grad, tw.grad)):
        _close(got, want)


def _cube_tanh(x):
    return (x * x).tanh()


def _two_outputs_summed(x):
    return ((x * x).tanh(), x.exp())


@pytest.mark.parametrize("fn", [_cube_tanh, _two_outputs_summed])
def test_double_backward_through_a_compiled_function_raises_torchs_error(fn):
    """``grad(create_graph=True)`` gives a gradient whose grad_fn is torch's
    CompiledFunctionBackwardBackward; differentiating it again raises torch's RuntimeError (the
    backward graph has no derivatives of its own), where the package computed a wrong value."""
    outcomes = {}
    for T, compiled in ((torch, torch.compile(fn, backend="aot_eager")), (internals, internals.compile(fn))):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        out = compiled(x)
        out = out if isinstance(out, T.Tensor) else out[0] + out[1]
        gx, = T.autograd.grad(out.sum(), x, create_graph=True)
        with pytest.raises(RuntimeError) as info:
            gx.sum().backward()
        outcomes[T] = (type(gx.grad_fn).__name__, str(info.value))
    assert outcomes[internals] == outcomes[torch]


def _softmax(x):
    return x.softmax(-1)


def _log_softmax_tanh(x):
    return x.log_softmax(-1).tanh()


def _silu_mse(x):
    return _lib(x).nn.functional.mse_loss(_lib(x).nn.functional.silu(x), x.detach() * 0.5)


def _aot_graphs(T, fn, x, decompositions):
    """The operators of the forward and backward graphs ``aot_function`` hands its compilers,
    and the output and gradient it computes."""
    seen = {}

    def compiler(kind):
        def compile_graph(gm, example_inputs):
            seen[kind] = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
            return gm
        return compile_graph
    aot = torch_aot_function if T is torch else internals._functorch.aot_function
    kwargs = {} if decompositions is None else {"decompositions": decompositions}
    out = aot(fn, compiler("fw"), compiler("bw"), **kwargs)(x)
    out.sum().backward()
    return seen, out, x.grad


@pytest.mark.filterwarnings("ignore:Your compiler for AOTAutograd")
@pytest.mark.parametrize("core", [False, True], ids=["no_table", "core_table"])
@pytest.mark.parametrize("fn", [_softmax, _log_softmax_tanh, _silu_mse])
def test_aot_function_decomposes_only_with_a_table_as_torchs(fn, core):
    """As torch's, ``aot_function`` keeps the operators the program ran (``_softmax``,
    ``_softmax_backward_data``) unless ``decompositions=`` is given; with the core table both
    graphs are torch's too."""
    from torch._decomp import core_aten_decompositions as torch_core

    from internals._decomp import core_aten_decompositions
    (x, tx) = _data(3, 4, requires_grad=True)
    ours = _aot_graphs(internals, fn, x, core_aten_decompositions() if core else None)
    theirs = _aot_graphs(torch, fn, tx, torch_core() if core else None)
    assert ours[0] == theirs[0]
    for got, want in zip(ours[1:], theirs[1:]):
        _close(got, want)


def test_compile_still_decomposes_with_its_own_table():
    """``internals.compile`` passes the compiler's table: its graphs hold the pieces of softmax."""
    compiled = AOTCompiled(_softmax, [_data(3, 4, requires_grad=True)[0]], lambda gm: gm)
    targets = [str(n.target) for n in compiled.forward_graph.graph.nodes if n.op == "call_function"]
    assert "aten._softmax.default" not in targets and "aten.amax.default" in targets
