"""make_fx: trace a function into a Graph of aten operators (``torch/fx/experimental/proxy_tensor.py``).

A TorchDispatchMode sees every operator call below autograd, so a mode that writes each call
down is a tracer. ``ProxyTorchDispatchMode`` records ``func(args)`` as a graph node and
remembers which node produced each tensor, so the next op can name its inputs. What computes
each call below it is the tracing mode:

- ``tracing_mode="real"`` (torch's default): nothing else; every operator runs its real
  kernel on the real inputs (a kernel that checks values, such as ``nll_loss``'s target
  check, checks them). A value read from a traced tensor (``.item()``) is still refused with
  torch's RuntimeError: the graph could not replay the read (``tolist()``, which torch reads
  without that operator, is read and its values kept, in both). Each node's ``meta["val"]`` is
  a fake twin of the real output, so the graph keeps no real intermediate alive;
- ``tracing_mode="fake"``: a ``FakeTensorMode`` below answers each call with fake tensors, so
  the inputs' values are never used (a kernel that must read values to run at all runs on
  zero-filled stand-ins). The mode has a ``ShapeEnv``, as torch's: a value read from a traced
  tensor (``.item()``) is a fresh symbol of unknown value (``zuf0`` for a float, ``u0`` for
  an int), recorded as a ``_local_scalar_dense`` node, and the calls it flows into name that
  node as their argument; an operator whose output size depends on the data (``nonzero``,
  ``unique``, ``x[mask]``) gets a symbol for that size. A *decision* on a symbol (an ``if``,
  ``int()``) raises ``GuardOnDataDependentSymNode``, torch's class;
- ``tracing_mode="symbolic"``: traced as ``"fake"``, and each input size is a symbol too, as
  torch's (``s75``: see ``ShapeEnv.create_symbolic_size``), and so is an int argument. A size
  the function uses -- in an operator's argument, in arithmetic -- is read back from its tensor
  by an ``aten.sym_size.int`` node, and the arithmetic is recorded as Python operator nodes
  (``mul = sym_size_int * 2``) when it is done, so the graph serves other sizes; the reads and
  arithmetic no call uses are dropped at the end. A decision on a size is answered from the
  example and kept as a guard; a guard that pins a size (``view(4, 3)`` of 12 elements) makes
  it a number, as torch's ShapeEnv does.

Either way a tensor made inside the function by ``tensor(...)`` is a constant of the graph: its
``.item()`` is read at trace time and written into the graph as a number, as torch does.

The function runs once, as Python: its ``if``s and loops are decided on the way and only the
operators remain. Autograd runs above the modes, so a ``backward()`` inside the function is
traced too -- its ops are just more calls.
"""
import builtins
import contextlib
import inspect
import math
import operator
import threading

from ..._meta_registrations import TensorMeta
from ..._ops import ops
from ..._subclasses.fake_tensor import DATA_DEPENDENT_OUTPUT, DataDependentOutputException, FakeTensor, FakeTensorMode
from ..._tensor import Tensor
from ...aten.dispatcher import enable_python_dispatcher
from ...c10.dispatch_key import DispatchKeySet, backend_key_for
from ...c10.sym import inside_operator, is_symbolic, sym_float, sym_max, sym_min, sym_sqrt, wrap_node
from ...nn.parameter import Parameter
from ...utils._python_dispatch import TorchDispatchMode, _disable_current_modes
from ...utils._pytree import tree_map
from ..graph import Graph
from ..graph_module import GraphModule
from .sym_node import SymNode, recorders
from .symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv

__all__ = ["ProxyTorchDispatchMode", "current_user_call", "make_fx"]

# The call of the user's code being traced, where a function mode above the tracer says
# (``_dynamo.user_code.CallSites``, for ``explain``): copied to each operator's node as
# ``meta['user_call']``, so that the operators can be counted as the calls the user wrote.
current_user_call = threading.local()

# ``lift_fresh`` may hand back its argument itself: fine once, in eager code, where the tensor
# is new; a graph runs again and again, so its node must make a new tensor each time. torch's
# ``proxy_call`` records ``lift_fresh_copy`` in its place.
_LIFT_FRESH_COPY = ops.aten.lift_fresh_copy.default
_SYM_SIZE, _SYM_STRIDE = ops.aten.sym_size.int, ops.aten.sym_stride.int
_SYM_NUMEL, _SYM_STORAGE_OFFSET = ops.aten.sym_numel.default, ops.aten.sym_storage_offset.default


