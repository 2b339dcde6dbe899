"""SymInt, SymFloat, SymBool: a number whose value is not known while tracing
(``c10/core/SymInt.h``, ``SymFloat.h``, ``SymBool.h``; their Python faces in ``torch/__init__.py``).

Each wraps a *node* (``c10/core/SymNodeImpl.h``'s interface) that does the work: arithmetic
makes a new node, and turning the number into a plain ``bool``/``int``/``float`` asks the
node to decide -- which, for a value read from data (an *unbacked* symbol, ``u0``), it can only
do when the answer holds for every value; otherwise it raises (the tracer's
``GuardOnDataDependentSymNode``). c10 defines only these faces: the nodes and the shape
environment that names the symbols live in the tracer (``fx/experimental``), as in torch.
"""
import contextlib
import math
import threading

__all__ = ["SymBool", "SymFloat", "SymInt", "in_operator", "in_size_oblivious", "inside_operator", "is_symbolic",
           "size_oblivious", "statically_known_true", "sym_float", "sym_int", "sym_max", "sym_min", "sym_sqrt"]

_oblivious = threading.local()


@contextlib.contextmanager
def size_oblivious():
    """Decide size questions as if every data-dependent size were at least 2 (torch's
    ``guard_size_oblivious``): for the framework's own metadata code -- broadcasting, strides,
    contiguity -- never for a decision in the traced function."""
    depth = getattr(_oblivious, "depth", 0)
    _oblivious.depth = depth + 1
    try:
        yield
    finally:
        _oblivious.depth = depth


@contextlib.contextmanager
def inside_operator():
    """An operator's own code is computing (a kernel's metadata, under a tracer): arithmetic on
    symbols here is the operator's business, not the traced program's, so it is not recorded
    as graph nodes -- torch's meta kernels compute in C++, where its tracer does not look."""
    depth = getattr(_oblivious, "operator_depth", 0)
    _oblivious.operator_depth = depth + 1
    try:
        yield
    finally:
        _oblivious.operator_depth = depth


def in_operator():
    return getattr(_oblivious, "operator_depth", 0) > 0


def in_size_oblivious():
    return getattr(_oblivious, "depth", 0) > 0


def _node_of(value):
    return value.node if isinstance(value, (SymInt, SymFloat, SymBool)) else value


class _SymNumber:
    """What the three share: arithmetic and comparisons build nodes; conversions guard."""
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def _apply(self, op, other, reflected=False):
        if not isinstance(other, (int, float, bool, SymInt, SymFloat, SymBool)):
            return NotImplemented
        a, b = (_node_of(other), self.node) if reflected else (self.node, _node_of(other))
        return wrap_node(self.node.apply(op, a, b))

    def __add__(self, o): return self._apply("add", o)             # noqa: E704
    def __radd__(self, o): return self._apply("add", o, True)      # noqa: E704
    def __sub__(self, o): return self._apply("sub", o)             # noqa: E704
    def __rsub__(self, o): return self._apply("sub", o, True)      # noqa: E704
    def __mul__(self, o): return self._apply("mul", o)             # noqa: E704
    def __rmul__(self, o): return self._apply("mul", o, True)      # noqa: E704
    def __truediv__(self, o): return self._apply("truediv", o)     # noqa: E704
    def __rtruediv__(self, o): return self._apply("truediv", o, True)  # noqa: E704
    def __floordiv__(self, o): return self._apply("floordiv", o)   # noqa: E704
    def __rfloordiv__(self, o): return self._apply("floordiv", o, True)  # noqa: E704
    def __mod__(self, o): return self._apply("mod", o)             # noqa: E704
    def __rmod__(self, o): return self._apply("mod", o, True)      # noqa: E704
    def __pow__(self, o): return self._apply("pow", o)             # noqa: E704
    def __eq__(self, o): return self._apply("eq", o)               # noqa: E704
    def __ne__(self, o): return self._apply("ne", o)               # noqa: E704
    def __lt__(self, o): return self._apply("lt", o)               # noqa: E704
    def __le__(self, o): return self._apply("le", o)               # noqa: E704
    def __gt__(self, o): return self._apply("gt", o)               # noqa: E704
    def __ge__(self, o): return self._apply("ge", o)               # noqa: E704
    def __neg__(self): return wrap_node(self.node.neg())           # noqa: E704

    def __round__(self, ndigits=None):     # an int, still a symbol (torch's ``round`` of a SymFloat)
        if ndigits is not None or type(self) is not SymFloat:
            return round(self.node.guard_float() if type(self) is SymFloat else self.node.guard_int(), ndigits)
        return wrap_node(self.node.unary("round"))

    def __floor__(self):
        return wrap_node(self.node.unary("floor")) if type(self) is SymFloat else self

    def __ceil__(self):
        return wrap_node(self.node.unary("ceil")) if type(self) is SymFloat else self

    def __trunc__(self):        # ``math.trunc``: an int toward zero, still a symbol
        return wrap_node(self.node.unary("trunc")) if type(self) is SymFloat else self

    def __abs__(self):           # a decision on the sign, then the value or its negation
        return self if self >= 0 else -self

    # A decision: the node answers if it can, else raises (torch's ``guard_bool``/``guard_int``)
    def __bool__(self):
        return self.node.guard_bool()

    def __int__(self):
        return self.node.guard_int()

    def __float__(self):
        return self.node.guard_float()

    def __index__(self):         # range(n), a list index: an int is needed now
        return self.node.guard_int()

    # torch's SymInt cannot be a dict key: equal hashes would need equal (unknown) values
    __hash__ = None

    def __str__(self):
        return str(self.node)

    def __repr__(self):
        return str(self.node)


