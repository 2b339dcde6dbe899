"""ShapeEnv and the symbols of data-dependent tracing (``torch/fx/experimental/symbolic_shapes.py``).

torch's fake and symbolic tracing turn a value read from a traced tensor (``x.sum().item()``)
into a fresh symbol with no known value -- *unbacked*: no example value stands behind it --
named ``zuf0`` for a float, ``u0`` for an int, and so do operators whose output size depends
on the data (``nonzero``'s row count is a ``u0``). Arithmetic on a symbol is recorded as an
expression; a decision on it -- an ``if``, an ``int()`` for an index -- can only be made when
it holds for every value, else it raises ``GuardOnDataDependentSymNode``.

The operators' own metadata code (broadcasting, strides, the storage size) asks questions
such as "is this size 0 or 1?" that a data-dependent size cannot answer. torch answers them
*size-obliviously*: a size symbol is assumed to be at least 2, which gives the answer that is
right for every size the general code handles (``guard_size_oblivious``). The fake tensor
mode turns that reasoning on while it computes an operator's metadata, and only then: a
decision in the traced function itself still raises.

Symbolic tracing gives the inputs' sizes symbols as well (``s75``), *backed* ones: the
example's size stands behind each, and a decision on it is answered from that value.

A decision on a backed symbol is a *guard*: the ShapeEnv answers it from the example and
records the answer (``s75 > 2``, ``Ne(s96, 1)``), the condition under which the graph holds.
A guard that pins a symbol to one value (``Eq(s75, 12)``: a ``view(4, 3)`` of the input) makes
that value a *replacement*: the symbol reads as the number from then on, in the inputs'
metadata too, and the graph reads no size of it -- torch's ``_maybe_guard_rel`` specializing.
An equality of sizes (``Eq(s96, 2*s9)``: a grouped convolution's channel check) replaces one
symbol by an expression in the others the same way.

This package keeps the symbols' expressions in sympy, as torch does, and keeps no value ranges
beyond "a size is not negative".
"""
import hashlib
import sys

from ...c10.sym import SymBool, SymFloat, SymInt, in_size_oblivious, size_oblivious
from .sym_node import SymNode

__all__ = ["ConstraintViolationError", "GuardOnDataDependentSymNode", "ShapeEnv", "guard_or_false", "guard_or_true",
           "guard_size_oblivious",
           "size_oblivious"]


class ConstraintViolationError(RuntimeError):
    """A size the caller declared dynamic (``mark_dynamic``) that the trace specialized."""


class GuardOnDataDependentSymNode(RuntimeError):
    """A traced function needs a value that depends on its input tensors' data."""


def guard_size_oblivious(value):
    """``bool(value)`` decided size-obliviously."""
    with size_oblivious():
        return bool(value)


def guard_or_false(value):
    """``bool(value)``, or False where the answer depends on data (an unbacked symbol): torch's
    ``guard_or_false``, for a test whose False is always a safe answer."""
    try:
        return bool(value)
    except GuardOnDataDependentSymNode:
        return False


def guard_or_true(value):
    """``bool(value)``, or True where the answer depends on data (torch's ``guard_or_true``)."""
    try:
        return bool(value)
    except GuardOnDataDependentSymNode:
        return True