def _lazy_name(target):
    """``sym_size_int``: torch names these nodes after the overload, not the packet (fx's
    ``_target_to_str`` of ``aten.sym_size.int``)."""
    return str(target).split(".", 1)[1].replace(".", "_")

# The functions a symbol's unary operations (and ``sym_max``/``sym_min``) are recorded as (the
# others: Python's operators).
_SYM_FUNCTIONS = {"sqrt": sym_sqrt, "floor": math.floor, "ceil": math.ceil, "round": builtins.round,
                  "trunc": math.trunc, "max": sym_max, "min": sym_min, "float": sym_float}

# torch's words (proxy_tensor.py) when real tracing is asked for the value of a traced tensor.
_REAL_MODE_READ = ("It appears that you're trying to get value out of a tracing tensor with {} - erroring out! "
                   "It's likely that this is caused by data-dependent control flow or similar.  It may be possible "
                   "to trace this with dynamic shapes; try setting tracing_mode='symbolic' in your make_fx call.")


class ProxyTorchDispatchMode(TorchDispatchMode):
    """Writes each operator call into ``graph``; ops in ``decomposition_table`` are replaced by
    the calls their decomposition makes (traced in turn) instead of being recorded."""

    def __init__(self, graph, fake_mode, decomposition_table=None, fold_constant_reads=True):
        self.graph, self.fake_mode = graph, fake_mode     # fake_mode None: real tracing
        self.fold_constant_reads = fold_constant_reads
        self.decompositions = {op.name(): fn for op, fn in (decomposition_table or {}).items()}
        self.constants = {}     # get_attr name -> the real tensor it names
        self._nodes = {}        # id(TensorImpl) -> (impl, node); the impl is kept so ids stay unique
        self._lifted = {}       # id(TensorImpl) -> (impl, real value) of the tensors ``tensor(...)`` made
        self._symbols = {}      # id(SymNode) -> (SymNode, node): values read from data, and arithmetic on them
        self._lazy = {}         # id(SymNode) -> (SymNode, target, args): a symbolic size, read when used

    def track(self, t, node):
        """Remember that ``node`` made ``t``. Keyed by the TensorImpl, not the Tensor object: autograd
        hands a saved tensor back as a new object over the same impl."""
        self._nodes[id(t._impl)] = (t._impl, node)
        self._track_symbolic_metadata(t, node)

    def _track_symbolic_metadata(self, t, node):
        """A size, stride, numel or offset of ``t`` that is a symbol (``nonzero``'s row count) is
        read back from ``node`` by a ``sym_size.int`` (``sym_stride.int``, ``sym_numel``,
        ``sym_storage_offset``) node -- recorded only when a later call uses it, and only for the
        first tensor that carries the symbol, as torch's ``track_tensor`` sets its lazy slots."""
        impl = t._impl
        reads = [(n, _SYM_SIZE, (node, i)) for i, n in enumerate(impl.sizes)]
        reads += [(s, _SYM_STRIDE, (node, i)) for i, s in enumerate(impl.strides)]
        with inside_operator():     # the tracer's own look at the element count: no node of the program
            numel = impl.numel()
        reads += [(numel, _SYM_NUMEL, (node,)), (impl.storage_offset, _SYM_STORAGE_OFFSET, (node,))]
        for value, target, args in reads:
            if is_symbolic(value):
                key = id(value.node)
                if key not in self._symbols and key not in self._lazy:
                    self._lazy[key] = (value.node, target, args)

    def node_of(self, value):
        """The node that made ``value`` (a tensor, a symbol), or ``value`` itself (a number, a dtype...)."""
        if is_symbolic(value):
            pinned = value.node.constant()      # a size a guard pinned to its example value
            return pinned if pinned is not None else self._symbol_node(value.node)
        if not isinstance(value, Tensor):
            return value
        hit = self._nodes.get(id(value._impl))
        if hit is None:         # a tensor the function closed over: a constant of the module
            if isinstance(value, FakeTensor):
                raise RuntimeError(f"make_fx met a fake tensor it did not make: {value!r}")
            node = self._constant(value)
            self.track(value, node)
            if self.fake_mode is not None:
                self.track(self.fake_mode.from_tensor(value), node)
            return node
        return hit[1]

    def _symbol_node(self, sym_node):
        """The node of a symbol: an ``item()`` read was recorded when it was made; arithmetic on
        symbols (``s * 2``, ``-s``, ``s / t``) is recorded now, from how it was computed, as the
        Python operator calls torch records (``operator.mul``)."""
        hit = self._symbols.get(id(sym_node))
        if hit is not None:
            return hit[1]
        lazy = self._lazy.pop(id(sym_node), None)
        if lazy is not None:            # a size of a traced tensor: read back from its node
            _, target, args = lazy
            node = self.graph.create_node("call_function", target, args, name=_lazy_name(target))
            node.meta["val"] = wrap_node(sym_node)
            self._symbols[id(sym_node)] = (sym_node, node)
            return node
        if sym_node.origin is None:      # torch records a size read from a data-dependent shape (sym_size)
            raise NotImplementedError(
                f"make_fx cannot record the symbol {sym_node}: a size of a data-dependent shape is not a node "
                "of the graph here (torch records it with aten.sym_size)")
        op, *operands = sym_node.origin
        args = tuple(self._symbol_node(a) if isinstance(a, SymNode) else a for a in operands)
        node = self.graph.call_function(_SYM_FUNCTIONS.get(op) or getattr(operator, op), args)
        node.meta["val"] = wrap_node(sym_node)
        self._symbols[id(sym_node)] = (sym_node, node)
        return node

    def record_arithmetic(self, sym_node):
        """A symbol the traced program just computed: its node now, in the order torch records
        it. One this graph cannot name yet (arithmetic on a size of a data-dependent shape) is
        left to be refused if a call uses it."""
        try:
            self._symbol_node(sym_node)
        except NotImplementedError:
            pass

    def eliminate_dead_sym_nodes(self):
        """Drop the size reads and size arithmetic that no call uses (torch's ``dispatch_trace``
        runs ``eliminate_dead_code`` with an ``impure_pred`` that lets only these go): a
        ``sym_size.int`` read for a comparison, ``mul = s1 * s2`` whose product a guard pinned."""
        for node in reversed(list(self.graph.nodes)):
            if node.op == "call_function" and not node.users and _is_sym_node(node):
                self.graph.erase_node(node)

    def _meta_val(self, t):
        """What ``node.meta["val"]`` holds: a fake tensor in both modes (real tracing keeps no
        real intermediate alive through the graph)."""
        if not isinstance(t, Tensor):       # a None in a result (a gradient an output mask left out)
            return t
        return self.fake_mode.from_tensor(t) if self.fake_mode is not None else _fake_twin(t)

    def _constant(self, t):
        prefix = "_param_constant" if isinstance(t, Parameter) else "_tensor_constant"
        name = f"{prefix}{sum(k.startswith(prefix) for k in self.constants)}"
        self.constants[name] = t
        node = self.graph.get_attr(name)
        node.meta["val"] = self._meta_val(t)
        return node

    def _read_value(self, func, args):
        """``_local_scalar_dense`` and the other calls that return a Python value computed from
        data: on a constant (a tensor ``tensor(...)`` made) the value itself, read now and not
        recorded, so the graph holds it as a number. On a traced tensor, under fake tracing, the
        fake mode's unbacked symbol, recorded as a ``_local_scalar_dense`` node; refused by real
        tracing (torch's RuntimeError) and by the compiler's trace, whose fake mode has no
        ShapeEnv (GuardOnDataDependentSymNode: the compiler breaks the graph there)."""
        tensor = args[0]
        hit = self._lifted.get(id(tensor._impl)) if isinstance(tensor, Tensor) else None
        if hit is not None and len(args) == 1 and self.fold_constant_reads:
            real = hit[1]
            with _disable_current_modes():
                return func.redispatch(DispatchKeySet([backend_key_for(real.device.type)]), real)
        if self.fake_mode is None:
            raise RuntimeError(_REAL_MODE_READ.format(func))
        shape_env = self.fake_mode.shape_env
        if shape_env is not None and shape_env.allow_unbacked and func.name() == "aten::_local_scalar_dense":
            symbol = func(*args)        # the fake mode's unbacked symbol
            node = self.graph.call_function(func, (self.node_of(args[0]),))
            node.meta["val"] = symbol
            self._symbols[id(symbol.node)] = (symbol.node, node)
            return symbol
        raise GuardOnDataDependentSymNode(
            f"Could not read a value from a traced tensor ({func}): the value depends on the data, "
            "which tracing with fake tensors does not have. Move the read out of the traced function, "
            "or trace with tracing_mode='real' if the graph may keep the value as a constant.")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        decomposition = self.decompositions.get(func.name())
        if decomposition is not None:
            with self:          # the decomposition's own calls come back here, one by one
                return decomposition(*args, **kwargs)
        if func.name() in DATA_DEPENDENT_OUTPUT:
            return self._read_value(func, args)
        lifted = func.name() == "aten::lift_fresh"
        if lifted:                              # a constant made by torch.tensor: copied per run
            func = _LIFT_FRESH_COPY
        node_args, node_kwargs = tree_map(self.node_of, args), tree_map(self.node_of, kwargs)
        if self.fake_mode is None:      # a real kernel takes a symbol's example value (a read made an input)
            args, kwargs = tree_map(_example_value, args), tree_map(_example_value, kwargs)
        try:
            with inside_operator():
                out = func(*args, **kwargs)      # the mode below (fake tensors) computes the metadata
        except Exception as error:
            if not hasattr(error, "fake_call"):  # the innermost call that failed, for the compiler's message
                error.fake_call = f"call_function {func}(*{tuple(args)!r}, **{kwargs!r})"
            raise
        if lifted and isinstance(args[0], Tensor) and not isinstance(args[0], FakeTensor):
            self._lifted[id(out._impl)] = (out._impl, args[0])
        node = self.graph.call_function(func, node_args, node_kwargs)
        node.meta["val"] = tree_map(self._meta_val, out)
        tag = getattr(current_user_call, "tag", None)
        if tag is not None:
            node.meta["user_call"] = tag
        if isinstance(out, (tuple, list)):   # one getitem node per output, as fx writes them
            for i, o in enumerate(out):
                item = self.graph.call_function(operator.getitem, (node, i))
                item.meta["val"] = self._meta_val(o)
                if isinstance(o, Tensor):    # an output the call did not compute is None
                    self.track(o, item)
        else:
            self.track(out, node)
        return out


