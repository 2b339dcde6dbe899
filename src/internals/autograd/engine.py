"""The backward engine (``torch/csrc/autograd/engine.cpp``).

``run_backward`` walks the graph from the roots twice. First it counts, for every node, how
many edges point at it (``compute_dependencies``). Then it runs nodes from a ready queue: a
node is ready when its count drops to zero, which means every gradient it will ever get has
arrived and been summed in its *input buffer*. Each ready node goes through torch's three
steps: ``evaluate_function`` (captures, then routing the outputs to the next buffers) calls
``call_function`` (hooks and the node itself), which calls ``validate_outputs`` (shapes and
dtypes made to fit). Like torch's CPU ready queue, the queue is a
priority queue on the sequence number, later nodes first, so a chain runs in reverse creation
order and AccumulateGrad (the largest number) runs as soon as it is ready.

In anomaly mode (``anomaly_mode.py``) a node whose outputs hold a nan fails, and a node that
fails warns first with the stack of the forward call that made it.

``autograd.grad`` *captures* gradients instead of accumulating them: only the nodes on a path
to one of the inputs run (``exec_info``), and the gradient arriving at an input's edge is
recorded there.
"""
import heapq
import itertools
import threading

from .._tensor_base import TensorBase
from ..aten import dispatcher
from ..c10.grad_mode import _state as _grad_state
from ..c10.memory_format import preserve_format
from ..c10.tensor_impl import sparse_coo, strided
from . import anomaly_mode
from .anomaly_mode import AnomalyMode
from .functions_manual import is_expandable_to, sum_to
from .graph import AccumulateGrad, gradient_edge

__all__ = ["run_backward", "make_grads", "GraphTask", "evaluate_function", "call_function", "validate_outputs",
           "compute_dependencies", "init_to_execute", "queue_callback", "is_checkpoint_valid"]

# The graph tasks this thread is running, innermost last (torch's thread-local ``current_graph_task``);
# a hook that calls backward again nests a second task.
_running = threading.local()


def _torch_size(sizes):
    return f"torch.Size([{', '.join(str(s) for s in sizes)}])"


def make_grads(outputs, grad_outputs, is_grads_batched=False):
    """Default gradients for the roots: ones for scalars (``_make_grads`` in torch/autograd/__init__.py)."""
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._requires_grad and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._requires_grad and not out.dtype.is_floating_point:     # a complex loss has no gradient direction
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            # through the dispatcher, as torch's ``torch.ones_like(out, memory_format=preserve_format)``
            g = dispatcher.call("ones_like", out, memory_format=preserve_format) if out._requires_grad else None
        elif is_grads_batched and tuple(g._impl.sizes[1:]) != tuple(out._impl.sizes):
            raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               "shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
                               # torch measures its first row, less a dim again: a (2, 3) grad shows []
                               f"shape of {_torch_size(g.shape[2:])} and output[{i}] has a shape of "
                               f"{_torch_size(out.shape)}. If you only want some tensors in `grad_output` to be "
                               "considered batched, consider using vmap.".replace("{i}", str(i)))
        elif not is_grads_batched and g._impl.sizes != out._impl.sizes:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_torch_size(g.shape)} and "
                               f"output[{i}] has a shape of {_torch_size(out.shape)}.")
        grads.append(g)
    return grads


def _validate(grad, meta, node, index):
    """Make a gradient fit the input it is for (``validate_outputs``): sum away broadcast dims, cast."""
    sizes, dtype, device = meta
    if grad._impl.sizes != sizes:
        if not is_expandable_to(sizes, grad._impl.sizes):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {index} - got "
                               f"{list(grad.shape)} but expected shape compatible with {list(sizes)}")
        grad = sum_to(grad, sizes)
    if grad.device != device and grad._impl.sizes:
        # only a 0-dim gradient is moved across devices; any other on the wrong device is a bug
        raise RuntimeError(f"invalid gradient at index {index} - expected device {device} but got {grad.device}")
    if grad._impl.dtype is not dtype:      # the dtype alone, as torch casts it (``_to_copy(dtype=...)``)
        grad = grad.to(dtype)
    if grad.device != device:
        grad = grad.to(device)
    return grad