class SymInt(_SymNumber):
    """An ``int`` not known while tracing: a size read from data, an ``item()`` of an integer tensor."""
    __slots__ = ()


class SymFloat(_SymNumber):
    """A ``float`` not known while tracing: the ``item()`` of a floating-point tensor."""
    __slots__ = ()


class SymBool(_SymNumber):
    """A ``bool`` not known while tracing: a comparison of symbols, the ``item()`` of a bool tensor."""
    __slots__ = ()


def wrap_node(node):
    """The face of a node's Python type; a node that turned out constant (``u0 * 0``) is the number."""
    constant = node.constant()
    if constant is not None:
        return constant
    return {int: SymInt, float: SymFloat, bool: SymBool}[node.pytype](node)


def sym_sqrt(a):
    """``math.sqrt`` that keeps a symbol a symbol (``torch.sym_sqrt``)."""
    return wrap_node(a.node.unary("sqrt")) if isinstance(a, (SymInt, SymFloat)) else math.sqrt(a)


def sym_max(a, b):
    """``max`` that keeps a symbol a symbol (``torch.sym_max``): Python's ``max`` compares, a
    guard that decides which side a size is (``Max(1, s0 - 2)`` in a contiguous stride)."""
    return _sym_extreme("max", a, b) if is_symbolic(a) or is_symbolic(b) else max(a, b)


def sym_min(a, b):
    """``min`` that keeps a symbol a symbol (``torch.sym_min``)."""
    return _sym_extreme("min", a, b) if is_symbolic(a) or is_symbolic(b) else min(a, b)


def _sym_extreme(op, a, b):
    node = a.node if is_symbolic(a) else b.node
    return wrap_node(node.apply(op, _node_of(a), _node_of(b)))


def sym_float(a):
    """``float(a)`` that keeps a symbol a symbol (``torch.sym_float``): a SymInt taken as a
    SymFloat, as torch's C++ does where a size meets a double (``label_smoothing / n_classes``);
    Python's ``float`` of a symbol asks for its value, a guard that pins it."""
    if isinstance(a, SymInt):
        return wrap_node(a.node.unary("float"))
    return a if isinstance(a, SymFloat) else float(a)


def sym_int(a):
    """``int(a)`` that keeps a symbol a symbol (``torch.sym_int``): a SymFloat truncated toward
    zero, a SymInt as it is; Python's ``int`` of a symbol asks for its value, a guard that pins it."""
    if isinstance(a, SymFloat):
        return math.trunc(a)
    return a if isinstance(a, SymInt) else int(a)


def statically_known_true(value):
    """True only where ``value`` holds for every value its symbols may take, decided without a
    guard (torch's ``statically_known_true``): False where it is false or not known. The
    framework's metadata code asks it before a question whose guard would pin a size (``s == 1``
    in a contiguity test), so a size that happens to be 1 in the example stays a symbol."""
    if isinstance(value, SymBool):
        return value.node.statically_known_true()
    return bool(value)


def is_symbolic(value):
    return isinstance(value, (SymInt, SymFloat, SymBool))
