"""Guards: what a traced graph assumed, checked again before every call (``torch/_dynamo/guards.py``).

Tracing runs the function once, so every Python value it read -- an argument that is not a
tensor, a closed-over number, a global dict, a module attribute, a closed-over tensor -- is baked
into the graph. A guard key is a hashable summary of all of them, computed on each call; a graph
is reused only under an equal key. As in Dynamo: tensors by metadata (TENSOR_MATCH), plain values
by equality (EQUALS_MATCH), functions, classes and modules by identity (ID_MATCH) plus the values
read through them; an instance of a user class by its type and the attributes the code reads.
A value that can only be compared by identity and may change inside (an object with neither
equality nor a ``__dict__``) raises ``Unguardable``: the caller runs that call eagerly instead.
"""
import dis
import enum
import functools
import re
import types

from .._tensor import Tensor
from ..amp.autocast_mode import get_autocast_dtype, is_autocast_enabled
from ..autograd import is_grad_enabled
from ..c10.dispatch_key import AUTOCAST_KEYS, DispatchKey, DispatchKeySet
from ..c10.scalar_type import get_default_dtype
from ..c10.sym import is_symbolic
from ..fx.experimental.sym_node import sym_str

__all__ = ["GuardWalker", "TensorGuards", "Unguardable", "global_state_key"]

_EQUALS = (int, bool, str, bytes, type(None), type(Ellipsis), slice, range, enum.Enum)
# Library code is taken as fixed: its functions and objects are guarded by identity only.
_LIBRARIES = {"internals", "torch", "numpy", "numba", "math", "builtins", "functools", "operator"}


class Unguardable(Exception):
    """A value the traced function read that no guard can check: the call runs eagerly."""


def global_state_key():
    """Global state a graph depends on: grad mode, autocast (per device, with its dtype), the
    default dtype (torch's GLOBAL_STATE guard)."""
    autocast = tuple((d, is_autocast_enabled(d), get_autocast_dtype(d)) for d in ("cpu", "cuda"))
    return is_grad_enabled(), autocast, get_default_dtype()


def tensor_meta(t, offset=True):
    """TENSOR_MATCH: shape, strides, dtype, device, requires_grad; and the storage offset, which
    an argument's guards leave out (kernels read each input from its first element: torch's
    TENSOR_MATCH has no offset either) and a tensor held as a constant keeps."""
    meta = (tuple(t.shape), tuple(t.stride()), t.dtype, str(t.device), t.requires_grad)
    return meta + (t.storage_offset(),) if offset else meta


def _library(value):
    module = getattr(value, "__module__", None) or type(value).__module__ or ""
    return module.split(".")[0] in _LIBRARIES


