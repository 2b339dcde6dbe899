"""Decompositions: operators rewritten as smaller operators (``torch/_decomp/decompositions.py``).

A compiler wants few kinds of operators: every pointwise op it knows it can fuse. torch keeps a
table from an OpOverload to a Python function that computes the same result with simpler ops;
``make_fx(f, decomposition_table=...)`` calls the function instead of recording the op, and
the function's own calls are recorded in its place. The functions here are plain tensor code:
under the tracer each line becomes one node.
"""
from .._ops import ops
from ..aten import dispatcher
from ..aten.native.tensor_factories import wrap_scalar

__all__ = ["decomposition_table", "get_decompositions", "register_decomposition"]

aten = ops.aten
decomposition_table = {}


def register_decomposition(*names):
    """Register under operator names (``"aten::addmm"``); the table's keys are their OpOverloads.
    An operator this build does not define gets no entry (there is nothing to decompose)."""
    def wrap(fn):
        for name in names:
            if name in dispatcher.operators and dispatcher.operators[name].schema is not None:
                base, _, overload = name.split("::")[1].partition(".")
                decomposition_table[getattr(getattr(aten, base), overload or "default")] = fn
        return fn
    return wrap


def get_decompositions(overloads):
    """The entries of ``decomposition_table`` for these OpOverloads (or all overloads of a packet)."""
    wanted = set()
    for op in overloads:
        names = [getattr(op, o) for o in op.overloads()] if hasattr(op, "overloads") else [op]
        wanted.update(o.name() for o in names)
    return {op: fn for op, fn in decomposition_table.items() if op.name() in wanted}


@register_decomposition("aten::addmm")
def addmm(bias, mat1, mat2, *, beta=1, alpha=1):
    """``beta * bias + alpha * (mat1 @ mat2)``, the scalings skipped when they are 1."""
    out = aten.mm.default(mat1, mat2)
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return out
    return (bias if beta == 1 else bias * beta) + out


@register_decomposition("aten::_softmax")
def softmax(x, dim, half_to_float):
    """exp(x - max) / sum(exp(x - max)): subtracting the row's max keeps exp from overflowing."""
    shifted = x - aten.amax.default(x, [dim], True)
    unnormalized = shifted.exp()
    return unnormalized / unnormalized.sum(dim, keepdim=True)


@register_decomposition("aten::_log_softmax")
def log_softmax(x, dim, half_to_float):
    """(x - max) - log(sum(exp(x - max)))."""
    shifted = x - aten.amax.default(x, [dim], True)
    return shifted - shifted.exp().sum(dim, keepdim=True).log()


@register_decomposition("aten::mean.dim")
def mean_dim(x, dim, keepdim=False, *, dtype=None):
    """sum / count: the mean of a layer norm becomes a sum reduction and a pointwise division."""
    dims = range(x.dim()) if not dim else dim
    count = 1
    for d in dims:
        count *= x.shape[d]
    return x.sum(dim, keepdim=keepdim, dtype=dtype) / count


@register_decomposition("aten::sigmoid")
def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return aten.div.Tensor(wrap_scalar(1.0), (-x).exp() + 1)
