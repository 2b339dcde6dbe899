"""``fx.symbolic_trace`` against torch.fx's: the same small programs traced by both libraries give
the same nodes (op, name, target, arguments; targets compared by name across the libraries), the
same generated ``code`` (torch's spelling of the library read as ours), the same results when
the traced module runs, and the same errors where a program needs a traced value's data."""
import math
import operator

import pytest
import torch
from helpers import assert_same_error, fx_code, fx_nodes, fx_text, fx_unwrapped

import internals


def _mlp(L):
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))


def _conv_bn_relu(L):
    class ConvBnRelu(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = L.nn.Conv2d(2, 3, 3, padding=1), L.nn.BatchNorm2d(3)

        def forward(self, x):
            return L.relu(self.bn(self.conv(x)))
    return ConvBnRelu().eval()


def _module_list(L):
    class Stack(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = L.nn.ModuleList([L.nn.Linear(3, 3), L.nn.Tanh(), L.nn.Linear(3, 2)])
            self.scale = L.nn.Parameter(L.full((2,), 0.5))

        def forward(self, x, shift=1.0):
            for layer in self.layers:
                x = layer(x)
            y = x.softmax(dim=-1) * self.scale + shift * self.scale     # one get_attr node for both
            return y[:, 0], x.shape[0], 2 - y
    return Stack()


def _function(L):
    def scaled(x, y, scale=3):
        z = L.add(x, y, alpha=2.0).clamp(min=0.0)
        return L.nn.functional.gelu(z).sum(dim=1, keepdim=True) / scale + L.tensor([[0.5], [-0.5]])
    return scaled


def _unpacking(L):
    def halves(x):
        top, bottom = x.split(1)            # unpacking a traced value: one getitem per name
        return L.cat([bottom, top]).neg(), abs(top) / math.sqrt(x.size(-1))   # math's calls recorded
    return halves


def _buffers(L):
    class Centred(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mean", L.tensor([0.25, -0.5, 1.0]))

        def forward(self, x):
            # a buffer read is the tensor itself: ``mean.sum()`` runs while tracing (a constant),
            # ``x - self.mean`` reads the buffer through a get_attr node
            return (x - self.mean) * self.mean.sum()
    return Centred()


def _keyword_proxy(L):
    class Scaled(L.nn.Module):
        def forward(self, x, *, alpha=2.0):
            return L.add(x, x.flip(0), alpha=alpha)     # a traced value where a number is expected
    return Scaled()


CASES = {"mlp": (_mlp, (2, 3)), "conv_bn_relu": (_conv_bn_relu, (1, 2, 4, 4)),
         "module_list": (_module_list, (2, 3)), "function": (_function, (2, 3)), "unpacking": (_unpacking, (2, 3)),
         "buffers": (_buffers, (2, 3)), "keyword_proxy": (_keyword_proxy, (2, 3))}


def _built(L, case):
    L.manual_seed(0)
    return CASES[case][0](L)


def _inputs(L, case):
    shape = CASES[case][1]
    x = L.tensor([math.sin(i) for i in range(math.prod(shape))]).reshape(shape)
    return (x, x.flip(0)) if case == "function" else (x,)


def _flat_values(out):
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _flat_values(o)]
    return out.flatten().tolist() if hasattr(out, "flatten") else [out]


@pytest.mark.parametrize("case", CASES)
def test_traced_graph_code_and_results_match_torch(case):
    ours, theirs = [], []
    for L, log in ((internals, ours), (torch, theirs)):
        root = _built(L, case)
        gm = L.fx.symbolic_trace(root)
        gm.graph.lint()
        log.append((fx_nodes(gm), fx_code(gm, L), fx_text(str(gm.graph), L), type(gm).__name__))
        log.append((sorted(gm.state_dict()), fx_unwrapped(fx_text(str(gm), L))))
        with L.no_grad():
            log.append((_flat_values(gm(*_inputs(L, case))), _flat_values(root(*_inputs(L, case)))))
    assert ours[:2] == theirs[:2]
    for (got, want), (got_t, want_t) in ((ours[2], theirs[2]),):
        assert got == want                          # the traced module computes what the module did
        assert got_t == want_t
        assert got == pytest.approx(got_t, rel=1e-5, abs=1e-6)   # and what torch's did


def _clip_sum(x, limit):
    return x.clamp(max=limit).sum()


# Both libraries record calls of ``_clip_sum`` from this module as one node, not traced into.
internals.fx.wrap("_clip_sum")
torch.fx.wrap("_clip_sum")


def _programs(L):
    def branches(x):
        if x.sum() > 0:
            return x
        return -x

    def loops(x):
        return [v * 2 for v in x]

    def measures(x):
        return x * len(x)

    def flagged(x, flag, bias=None):
        return x * 2 if flag else x + _clip_sum(x, 0.5)

    def edited(x):
        return L.relu(x + 1.5)
    return {"branches": branches, "loops": loops, "measures": measures, "flagged": flagged, "edited": edited}


@pytest.mark.parametrize("program", ["branches", "loops", "measures"])
def test_data_dependent_python_raises_torch_error(program):
    """``if`` and ``for`` on a traced value raise TraceError (a ValueError), ``len`` RuntimeError,
    each with torch's message."""
    errors, patched = [], (internals.nn.Module.__call__, internals.nn.Module.__getattr__, math.sqrt)
    for L in (internals, torch):
        with pytest.raises((ValueError, RuntimeError)) as info:
            L.fx.symbolic_trace(_programs(L)[program])
        errors.append((type(info.value).__name__, str(info.value)))
        assert program == "measures" or isinstance(info.value, L.fx.proxy.TraceError)
    assert errors[0] == errors[1]
    # what tracing patched is put back, though the trace failed
    assert (internals.nn.Module.__call__, internals.nn.Module.__getattr__, math.sqrt) == patched


@pytest.mark.parametrize("concrete", [{"flag": False, "bias": None}, {"flag": True}])
def test_concrete_args_and_wrapped_function_match_torch(concrete):
    """Fixed inputs become checked placeholders (``flag_1``, with the assertion torch adds); the
    wrapped function is one call_function node."""
    logs = []
    for L in (internals, torch):
        gm = L.fx.symbolic_trace(_programs(L)["flagged"], concrete_args=concrete)
        gm.graph.lint()
        x = L.tensor([[0.25, -1.0], [2.0, 0.75]])
        flag = concrete["flag"]
        logs.append((fx_nodes(gm), gm(x, flag, None).tolist()))
        with pytest.raises(AssertionError):
            gm(x, not flag, None)
    assert logs[0] == logs[1]


def test_recompile_after_editing_the_graph_matches_torch():
    """A pass changes a node's target and a constant; ``recompile`` writes and runs the new code."""
    logs = []
    for L in (internals, torch):
        gm = L.fx.symbolic_trace(_programs(L)["edited"])
        node = next(n for n in gm.graph.nodes if n.target is operator.add)
        node.target, node.args = operator.mul, (node.args[0], -2.0)
        gm.recompile()
        gm.graph.lint()
        logs.append((fx_code(gm, L), gm(L.tensor([1.0, -3.0])).tolist()))
    assert logs[0] == logs[1]


def test_leaf_modules_and_a_tracer_that_traces_into_them_match_torch():
    """The library's layers are leaves and a Sequential or a reader's module is not; a Tracer
    whose ``is_leaf_module`` says no to Linear records Linear's own forward instead."""
    logs = []
    for L in (internals, torch):
        class Into(L.fx.Tracer):
            linear = L.nn.Linear

            def is_leaf_module(self, m, name):
                return not isinstance(m, self.linear) and super().is_leaf_module(m, name)
        root = _built(L, "mlp")
        leaves = [L.fx.Tracer().is_leaf_module(m, name) for name, m in root.named_modules()]
        graph = Into().trace(root)
        gm = L.fx.GraphModule(root, graph)
        logs.append((leaves, fx_nodes(gm), fx_code(gm, L), gm(*_inputs(L, "mlp")).flatten().tolist()))
    assert logs[0][:3] == logs[1][:3]
    assert logs[0][3] == pytest.approx(logs[1][3], rel=1e-5, abs=1e-6)


def test_lint_finds_a_node_read_before_it_is_defined():
    """Moving a node after its reader breaks the order: ``lint`` raises RuntimeError, as torch's."""
    errors = []
    for L in (internals, torch):
        gm = L.fx.symbolic_trace(_programs(L)["edited"])
        add = next(n for n in gm.graph.nodes if n.target is operator.add)
        reader = next(iter(add.users))
        reader.append(add)
        with pytest.raises(RuntimeError) as info:
            gm.graph.lint()
        errors.append(str(info.value).splitlines()[0])
    assert errors[0] == errors[1]


def _variadic(L):
    def packed(x, *args, scale=2.0, **options):
        return x * args[0] + args[1].relu() * scale
    return packed


def _starred_only(L):
    def starred(*inputs):
        return inputs[0].neg()
    return starred


@pytest.mark.parametrize("program", [_variadic, _starred_only])
def test_star_args_are_one_placeholder_each_as_in_torch(program):
    """``*args`` and ``**kwargs`` are placeholders named ``_args`` (target ``*args``) after the named
    parameters, keyword-only ones included; ``args[0]`` is a getitem node."""
    logs = []
    for L in (internals, torch):
        gm = L.fx.symbolic_trace(program(L))
        gm.graph.lint()
        x = L.tensor([1.0, -2.0])
        args = (x, 2.0, 3.0, x.flip(0)) if program is _variadic else (x,)     # scale, then *args
        logs.append((fx_nodes(gm), fx_code(gm, L), gm(*args).tolist()))
    assert logs[0] == logs[1]


def _dead_code(L):
    def program(x):
        x.relu()                    # a method nobody reads: dropped
        x.clone().add_(1)           # an in-place method nobody reads: dropped too, as fx judges it
        return x * 2 + 1
    return program


def test_eliminate_dead_code_drops_what_torch_drops_and_says_so():
    """Dead nodes go, call_method ones too (even in-place: fx's DCE trusts the graph to be
    functional); the call says whether anything went, and says nothing went the second time."""
    results = []
    for L in (torch, internals):
        gm = L.fx.symbolic_trace(_dead_code(L))
        changed, again = gm.graph.eliminate_dead_code(), gm.graph.eliminate_dead_code()
        gm.recompile()
        results.append((changed, again, [n.name for n in gm.graph.nodes], gm(L.arange(3.0)).tolist()))
    assert results[1] == results[0]
    assert results[0][:2] == (True, False)


def test_setting_node_args_moves_the_node_between_users():
    """``node.args = ...`` updates the users of the old and the new inputs (fx's setter): the code
    keeps a value alive while a node reads it, and dead-code elimination sees who reads what."""
    results = []
    for L in (torch, internals):
        gm = L.fx.symbolic_trace(_programs(L)["edited"])
        relu = next(n for n in gm.graph.nodes if n.op == "call_function" and n.target is L.relu)
        with gm.graph.inserting_after(relu):
            neg = gm.graph.call_function(L.neg, (relu,))
        relu.replace_all_uses_with(neg)     # neg itself now reads neg ...
        neg.args = (relu,)                  # ... until its arguments are set again
        gm.recompile()
        results.append(([(n.name, sorted(u.name for u in n.users), [a.name for a in n.all_input_nodes])
                         for n in gm.graph.nodes], gm(L.tensor([-1.0, 2.0])).tolist()))
    assert results[1] == results[0]


def test_graph_building_calls_take_torchs_keywords():
    """``call_function(name=...)`` starts the node's unique name; args default to none."""
    names = []
    for L in (torch, internals):
        g = L.fx.Graph()
        x = g.placeholder("x")
        a = g.call_function(L.add, (x, x), name="add")
        b = g.call_function(L.add, (a, x), name="add")
        c = g.call_method("add", (b, a), type_expr=None)
        g.output(g.call_function(L.neg, kwargs={"input": c}, name="flip"))
        names.append([n.name for n in g.nodes])
    assert names[1] == names[0]


def test_graph_module_refuses_a_dict_root_without_a_node_target():
    def build(L):
        g = L.fx.Graph()
        g.output(g.get_attr("weight"))
        return L.fx.GraphModule({}, g)
    ours, theirs = assert_same_error(lambda: build(internals), lambda: build(torch))
    assert str(ours) == str(theirs)


def test_symbolic_trace_of_what_is_no_function_is_torchs_assertion():
    ours, theirs = assert_same_error(lambda: internals.fx.symbolic_trace(3), lambda: torch.fx.symbolic_trace(3))
    assert str(ours) == str(theirs)
