"""Live figures: interactive pictures that run in the reader's browser, with no kernel behind them.

The figures are small plain scripts (``static/figures/*.js``): the book serves them from its own
static files, and ``show`` inlines them into a notebook output for JupyterLab and Colab (no
network). What they show comes from this package: ``figure_data`` computes, for each figure, the
examples and tables it starts from, and ``scripts/figure_data.py`` writes them into the book at
build time. The scripts repeat a few of the package's rules in JavaScript so the reader can try
any input (``computeStride`` for ``view``, TensorIterator's reorder and coalesce); the book's
browser tests check them against the package.
"""
import html
import json
import uuid
from pathlib import Path

import internals
from internals.aten import dispatcher
from internals.aten.tensor_iterator import TensorIterator
from internals.autograd import engine
from internals.autograd.engine import compute_dependencies
from internals.c10.dispatch_key import DispatchKey
from internals.c10.local_dispatch_key_set import DEFAULT_EXCLUDED, DEFAULT_INCLUDED
from internals.c10.tensor_impl import compute_key_set
from internals.cuda import caching_allocator as ca
from internals.cuda._device_memory import DeviceMemory
from internals.cuda.allocator_config import AllocatorConfig
from internals.cuda.caching_allocator import segment_blocks

STATIC = Path(__file__).parent / "static" / "figures"
FIGURES = ("strides", "iterator", "dispatch", "autograd", "allocator")
_CORE = ("live.js",)

# The strides figure's examples: a storage size and the steps that make the view from arange(n).
STRIDE_EXAMPLES = [
    ("a 3×4 matrix", 12, [("view", [3, 4])]),
    ("its transpose", 12, [("view", [3, 4]), ("t", [])]),
    ("view of a transpose: refused", 12, [("view", [3, 4]), ("t", []), ("view", [12])]),
    ("every other column", 12, [("view", [3, 4]), ("slice", [1, 0, 4, 2])]),
    ("a row, selected", 12, [("view", [3, 4]), ("select", [0, 1])]),
    ("a column, expanded", 3, [("view", [3, 1]), ("expand", [3, 4])]),
    ("3-d, permuted", 24, [("view", [2, 3, 4]), ("permute", [2, 0, 1])]),
    ("split a dim of a permuted view", 24, [("view", [2, 3, 4]), ("permute", [1, 0, 2]), ("view", [3, 2, 2, 2])]),
]

# The TensorIterator figure's examples: each operand as (shape, permutation of a contiguous tensor).
ITERATOR_EXAMPLES = [
    ("same shape, contiguous", ([2, 3, 4], [0, 1, 2]), ([2, 3, 4], [0, 1, 2])),
    ("a transposed operand", ([3, 4], [1, 0]), ([3, 4], [0, 1])),
    ("both transposed", ([3, 4], [1, 0]), ([3, 4], [1, 0])),
    ("a row broadcast over a matrix", ([3, 4], [0, 1]), ([4], [0])),
    ("a column broadcast, channels first", ([2, 3, 4], [2, 0, 1]), ([2, 1, 4], [0, 1, 2])),
    ("outer product", ([3, 1], [0, 1]), ([1, 4], [0, 1])),
]


def apply_step(x, op, args):
    """One step of the strides figure, as the package runs it."""
    if op == "slice":
        dim, start, stop, step = args
        return x[(slice(None),) * dim + (slice(start, stop, step),)]
    if op == "t":
        return x.t()
    if op in ("transpose", "select"):
        return getattr(x, op)(*args)
    return getattr(x, op)(list(args))


def step_result(x):
    """What the figure shows for a view: sizes, strides, storage offset."""
    return {"sizes": list(x.shape), "strides": list(x.stride()), "offset": x.storage_offset()}


def error_text(error):
    return f"{type(error).__name__}: {error}"


def run_steps(storage, steps):
    """``arange(storage)`` then each step: the result after every step, or the error that stops it."""
    x = internals.arange(float(storage))
    results = []
    for op, args in steps:
        try:
            x = apply_step(x, op, args)
        except (RuntimeError, IndexError, ValueError, TypeError) as error:
            results.append({"error": error_text(error)})
            break
        results.append(step_result(x))
    return results


