"""SymNode: the expression behind a SymInt/SymFloat/SymBool (``torch/fx/experimental/sym_node.py``).

A node holds a sympy expression over the shape environment's symbols and the Python type it
stands for. Arithmetic makes new nodes; a decision (``bool``, ``int``, ``float``) goes to the
shape environment, which answers only what holds for every value the symbols may take.
"""
import math
import operator

from ...c10.sym import SymBool, SymFloat, SymInt, in_operator

__all__ = ["SymNode"]

# The tracers that record a symbol's arithmetic as it is done (make_fx pushes its proxy mode's
# recorder): a size computed in the traced program (``x.shape[1] * x.shape[2]``) is a graph node
# from that moment, as torch's proxy mode records each SymNode operation, so the graph keeps
# torch's order; what no call then uses is dropped at the end (``dispatch_trace``'s dead-code pass).
recorders = []

_ARITHMETIC = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "pow": operator.pow}
_COMPARISONS = {"eq": "Eq", "ne": "Ne", "lt": "Lt", "le": "Le", "gt": "Gt", "ge": "Ge"}


class SymNode:
    """``expr`` (sympy) of Python type ``pytype`` (int, float or bool), in ``shape_env``."""

    def __init__(self, expr, shape_env, pytype, origin=None):
        self._expr, self.shape_env, self.pytype = expr, shape_env, pytype
        # how it was computed, ``("mul", node, 2.0)``: a tracer records that as a Python
        # operator node when the value reaches an operator call (torch records it at once)
        self.origin = origin

    @property
    def expr(self):
        """The expression with the shape environment's replacements made: a symbol a guard
        pinned (``s75 == 12``) reads as its value from then on, as torch's ``SymNode.expr``."""
        return self.shape_env.replace(self._expr)

    def apply(self, op, a, b):
        """``op(a, b)`` where either side is a node or a plain number."""
        import sympy  # a heavy module: only a trace that reads data pays for importing it
        types = [x.pytype if isinstance(x, SymNode) else type(x) for x in (a, b)]
        if float in types:      # a float symbol with an int: the int taken as a float, as torch's
            a, b = (float(x) if type(x) is int else x for x in (a, b))
        origin = None if in_operator() else (op, a, b)     # a kernel's own arithmetic: no node
        same = _identity(op, a, b)      # ``1 * s``, ``s // 1``, ``s + 0``: ``s`` itself, no new node
        if same is not None and same.pytype in types:
            return same
        a, b = (_expr(x) for x in (a, b))
        if op in _COMPARISONS:
            # recorded as torch's proxy mode records it (``ne = sym_size_int != sym_size_int_1``),
            # though the dead-code pass drops it: its size reads keep the names they took
            return _recorded(SymNode(getattr(sympy, _COMPARISONS[op])(a, b), self.shape_env, bool, origin))
        pytype = float if float in types or op == "truediv" else int
        if op == "truediv":
            expr = a / b
        elif op == "floordiv":
            expr = sympy.floor(a / b)
        elif op == "mod":
            expr = sympy.Mod(a, b)
        elif op in ("max", "min"):
            expr = (sympy.Max if op == "max" else sympy.Min)(a, b)
        else:
            expr = _ARITHMETIC[op](a, b)
        return _recorded(SymNode(expr, self.shape_env, pytype, origin))

    def unary(self, op):
        """``math.sqrt`` (a float), ``math.floor``, ``math.ceil``, ``round`` or ``math.trunc`` (an int) of this
        node, kept symbolic as torch's ``sym_sqrt``, ``sym_floor``... keep it: a new value of the
        argument is no new graph."""
        import sympy  # a heavy module, imported when a trace has symbols
        functions = {"sqrt": sympy.sqrt, "floor": sympy.floor, "ceil": sympy.ceiling, "round": _round_to_int(),
                     "trunc": _trunc_to_int(), "float": lambda e: e}
        origin = None if in_operator() else (op, self)
        pytype = float if op in ("sqrt", "float") else int
        return _recorded(SymNode(functions[op](self.expr), self.shape_env, pytype, origin))

    def neg(self):
        return _recorded(SymNode(-self.expr, self.shape_env, self.pytype, None if in_operator() else ("neg", self)))

    def constant(self):
        """The plain value when the expression has no symbol left (``u0 * 0``), else None."""
        if self.expr.free_symbols:
            return None
        if self.pytype is bool:
            return bool(self.expr)
        return self.pytype(self.expr)

    def guard_bool(self):
        import sympy  # a heavy module, imported when a trace reads data
        return bool(self.shape_env.evaluate_expr(self.expr if self.pytype is bool else sympy.Ne(self.expr, 0)))

    def statically_known_true(self):
        """Whether this bool holds for every value of its symbols, asking no example value."""
        return self.shape_env.evaluate_static(self.expr) is True

    def guard_int(self):
        return int(self.shape_env.evaluate_expr(self.expr))

    def guard_float(self):
        return float(self.shape_env.evaluate_expr(self.expr))

    def __str__(self):
        return sym_str(self.expr)