def make_fx(f, decomposition_table=None, tracing_mode="real", *, _fold_constant_reads=True, _dynamic_dims=None):
    """``make_fx(f)(*args)`` runs ``f`` once and returns a GraphModule whose graph holds the aten
    operators ``f`` called, in order. ``tracing_mode`` as torch's (the module docstring):
    ``"real"`` (the default) runs the operators on the real inputs, ``"fake"`` on fake twins
    of them; ``"symbolic"`` as ``"fake"``, with symbols for the inputs' sizes. A value read
    from a traced tensor (``.item()``) is refused in real mode with torch's RuntimeError; in
    the others it is a symbol, and a decision on it raises
    GuardOnDataDependentSymNode, as in torch.
    ``_fold_constant_reads=False`` is the compiler's choice, as Dynamo's defaults
    (``capture_scalar_outputs``, ``capture_dynamic_output_shape_ops`` off): every ``.item()``,
    a constant's too, and every operator with a data-dependent output size is refused
    (GuardOnDataDependentSymNode, DynamicOutputShapeException), so the graph breaks there.
    ``_dynamic_dims`` is the compiler's too (automatic dynamic shapes): per argument None, or
    ``(source, dims)``: those dims of that tensor (an int argument: the int itself) are backed
    symbols named after ``source`` (``L['x']``, as Dynamo names them), the other sizes, the
    storage offset and the strides that are no product of sizes stay numbers. The ShapeEnv's guards are then kept on the
    GraphModule (``shape_env``) for the compiler to check on each call."""
    if tracing_mode not in ("fake", "real", "symbolic"):
        raise AssertionError(f"tracing_mode must be real/fake/symbolic, got {tracing_mode}")

    def traced(*args):
        graph = Graph()
        dynamic = _dynamic_dims and any(d is not None for d in _dynamic_dims)
        shape_env = ShapeEnv(allow_unbacked=_fold_constant_reads) if _fold_constant_reads or dynamic else None
        fake_mode = None if tracing_mode == "real" else FakeTensorMode(shape_env=shape_env)
        proxy_mode = ProxyTorchDispatchMode(graph, fake_mode, decomposition_table, _fold_constant_reads)
        traced_args = []
        tensors = 0
        for i, (name, a) in enumerate(zip(_placeholder_names(f, len(args)), args, strict=True)):
            node = graph.placeholder(name)      # every argument, as torch's: the graph takes them all
            if type(a) is int and (tracing_mode == "symbolic" or dynamic and _dynamic_dims[i] is not None):
                # an int argument is a backed symbol too (0 and 1 stay numbers), duck-shaped with
                # the sizes, its source named after the tensors before it (torch's ``input1``),
                # or the compiler's (``L['n']``: an int automatic dynamic shapes made a symbol)
                source = _dynamic_dims[i][0] if dynamic and _dynamic_dims[i] is not None else f"input{tensors}"
                # (``"number"``: a value read before a break; ``"int"``: an int argument whose value
                # changed, which torch's ``create_unspecified_symint_and_symbol`` does not
                # specialize: both a symbol at 0 and 1 too)
                number = dynamic and _dynamic_dims[i] is not None and _dynamic_dims[i][1] in ("number", "int")
                a = shape_env.create_symbolic_size(a, source, positive=None, specialize_zero_one=not number)
                if is_symbolic(a):
                    node.meta["val"] = a
                    proxy_mode._symbols[id(a.node)] = (a.node, node)
            elif type(a) is float and dynamic and _dynamic_dims[i] is not None:
                # a float argument automatic dynamic made an input (``L['s']``): a backed symbol
                a = shape_env.create_symbolic_float(a, _dynamic_dims[i][0])
                node.meta["val"] = a
                proxy_mode._symbols[id(a.node)] = (a.node, node)
            elif isinstance(a, Tensor):
                if dynamic and _dynamic_dims[i] is not None:
                    a = _dynamic_fake(fake_mode, a, *_dynamic_dims[i])
                elif tracing_mode == "symbolic":
                    a = _symbolic_fake(fake_mode, a, f"input{tensors}")
                elif fake_mode is not None:
                    a = fake_mode.from_tensor(a)
                tensors += 1
                node.meta["val"] = proxy_mode._meta_val(a)
                proxy_mode.track(a, node)
            traced_args.append(a)
        if fake_mode is None:
            with proxy_mode:
                out = f(*traced_args)
        else:
            recorders.append(proxy_mode.record_arithmetic)
            # a symbolic trace runs the operators' Python kernels, as torch's enables its Python
            # dispatcher for one: their size arithmetic is then traced (``_decomp``'s py_impls)
            python_kernels = enable_python_dispatcher() if tracing_mode == "symbolic" else contextlib.nullcontext()
            try:
                with python_kernels, fake_mode, proxy_mode:
                    out = f(*traced_args)
            except DataDependentOutputException as e:   # tolist(), numpy() of a fake: no data to read
                raise GuardOnDataDependentSymNode(str(e)) from e
            finally:
                recorders.remove(proxy_mode.record_arithmetic)
        graph.output(tree_map(proxy_mode.node_of, out))
        proxy_mode.eliminate_dead_sym_nodes()
        gm = GraphModule(proxy_mode.constants, graph, getattr(f, "__name__", "f").strip("<>"))
        gm.shape_env = shape_env
        return gm
    return traced