class GuardWalker:
    """Builds guard keys; ``tensors`` collects every tensor met on the way (for the device and
    requires_grad checks of the caller)."""

    def __init__(self, tensors_apart=False, dynamic=frozenset(), lifted=frozenset()):
        self.tensors, self._seen = [], set()
        # the ids of the tensors a graph may take as inputs (a module's, closed-over ones): keyed
        # by their metadata, as Dynamo's TENSOR_MATCH of a lifted tensor; the compiler keys their
        # identity apart, for the entries that hold them as constants
        self.lifted = lifted
        # Automatic dynamic for numbers held inside an argument or the compiled module (Dynamo's
        # frame state keyed by source, ``L['d']['scale']``, ``L['self'].cfg.scale``): ``numbers``
        # collects each such int or float by its path (``_SOURCE_ROOTS``, then ``attr`` and
        # ``item`` steps), and one whose path is in ``dynamic`` is keyed by its type alone, as an
        # argument made a symbol is
        self.numbers, self.dynamic, self._path, self._modules_entered = {}, dynamic, [], 0
        self._unread = set()    # attribute names the functions walked only write: not guarded
        self._read, self._kept, self._walking = set(), set(), False
        # The compiler's walker: an argument tensor is left out of the key (``("tensor",)``), for
        # the cache entry's tensor guards to check one by one
        self.tensors_apart = tensors_apart

    def function(self, fn):
        """Everything ``fn`` reads from outside (``_function``). An attribute name one function
        only writes but another one it reaches reads is guarded after all: the walk is made
        again with that name kept."""
        if self._walking:
            return self._function(fn)
        tensors, seen = len(self.tensors), set(self._seen)
        self._walking = True
        try:
            key = self._function(fn)
            overlap = self._unread & self._read
            if overlap:
                del self.tensors[tensors:]
                self._seen, self._kept = seen, self._kept | overlap
                self._unread -= overlap
                key = self._function(fn)
            return key
        finally:
            self._walking = False

    def argument(self, value, names=frozenset()):
        """An argument: tensors by metadata only (a new tensor of the same kind reuses the graph);
        an object of a user class by its type and the attributes ``names`` the code reads
        (a method's ``self``)."""
        if isinstance(value, Tensor):
            self.tensors.append(value)
            if self.tensors_apart:
                return ("tensor",)
            return ("tensor", *tensor_meta(value, offset=False))
        if isinstance(value, (tuple, list)):
            return (type(value), tuple(self.at(("index", i), self.argument, v) for i, v in enumerate(value)))
        if isinstance(value, dict):
            return ("dict", tuple((self._hashable(k), self.at(("item", k), self.argument, v))
                                  for k, v in value.items()))
        return self.value(value, "argument", names)

    def at(self, step, method, *args):
        """``method(*args)`` with the path one ``step`` deeper: a root (``("arg", name)``,
        ``("fn",)``), an ``("attr", name)`` or ``("item", key)`` step, or another kind, which
        marks the numbers below it as not reachable by a path a trace can write to."""
        self._path.append(step)
        try:
            return method(*args)
        finally:
            self._path.pop()

    def _number(self, v):
        """A number's key, keyed by its type alone where its path is dynamic; noted in ``numbers``
        where a path leads to it through attributes and dict entries only."""
        path = tuple(self._path)
        if len(path) < 2 or path[0][0] not in _SOURCE_ROOTS or any(s[0] not in ("attr", "item") for s in path[1:]):
            return (type(v), repr(v)) if isinstance(v, float) else (type(v), v)
        if type(v) is int and self._modules_entered:
            # an int an nn.Module holds stays a constant, guarded by value: torch takes a module's
            # int attributes as settings (``is_int_specialization_case``), its floats not
            return (type(v), v)
        self.numbers[path] = v
        if path in self.dynamic:
            return (type(v),)
        return (type(v), repr(v)) if isinstance(v, float) else (type(v), v)

    def _function(self, fn):
        """Everything ``fn`` reads from outside: its closure cells, the globals its code (and the
        code of functions nested in it) names, its defaults."""
        if isinstance(fn, types.MethodType):
            code = getattr(fn.__func__, "__code__", None)
            names = _names(code) if code is not None else frozenset()
            if code is not None:
                self._unread |= _written_only(code) - self._kept    # ``self.last = v`` is no read of ``self``
                self._read |= names - _written_only(code)
            return ("method", self.at(("attr", "__self__"), self.value, fn.__self__, "self", names),
                    self.at(("func",), self._function, fn.__func__))
        if not isinstance(fn, types.FunctionType):
            # a module: the attributes its forward's code (and its methods') names are read
            code = getattr(getattr(type(fn), "forward", None), "__code__", None)
            names = _method_names(type(fn), _names(code)) if code is not None else frozenset()
            if code is not None:        # ``self.last = y`` in forward is no read of ``last``
                self._unread |= _written_only(code) - self._kept
                self._read |= names - _written_only(code)
            return self.value(fn, getattr(fn, "__name__", "the function"), names)
        if id(fn) in self._seen:
            return ("seen", id(fn))
        self._seen.add(id(fn))
        code = fn.__code__
        # a name the function only writes (``G = ...``, ``obj.last = ...``) is no value it reads:
        # Dynamo installs no guard on it, and the write is made again after the graph
        names, written = _names(code), _written_only(code)
        self._unread |= written - self._kept
        self._read |= names - written
        top = self._path == [("fn",)]       # the compiled function's own: its cells are sources
        self._path.append(("code",))        # its cells, globals and defaults: no path of an argument's
        try:
            cells = []
            for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
                try:
                    cells.append((name, self._cell(name, cell.cell_contents, names, top)))
                except ValueError:                   # a cell not filled yet
                    cells.append((name, "empty"))
            # the globals are the names it loads as globals: ``self.a`` reads no global ``a``
            glob = tuple((n, self.value(fn.__globals__[n], n, names)) for n in sorted(_global_names(code) - written)
                         if n in fn.__globals__)
            defaults = self.value((fn.__defaults__, fn.__kwdefaults__), "defaults", names)
        finally:
            self._path.pop()
        return ("function", id(code), tuple(cells), glob, defaults)

    def _cell(self, name, value, names, top):
        """A closure cell's value. Of the compiled function's own cells, a number reached
        through attributes and dict entries is a source (``L['c'].n``), as Dynamo names the
        frame's free variables among its locals; a nested function's cells are not."""
        if not top:
            return self.value(value, name, names)
        outer, self._path = self._path, [("cell", name)]
        try:
            return self.value(value, name, names)
        finally:
            self._path = outer

    def value(self, v, name, names=frozenset()):
        """A value read by name: ``names`` are the attribute names the reading code uses."""
        if isinstance(v, Tensor):
            self.tensors.append(v)
            if id(v) in self.lifted:
                return ("tensor", "input", tensor_meta(v))
            # ID_MATCH too: the graph holds this very tensor as a constant. A one-element tensor
            # may be baked into a kernel as a number, so its value is guarded as well.
            value = v.item() if v.numel() == 1 and v.device.type != "meta" else None
            return ("tensor", id(v), tensor_meta(v), repr(value))
        if type(v) in (int, float):
            return self._number(v)               # a float by its repr: nan equals itself
        if isinstance(v, (float, complex)):
            return (type(v), repr(v))
        if isinstance(v, _EQUALS):
            return (type(v), v)
        if isinstance(v, (tuple, list)):
            return (type(v), tuple(self.at(("index", i), self.value, x, name, names) for i, x in enumerate(v)))
        if isinstance(v, dict):
            return ("dict", tuple((self._hashable(k), self.at(("item", k), self.value, x, name, names))
                                  for k, x in v.items()))
        if isinstance(v, (types.FunctionType, types.MethodType)) and not _library(v):
            return self.function(v)
        from ..nn.modules.module import Module  # a real cycle: nn loads after _dynamo in the package's import
        if isinstance(v, (types.ModuleType, Module)):
            return self._object(v, name, names)
        if isinstance(v, type) or _library(v):
            return ("id", id(v))
        return self._object(v, name, names)

    def _object(self, v, name, names):
        """A module, an nn.Module or another object: by identity, plus the attributes read."""
        if id(v) in self._seen:
            return ("seen", id(v))
        self._seen.add(id(v))
        from ..nn.modules.module import Module  # a real cycle: nn loads after _dynamo in the package's import
        if isinstance(v, Module):       # its parameters, buffers, submodules and settings; its forward
            self._modules_entered += 1
            try:
                # an attribute its code only writes is not guarded (the write is made again)
                state = ("dict", tuple((self._hashable(k), self.at(("attr", k), self.value, x, name, names))
                                       for k, x in vars(v).items() if k not in self._unread))
            finally:
                self._modules_entered -= 1
            return ("module", id(v), state, self.at(("forward",), self.value, type(v).forward, "forward"))
        if isinstance(v, types.ModuleType):
            attrs = tuple((n, self.at(("global",), self.value, getattr(v, n), n, names))
                          for n in sorted(names) if hasattr(v, n))
            return ("pymodule", id(v), attrs)
        if type(v).__eq__ is not object.__eq__ and type(v).__hash__ is not None:
            return ("equals", type(v), v)
        if isinstance(getattr(v, "__dict__", None), dict) and names:
            # an instance of a user class: its type, and the attributes the code reads -- the
            # reading code's names and those of the methods of its class it names (Dynamo's
            # TYPE_MATCH and a guard per attribute read, ``self.w == 2.0``)
            names = _method_names(type(v), names)
            attrs = vars(v)
            return ("object", id(type(v)), tuple((n, self.at(("attr", n), self.value, attrs[n], n, names))
                                                 for n in sorted(names) if n in attrs and n not in self._unread))
        raise Unguardable(f"cannot guard {name!r}: a {type(v).__name__} has no equality to check")

    def _hashable(self, key):
        try:
            hash(key)
        except TypeError:
            raise Unguardable(f"cannot guard a dict key of type {type(key).__name__}") from None
        return self.at(("key",), self.value, key, "key")