def strides_data():
    return {"itemsize": internals.float32.itemsize,
            "presets": [{"label": label, "storage": n, "steps": [{"op": op, "args": a} for op, a in steps],
                         "results": run_steps(n, steps)} for label, n, steps in STRIDE_EXAMPLES]}


def permuted_operand(shape, perm):
    """A tensor of ``shape`` whose memory runs in the order ``perm`` gives: ``perm`` applied to a
    contiguous tensor, then undone, so the sizes are ``shape`` and the strides are not row-major."""
    inverse = [perm.index(d) for d in range(len(perm))]
    return internals.zeros([shape[d] for d in perm]).permute(inverse)


def iterator_steps(a, b):
    """TensorIterator's build for ``a + b`` (operands given as (shape, perm)), step by step:
    read off the package's own iterator after ``build()``."""
    x, y = permuted_operand(*a), permuted_operand(*b)
    it = TensorIterator.binary_op(None, x, y)
    fast = bool(getattr(it, "fast", False))
    geometry = it.geometry
    return {"inputs": [step_result(x), step_result(y)], "shape": list(it.shape), "fast": fast,
            "broadcast_strides": None if fast else [list(s) for s in it.operand_strides],
            "perm": None if fast else list(it.perm), "output_strides": list(it.outputs[0].stride()),
            "loop_shape": geometry.shape.tolist(), "loop_strides": geometry.strides.tolist()}


def iterator_data():
    return {"presets": [{"label": label, "a": {"shape": a[0], "perm": a[1]}, "b": {"shape": b[0], "perm": b[1]},
                         "expected": iterator_steps(a, b)} for label, a, b in ITERATOR_EXAMPLES]}


# The dispatch figure's operators, and the tensors whose key sets it starts from.
DISPATCH_OPERATORS = ["add.Tensor", "add_.Tensor", "view", "sum", "empty.memory_format"]
DISPATCH_TENSORS = [("a CPU tensor", "cpu", "strided", False), ("a CUDA tensor", "cuda", "strided", False),
                    ("a meta tensor", "meta", "strided", False), ("a sparse CPU tensor", "cpu", "sparse_coo", False),
                    ("a CPU tensor made in inference mode", "cpu", "strided", True)]


def kernel_label(kernel, kind):
    """How the figure names a table entry: the function, and how the entry was filled."""
    if kernel.fallthrough:
        return "fallthrough"
    fn = kernel.fn
    name = getattr(fn, "__qualname__", type(fn).__name__).replace(".<locals>.", ".")
    module = (getattr(fn, "__module__", "") or "").rpartition(".")[2]
    return f"{module}.{name} ({kind})".lstrip(".")


def dispatch_table(name):
    """One operator's computed dispatch table: ``{key: {"kernel", "fallthrough"}}``."""
    op = dispatcher.aten_ops[name]
    return {key.name: {"kernel": kernel_label(kernel, kind), "fallthrough": kernel.fallthrough}
            for key, (kernel, kind) in op.table.items()}


def dispatch_data():
    layouts = {"strided": internals.strided, "sparse_coo": internals.sparse_coo}
    return {"keys": [k.name for k in DispatchKey],      # lowest priority first
            "included": [k.name for k in DEFAULT_INCLUDED], "excluded": [k.name for k in DEFAULT_EXCLUDED],
            "tensors": [{"label": label, "keys": [k.name for k in compute_key_set(device, layouts[layout], inference)]}
                        for label, device, layout, inference in DISPATCH_TENSORS],
            "operators": [{"name": f"aten::{name}", "table": dispatch_table(name), "undefined": undefined_kernel(name),
                           "available": kernel_keys(name)} for name in DISPATCH_OPERATORS]}


def kernel_keys(name):
    """The keys with a kernel of the operator's own, as its 'not available' message lists them."""
    table = dispatcher.aten_ops[name].table
    return [key.name for key in table if table[key][1] == "kernel"]


def undefined_kernel(name):
    """What a call with no key at all runs (``_run_undefined``): a composite kernel, or nothing."""
    kernels = dispatcher.aten_ops[name].kernels
    for alias in ("CompositeExplicitAutograd", "CompositeImplicitAutograd"):
        if alias in kernels:
            return kernel_label(kernels[alias], alias)
    return None