def _example_value(value):
    """A symbol's example value, read without a guard; any other value as it is."""
    if not is_symbolic(value):
        return value
    node = value.node
    return node.pytype(node.expr.xreplace(node.shape_env.hints))


def _is_sym_node(node):
    """A node that reads a size (``sym_size.int`` and the other accessors) or computes a symbol
    from symbols only: pure, as torch's ``impure_pred`` judges them."""
    if node.target in (_SYM_SIZE, _SYM_STRIDE, _SYM_NUMEL, _SYM_STORAGE_OFFSET):
        return True
    # an input that a guard has since pinned to a number (``s1 == 4``) still counts: torch's
    # value of it stays a SymInt, so a dead comparison of it goes like any other
    inputs_symbolic = all(is_symbolic(a.meta.get("val")) or (a.op == "call_function" and _is_sym_node(a))
                          for a in node.all_input_nodes)
    if getattr(node.target, "__module__", None) == "_operator":     # a comparison that sympy decided
        return inputs_symbolic
    return is_symbolic(node.meta.get("val")) and inputs_symbolic


def _symbolic_fake(fake_mode, t, source_name):
    """The fake of an input of a symbolic trace: each size a backed symbol (``ShapeEnv.
    create_symbolic_size``, torch's source names ``input0.size()[1]``), each stride a symbol or
    an expression of them (``_symbolic_strides``), and the storage offset a symbol unless 0. A
    view's base is given its symbols first (``input0._base``), as torch fakes a view through its
    base: equal values then share the base's symbols."""
    impl = t._impl
    shape_env = fake_mode.shape_env
    if t._base is not None:
        base = t._base._impl
        _symbolic_layout(shape_env, base.sizes, base.strides, base.storage_offset, f"{source_name}._base")
    sizes, strides, offset = _symbolic_layout(shape_env, impl.sizes, impl.strides, impl.storage_offset, source_name)
    fake = FakeTensor.from_meta(TensorMeta(sizes, strides, impl.dtype, impl.device), offset)
    fake._impl.is_wrapped_number = impl.is_wrapped_number
    fake.requires_grad_(t.requires_grad)
    fake_mode._fakes[id(t)] = (t, fake)
    return fake


