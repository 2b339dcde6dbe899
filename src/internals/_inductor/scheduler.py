"""Which nodes run together: pointwise chains and the reductions they feed (``torch/_inductor/scheduler.py``).

Inductor decides, for every node of a graph, which kernel computes it. The rule here is a small
version of its rule: consecutive pointwise nodes that produce the same shape go in one group,
and so does a reduction of such a value over its last dimension (a row: softmax, layer norm)
or over all of it (a loss). A group becomes one generated kernel that reads each input once
and writes only the values used outside it; every other node runs its eager kernel.
"""
from .._meta_registrations import POINTWISE

__all__ = ["EXPRESSIONS", "FULL_REDUCTIONS", "ROW_REDUCTIONS", "FusedGroup", "can_join", "new_group", "schedule"]

ROW_REDUCTIONS = ("aten::sum.dim_IntList", "aten::amax")
FULL_REDUCTIONS = ("aten::sum", "aten::mean")

# How the generated code computes each pointwise op, ``{0}`` ``{1}`` its operands and ``{exp}`` the
# exp function of the kernel's device and dtype (see codegen).
EXPRESSIONS = {
    "aten::add.Tensor": "{0} + {1}", "aten::sub.Tensor": "{0} - {1}", "aten::mul.Tensor": "{0} * {1}",
    "aten::div.Tensor": "{0} / {1}", "aten::neg": "-{0}", "aten::exp": "{exp}({0})",
    "aten::log": "math.log({0})", "aten::sqrt": "math.sqrt({0})", "aten::tanh": "math.tanh({0})",
    "aten::sigmoid": "ONE / (ONE + {exp}(-{0}))", "aten::relu": "(ZERO if {0} < ZERO else {0})",
    "aten::abs": "abs({0})", "aten::pow.Tensor_Scalar": "{0} ** {1}",
    "aten::maximum": "({0} if {0} > {1} or {0} != {0} else {1})",
    "aten::minimum": "({0} if {0} < {1} or {0} != {0} else {1})",
}
assert set(EXPRESSIONS) <= {"aten::" + n for n in POINTWISE}


class FusedGroup:
    """Nodes computed by one kernel over a ``shape``. Its ``kind`` is ``pointwise`` (one loop over
    the elements), ``row`` (a loop over rows, reductions along the last dim inside it) or
    ``reduce`` (one loop over the elements that also sums them)."""

    def __init__(self, shape, dtype):
        self.nodes, self.shape, self.dtype = [], tuple(shape), dtype

    @property
    def kind(self):
        names = {n.target.name() for n in self.nodes}
        if names & set(FULL_REDUCTIONS):
            return "reduce"
        return "row" if names & set(ROW_REDUCTIONS) else "pointwise"

    def __repr__(self):
        return f"FusedGroup({self.kind}, {list(self.shape)}, [{', '.join(n.name for n in self.nodes)}])"


def _val(node):
    return node.meta.get("val") if hasattr(node, "meta") else None


def _tensor_inputs(node):
    return [a for a in node.args if _val(a) is not None and hasattr(_val(a), "shape")]


def _fits(value, shape):
    """``value`` broadcasts to ``shape`` without growing it."""
    vs = tuple(value.shape)
    if len(vs) > len(shape):
        return False
    return all(v in (1, s) for v, s in zip(vs, shape[len(shape) - len(vs):], strict=True))


def _inputs_ok(node, shape, dtype):
    """Every tensor operand broadcasts to ``shape`` and has the group's dtype. (A Python number
    reaches the graph as itself, never as a tensor: the tracer's mode sees ``mul.Tensor(x, 2.0)``.)"""
    return all(_val(a).dtype is dtype and _fits(_val(a), shape) for a in _tensor_inputs(node))


def can_join(group, node):
    """Whether ``node`` can be computed in ``group``'s kernel."""
    if node.op != "call_function" or not hasattr(node.target, "name"):
        return False
    name, val = node.target.name(), _val(node)
    if val is None or not hasattr(val, "dtype") or val.dtype is not group.dtype or group.kind == "reduce":
        return False
    full = group.shape
    row = full[:-1] + (1,)
    if name in EXPRESSIONS:
        if tuple(val.shape) == full:
            return _inputs_ok(node, full, group.dtype)
        return tuple(val.shape) == row and group.kind == "row" and _inputs_ok(node, row, group.dtype)
    source = _val(node.args[0])
    if source is None or tuple(source.shape) != full or node.kwargs.get("dtype") is not None:
        return False
    if name in ROW_REDUCTIONS:
        dims = sorted(d % len(full) for d in node.args[1]) if len(full) > 1 else []
        return dims == [len(full) - 1] and len(node.args) > 2 and bool(node.args[2])
    return name in FULL_REDUCTIONS and group.kind == "pointwise"


def new_group(node):
    """A group opens at a pointwise node, or at a reduction (of the input it reads), in a float dtype."""
    val = _val(node)
    if node.op != "call_function" or not hasattr(val, "dtype") or not val.dtype.is_floating_point:
        return None
    name = node.target.name() if hasattr(node.target, "name") else ""
    if name in EXPRESSIONS:
        group = FusedGroup(val.shape, val.dtype)
    elif name in ROW_REDUCTIONS + FULL_REDUCTIONS:
        group = FusedGroup(_val(node.args[0]).shape, val.dtype)
    else:
        return None
    if not can_join(group, node):
        return None
    group.nodes.append(node)
    return group


def schedule(graph):
    """The fusion pass: the graph's call_function nodes, in order, as single nodes (run eagerly)
    and FusedGroups. A group stays open while the next node can join it; the node that cannot
    closes it and may open the next one. (Chapter 11's core exercise rebuilds this function:
    ``internals.exercises.use_mine("fusion_pass", fn)``.)"""
    plan, group = [], None
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        if group is not None and can_join(group, node):
            group.nodes.append(node)
            continue
        if group is not None:
            plan.append(group)
        group = new_group(node)
        if group is None:
            plan.append(node)
    if group is not None:
        plan.append(group)
    return plan