def _add_to_buffer(buffers, node, input_nr, grad):
    """``InputBuffer::add``: a tensor used twice gets the sum of its gradients."""
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._num_inputs
    old = buf[input_nr]
    buf[input_nr] = grad if old is None else old + grad


def compute_dependencies(roots):
    """How many edges point at each node reachable from the roots (``compute_dependencies``).
    A root given twice (``backward([y, y])``) is walked once: torch's graph root has two edges to
    it, but the walk visits each node once."""
    deps, seen, stack = {}, set(roots), list(dict.fromkeys(roots))
    while stack:
        for edge in stack.pop()._next_edges:
            if edge is not None:
                nxt = edge[0]
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return deps


def init_to_execute(roots, deps, targets):
    """Nodes from which a target can be reached: the only ones ``grad`` must run
    (``GraphTask::init_to_execute``, torch's ``exec_info``)."""
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
    name = getattr(hook, "__name__", type(hook).__name__)
    if not isinstance(new, TensorBase):
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


class GraphTask:
    """One backward call's state (``graph_task.h``): the dependency counts, the input buffers of
    nodes not yet ready (``not_ready_``), the ready queue, and what ``grad`` captures."""
    __slots__ = ("keep_graph", "accumulate_grad", "deps", "buffers", "ready", "tie", "captures", "targets",
                 "needed", "results", "final_callbacks")

    def __init__(self, keep_graph, accumulate_grad, n_inputs):
        self.keep_graph, self.accumulate_grad = keep_graph, accumulate_grad
        self.buffers, self.ready, self.tie = {}, [], itertools.count()
        self.captures, self.targets, self.needed = {}, set(), None
        self.results = [None] * n_inputs
        self.final_callbacks = []

    def push_ready(self, node):
        """The CPU ready queue: a priority queue on the sequence number, later nodes first."""
        heapq.heappush(self.ready, (-node._seq, next(self.tie), node))


def validate_outputs(node, grads):
    """Make each gradient fit the input its edge leads to (``validate_outputs``)."""
    return [g if g is None or edge is None else _validate(g, edge[0]._input_meta[edge[1]], node, index)
            for index, (edge, g) in enumerate(zip(node._next_edges, grads))]


def call_function(task, node, buf):
    """Hooks before, the node's ``apply``, the outputs validated, hooks after (``call_function``)."""
    if node._pre_hooks:
        for hook in node._pre_hooks:
            new = hook(tuple(buf))
            if new is not None:
                buf = list(new)
    if any(g is not None for g in buf):
        grads = node.apply(buf)
    else:
        grads = (None,) * len(node._next_edges)
    grads = validate_outputs(node, grads)
    if node._post_hooks:
        for hook in node._post_hooks:
            new = hook(tuple(grads), tuple(buf))
            if new is not None:
                grads = list(new)
    return grads


def evaluate_function(task, node, buf):
    """Run one ready node and route its outputs to the next nodes' buffers (``evaluate_function``)."""
    _call_tensor_hooks(node, buf)
    for input_nr, slot in task.captures.get(node, ()):
        task.results[slot] = buf[input_nr]
    if task.needed is not None and node not in task.needed and not (task.accumulate_grad and node in task.targets):
        return                          # nothing below leads to an input: its edges stay unvisited
    if isinstance(node, AccumulateGrad) and not task.accumulate_grad:
        return
    grads = call_function(task, node, buf)
    buf = None                          # the buffers own the gradients now: AccumulateGrad may take one
    if not task.keep_graph:
        node.release_variables()
    if AnomalyMode.enabled and AnomalyMode.check_nan:
        _check_nan(node, grads)
    deps = task.deps
    for edge, g in zip(node._next_edges, grads):
        if edge is None:
            continue
        nxt, input_nr = edge
        if g is not None:
            _add_to_buffer(task.buffers, nxt, input_nr, g)
        left = deps[nxt] - 1
        deps[nxt] = left
        if left == 0:
            task.push_ready(nxt)