def sym_str(expr):
    """``expr`` as torch prints it: a floor division as ``(s96//2)``, where sympy's own printer
    writes ``floor(s96/2)`` (torch keeps it as its ``FloorDiv`` function, this package as sympy's
    floor of a quotient), and inside a sum or a product once more in parentheses
    (``(((s0 - 3)//2)) + 1``: torch's ``FloorDiv`` binds less tightly than ``+``)."""
    if _printer is None:
        _make_printer()
    return _printer[0]().doprint(expr)     # a printer per call: it keeps the enclosing expressions


_printer = None


def _make_printer():
    """sympy's printer, with a floor of a fraction printed as Python's ``//`` (as torch's
    generated code prints ``(s96//2)``)."""
    global _printer
    import sympy  # a heavy module, imported when a trace has symbols
    from sympy.printing.precedence import PRECEDENCE  # sympy's, as above
    from sympy.printing.str import StrPrinter  # sympy's, as above

    class Printer(StrPrinter):
        def __init__(self):
            super().__init__()
            self.enclosing = []

        def _print(self, expr, **kwargs):
            self.enclosing.append(expr)
            try:
                return super()._print(expr, **kwargs)
            finally:
                self.enclosing.pop()

        def _print_floor(self, e):
            num, den = sympy.fraction(sympy.together(e.args[0]))
            if den == 1:
                return super()._print_Function(e)
            num, den = (self.parenthesize(part, PRECEDENCE["Atom"] - 0.5) for part in (num, den))
            text = f"({num}//{den})"       # a divisor in parentheses too: ``(a//((b//2)))``, as torch's
            parent = self.enclosing[-2] if len(self.enclosing) > 1 else None
            return f"({text})" if isinstance(parent, (sympy.Add, sympy.Mul)) else text

        def _print_Float(self, e):
            return repr(float(e))       # ``3.0`` as Python (and torch's guards) write it, not ``3.00000000000000``
    _printer = (Printer,)


_INTEGER_FUNCTIONS = {}


def _integer_function(name, of_float):
    """A sympy function of a float that is an integer, as torch's ``RoundToInt`` (Python's
    ``round``, halves to even) and ``TruncToInt`` (``math.trunc``, toward zero): a number when its
    argument is one, else kept as written. Made once per name, when a trace first has symbols."""
    if name not in _INTEGER_FUNCTIONS:
        import sympy  # a heavy module, imported when a trace has symbols

        def evaluated(cls, x):
            return sympy.Integer(of_float(float(x))) if x.is_Number else None
        # setdefault: two threads' first traces keep one class (sympy tells functions apart by class)
        _INTEGER_FUNCTIONS.setdefault(name, type(name, (sympy.Function,),
                                                 {"is_integer": True, "eval": classmethod(evaluated)}))
    return _INTEGER_FUNCTIONS[name]


def _round_to_int():
    return _integer_function("RoundToInt", round)


def _trunc_to_int():
    return _integer_function("TruncToInt", math.trunc)


def _recorded(node):
    """``node``, handed to the active tracer when the traced program computed it."""
    if recorders and node.origin is not None:
        recorders[-1](node)
    return node


def _identity(op, a, b):
    """The node operand of an operation that leaves it as it is (times or floor-divided by 1, plus
    or minus 0), else None: a kernel's running product starts at 1, and torch's graph holds
    no such step."""
    one, zero = (lambda v: type(v) is int and v == 1), (lambda v: type(v) is int and v == 0)
    if isinstance(a, SymNode) and (op in ("mul", "floordiv") and one(b) or op in ("add", "sub") and zero(b)):
        return a
    if isinstance(b, SymNode) and (op == "mul" and one(a) or op == "add" and zero(a)):
        return b
    return None


def _expr(value):
    import sympy  # a heavy module, imported when a trace reads data
    if isinstance(value, SymNode):
        return value.expr
    if isinstance(value, (SymInt, SymFloat, SymBool)):
        return value.node.expr
    return sympy.sympify(value)
