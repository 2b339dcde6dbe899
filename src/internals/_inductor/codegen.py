"""From a FusedGroup to the source of one Numba kernel (``torch/_inductor/codegen/``).

Inductor writes Triton (GPU) or C++ (CPU) text and compiles it; this writes Python text for
Numba: ``@njit(parallel=True)`` with a ``prange`` loop on the CPU, ``@cuda.jit`` with a
grid-stride loop on CUDA. Everything the guard fixes -- shapes, strides, dtype -- is written
into the text as numbers, so the index arithmetic is as plain as it can be (each input's
buffer is handed over from its first element, so no storage offset is: torch guards none). In
a graph traced with dynamic sizes (``internals.compile``'s automatic dynamic shapes) a size is a symbol
(``s77``): the text names it, and the kernel takes its value as an argument after the buffers
(Inductor's kernels take ``ks0`` the same way), so one kernel serves every size the graph's
guards admit. A decision the text needs about a symbol (is this size 1?) is answered from its
example and becomes one more guard of the graph.

Each group node becomes one line ``v_<name> = <expression>``. Inputs are read where they are
needed and outputs written once: one pass over memory for the whole group. In a row kernel a
value needed by two loops is recomputed rather than stored (Inductor does the same), except
where a reduction loop can park it in an output's memory for the last loop (see ``_parked``).

On the CPU a float32 kernel calls ``exp_f32`` (``vec_math.py``) rather than ``math.exp``, so that
its loops vectorize, and a row kernel is compiled with ``fastmath={"reassoc"}``: LLVM may then
sum a row in several vector lanes at once, as torch's vectorized reductions do (the order of the
additions changes, nothing else: nan and inf behave as without it). A division by a per-row value
becomes one reciprocal per row and a multiply per element, as in torch's softmax and layer norm.
"""
import math
import re

from ..c10.sym import is_symbolic
from .scheduler import EXPRESSIONS, ROW_REDUCTIONS

__all__ = ["KernelSource", "generate"]


def _val(node):
    return node.meta["val"]


def _index(sizes, strides, loop_shape, var, col=None):
    """The storage index, as source text, of a tensor with ``sizes``/``strides`` broadcast to
    ``loop_shape`` (dims aligned on the right), at element ``var`` of a row-major loop over
    ``loop_shape`` -- or, with ``col``, at column ``col`` of row ``var``."""
    sizes, strides, loop_shape = list(sizes), list(strides), list(loop_shape)
    sizes, strides = [1] * (len(loop_shape) - len(sizes)) + sizes, [0] * (len(loop_shape) - len(sizes)) + strides
    if col is None and sizes == loop_shape and strides == _contiguous(loop_shape):
        return var       # the common case: element i is at i
    terms = []
    if col is not None:
        if sizes[-1] != 1 and strides[-1] != 0:
            terms.append(col if strides[-1] == 1 else f"{col} * {_t(strides[-1])}")
        sizes, strides, loop_shape = sizes[:-1], strides[:-1], loop_shape[:-1]
    inner = 1
    for d in range(len(loop_shape) - 1, -1, -1):
        if sizes[d] != 1 and strides[d] != 0:
            idx = var if inner == 1 else f"({var} // {_t(inner)})"
            if d > 0:
                idx = f"({idx} % {_t(loop_shape[d])})"
            terms.append(idx if strides[d] == 1 else f"{idx} * {_t(strides[d])}")
        inner *= loop_shape[d]
    return " + ".join(reversed(terms)) or "0"


def _t(value):
    """A size, stride or count as source text: a number as itself; a size symbol of a dynamic
    graph by its name (``s77``), a kernel parameter; an expression of symbols in parentheses."""
    if not is_symbolic(value):
        return str(value)
    text = _KERNEL_FUNCTIONS.sub(lambda m: _KERNEL_NAMES[m[1]], str(value))
    return text if text.isidentifier() else f"({text})"


# sympy's names of the functions a symbol may go through (``math.sqrt(s)``, ``round(s)``) ->
# what the kernel calls: an argument kept symbolic by ``sym_sqrt`` and its kin.
_KERNEL_NAMES = {"sqrt": "math.sqrt(", "ceiling": "math.ceil(", "floor": "math.floor(", "RoundToInt": "round(",
                 "TruncToInt": "int("}
