"""Split a joint forward+backward graph in two (``torch/_functorch/partitioners.py``).

The joint graph computes a function's outputs and, from the tangents (the gradients arriving
from later layers), the gradients of its inputs. Autograd needs it in two pieces: a forward that
runs now, and a backward that runs when ``.backward()`` reaches it. Whatever the backward reads
from the forward's side must be kept alive in between: those are the *saved* values, the
tensors autograd stores in a node's ``ctx``.

``default_partition`` follows torch's default rule (not its min-cut rematerialization): the
forward is every node traced while the forward ran -- by placement, not dataflow -- and the
saved values are the forward nodes that the backward reads. Its forward graph returns the
outputs followed by the saved values; its backward graph takes the saved values followed by the
tangents and returns one gradient per input (None where an input needs none).
"""
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..utils._pytree import tree_map

__all__ = ["default_partition", "is_forward"]


def is_forward(node):
    """Traced while the forward ran (torch tags these nodes ``partitioner_tag='is_forward'``)."""
    return node.meta.get("partitioner_tag") == "is_forward" or _is_primal(node)


def _is_primal(node):
    return node.op == "placeholder" and node.name.startswith("primals")


def _is_tangent(node):
    return node.op == "placeholder" and node.name.startswith("tangents")


def _forward_nodes(graph):
    """Non-tangent nodes up to the last one traced in the forward (placement, as torch)."""
    last = max(i for i, n in enumerate(graph.nodes) if is_forward(n))
    return [n for n in graph.nodes[:last + 1] if not _is_tangent(n) and n.op != "output"]


def _needed(outputs, stop):
    """The nodes ``outputs`` are computed from, not looking past the nodes in ``stop``."""
    seen, todo = set(), [o for o in outputs if o is not None]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if node not in stop:
            todo.extend(node.all_input_nodes)
    return seen


def _extract(joint, inputs, outputs, class_name, effects=()):
    """A new GraphModule: ``inputs`` become placeholders, the nodes ``outputs`` and ``effects``
    need are copied in their joint order (with their joint names, so both halves read like the
    joint graph)."""
    graph, env, attrs = Graph(), {}, {}
    for node in inputs:
        env[node] = graph.placeholder(node.name)
        env[node].meta = dict(node.meta)
    needed = _needed(list(outputs) + list(effects), set(inputs))
    for node in joint.graph.nodes:
        if node not in needed or node in env:
            continue
        if node.op == "get_attr":         # a constant: each half keeps its own reference
            attrs[node.target] = getattr(joint, node.target)
            new = graph.get_attr(node.target)
        elif node.op == "call_function":
            new = graph.create_node("call_function", node.target, tree_map(lambda a: env.get(a, a), node.args),
                                    tree_map(lambda a: env.get(a, a), node.kwargs), name=node.name)
        else:
            raise RuntimeError(f"partition: {node.name} ({node.op}) is needed but is not an input of {class_name}")
        new.meta = dict(node.meta)
        env[node] = new
    graph.output(tuple(env[o] if o is not None else None for o in outputs))
    return GraphModule(attrs, graph, class_name)


def default_partition(joint, *, num_fwd_outputs):
    """``(forward, backward, saved)``: two GraphModules and the names of the saved values, in
    graph order. ``joint``'s output is the forward outputs followed by one gradient per primal."""
    output = next(n for n in joint.graph.nodes if n.op == "output")
    results = list(output.args[0])
    fwd_outputs, grads = results[:num_fwd_outputs], results[num_fwd_outputs:]
    forward = _forward_nodes(joint.graph)
    forward_set = set(forward)
    # What the backward reads from the forward's side: constants are copied instead, and a
    # multi-output node is only ever read through its getitem nodes, which are saved instead.
    reached = _needed(grads, forward_set)
    saved = [n for n in forward if n in reached and n.op != "get_attr"]
    primals = [n for n in joint.graph.nodes if _is_primal(n)]
    tangents = [n for n in joint.graph.nodes if _is_tangent(n)]
    # The copy_ nodes that write new values into inputs run in the forward, where eager writes
    # them (torch returns the new values as extra forward outputs and copies them back in its
    # runtime wrapper: the same effect, one step apart).
    writes = [n for n in joint.graph.nodes if n.op == "call_function" and n.is_impure()]
    fwd = _extract(joint, primals, fwd_outputs + saved, "GraphModule", effects=writes)
    bwd = _extract(joint, saved + tangents, grads, "GraphModule")
    return fwd, bwd, [n.name for n in saved]