# Where a path to a number starts: an argument by its parameter's name, the compiled callable,
# or a cell of the compiled function's closure by its name.
_SOURCE_ROOTS = ("arg", "fn", "cell")


def _method_names(cls, names):
    """``names`` with the names used by the methods of ``cls`` among them, and by theirs."""
    names, todo = set(names), list(names)
    while todo:
        method = getattr(cls, todo.pop(), None)
        code = getattr(getattr(method, "__func__", method), "__code__", None)
        if code is not None:
            new = _names(code) - names
            names |= new
            todo += new
    return frozenset(names)


def _names(code):
    """The global and attribute names ``code`` and every code object nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return frozenset(names)


_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})


@functools.lru_cache(maxsize=256)
def _global_names(code):
    """The names ``code`` and every code object nested in it load as globals."""
    found, todo = set(), [code]
    while todo:
        c = todo.pop()
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        found |= {ins.argval for ins in dis.get_instructions(c) if ins.opname in _GLOBAL_OPS}
    return frozenset(found)


_STORES = frozenset({"STORE_GLOBAL", "STORE_ATTR", "DELETE_GLOBAL", "DELETE_ATTR"})


@functools.lru_cache(maxsize=256)
def _written_only(code):
    """The global and attribute names ``code`` stores to and never loads, it nor a code nested in it."""
    stored, loaded = set(), set()
    todo = [code]
    while todo:
        c = todo.pop()
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        for ins in dis.get_instructions(c):
            if ins.opname in _STORES:
                stored.add(ins.argval)
            elif isinstance(ins.argval, str) and ins.argval in c.co_names:
                loaded.add(ins.argval)
    return frozenset(stored - loaded)


def _source_text(source):
    """``x.size()[0]`` for Dynamo's ``L['x'].size()[0]``: how its guard failures name a source."""
    return re.sub(r"L\['([^']*)'\]", r"\1", source)


