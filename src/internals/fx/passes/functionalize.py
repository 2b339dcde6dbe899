"""Functionalization: in-place operators rewritten out of place (``aten/src/ATen/FunctionalTensorWrapper.cpp``).

A graph with ``x.fill_(1)`` in it is not a list of formulas: the node's value depends on when
it is read. After this pass every node is computed once from its inputs and never changed, so
a backend may reorder, fuse or drop nodes freely. Each in-place node becomes its out-of-place
twin and later readers of the mutated tensor read the new node instead.

torch functionalizes while tracing, and also handles writes through views (it replays the view
on an updated base). This version handles the writes a traced graph of this package makes --
into tensors the graph itself created, not into views or inputs -- and says so otherwise.
"""
from ..._ops import ops

__all__ = ["functionalize"]

aten = ops.aten


def _functional_twin(node):
    """The out-of-place call that computes what the in-place ``node`` writes: (target, args, kwargs)."""
    name, args = node.target.name(), node.args
    if name == "aten::fill_.Scalar":
        return aten.full_like.default, (args[0], args[1]), {}
    if name == "aten::zero_":
        return aten.zeros_like.default, (args[0],), {}
    if name == "aten::copy_":
        dst, src = (a.meta["val"] for a in args[:2])
        if (dst.shape, dst.dtype) != (src.shape, src.dtype):
            raise NotImplementedError(f"functionalize: {node.name} copies a {tuple(src.shape)} {src.dtype} "
                                      f"into a {tuple(dst.shape)} {dst.dtype}")
        return aten.clone.default, (args[1],), {}
    base, _, overload = name.split("::")[1].partition(".")
    packet = getattr(aten, base.rstrip("_"))
    return getattr(packet, overload or "default"), args, node.kwargs


def _writes_first_argument(target):
    args = getattr(target, "_schema", None) and target._schema.arguments.flat_positional
    return bool(args) and args[0].annotation is not None and args[0].annotation.is_write


def _is_view(target):
    schema = getattr(target, "_schema", None)
    return schema is not None and any(r.annotation is not None and not r.annotation.is_write
                                      for r in schema.returns)


def functionalize(gm):
    """Rewrite ``gm``'s in-place nodes out of place, drop what became dead, regenerate its code."""
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or not _writes_first_argument(node.target):
            continue
        written = node.args[0]
        if written.op != "call_function" or _is_view(written.target):
            raise NotImplementedError(f"functionalize: {node.name} writes into {written.name}, an input or a "
                                      "view; only writes into tensors the graph made are rewritten")
        target, args, kwargs = _functional_twin(node)
        pure = graph.call_function(target, args, kwargs)
        pure.meta["val"] = node.meta["val"]
        graph.nodes.remove(pure)                     # created at the end: move it to where node was
        graph.nodes.insert(graph.nodes.index(node), pure)
        for user in [u for u in written.users if graph.nodes.index(u) > graph.nodes.index(node)]:
            user.replace_input_with(written, pure)   # later readers of the old tensor see the new value
        node.replace_all_uses_with(pure)
        graph.erase_node(node)
    graph.eliminate_dead_code()
    gm.recompile()
    return gm
