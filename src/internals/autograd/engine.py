"""The backward engine (``torch/csrc/autograd/engine.cpp``).

``run_backward`` walks the graph from the roots twice. First it counts, for every node, how
many edges point at it (``compute_dependencies``). Then it runs nodes from a ready queue: a
node is ready when its count drops to zero, which means every gradient it will ever get has
arrived and been summed in its *input buffer*. Like torch's CPU ready queue, the queue is a
priority queue on the sequence number, later nodes first, so a chain runs in reverse creation
order and AccumulateGrad (the largest number) runs as soon as it is ready.

``autograd.grad`` *captures* gradients instead of accumulating them: only the nodes on a path
to one of the inputs run (``exec_info``), and the gradient arriving at an input's edge is
recorded there.
"""
import heapq
import itertools

from ..aten import dispatcher
from ..c10.grad_mode import _state as _grad_state
from ..c10.memory_format import preserve_format
from .graph import AccumulateGrad, gradient_edge

__all__ = ["run_backward", "make_grads"]


def _torch_size(sizes):
    return f"torch.Size([{', '.join(str(s) for s in sizes)}])"


def make_grads(outputs, grad_outputs, is_grads_batched=False):
    """Default gradients for the roots: ones for scalars (``_make_grads`` in torch/autograd/__init__.py)."""
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._requires_grad and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            # through the dispatcher, as torch's ``torch.ones_like(out, memory_format=preserve_format)``
            g = dispatcher.call("ones_like", out, memory_format=preserve_format) if out._requires_grad else None
        elif g._impl.sizes != out._impl.sizes:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_torch_size(g.shape)} and "
                               f"output[{i}] has a shape of {_torch_size(out.shape)}.")
        grads.append(g)
    return grads


def _validate(grad, meta, node, index):
    """Make a gradient fit the input it is for (``validate_outputs``): sum away broadcast dims, cast."""
    sizes, dtype, device = meta
    if grad._impl.sizes != sizes:
        from .functions_manual import is_expandable_to, sum_to
        if not is_expandable_to(sizes, grad._impl.sizes):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {index} - got "
                               f"{list(grad.shape)} but expected shape compatible with {list(sizes)}")
        grad = sum_to(grad, sizes)
    if grad._impl.dtype is not dtype or grad.device != device:
        grad = grad.to(dtype=dtype, device=device)
    return grad


def _add_to_buffer(buffers, node, input_nr, grad):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._num_inputs
    old = buf[input_nr]
    buf[input_nr] = grad if old is None else old + grad    # a tensor used twice: its grads add up


def _dependencies(roots):
    deps, seen, stack = {}, set(roots), list(roots)
    while stack:
        for edge in stack.pop()._next_edges:
            if edge is not None:
                nxt = edge[0]
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return deps


def _needed(roots, deps, targets):
    """Nodes from which a target can be reached: the only ones ``grad`` must run (``exec_info``)."""
    remaining, order, stack = dict(deps), [], [n for n in set(roots) if not deps.get(n)]
    while stack:                           # a topological order, roots first
        node = stack.pop()
        order.append(node)
        for edge in node._next_edges:
            if edge is not None:
                remaining[edge[0]] -= 1
                if remaining[edge[0]] == 0:
                    stack.append(edge[0])
    needed = set()
    for node in reversed(order):
        if any(e is not None and (e[0] in targets or e[0] in needed) for e in node._next_edges):
            needed.add(node)
    return needed


def _check_hook_result(hook, old, new):
    """A hook may replace a gradient, not change what it is (torch's ``check_single_result``)."""
    from .._tensor import Tensor
    name = getattr(hook, "__name__", type(hook).__name__)
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new.dtype is not old.dtype or new.device != old.device:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {old._type_name()} got "
                           f"{new._type_name()})")
    if new.shape != old.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _call_tensor_hooks(node, buf):
    for i in range(len(buf)):
        if buf[i] is None:
            continue
        for hook in tuple(node._tensor_hooks(i)):
            new = hook(buf[i])
            if new is not None:
                _check_hook_result(hook, buf[i], new)
                buf[i] = new
        if node._retains_grad and i in node._retains_grad:
            node._retains_grad[i](buf[i])


def run_backward(outputs, grad_outputs, keep_graph, create_graph, inputs=(), allow_unused=False,
                 accumulate_grad=True):
    """Run the graph behind ``outputs`` backward; return the gradients captured for ``inputs``."""
    roots = []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        edge = gradient_edge(t)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append((edge, g))
    captures, targets, needed = {}, set(), None
    for slot, t in enumerate(inputs):
        edge = gradient_edge(t)
        if edge is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        captures.setdefault(edge[0], []).append((edge[1], slot))
        targets.add(edge[0])
    root_nodes = [edge[0] for edge, _ in roots]
    deps = _dependencies(root_nodes)
    if inputs:
        needed = _needed(root_nodes, deps, targets)

    buffers, heap, tie = {}, [], itertools.count()
    for (node, input_nr), g in roots:
        if g is not None:
            _add_to_buffer(buffers, node, input_nr, g)
    for node in dict.fromkeys(root_nodes):
        if not deps.get(node):
            heapq.heappush(heap, (-node._seq, next(tie), node))

    results = [None] * len(inputs)
    prev_mode = _grad_state.grad_enabled
    _grad_state.grad_enabled = bool(create_graph)
    try:
        while heap:
            node = heapq.heappop(heap)[2]
            buf = buffers.pop(node, None) or [None] * node._num_inputs
            _call_tensor_hooks(node, buf)
            for input_nr, slot in captures.get(node, ()):
                results[slot] = buf[input_nr]
            if needed is not None and node not in needed and not (accumulate_grad and node in targets):
                continue                    # nothing below leads to an input: its edges stay unvisited
            if isinstance(node, AccumulateGrad) and not accumulate_grad:
                continue
            if node._pre_hooks:
                for hook in node._pre_hooks:
                    new = hook(tuple(buf))
                    if new is not None:
                        buf = list(new)
            if any(g is not None for g in buf):
                grads = node.apply(buf)
            else:
                grads = (None,) * len(node._next_edges)
            if not keep_graph:
                node.release_variables()
            if node._post_hooks:
                for hook in node._post_hooks:
                    new = hook(tuple(grads), tuple(buf))
                    if new is not None:
                        grads = new
            for index, (edge, g) in enumerate(zip(node._next_edges, grads)):
                if edge is None:
                    continue
                nxt, input_nr = edge
                if g is not None:
                    _add_to_buffer(buffers, nxt, input_nr, _validate(g, nxt._input_meta[input_nr], node, index))
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    heapq.heappush(heap, (-nxt._seq, next(tie), nxt))
            grads = g = None     # the buffers own the gradients now: AccumulateGrad may take one
    finally:
        _grad_state.grad_enabled = prev_mode

    if inputs and not allow_unused:
        for slot, g in enumerate(results):
            if g is None:
                raise RuntimeError(f"The differentiated Tensor at index {slot} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
    return results