def _guard_text(guard, shape_env):
    """A ShapeEnv guard with each symbol written as its first source (``x.size()[0] != 1``)."""
    import sympy  # a heavy module: only a graph with symbols has guards to print
    names = {s: sympy.Symbol(_source_text(shape_env.sources[s][0])) for s in guard.free_symbols
             if s in shape_env.sources}
    guard = guard.xreplace(names)
    if guard.is_Relational:
        return _guard_printer().doprint(guard)
    return sym_str(guard)


_PRINTER = []


def _guard_printer():
    """sympy's printer as torch's guard printer (``torch/utils/_sympy/printers.py``) writes a
    guard: a floor division ``(a // b)``, a negative coefficient ``(-1)*b`` (so ``a + (-1)*b``,
    not ``a - b``), and a side of ``==`` or ``!=`` that is a sum in parentheses, as sympy ranks
    those relations with products: ``(a + (-1)*b) != 1``, ``a + (-1)*b >= 2``."""
    if not _PRINTER:
        import sympy  # a heavy module: only a graph with symbols has guards to print
        from sympy.printing.precedence import PRECEDENCE, precedence  # sympy's, as above
        from sympy.printing.str import StrPrinter  # sympy's, as above

        class GuardPrinter(StrPrinter):
            def _print_floor(self, e):
                num, den = sympy.fraction(sympy.together(e.args[0]))
                if den == 1:
                    return super()._print_Function(e)
                return f"({self.parenthesize(num, PRECEDENCE['Mul'])} // {self._print(den)})"

            def _print_Mul(self, e):
                coefficient, rest = e.as_coeff_Mul()
                if coefficient < 0:
                    return f"({self._print(coefficient)})*{self.parenthesize(rest, PRECEDENCE['Mul'])}"
                return super()._print_Mul(e)

            def _print_Float(self, e):
                return repr(float(e))

            def _print_Relational(self, e):
                rank = precedence(e)
                return f"{self.parenthesize(e.lhs, rank)} {e.rel_op} {self.parenthesize(e.rhs, rank)}"
        _PRINTER.append(GuardPrinter())
    return _PRINTER[0]