def _check_nan(node, grads):
    """Anomaly mode's check: no output of a backward node may hold a nan (``evaluate_function``)."""
    prev, _grad_state.grad_enabled = _grad_state.grad_enabled, False
    try:
        for i, g in enumerate(grads):
            if g is not None and _stored_values(g).isnan().any().item():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    finally:
        _grad_state.grad_enabled = prev


def _stored_values(g):
    """The values a gradient stores: a sparse one's explicit values (isnan of a sparse tensor is one)."""
    layout = g._impl.layout
    if layout is strided:
        return g
    return g._values() if layout is sparse_coo else g.values()


def _run_node(task, node):
    """``thread_main``'s step: the node runs as the current one; if it fails in anomaly mode, the
    forward stacks it recorded are given as a warning before the error goes on (``set_exception``)."""
    prev = anomaly_mode.set_current_node(node)
    try:
        evaluate_function(task, node, task.buffers.pop(node, None) or [None] * node._num_inputs)
    except Exception:
        if AnomalyMode.enabled:
            anomaly_mode.print_stack(node)
        raise
    finally:
        anomaly_mode.set_current_node(prev)


def run_backward(outputs, grad_outputs, keep_graph, create_graph, inputs=(), allow_unused=False,
                 accumulate_grad=True):
    """Run the graph behind ``outputs`` backward; return the gradients captured for ``inputs``
    (``Engine::execute``, then ``thread_main``'s loop over the ready queue)."""
    task = GraphTask(keep_graph, accumulate_grad, len(inputs))
    roots = []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        edge = gradient_edge(t)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append((edge, g))
    for slot, t in enumerate(inputs):
        edge = gradient_edge(t)
        if edge is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        task.captures.setdefault(edge[0], []).append((edge[1], slot))
        task.targets.add(edge[0])
    root_nodes = [edge[0] for edge, _ in roots]
    task.deps = compute_dependencies(root_nodes)
    if inputs:
        task.needed = init_to_execute(root_nodes, task.deps, task.targets)
    for index, ((node, input_nr), g) in enumerate(roots):
        if g is not None:       # the given gradients are checked as a node's outputs are (Engine::execute)
            meta = node._input_meta[input_nr]
            _add_to_buffer(task.buffers, node, input_nr, g if meta is None else _validate(g, meta, node, index))
    for node in dict.fromkeys(root_nodes):
        if not task.deps.get(node):
            task.push_ready(node)

    prev_mode = _grad_state.grad_enabled
    _grad_state.grad_enabled = bool(create_graph)
    stack = _task_stack()
    stack.append(task)
    try:
        while task.ready:
            _run_node(task, heapq.heappop(task.ready)[2])
        _run_final_callbacks(task)
    finally:
        stack.pop()
        _grad_state.grad_enabled = prev_mode

    if inputs and not allow_unused:
        for slot, g in enumerate(task.results):
            if g is None:
                raise RuntimeError(f"The differentiated Tensor at index {slot} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
    return task.results


def is_checkpoint_valid():
    """False inside a backward pass that computes only some inputs' gradients (``grad``, or
    ``backward(inputs=...)``): a reentrant checkpoint's inner backward could not reach them
    (torch's ``GraphTask::can_checkpoint``, an empty ``exec_info_``)."""
    tasks = _task_stack()
    return not tasks or tasks[-1].needed is None


def _task_stack():
    if not hasattr(_running, "tasks"):
        _running.tasks = []
    return _running.tasks


def queue_callback(callback):
    """Run ``callback`` once the running backward pass has run its last node (``Engine::queue_callback``).

    DDP's reducer uses it to wait for its last all-reduce before ``backward()`` returns."""
    stack = _task_stack()
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    stack[-1].final_callbacks.append(callback)


def _run_final_callbacks(task):
    """``exec_post_processing``: the callbacks in the order queued; one may queue another, which runs too."""
    i = 0
    while i < len(task.final_callbacks):
        task.final_callbacks[i]()
        i += 1
