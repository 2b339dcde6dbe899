"""Checkers for chapter 11 (From eager to compiled).

- ``check_pointwise_groups(fn)``: ``fn(graph)`` returns the names of the nodes to fuse, as a list of
  lists: maximal runs of consecutive pointwise ``call_function`` nodes with the same output shape.
- ``check_guard_key(fn)``: ``fn(args)`` returns a hashable key that is equal exactly when a graph
  traced for one argument list is valid for the other.
- ``check_memory_passes(fn)``: ``fn(graph)`` counts the passes over memory of eager and fused
  execution of a pointwise graph.
- ``check_fusion_pass(fn)``, the core exercise: ``fn(graph)`` is the scheduler's fusion pass,
  nodes and FusedGroups in order. ``internals.exercises.use_mine("fusion_pass", fn)`` makes
  ``internals.compile`` generate its kernels from the reader's groups.
"""
import numpy as np

import internals as T

from .._decomp import decomposition_table
from .._inductor.scheduler import FusedGroup, schedule
from .._meta_registrations import POINTWISE
from ..display import wrap
from ..fx.experimental.proxy_tensor import make_fx

__all__ = ["check_fusion_pass", "check_guard_key", "check_memory_passes", "check_pointwise_groups", "describe_plan",
           "reference_memory_passes", "reference_pointwise_groups"]


def reference_pointwise_groups(graph):
    """The rule the checker expects (the scheduler's first rule, without reductions)."""
    groups, run, shape = [], [], None
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        pointwise = hasattr(node.target, "name") and node.target.name().split("::")[1] in POINTWISE
        if pointwise and run and tuple(node.meta["val"].shape) == shape:
            run.append(node.name)
            continue
        if run:
            groups.append(run)
        run, shape = ([node.name], tuple(node.meta["val"].shape)) if pointwise else ([], None)
    if run:
        groups.append(run)
    return groups


def _graphs():
    x, b, w = T.ones(4, 3), T.ones(3), T.ones(3, 5)
    yield make_fx(lambda x, b: (x * T.sigmoid(1.702 * x) + b) * 0.5)(x, b).graph
    yield make_fx(lambda x, w: T.relu(x @ w) * 2 - (x @ w).exp())(x, w).graph
    yield make_fx(lambda x, b: (x - x.mean(-1, keepdim=True)).abs() + (b * b).sum())(x, b).graph
    yield make_fx(lambda x: T.softmax(x, -1) * x)(x).graph


def check_pointwise_groups(fn):
    for graph in _graphs():
        got, want = fn(graph), reference_pointwise_groups(graph)
        got = [list(g) for g in got]
        if got != want:
            raise AssertionError(f"graph with ops {[n.name for n in graph.nodes if n.op == 'call_function']}:\n"
                                 f"  expected groups {want}\n  got {got}")
    return "pointwise groups: correct on 4 graphs"


def check_guard_key(fn):
    x = T.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    same = [(x, 2.0), (x * 3, 2.0), (T.zeros(3, 4), 2.0)]
    different = {"shape": (T.zeros(4, 3), 2.0), "strides": (T.zeros(4, 3).t(), 2.0),
                 "dtype": (x.double(), 2.0), "requires_grad": (x.detach().requires_grad_(), 2.0),
                 "a Python constant": (x, 3.0),
                 "a constant's type": (x, 2)}
    keys = [fn(args) for args in same]
    for k in keys:
        hash(k)
    if len(set(keys)) != 1:
        raise AssertionError("tensors with the same metadata but other values got different keys: "
                             "a guard must not look at the data")
    for what, args in different.items():
        if fn(args) == keys[0]:
            raise AssertionError(f"a change of {what} kept the same key: the cached graph would be reused "
                                 "where it is wrong")
    return f"guard key: equal for same metadata, different for {len(different)} kinds of change"


# ---------------------------------------------------------------- the core exercise: the fusion pass
def _fusion_graphs():
    """Small graphs, fewest operators first, traced with the decompositions as compile traces
    them: no fusible node, one node, matrix products between chains, a shape that grows inside
    a chain, a dtype change, integers, row and whole-tensor reductions, a node after a
    reduction, a reduction over a dim that is not the last, a multi-output node."""
    def trace(f, *args):
        return make_fx(f, decomposition_table, tracing_mode="fake")(*args).graph
    x, b, w, col = T.ones(4, 3), T.ones(3), T.ones(3, 5), T.ones(4, 1)
    i = T.ones(4, 3, dtype=T.int64)
    graphs = {
        "a view only": trace(lambda x: x.t(), x),
        "one pointwise op": trace(lambda x: x.exp(), x),
        "a matrix product only": trace(lambda x, w: x @ w, x, w),
        "integers": trace(lambda i: (i + 1) * 2, i),
        "a shape that grows": trace(lambda col, x: (col * 2) + x, col, x),
        "a chain, then a dim-0 sum": trace(lambda x: (x * 2).sum(0), x),
        "a dtype change": trace(lambda x: (x * 2).double() + 1, x),
        "a reduction, then a scalar op": trace(lambda x, b: ((x - b) ** 2).mean() * 3, x, b),
        "a multi-output op": trace(lambda x: x.split(2, -1)[0] * 2 + 1, x),
        "the gelu-style chain": trace(lambda x, b: (x * T.sigmoid(1.702 * x) + b) * 0.5, x, b),
        "products between chains": trace(lambda x, w: T.relu(x @ w) * 2 - (x @ w).exp(), x, w),
        "softmax": trace(lambda x: T.softmax(x, -1) * x, x),
        "a layer norm": trace(lambda x: (x - x.mean(-1, keepdim=True)) / ((x * x).mean(-1, keepdim=True) + 1e-5).sqrt(),
                              x),
    }
    return sorted(graphs.items(), key=lambda kv: sum(n.op == "call_function" for n in kv[1].nodes))