class TensorGuards:
    """TENSOR_MATCH for every argument tensor of one cache entry, and the entry's symbolic shape
    guards (``torch/_dynamo/guards.py``'s ``TensorGuards`` and ``SHAPE_ENV`` guard).

    ``fakes`` are the traced inputs: a size that is a number is checked exactly; a size that is
    a symbol (a dynamic dim) is read from the call's tensor, the same symbol must read the same
    value everywhere (duck shaping: ``y.size()[0] == x.size()[0]``), be at least 2 (sizes 0 and
    1 are specialized), and satisfy every guard the ShapeEnv recorded while tracing and
    compiling; strides are checked against their expressions in the symbols. A failure is
    described in torch's words (``TORCH_LOGS=recompiles``)."""

    def __init__(self, names, fakes, shape_env=None, check_offsets=False, int_symbols=None):
        self.names, self.shape_env = list(names), shape_env
        self.int_symbols = dict(int_symbols or {})      # int argument name -> its symbol (``s86``)
        def expr(n):        # a symbol a guard pinned (``Eq(s77, 3)``) is that number, as in torch
            e = _expr(n)
            if shape_env is not None and not isinstance(e, int):
                e = shape_env.replace(e)
                return int(e) if e.is_Integer else e
            return e
        self.specs = [(tuple(expr(n) for n in f.shape), tuple(expr(n) for n in f.stride()),
                       expr(f.storage_offset()), f.dtype, (_guarded_keys(f.device.type), f.device.index),
                       f.requires_grad)
                      for f in fakes]
        # torch guards no storage offset: its kernels start at each input's first element. Here
        # too, unless the graph addresses a storage itself (``as_strided`` with its offset)
        self.offsets = check_offsets
        # each guard with the replacements made after it was kept (a tangent's symbol named as
        # the inputs' expression); one that no symbol is left in held at the example: dropped
        self.guards = [g for g in map(shape_env.replace, shape_env.guards) if g.free_symbols] \
            if shape_env is not None else []
        # the symbols a guard pinned to a number: their sizes are checked as numbers above, so
        # no call's tensor gives them a value; the guards that name them read the number
        self.pinned = {s: int(v) for s, v in shape_env.replacements.items()
                       if isinstance(v, int) or getattr(v, "is_Integer", False)} \
            if shape_env is not None else {}
        # checked on every call: each guard and each symbolic stride as a Python function of the
        # sizes, written once (sympy's substitution costs tens of microseconds a guard)
        self._functions = {e: _function(e, shape_env) for e in self.guards}
        self._functions.update({n: _function(n, shape_env) for spec in self.specs for n in spec[1]
                                if not isinstance(n, int)})
        self._functions.update({n: _function(n, shape_env) for spec in self.specs for n in spec[0]
                                if not isinstance(n, int) and not n.is_Symbol})

    @property
    def dynamic(self):
        """Whether any size is a symbol."""
        return any(not isinstance(n, int) for spec in self.specs for n in spec[0])

    def check(self, tensors, ints=None):
        """None when ``tensors`` and the int arguments ``ints`` ({name: value}, those traced as
        symbols) pass, else the first failure, as torch words it."""
        if len(tensors) != len(self.specs):
            return f"the number of tensor arguments changed: expected {len(self.specs)}, actual {len(tensors)}"
        values = {}
        for name, spec, t in zip(self.names, self.specs, tensors, strict=True):
            failure = self._tensor(name, spec, t, values)
            if failure is not None:
                return failure
        # a size a guard replaced by an expression of others (``2*s9``) and the symbolic strides:
        # checked once every tensor has given its symbols their values
        for name, spec, t in zip(self.names, self.specs, tensors, strict=True):
            failure = self._layout(name, spec, t, values)
            if failure is not None:
                return failure
        for symbol in values:
            if values[symbol] < 2:
                return f"2 <= {_source_text(self.shape_env.sources[symbol][0])}"
        for name, symbol in self.int_symbols.items():       # any int, 0 and 1 too; any float but nan
            if ints[name] != ints[name]:
                return f"not math.isnan({name})"
            if self.pinned.get(symbol, ints[name]) != ints[name]:     # a guard pinned it: its value
                return f"{name} == {self.pinned[symbol]}"
            if symbol in values and values[symbol] != ints[name]:     # one symbol, two values
                return f"{name} == {_source_text(self.shape_env.sources[symbol][0])}"
            values[symbol] = ints[name]
        for symbol, value in self.pinned.items():
            values.setdefault(symbol, value)
        for guard in self.guards:
            if not self._functions[guard](values):
                return _guard_text(guard, self.shape_env)
        return None

    def _tensor(self, name, spec, t, values):
        sizes, strides, offset, dtype, (keys, index), requires_grad = spec
        impl = t._impl
        if _guarded_keys(impl.device.type) is not keys:     # a device type change, as torch sees it
            return (f"tensor '{name}' dispatch key set mismatch. expected {keys}, "
                    f"actual {_guarded_keys(impl.device.type)}")
        if impl.dtype is not dtype:
            return f"tensor '{name}' dtype mismatch. expected {dtype.torch_name}, actual {impl.dtype.torch_name}"
        if impl.device.index != index:
            return (f"tensor '{name}' Tensor device index mismatch. Expected device index to be {index}, "
                    f"actual {impl.device.index}")
        if t.requires_grad != requires_grad:
            return f"tensor '{name}' requires_grad mismatch. expected requires_grad={int(requires_grad)}"
        if len(impl.sizes) != len(sizes):
            return f"tensor '{name}' rank mismatch. expected {len(sizes)}, actual {len(impl.sizes)}"
        for d, (want, got) in enumerate(zip(sizes, impl.sizes, strict=True)):
            if isinstance(want, int):
                if want != got:
                    return f"tensor '{name}' size mismatch at index {d}. expected {want}, actual {got}"
            elif not want.is_Symbol:        # an expression: checked by ``_layout``
                continue
            elif want in values and values[want] != got:      # one symbol, two sizes: duck shaping
                return f"{name}.size()[{d}] == {_source_text(self.shape_env.sources[want][0])}"
            else:
                values[want] = got
        return None

    def _layout(self, name, spec, t, values):
        sizes, strides, offset = spec[:3]
        impl = t._impl
        for d, (want, got) in enumerate(zip(sizes, impl.sizes, strict=True)):
            if not isinstance(want, int) and not want.is_Symbol and self._functions[want](values) != got:
                return f"{name}.size()[{d}] == {_guard_text(want, self.shape_env)}"
        for d, (want, got) in enumerate(zip(strides, impl.strides, strict=True)):
            want = want if isinstance(want, int) else self._functions[want](values)
            if want != got:
                return f"tensor '{name}' stride mismatch at index {d}. expected {want}, actual {got}"
        if self.offsets and offset != impl.storage_offset:
            return f"tensor '{name}' storage_offset mismatch. expected {offset}, actual {impl.storage_offset}"
        return None