# The autograd figure's program: ``a`` is used twice, so its node waits for two gradients.
AUTOGRAD_PROGRAM = ["x = torch.tensor([1., 2.], requires_grad=True)",
                    "w = torch.tensor([0.5, -1.], requires_grad=True)",
                    "a = x * w",
                    "b = a.exp()",
                    "y = (a * b).sum()",
                    "y.backward()"]


def run_program(lib):
    """The autograd program run with ``lib`` (internals or torch): the leaves and the output."""
    x = lib.tensor([1., 2.], requires_grad=True)
    w = lib.tensor([0.5, -1.], requires_grad=True)
    a = x * w
    b = a.exp()
    return {"x": x, "w": w}, (a * b).sum()


def graph_nodes(root, leaves):
    """Every node behind ``root``, numbered in the order of a walk from it, with its edges, its
    sequence number and its row (its longest distance from the root, as ``graph_layout`` draws)."""
    index, order, stack = {}, [], [root]
    while stack:
        node = stack.pop()
        if node in index:
            continue
        index[node] = len(order)
        order.append(node)
        stack += [e[0] for e in reversed(node._next_edges) if e is not None]
    rows = {root: 0}
    for node in sorted(order, key=lambda n: -n._seq if n._seq < 2**63 else 0):
        for e in node._next_edges:
            if e is not None:
                rows[e[0]] = max(rows.get(e[0], 0), rows[node] + 1)
    names = {id(t): n for n, t in leaves.items()}
    return index, [{"name": n.name().replace("torch::autograd::", ""), "row": rows[n],
                    "leaf": names.get(id(getattr(n, "variable", None))),
                    "seq": n._seq if n._seq < 2**63 else None,
                    "next": [None if e is None else [index[e[0]], e[1]] for e in n._next_edges]} for n in order]


def values(t):
    return None if t is None else [round(v, 6) for v in t.detach().reshape(-1).tolist()]


def record_backward(root, index):
    """Run ``root``'s backward in the package's engine, recording after each node it evaluates
    the engine's own state: the node, the gradients it got, the dependency counts left."""
    steps, original = [], engine.evaluate_function

    def evaluate_and_record(task, node, buf):
        steps.append({"node": index[node], "grads_in": [values(g) for g in buf]})
        original(task, node, buf)
        steps[-1]["deps"] = {str(index[n]): left for n, left in task.deps.items()}
        steps[-1]["waiting"] = {str(index[n]): [values(g) for g in b] for n, b in task.buffers.items()}

    engine.evaluate_function = evaluate_and_record      # run_backward looks it up on each node
    try:
        root.backward()
    finally:
        engine.evaluate_function = original
    return steps


def autograd_data():
    leaves, y = run_program(internals)
    index, nodes = graph_nodes(y.grad_fn, leaves)
    deps = {str(index[n]): k for n, k in compute_dependencies([y.grad_fn]).items()}
    steps = record_backward(y, index)
    return {"program": AUTOGRAD_PROGRAM, "nodes": nodes, "deps": deps, "backward": steps,
            "output": values(y), "grads": {name: values(t.grad) for name, t in leaves.items()}}


# The allocator figure's program, on a private allocator over a 48 MiB simulated device:
# (name, bytes) allocates, (name, None) frees, ("empty_cache", None) returns cached segments.
_MiB = 2**20
ALLOCATOR_CAPACITY = 48 * _MiB
ALLOCATOR_PROGRAM = [("a", 3 * _MiB), ("b", 5 * _MiB), ("c", 100 * 1024), ("a", None), ("d", 2 * _MiB),
                     ("b", None), ("d", None), ("e", 30 * _MiB), ("f", 40 * _MiB), ("e", None), ("empty_cache", None)]