_KERNEL_FUNCTIONS = re.compile(r"\b(sqrt|ceiling|floor|RoundToInt|TruncToInt)\(")


def symbols_of(values):
    """The names of the size symbols in ``values`` (sizes, strides, offsets), sorted: the
    parameters a kernel of a dynamic graph takes after its buffers."""
    names = set()
    for v in values:
        if is_symbolic(v):
            names |= {s.name for s in v.node.expr.free_symbols}
    return sorted(names)


def _contiguous(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


class KernelSource:
    """The generated text and what to call it with: ``outputs`` then ``inputs`` (graph nodes),
    then the values of the size symbols named in ``symbols`` (a dynamic graph's kernel), then
    the values of the nodes in ``scalars`` (symbolic numbers passed as they are)."""

    def __init__(self, text, inputs, outputs, launch_size, symbols=(), scalars=()):
        self.text, self.inputs, self.outputs, self.launch_size = text, inputs, outputs, launch_size
        self.symbols, self.scalars = tuple(symbols), tuple(scalars)

    def __str__(self):
        return self.text


class _Writer:
    def __init__(self, group, device):
        self.group = group
        self.exp = "exp_f32" if device == "cpu" and _dtype_name(group) == "float32" else "math.exp"
        self.reciprocals = set()   # per-row values whose reciprocal the row loop computes
        self.members = set(group.nodes)
        self.constants, self.inputs, self.outputs = {}, [], []
        self.scalars = []       # symbolic ints the nodes take (an int argument made dynamic: ``s86``)
        for node in group.nodes:
            for a in node.all_input_nodes:
                if a not in self.members and a not in self.inputs and a not in self.scalars:
                    (self.scalars if is_symbolic(_val(a)) else self.inputs).append(a)
            if any(u not in self.members for u in node.users):
                self.outputs.append(node)

    def scalar_name(self, node):
        """A symbolic number's text in the kernel: an input that is a plain symbol (``s86``) by
        the symbol's name, found from the graph's inputs on a call; any other (``int(zf0)``, a
        backward's saved ``trunc``, whose ``zf0`` no input of that graph binds) by its own
        parameter, the node's value on the call."""
        if node.op == "placeholder" and _val(node).node.expr.is_Symbol:
            return _t(_val(node))
        return f"sc_{node.name}"

    @property
    def valued_scalars(self):
        """The symbolic numbers the kernel takes as values, not by their symbols."""
        return [n for n in self.scalars if self.scalar_name(n).startswith("sc_")]

    def literal(self, value):
        """A number as a named constant of the kernel's dtype (so float32 math stays float32)."""
        for name, v in self.constants.items():
            if v == value and type(v) is type(value):
                return name
        name = f"K{len(self.constants)}"
        self.constants[name] = value
        return name

    def operand(self, a):
        if a in self.members:
            return f"v_{a.name}"
        if a in self.scalars:       # a kernel parameter, converted as torch wraps a Python scalar
            return f"{_dtype_name(self.group)}({self.scalar_name(a)})"
        if hasattr(a, "op"):
            return f"x{self.inputs.index(a)}"
        return self.literal(a)

    def expression(self, node):
        name = node.target.name()
        if name == "aten::pow.Tensor_Scalar" and node.args[1] == 2:
            return "{0} * {0}".format(self.operand(node.args[0]))
        if name == "aten::div.Tensor" and node.args[1] in self.reciprocals:
            return f"{self.operand(node.args[0])} * inv_{node.args[1].name}"
        text = EXPRESSIONS[name].format(*[self.operand(a) for a in node.args], exp=self.exp)
        alpha = node.kwargs.get("alpha", 1)
        if alpha is not None and hasattr(alpha, "op") or alpha != 1:      # add/sub with alpha: a + alpha * b
            # a float argument made dynamic is a node: the kernel takes it as a parameter
            factor = self.operand(alpha) if hasattr(alpha, "op") else self.literal(alpha)
            text = text.replace(" + ", f" + {factor} * ").replace(" - ", f" - {factor} * ")
        return text

    def load(self, a, var, loop_shape, col=None):
        v, k = _val(a), self.inputs.index(a)
        # an input's buffer starts at its first element (``_launch``): no offset is baked in, so
        # the kernel serves a view at any storage offset, as torch's guards assume
        return f"x{k} = in{k}[{_index(v.shape, v.stride(), loop_shape, var, col)}]"

    def output_element(self, node, var, loop_shape, col=None):
        """``outK[index]``: where ``node``'s value goes in its output buffer."""
        v = _val(node)
        return f"out{self.outputs.index(node)}[{_index(v.shape, v.stride(), loop_shape, var, col)}]"

    def store(self, node, var, loop_shape, col=None):
        return f"{self.output_element(node, var, loop_shape, col)} = v_{node.name}"


def _dtype_name(group):
    return str(group.dtype).rsplit(".", 1)[-1]


def _is_full(node, shape):
    return tuple(_val(node).shape) == shape and node.target.name() in EXPRESSIONS


def _needed(w, targets, shape, available=()):
    """The full-shape group nodes ``targets`` depend on, in graph order (row-level ones excluded,
    and those ``available`` already)."""
    seen, stack = set(), list(targets)
    while stack:
        n = stack.pop()
        if n in w.members and n not in seen and n not in available and _is_full(n, shape):
            seen.add(n)
            stack.extend(n.all_input_nodes)
    return [n for n in w.group.nodes if n in seen]


def _loop_body(w, nodes, var, shape, indent, reads=(), col=None):
    """Loads of the external inputs that ``nodes`` (and ``reads``) use, then one line per node."""
    pad = " " * indent
    loaded, lines = [], []
    for a in [a for n in nodes for a in n.all_input_nodes] + list(reads):
        if a in w.inputs and a not in loaded:
            loaded.append(a)
            lines.append(pad + w.load(a, var, shape, col))
    return lines + [f"{pad}v_{n.name} = {w.expression(n)}" for n in nodes]


def _loop(device, var, count, indent, parallel=True):
    pad = " " * indent
    if device == "cuda" and parallel:
        return f"{pad}for {var} in range(cuda.grid(1), {_t(count)}, cuda.gridsize(1)):"
    return f"{pad}for {var} in {'prange' if parallel else 'range'}({_t(count)}):"


def _pointwise(w, device):
    """One loop over the elements; a whole-tensor sum or mean at the end accumulates in it.

    On the CPU a kernel over two or more dims loops over rows (in parallel) and, inside, over the
    last dim: an input broadcast along the rows is then read at ``c``, not at ``i % cols``, and
    the inner loop has the plain indexing LLVM needs to vectorize it.
    """
    shape, n = w.group.shape, math.prod(w.group.shape)
    reduction = w.group.nodes[-1] if w.group.kind == "reduce" else None
    nodes = [m for m in w.group.nodes if m is not reduction]
    if device == "cpu" and reduction is None and len(shape) >= 2:
        lines = [_loop(device, "r", n // shape[-1], 4), _loop(device, "c", shape[-1], 8, parallel=False)]
        lines += _loop_body(w, nodes, "r", shape, 12, col="c")
        lines += ["            " + w.store(m, "r", shape, col="c") for m in w.outputs]
        return lines, n
    lines = ["    acc = 0.0"] if reduction else []
    lines.append(_loop(device, "i", n, 4))
    lines += _loop_body(w, nodes, "i", shape, 8, reads=[reduction.args[0]] if reduction else ())
    lines += ["        " + w.store(m, "i", shape) for m in w.outputs if m is not reduction]
    if reduction:
        lines.append(f"        acc += {w.operand(reduction.args[0])}")
        total = "acc" if reduction.target.name() == "aten::sum" else f"acc / {_t(n)}"
        lines.append(f"    out{w.outputs.index(reduction)}[0] = {total}")
    return lines, n


def _parked(w, shape):
    """Values a reduction loop computes that a full-shape output reads, as {value: output}.

    Softmax's ``exp(x - max)`` is needed by the sum and again by the final division. Rather than
    computing it twice, the sum's loop stores it in the output's own memory and the last loop
    reads it back and divides in place: one ``exp`` per element instead of two.
    """
    reduced = {n for r in w.group.nodes if r.target.name() in ROW_REDUCTIONS for n in _needed(w, [r.args[0]], shape)}
    parked = {}
    for out in (m for m in w.outputs if _is_full(m, shape)):
        value = next((a for a in out.args if a in reduced and a not in w.outputs and a not in parked), None)
        if value is not None:
            parked[value] = out
    return parked


def _row(w, device):
    shape = w.group.shape
    rows, cols, row_shape = math.prod(shape[:-1]), shape[-1], shape[:-1] + (1,)
    parked, stored = _parked(w, shape), []    # a list: the source is written in a fixed order
    lines = [_loop(device, "r", rows, 4)]
    for node in w.group.nodes:
        name = node.target.name()
        if _is_full(node, shape):
            continue
        if name in ROW_REDUCTIONS:
            source = node.args[0]
            is_sum = name == "aten::sum.dim_IntList"
            lines.append(f"        acc = {'ZERO' if is_sum else 'NEG_INF'}")
            if not is_sum:
                lines.append("        nan = False")
            lines.append(_loop(device, "c", cols, 8, parallel=False))
            computed = _needed(w, [source], shape)
            lines += _loop_body(w, computed, "r", shape, 12, reads=[source], col="c")
            for n in (n for n in computed if n in parked and n not in stored):
                stored.append(n)
                lines.append(f"            {w.output_element(parked[n], 'r', shape, 'c')} = v_{n.name}")
            value = w.operand(source)
            if is_sum:
                lines.append(f"            acc += {value}")
                lines.append(f"        v_{node.name} = acc")
            else:       # amax: max() vectorizes; a nan anywhere in the row wins, as in torch
                lines.append(f"            acc = max(acc, {value})")
                lines.append(f"            nan |= {value} != {value}")
                lines.append(f"        v_{node.name} = NAN if nan else acc")
        else:           # a pointwise op on one value per row
            lines += _loop_body(w, [node], "r", row_shape, 8)
        if any(u in w.members and u.target.name() == "aten::div.Tensor" and u.args[1] is node for u in node.users):
            w.reciprocals.add(node)
            lines.append(f"        inv_{node.name} = ONE / v_{node.name}")
        if node in w.outputs:
            lines.append("        " + w.store(node, "r", row_shape))
    full_outputs = [m for m in w.outputs if _is_full(m, shape)]
    if full_outputs:
        lines.append(_loop(device, "c", cols, 8, parallel=False))
        for n in stored:            # read back what a reduction loop parked in an output
            lines.append(f"            v_{n.name} = {w.output_element(parked[n], 'r', shape, 'c')}")
        lines += _loop_body(w, _needed(w, full_outputs, shape, available=stored), "r", shape, 12, col="c")
        lines += ["            " + w.store(m, "r", shape, col="c") for m in full_outputs]
    return lines, rows


def generate(group, device, name="fused"):
    """The kernel source for ``group`` on ``device`` ('cpu' or 'cuda'); a Python number among a
    node's arguments becomes a named constant of the kernel's dtype (``literal``)."""
    w = _Writer(group, device)
    body, launch = (_row if group.kind == "row" else _pointwise)(w, device)
    if group.kind == "reduce" and device == "cuda":
        raise NotImplementedError("a whole-tensor reduction kernel is generated for the CPU only")
    dtype = _dtype_name(group)
    params = [f"out{i}" for i in range(len(w.outputs))] + [f"in{i}" for i in range(len(w.inputs))]
    layout = [*group.shape]
    for node in w.outputs + w.inputs:
        v = _val(node)
        layout += [*v.shape, *v.stride()]
    layout += [_val(n) for n in w.scalars if n not in w.valued_scalars]
    symbols = symbols_of(layout)
    params += symbols + [w.scalar_name(n) for n in w.valued_scalars]
    header = [f"{k} = {dtype}({v!r})" for k, v in w.constants.items()]
    header += [f"ZERO = {dtype}(0)", f"ONE = {dtype}(1)"]
    header += [f"NEG_INF = {dtype}(-math.inf)", f"NAN = {dtype}(math.nan)"] if group.kind == "row" else []
    fastmath = '{"reassoc"}' if group.kind == "row" else "False"
    decorator = "@cuda.jit" if device == "cuda" else f"@njit(parallel=True, fastmath={fastmath})"
    header.append("")
    signature = f"def {name}({', '.join(params)}):"
    text = "\n".join(header + [decorator, signature] + body) + "\n"
    return KernelSource(text, w.inputs, w.outputs, launch, symbols, w.valued_scalars)