@functools.cache
def _guarded_keys(device_type):
    """The dispatch keys torch's TENSOR_MATCH compares: the tensor's, with the thread's default
    included keys (BackendSelect, ADInplaceOrView) added and its default excluded ones (the
    autocast keys) taken out -- ``DispatchKeySet(CPU, BackendSelect, ADInplaceOrView,
    AutogradCPU)`` for every CPU tensor, requires_grad or not: it tells the device type."""
    key = {"cpu": DispatchKey.CPU, "cuda": DispatchKey.CUDA}.get(device_type, DispatchKey.Meta)
    autograd = getattr(DispatchKey, f"Autograd{key.name}")
    return DispatchKeySet([key, DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView, autograd]) - AUTOCAST_KEYS


def _function(expr, shape_env):
    """``expr`` (a relation or an integer expression of size symbols) as a function of
    {symbol: int}: Python source written by the symbolic printer, checked once against sympy's
    own answer at the example sizes; sympy's substitution where the source would not do."""
    kind = bool if expr.is_Relational or expr.is_Boolean else int

    def slow(values):
        return kind(expr.xreplace(values))
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    text = f"({sym_str(expr.lhs)}) {expr.rel_op} ({sym_str(expr.rhs)})" if expr.is_Relational else sym_str(expr)
    try:
        fast = eval(f"lambda {', '.join(s.name for s in symbols)}: {text}", {})  # noqa: S307 -- printed by sympy
        hints = shape_env.hints if shape_env is not None else {}
        if all(s in hints for s in symbols):
            example = {s: int(hints[s]) for s in symbols}
            if fast(*example.values()) != slow(example):
                return slow
    except (SyntaxError, NameError, TypeError):
        return slow
    return lambda values: fast(*(values[s] for s in symbols))


def _expr(n):
    """A size of a traced input: an int, or the sympy expression of its symbol."""
    return n.node.expr if is_symbolic(n) else n