def _dynamic_fake(fake_mode, t, source, dims):
    """The fake of an input whose ``dims`` are dynamic (Dynamo's automatic dynamic shapes, or
    ``mark_dynamic``): those sizes are backed symbols -- 0 and 1 stay numbers, as torch
    specializes them -- and a stride that is a product of sizes follows them (a contiguous
    ``(s77, 3)`` has strides ``(3, 1)``, a ``(3, s77)`` has ``(s77, 1)``); every other number of
    the layout stays what it is, guarded as such."""
    impl, shape_env = t._impl, fake_mode.shape_env
    sizes = tuple(shape_env.create_symbolic_size(n, f"{source}.size()[{d}]") if d in dims else n
                  for d, n in enumerate(impl.sizes))
    strides = _symbolic_strides(shape_env, impl.sizes, impl.strides, sizes, source, new_symbols=False)
    fake = FakeTensor.from_meta(TensorMeta(sizes, strides, impl.dtype, impl.device), impl.storage_offset)
    fake._impl.is_wrapped_number = impl.is_wrapped_number
    fake.requires_grad_(t.requires_grad)
    fake_mode._fakes[id(t)] = (t, fake)
    return fake


def _symbolic_layout(shape_env, ex_sizes, ex_strides, ex_offset, source):
    """Sizes, strides and offset as symbols (torch's ``_create_symbolic_sizes_strides_storage_offset``)."""
    sizes = tuple(shape_env.create_symbolic_size(n, f"{source}.size()[{d}]") for d, n in enumerate(ex_sizes))
    strides = _symbolic_strides(shape_env, ex_sizes, ex_strides, sizes, source)
    offset = shape_env.create_symbolic_size(ex_offset, f"{source}.storage_offset()")
    return sizes, strides, offset