class ShapeEnv:
    """Creates the unbacked symbols of one trace and decides what can be decided about them."""

    def __init__(self, allow_unbacked=True):
        # False for the compiler's trace: Dynamo's ``capture_scalar_outputs`` and
        # ``capture_dynamic_output_shape_ops`` are off, so a value read from data, or a size
        # counted from it, breaks the graph even when the inputs' sizes are symbols
        self.allow_unbacked = allow_unbacked
        self.unbacked_symint_counter = 0
        self.unbacked_symfloat_counter = 0
        self.size_like = set()      # symbols that stand for a size: not negative
        self.hints = {}             # backed symbol -> the example's value that stands behind it
        self._duck = {}             # an example size -> its symbol: equal sizes share one (duck shaping)
        self._ids = set()
        self.guards = []            # the decisions made on backed symbols, as true sympy relations
        self.replacements = {}      # a backed symbol a guard pinned -> its value
        self.sources = {}           # backed symbol -> the sources of its value, first one first
        self._guard_set = set()

    def create_symbolic_size(self, value, source_name, positive=True, specialize_zero_one=True):
        """The size ``value`` of a traced input as a *backed* symbol (``tracing_mode="symbolic"``):
        ``s`` and a number torch draws from the hash of the size's source (``input0.size()[1]``),
        the next free number on a clash. 0 and 1 stay numbers (torch specializes them: so much
        code decides on them), and equal sizes share one symbol, as torch's duck shaping does.
        A decision on it is answered from its example value and kept as a guard. An int argument
        of the traced function is made a symbol here too, with ``positive=None`` (it may be
        negative), as torch's ``create_symbol``; a value read from a tensor that a graph after a
        break takes (``specialize_zero_one=False``) is a symbol at 0 and 1 too, as torch leaves a
        resume function's number argument unspecialized."""
        import sympy  # a heavy module: only a symbolic trace pays for importing it
        if value in (0, 1) and specialize_zero_one:
            return value
        symbol = self._duck.get(value) if value not in (0, 1) else None
        if symbol is not None:
            self.sources[symbol].append(source_name)
        else:
            number = int(hashlib.sha256(source_name.encode()).hexdigest(), 16) % 100
            while number in self._ids:
                number += 1
            self._ids.add(number)
            symbol = sympy.Symbol(f"s{number}", integer=True, positive=positive)
            if value not in (0, 1):
                self._duck[value] = symbol
            self.hints[symbol] = sympy.Integer(value)
            self.sources[symbol] = [source_name]
        return SymInt(SymNode(symbol, self, int))

    def create_symbolic_float(self, value, source_name):
        """A float argument of the traced function as a *backed* symbol (``zf0``...), its hint
        the example's value: torch.compile's automatic dynamic makes a float argument whose value
        changed an input of the graph (``specialize_float=False``), as it does an int. A decision
        on it is answered from the example and kept as a guard."""
        import sympy  # a heavy module: only a trace with a dynamic float pays for importing it
        symbol = sympy.Symbol(f"zf{self.unbacked_symfloat_counter}", real=True)
        self.unbacked_symfloat_counter += 1
        self.hints[symbol] = sympy.Float(value)
        self.sources[symbol] = [source_name]
        return SymFloat(SymNode(symbol, self, float))

    def _int_symbol(self, size_like=False):
        import sympy  # a heavy module: only a trace that reads data pays for importing it
        name = f"u{self.unbacked_symint_counter}"
        self.unbacked_symint_counter += 1
        symbol = sympy.Symbol(name, integer=True, nonnegative=True) if size_like else \
            sympy.Symbol(name, integer=True)
        if size_like:
            self.size_like.add(symbol)
        return symbol

    def create_unbacked_symint(self, size_like=False):
        """``u0``, ``u1``...: an int read from data; ``size_like`` for an operator's output size."""
        return SymInt(SymNode(self._int_symbol(size_like), self, int))

    def create_unbacked_symfloat(self):
        """``zuf0``, ``zuf1``...: a float read from data."""
        import sympy  # a heavy module, imported when a trace reads data
        name = f"zuf{self.unbacked_symfloat_counter}"
        self.unbacked_symfloat_counter += 1
        return SymFloat(SymNode(sympy.Symbol(name, real=True), self, float))

    def create_unbacked_symbool(self):
        """A bool read from data: an int symbol between 0 and 1, compared with 1, as torch makes it."""
        import sympy  # a heavy module, imported when a trace reads data
        name = f"u{self.unbacked_symint_counter}"
        self.unbacked_symint_counter += 1
        symbol = sympy.Symbol(name, integer=True, nonnegative=True)
        return SymBool(SymNode(sympy.Eq(symbol, 1), self, bool))

    def create_unbacked_symbol_for(self, dtype):
        """The symbol ``item()`` of a tensor of ``dtype`` returns."""
        if dtype.is_floating_point or dtype.is_complex:
            return self.create_unbacked_symfloat()
        if dtype.torch_name == "Bool":
            return self.create_unbacked_symbool()
        return self.create_unbacked_symint()

    def check_dynamic(self, source_names):
        """Raise ConstraintViolationError if a size named in ``source_names`` (``L['x'].size()[0]``,
        declared dynamic) was pinned to one value by a guard, in torch's words (``produce_guards``)."""
        pinned = {src: self.replacements[s] for s, srcs in self.sources.items() if s in self.replacements
                  for src in srcs if src in source_names}
        if pinned:
            lines = [f"  - You marked {src} as dynamic but your code specialized it to be a constant ({value}). "
                     "If you're using mark_dynamic, either remove it or use maybe_mark_dynamic. If you're "
                     "using Dim.DYNAMIC, replace it with either Dim.STATIC or Dim.AUTO."
                     for src, value in pinned.items()]
            raise ConstraintViolationError(f"Constraints violated ({', '.join(pinned)})! For more information, run "
                                           'with TORCH_LOGS="+dynamic".\n' + "\n".join(lines))

    def replace(self, expr):
        """``expr`` with the pinned symbols replaced by their values (torch's ``ShapeEnv.replace``)."""
        while self.replacements and expr.free_symbols & self.replacements.keys():
            expr = expr.xreplace(self.replacements)     # again: a replacement's own symbols may be pinned
        return expr

    def evaluate_static(self, expr):
        """``expr``'s value where it is the same for every value of its symbols (their
        replacements made, their assumptions -- a size is positive -- used), else None; no
        example value is read and no guard kept (torch's ``_maybe_evaluate_static``)."""
        import sympy  # a heavy module, imported when a trace has symbols
        expr = self.replace(expr)
        if expr in (sympy.true, sympy.false):
            return bool(expr)
        if not expr.free_symbols:
            return expr
        return None

    def evaluate_expr(self, expr):
        """The value of ``expr`` if it is the same for every value of its symbols, else raise.
        An expression over backed symbols is decided by their example values, and the decision
        kept as a guard (torch's ``ShapeEnv.evaluate_expr``)."""
        import sympy  # a heavy module, imported when a trace reads data
        expr = self.replace(expr)
        if expr.free_symbols & self.hints.keys():       # backed symbols: their example values decide
            backed = expr
            expr = expr.xreplace({s: self.hints[s] for s in expr.free_symbols if s in self.hints})
            if not expr.free_symbols:
                self._guard(backed, expr)
        if not expr.free_symbols:
            return expr
        if in_size_oblivious():
            at_least_two = {s: sympy.Symbol(f"{s.name}_oblivious", integer=True, positive=True) + 1
                            for s in expr.free_symbols & self.size_like}
            decided = expr.xreplace(at_least_two)
            if not decided.free_symbols or decided in (sympy.true, sympy.false):
                return decided
        size_like = ", ".join(sorted(s.name for s in self.size_like)) or "none"
        raise GuardOnDataDependentSymNode(
            f"Could not guard on data-dependent expression {expr} (unhinted: {expr}).  "
            f"(Size-like symbols: {size_like})\n\nconsider using data-dependent friendly APIs such as "
            "guard_or_false, guard_or_true and statically_known_true.")


    def _refined(self, guard):
        """``guard`` as torch's value ranges leave it: a size is at least 2, so a size's ``s``
        or ``s // k`` that must not equal its least value must exceed it, a bound on ``s``
        itself (``(s // 2) != 1`` is ``4 <= s``), as torch's ``_maybe_guard_rel`` refines it."""
        import sympy  # a heavy module, imported when a trace reads data
        if not isinstance(guard, sympy.Ne) or not guard.rhs.is_Integer:
            return guard
        e, least = guard.lhs, int(guard.rhs)
        symbol, k = (e, 1) if e.is_Symbol else (None, None)
        if isinstance(e, sympy.floor):
            num, den = sympy.fraction(sympy.together(e.args[0]))
            if num.is_Symbol and den.is_Integer and den > 0:
                symbol, k = num, int(den)
        if symbol is None or not symbol.is_positive or symbol not in self.hints or least != 2 // k:
            return guard
        return sympy.Le(k * (least + 1), symbol)

    def _guard(self, expr, value):
        """Keep ``expr`` evaluating to ``value`` as a guard; a guard that holds for one value of a
        symbol only makes that value its replacement (torch's ``_maybe_guard_rel``)."""
        import sympy  # a heavy module, imported when a trace reads data
        if isinstance(expr, sympy.Rel) or expr.is_Boolean:
            guard = expr if bool(value) else sympy.Not(expr)
        else:                           # an int the trace needed (a loop count, an index)
            guard = sympy.Eq(expr, value)
        guard = self._refined(guard)
        if guard in (sympy.true, sympy.false) or guard in self._guard_set:
            return
        self.guards.append(guard)
        self._guard_set.add(guard)
        if isinstance(guard, sympy.Eq) and len(guard.free_symbols) == 1:
            symbol, = guard.free_symbols
            if symbol in self.hints:
                try:
                    solutions = sympy.solve(guard, symbol)
                except (NotImplementedError, AttributeError):   # floors: sympy finds no solution set
                    solutions = []
                if not isinstance(solutions, list):     # an inequality: sympy answers with a relation
                    solutions = []
                if len(solutions) == 1 and solutions[0] == self.hints[symbol]:
                    self.replacements[symbol] = self.hints[symbol]
        elif isinstance(guard, sympy.Eq) and not self._solve_for_largest(guard):
            self._replace_newer(guard)

    def _solve_for_largest(self, guard):
        """``Eq(s96, 2*s9)``: the backed symbol whose example is the largest (the later name on a
        tie) solved for, when the solution is a whole expression in the other sizes, becomes it
        (``s96`` reads ``2*s9`` from then on, in the inputs' metadata too), as torch's
        ``_maybe_guard_rel`` picks the symbol to replace; ``s9 = s96/2`` is no replacement. A
        guard with a floor division is left alone, as torch's (``try_solve`` refuses it)."""
        import sympy  # a heavy module, imported when a trace has symbols
        free = guard.free_symbols
        if len(free) > 5 or not all(isinstance(side, sympy.Expr) for side in guard.args) or \
                guard.atoms(sympy.floor, sympy.Mod) or not free <= self.hints.keys():
            return False
        symbol = max(free, key=lambda s: (int(self.hints[s]) if s.is_positive else sys.maxsize, s.name))
        difference = guard.lhs - guard.rhs
        if not difference.is_polynomial(*free):     # a Max, a Min: no solving
            return False
        poly = sympy.Poly(difference, symbol)
        if poly.degree() != 1:
            return False
        coefficient, rest = poly.all_coeffs()
        solution = self.replace(sympy.expand(-rest / coefficient))
        if not all(t.is_integer for t in sympy.preorder_traversal(solution)):
            return False
        self.replacements[symbol] = solution
        return True

    def _replace_newer(self, guard):
        """``Eq(s91, (s77 + 1) // 2)``: the symbol made later (a tangent's size, given a symbol of
        its own) becomes the expression in the earlier ones, as torch's ``_maybe_guard_rel``
        replaces a symbol an equality solves, so every guard after it names the inputs' sizes."""
        order = {s: i for i, s in enumerate(self.hints)}
        for side, other in ((guard.lhs, guard.rhs), (guard.rhs, guard.lhs)):
            if side.is_Symbol and side in order and other.free_symbols and \
                    all(order.get(s, len(order)) < order[side] for s in other.free_symbols):
                self.replacements[side] = other
                return