def describe_plan(plan):
    """A plan as plain data: ``"name"`` for a node run eagerly, ``[kind, names]`` for a group."""
    out = []
    for step in plan:
        if isinstance(step, FusedGroup):
            out.append([step.kind, [n.name for n in step.nodes]])
        else:
            out.append(getattr(step, "name", repr(step)))
    return out


def check_fusion_pass(fn):
    """``fn(graph) -> plan``: the graph's call_function nodes in order, each either alone (run by
    its eager kernel) or inside a ``FusedGroup`` (one generated kernel), grouped as the package's
    scheduler groups them (a small version of torch's Inductor rule). Prints the smallest graph
    where the plan differs, with both plans."""
    graphs = _fusion_graphs()
    for what, graph in graphs:
        want = describe_plan(schedule(graph))
        try:
            got = describe_plan(fn(graph))
        except Exception as e:  # noqa: BLE001 - the reader's error is reported, not raised
            got = f"{type(e).__name__}: {e}"
        if got != want:
            ops = [n.name for n in graph.nodes if n.op == "call_function"]
            print(wrap(f"check_fusion_pass: wrong on the smallest failing input found, {what} (nodes {ops}):\n"
                       f"  the package's scheduler (torch's Inductor rule, reduced) plans {want}\n"
                       f"  yours plans {got}"))
            return False
    print(f"check_fusion_pass: right on all {len(graphs)} graphs")
    return True


# ---------------------------------------------------------------- counting memory passes
def reference_memory_passes(graph):
    """``(eager, fused)`` passes over full-size tensors for a graph of pointwise nodes: eagerly,
    each node reads each full-size tensor argument and writes its output; fused, each full-size
    graph input is read once and each output written once. A tensor is full-size when it has
    as many elements as the node's (or the graph's largest) result; a broadcast row and a
    Python number in the call are free."""
    calls = [n for n in graph.nodes if n.op == "call_function"]
    full = max(_numel(n) for n in calls)
    eager = sum(1 + sum(1 for a in n.args if hasattr(a, "op") and a.op != "get_attr" and _numel(a) == _numel(n))
                for n in calls)
    inputs = [n for n in graph.nodes if n.op == "placeholder" and _numel(n) == full]
    output = next(n for n in graph.nodes if n.op == "output")
    results = output.args[0] if isinstance(output.args[0], (tuple, list)) else [output.args[0]]
    return eager, len(inputs) + len(results)


def _numel(node):
    n = 1
    for s in node.meta["val"].shape:
        n *= s
    return n


def check_memory_passes(fn):
    """``fn(graph) -> (eager, fused)``: the passes over memory eager execution and one fused
    kernel make for a graph of pointwise nodes (see ``reference_memory_passes``)."""
    graphs = {
        "x * 2": make_fx(lambda x: x * 2)(T.ones(4, 3)).graph,
        "x + y": make_fx(lambda x, y: x + y)(T.ones(4, 3), T.ones(4, 3)).graph,
        "x + bias": make_fx(lambda x, b: (x + b).relu())(T.ones(4, 3), T.ones(3)).graph,
        "gelu_ish": make_fx(lambda x, b: (x * T.sigmoid(1.702 * x) + b) * 0.5)(T.ones(4, 3), T.ones(3)).graph,
        "two outputs": make_fx(lambda x: (x.exp(), x.exp() * x))(T.ones(4, 3)).graph,
        "x * x - y": make_fx(lambda x, y: x * x - y)(T.ones(4, 3), T.ones(4, 3)).graph,
    }
    for what, graph in graphs.items():
        want = reference_memory_passes(graph)
        got = fn(graph)
        if tuple(got) != want:
            print(wrap(f"check_memory_passes: wrong on the smallest failing input found, {what} "
                       f"({graph.call_targets()}):\n  expected (eager, fused) = {want}, counted as the chapter's "
                       f"table counts torch's kernels; got {got}"))
            return False
    print(f"check_memory_passes: right on all {len(graphs)} graphs")
    return True