def _symbolic_strides(shape_env, ex_sizes, ex_strides, sizes, source, new_symbols=True):
    """torch's ``_compute_symbolic_stride``: strides of 0 and 1 stay numbers; a stride equal to
    another dim's size times stride is that product (``s96`` for a contiguous row, ``s33*s96``
    for a step-2 slice's rows); the smallest stride left gets a symbol of its own (or, without
    ``new_symbols``, stays its number), and so on."""
    n = len(ex_sizes)
    strides = [ex if ex in (0, 1) else None for ex in ex_strides]
    with inside_operator():         # products of symbols here are layout, not the program's arithmetic
        while None in strides:
            candidates = {ex_sizes[i] * ex_strides[i]: sizes[i] * strides[i]
                          for i in range(n) if strides[i] is not None and ex_strides[i] >= 0}
            for _, i in sorted((ex_strides[i], i) for i in range(n) if strides[i] is None):
                if ex_strides[i] in candidates:
                    strides[i] = candidates[ex_strides[i]]
                    candidates[ex_sizes[i] * ex_strides[i]] = sizes[i] * strides[i]
            if None in strides:
                value, i = min((ex_strides[i], i) for i in range(n) if strides[i] is None)
                strides[i] = shape_env.create_symbolic_size(value, f"{source}.stride()[{i}]") if new_symbols \
                    else value
    return tuple(strides)


def _fake_twin(t):
    """A fake tensor with ``t``'s sizes, strides, offset and dtype."""
    return FakeTensorMode().from_tensor(t)

def _placeholder_names(f, n):
    """``x_1`` for a parameter ``x``, as make_fx names them (``arg0_1`` when no name is known, and
    for every input of a function that takes ``*args``, as torch's tracer names them)."""
    try:
        kinds = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        kinds = []
    params = [] if any(p.kind is p.VAR_POSITIONAL for p in kinds) else \
        [p.name for p in kinds if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [f"{params[i]}_1" if i < len(params) else f"arg{i}_1" for i in range(n)]
