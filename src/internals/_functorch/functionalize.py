"""``torch.func.functionalize`` (``torch/_functorch/eager_transforms.py``): a function whose
in-place writes are rewritten out of place.

Torch wraps each tensor in a FunctionalTensorWrapper while the function runs. Here the function
is traced to a graph of aten operators (``make_fx``), the compile layer's functionalization pass
rewrites the graph (``fx/passes/functionalize.py``: writes become their out-of-place twins,
views are replayed from their bases, writes to inputs are copied back at the end), and the
rewritten graph runs on the arguments. So ``make_fx(functionalize(f))`` shows the graph without
writes, and calling it gives ``f``'s results and ``f``'s effect on its inputs. With
``remove='mutations_and_views'`` each view in the rewritten graph also becomes a new tensor.
"""
import functools

from .._ops import ops
from .._tensor import Tensor
from ..c10.memory_format import contiguous_format
from ..fx.experimental.proxy_tensor import make_fx
from ..fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
from ..fx.passes.functionalize import _is_view, _writes
from ..fx.passes.functionalize import functionalize as functionalize_graph
from ..utils._python_dispatch import _disable_current_modes
from ..utils._pytree import tree_leaves, tree_map

__all__ = ["functionalize"]


def functionalize(func, *, remove="mutations"):
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           f"Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           f"removed from the program, and replaced with their out-of-place equivalents.\n     "
                           f"remove='mutations_and_views': In addition to the above, all aliasing operators "
                           f"{{view}} will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        keys = list(kwargs)

        def positional(*flat):      # keyword arguments traced as inputs too
            return func(*flat[:len(args)], **dict(zip(keys, flat[len(args):], strict=True)))
        flat = (*args, *kwargs.values())
        # a real trace would run the writes twice; the trace is no part of what an outer tracer
        # records (``make_fx(functionalize(f))``), which sees only the rewritten graph run
        with _disable_current_modes():
            try:
                gm = make_fx(positional, tracing_mode="fake")(*flat)
            except GuardOnDataDependentSymNode:
                gm = None
            if gm is not None:
                functionalize_graph(gm)
                if remove == "mutations_and_views":
                    _views_to_copies(gm.graph)
                gm.recompile()      # dead views kept: torch's trace replays each view after a write too
        if gm is None:
            return _run_eagerly(func, args, kwargs, remove)
        return gm(*flat)

    return wrapper


def _run_eagerly(func, args, kwargs, remove):
    """A function that reads a value to decide (``if x.sum() > 0``) has no one graph: it runs as it
    is, which gives the results and the writes to its inputs that the rewritten program would;
    under ``mutations_and_views`` a result sharing an input's memory is made a new tensor."""
    out = func(*args, **kwargs)
    if remove != "mutations_and_views":
        return out
    storages = {id(a._impl.storage) for a in tree_leaves((args, kwargs)) if isinstance(a, Tensor)}
    return tree_map(lambda x: x.clone(memory_format=contiguous_format)
                    if isinstance(x, Tensor) and id(x._impl.storage) in storages else x, out)


def _copy_twin(target):
    """``aten.diagonal_copy.default`` for ``aten.diagonal.default``, where the package has it."""
    packet = getattr(ops.aten, f"{target.overloadpacket.__name__}_copy", None)
    return None if packet is None else getattr(packet, target._overloadname, None)


def _views_to_copies(graph):
    """Each view a new tensor: its ``{view}_copy`` twin, as torch's graph has it; a view with no
    twin (none of torch's public ones) is followed by a contiguous clone, which gives the same
    values and strides."""
    for node in list(graph.nodes):
        if node.op != "call_function" or not _is_view(node.target) or _feeds_a_write(node):
            continue
        twin = _copy_twin(node.target)
        if twin is not None:
            node.target = twin
            continue
        with graph.inserting_after(node):
            copy = graph.call_function(ops.aten.clone.default, (node,), {"memory_format": contiguous_format})
        for user in [u for u in node.users if u is not copy]:
            user.replace_input_with(node, copy)


def _feeds_a_write(node):
    """A view that an operator writes through (its first argument) stays a view; one that is
    only read by a write (the source of the copy back into an input) becomes a copy."""
    return any(_writes(user.target) and user.args[:1] == (node,) for user in node.users
               if user.op == "call_function")
