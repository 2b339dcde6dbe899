"""Checkers for chapter 11 (From eager to compiled).

- ``check_pointwise_groups(fn)``: ``fn(graph)`` returns the names of the nodes to fuse, as a list of
  lists: maximal runs of consecutive pointwise ``call_function`` nodes with the same output shape.
- ``check_guard_key(fn)``: ``fn(args)`` returns a hashable key that is equal exactly when a graph
  traced for one argument list is valid for the other.
"""
import numpy as np

import internals as T

from .._meta_registrations import POINTWISE
from ..fx.experimental.proxy_tensor import make_fx

__all__ = ["check_guard_key", "check_pointwise_groups", "reference_pointwise_groups"]


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
                 "storage offset": (T.zeros(13)[1:].view(3, 4), 2.0), "a Python constant": (x, 3.0),
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
