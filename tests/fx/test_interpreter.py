"""``fx.Interpreter`` and ``fx.Transformer`` against torch.fx's: the same values node by node, the
same calls of the per-opcode methods, the same errors, and the same rewritten graphs."""
import pytest
import torch
from helpers import fx_code, fx_nodes

import internals


def _module(L):
    class Scaled(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(3, 2)
            self.w = L.nn.Parameter(L.tensor([0.5, -1.5]))

        def forward(self, x, shift=2.0):
            y = L.sigmoid(self.lin(x)).neg()
            return y * self.w + shift, y.sum(dim=0)
    L.manual_seed(0)
    return L.fx.symbolic_trace(Scaled())


def _input(L):
    return L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def _values(out):
    """The outputs' numbers in one flat list."""
    return [x for v in out for x in v.flatten().tolist()]


def _recording(L):
    class Recording(L.fx.Interpreter):
        """Every hook logs its opcode and target name, and what it returned."""
        def run_node(self, n):
            result = super().run_node(n)
            self.log.append((n.op, n.name, type(result).__name__))
            return result

        def call_function(self, target, args, kwargs):
            self.log.append(("function", target.__name__))
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            self.log.append(("method", target))
            return super().call_method(target, args, kwargs)

        def call_module(self, target, args, kwargs):
            self.log.append(("module", target))
            return super().call_module(target, args, kwargs)
    return Recording


def test_interpreter_runs_each_node_through_its_opcode_method():
    logs = []
    for L in (internals, torch):
        gm = _module(L)
        interp = _recording(L)(gm)
        interp.log = []
        with L.no_grad():
            out = interp.run(_input(L), 3.0)
            plain = fx_run = L.fx.Interpreter(gm).run(_input(L))      # the default for ``shift``
            assert _values(plain) == _values(gm(_input(L)))
        logs.append((interp.log, _values(out), _values(fx_run), sorted(n.name for n in interp.env)))
    assert logs[0][0] == logs[1][0] and logs[0][3] == logs[1][3]
    for ours, theirs in zip(logs[0][1:3], logs[1][1:3]):
        assert ours == pytest.approx(theirs, rel=1e-6)


def test_initial_env_skips_the_nodes_it_gives_and_keeps_values_without_collection():
    logs = []
    for L in (internals, torch):
        gm = _module(L)
        lin = next(n for n in gm.graph.nodes if n.op == "call_module")
        interp = L.fx.Interpreter(gm, garbage_collect_values=False)
        out = interp.run(_input(L), initial_env={lin: L.zeros(2, 2)})
        logs.append((_values(out), sorted(n.name for n in interp.env)))
    assert logs[0] == logs[1]


@pytest.mark.parametrize("program", ["missing_input", "failing_node"])
def test_errors_name_the_node_as_torch(program):
    errors = []
    for L in (internals, torch):
        if program == "missing_input":
            gm = L.fx.symbolic_trace(lambda x, y: x + y)
            args = (L.ones(2),)
        else:
            gm = L.fx.symbolic_trace(lambda x: x.reshape(5))
            args = (L.ones(2, 3),)
        with pytest.raises(RuntimeError) as info:
            L.fx.Interpreter(gm).run(*args)
        lines = str(info.value).split("\n")
        errors.append(lines[0] if program == "missing_input" else lines[2:])
    assert errors[0] == errors[1]


def _swap(L):
    class Swap(L.fx.Transformer):
        """sigmoid(x).neg() becomes neg(x).sigmoid(): a function and a method exchanged."""
        def call_function(self, target, args, kwargs):
            if target is L.sigmoid:
                return L.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                obj, *rest = args
                return obj.sigmoid(*rest, **kwargs)
            return super().call_method(target, args, kwargs)
    return Swap


def test_transformer_returns_the_rewritten_graph_module():
    logs = []
    for L in (internals, torch):
        gm = _module(L)
        new = _swap(L)(gm).transform()
        new.graph.lint()
        identity = L.fx.Transformer(gm).transform()
        with L.no_grad():
            y = L.neg(gm.lin(_input(L))).sigmoid()
            values = _values(new(_input(L))), _values((y * gm.w + 2.0, y.sum(dim=0)))
        logs.append((type(new).__name__, fx_nodes(new), fx_code(new, L), fx_nodes(identity), values))
    assert logs[0][:4] == logs[1][:4]
    (ours, ours_by_hand), (theirs, _) = logs[0][4], logs[1][4]
    assert ours == pytest.approx(theirs, rel=1e-6)
    assert ours == pytest.approx(ours_by_hand, rel=1e-6)


def _shifted_relu(L):
    def shifted(x, *rest):
        return L.relu(x) + rest[0]
    return shifted


def test_transformer_keeps_star_args_placeholders():
    logs = []
    for L in (internals, torch):
        gm = L.fx.symbolic_trace(_shifted_relu(L))
        new = L.fx.Transformer(gm).transform()
        logs.append((fx_nodes(new), fx_code(new, L), new(L.tensor([-1.0, 2.0]), 0.5).tolist(),
                     L.fx.Interpreter(gm).run(L.tensor([-1.0, 2.0]), 0.5).tolist()))
    assert logs[0] == logs[1]