def allocator_state(alloc, names, born):
    """Segments and their blocks, plus the totals. Segments in the order they were made (``born``:
    (address, size) -> order, filled here), not by address: device addresses change from run to
    run, that order not. (A new segment may reuse a freed one's address, not with the same size here.)"""
    def order(head):
        return born.setdefault((head.ptr, sum(b.size for b in _segment_blocks(head))), len(born))
    segments = []
    for head in sorted(alloc.segments(), key=order):
        blocks = [{"offset": b.ptr - head.ptr, "size": b.size, "allocated": b.allocated,
                   "name": names.get(b.ptr) if b.allocated else None} for b in _segment_blocks(head)]
        segments.append({"pool": "small" if head.pool.is_small else "large",
                         "size": sum(b["size"] for b in blocks), "blocks": blocks})
    return {"segments": segments, "allocated": alloc.stats.allocated_bytes["all"].current,
            "reserved": alloc.stats.reserved_bytes["all"].current}


def _segment_blocks(head):
    return segment_blocks(head)


def allocator_data():
    """Replay ``ALLOCATOR_PROGRAM`` on the package's caching allocator: after each step, its
    segments and blocks, and the trace entries the step recorded (``_record_memory_history``)."""
    alloc = ca.DeviceCachingAllocator(DeviceMemory(capacity=ALLOCATOR_CAPACITY), AllocatorConfig())
    alloc.history.configure("all", None, "python", 10_000, False, None)
    blocks, names, born, steps = {}, {}, {}, []
    for name, size in ALLOCATOR_PROGRAM:
        seen, error = len(alloc.history.trace()), None
        try:
            if name == "empty_cache":
                alloc.empty_cache()
            elif size is None:
                block = blocks.pop(name)
                names.pop(block.ptr)
                alloc.free(block)
            else:
                blocks[name] = alloc.malloc(size)
                names[blocks[name].ptr] = name
        except ca.OutOfMemoryError as e:
            error = f"OutOfMemoryError: {e}"
        code = ("torch.cuda.empty_cache()" if name == "empty_cache" else f"del {name}" if size is None
                else f"{name} = torch.empty({size}, dtype=torch.uint8, device='cuda')")
        steps.append({"code": code, "error": error, "state": allocator_state(alloc, names, born),
                      "trace": [{"action": e["action"], "size": e["size"]} for e in alloc.history.trace()[seen:]]})
    return {"capacity": ALLOCATOR_CAPACITY, "steps": steps}


def figure_data(name=None):
    """The data of one figure (or of all, by name), as the scripts read it."""
    makers = {"strides": strides_data, "iterator": iterator_data, "dispatch": dispatch_data,
              "autograd": autograd_data, "allocator": allocator_data}
    if name is not None:
        return makers[name]()
    return {key: make() for key, make in makers.items()}


def script_files(name):
    """The scripts one figure needs, in load order."""
    return [STATIC / f for f in _CORE] + [STATIC / f"{name}.js"]


def data_script(data):
    # "</" would end the inline <script> early: JSON allows it written as "<\/".
    return "window.LiveFigureData = Object.assign(window.LiveFigureData || {}, " + \
        json.dumps(data, separators=(",", ":")).replace("</", "<\\/") + ");\n"


def html_for(name):
    """One figure as self-contained HTML: its stylesheet, data and scripts inlined."""
    if name not in FIGURES:
        raise ValueError(f"no live figure {name!r}; there are {', '.join(FIGURES)}")
    host = f"live-{uuid.uuid4().hex[:8]}"
    scripts = data_script({name: figure_data(name)}) + "".join(p.read_text() for p in script_files(name))
    scripts += f"window.LiveFigures.mountAll(document.getElementById({json.dumps(host)}).parentNode);\n"
    scripts = scripts.replace("</script", "<\\/script")
    return (f"<style>{(STATIC / 'figures.css').read_text()}</style>"
            f'<div><div class="live-figure" id="{host}" data-figure="{html.escape(name)}"></div></div>'
            f"<script>{scripts}</script>")


def show(name):
    """Display a live figure in JupyterLab or Colab (everything inlined: no network needed)."""
    from IPython.display import HTML, display  # only a notebook shows the figure: IPython is optional
    display(HTML(html_for(name)))


__all__ = ["figure_data", "show", "html_for", "apply_step", "run_steps", "iterator_steps", "permuted_operand",
           "STRIDE_EXAMPLES", "ITERATOR_EXAMPLES", "FIGURES"]
