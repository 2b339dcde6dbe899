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
from ..c10.memory_format import contiguous_format
from ..fx.experimental.proxy_tensor import make_fx
from ..fx.passes.functionalize import _is_view, _writes
from ..fx.passes.functionalize import functionalize as functionalize_graph
from ..utils._python_dispatch import _disable_current_modes

__all__ = ["functionalize"]


def functionalize(func, *, remove="mutations"):
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           f"Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           f"removed from the program, and replaced with their out-of-place equivalents.\n     "
                           f"remove='mutations_and_views': In addition to the above, all aliasing operators "
                           f"{{view}} will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args):
        # a real trace would run the writes twice; the trace is no part of what an outer tracer
        # records (``make_fx(functionalize(f))``), which sees only the rewritten graph run
        with _disable_current_modes():
            gm = make_fx(func, tracing_mode="fake")(*args)
            functionalize_graph(gm)
            if remove == "mutations_and_views":
                _views_to_copies(gm.graph)
            gm.recompile()      # dead views kept: torch's trace replays each view after a write too
        return gm(*args)

    return wrapper


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
