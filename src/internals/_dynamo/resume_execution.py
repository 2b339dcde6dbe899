"""A graph break at a value read from a tensor, and the code after it (``torch/_dynamo/resume_execution.py``).

When Dynamo meets ``.item()`` (or an ``if`` on a tensor, which reads the tensor's one value) it
compiles the graph up to that point, whose outputs are the tensors still alive there; runs the
read eagerly; and compiles what follows as a resume function, a new frame whose graph takes
those tensors as inputs. Each value of an ``if`` leads to its own resume function, compiled the
first time a call takes it.

This compiler has no bytecode to resume from. It traces the function once with real tensors
(copies of the arguments), so every read has its value and Python's ``if``s are decided, and
cuts the recorded operators at each read into segments. A segment's outputs are the tensors
still referenced at the cut, its inputs the ones it uses from the arguments or from earlier
segments. The segments form a tree: a cut's children are keyed by the value read, as Dynamo's
resume functions are by the branch taken. A call runs the compiled segments and the reads in
turn; a value no child has yet is traced again from the start (the same program on the same
arguments takes the same path up to it) and the new segments are grafted on.

A number read with ``.item()`` is first a constant of the segments after it. When a later call
reads another value there, the function is traced again with that read answered by a backed
symbol (``zf0``, or ``s..`` for an int) whose example is the value: the segments after it take the
value as an input, and one graph serves every later value, as torch's automatic dynamic makes
the changed argument of a resume function an input; a list read with ``tolist()`` that changed
takes each item as a symbol the same way (``getitem`` nodes of the read, one per item), a list
of another length too. Where the program decides on the value in
Python (``if v > 0``), the decision is a guard of that child (a region of the values read): a
value that decides otherwise traces another region, as torch recompiles a resume function
whose guard failed. ``int(v)`` keeps the symbol (the compiler's ``int`` calls ``sym_int``, as
Dynamo traces the builtin), and ``int(t)`` reads the int itself, as Dynamo's resume function
receives it. A value the program formats (``f"{v}"``) is pinned to its value on the first
trace; once it changed, torch's trace of the resume function with the value an input fails at
the formatting and Dynamo runs that function eagerly for good, so here the segments after such
a read run their operators uncompiled, no more graphs. The segments' inputs are named by the
stack slots of that resume function (``bytecode_analysis.py``): ``stack0``... for what the
stack held, a variable's name otherwise.

A read inside a function of the user's that the compiled one calls also cuts at that call's
start and end (``BreakingTracer.watching_calls``): Dynamo cannot inline a function that breaks,
so the caller's graph ends at the call, the callee runs as a frame of its own and the caller
goes on in a resume function. A segment's compiled graphs are kept by its resume key -- where
the code goes on, the value taken there, the segment's operations -- not by the path that led
to it: a ``while`` loop's turns, a function called twice, the caller's code after a call whose
inside took either branch, share one graph, as they share one resume function in Dynamo.
``print``, ``tolist()``/``numpy()``, an operator of data-dependent output size and
``requires_grad_()`` are cuts too, run between the graphs with the call's values. A write to
Python state (an append, an attribute, a global) is noted at the cut after it: the segment
before the cut returns the tensors written and makes the write again after its graph
(``side_effects.Replay``), once per call, as Dynamo applies its side effects before the
instruction that breaks; a write no replay can make runs the function eagerly. So does a write
after a cut into memory that a view made before the cut shares (the segments hand each other
separate tensors), and, where gradients are followed, a tensor computed under ``no_grad`` that
is used after a cut (the segments are differentiated whole). A break in a
list comprehension's loop (``[int(v.item()) for v in x]``) makes the whole comprehension one
cut, as Dynamo runs the comprehension's frame eagerly (it resumes no frame inside a loop): its
operators leave the trace, its step calls it again with the call's values, and its list is the
value read -- tensors by place, numbers constants of the graph after it, then inputs once they
changed, as a ``tolist()``'s.

Sizes follow automatic dynamic shapes on both sides of a read. The first segment is the
function's frame: the cache entry's dims decide its symbols and its guards are the entry's. A
later segment is a resume function with guards of its own: a call whose inputs fail those of
every graph it has compiles one more, tracing as symbols the dims whose sizes changed since its
first compile, as remembered across the entries of one set of non-tensor arguments
(``ResumeCache``). Sizes 3, 4, 5 thus compile each side twice, as torch does. The trace runs on
real tensors, so a size the program reads in Python (``x.shape[0]``, ``len(x)``, an index's
bounds) is a plain number in it: a trace that reads one before the first read keeps its entry
to the exact sizes, and a segment that reads one after a read is the child of those sizes only.
"""
import contextlib
import dataclasses
import dis
import functools
import inspect
import operator
import os
import sys
import threading
import traceback
import types

import numpy as np

from .. import _tensor_indexing
from .._decomp import decomposition_table
from .._functorch import AOTCompiled
from .._inductor import compile_fx
from .._ops import OpOverload
from .._subclasses.fake_tensor import DYNAMIC_OUTPUT_SHAPE, FakeTensorMode
from .._tensor import Tensor
from .._tensor_base import TensorBase
from ..autograd import is_grad_enabled, no_grad
from ..c10.dispatch_key import DispatchKeySet, backend_key_for
from ..c10.scalar_type import bool_, uint8
from ..c10.sym import SymBool, SymFloat, is_symbolic
from ..c10.sym import _SymNumber as SymNumber
from ..c10.tensor_impl import required_storage_elements
from ..fx.experimental.proxy_tensor import ProxyTorchDispatchMode, _placeholder_names, make_fx
from ..fx.experimental.sym_node import recorders
from ..fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv
from ..fx.graph import Graph, Node
from ..fx.graph_module import GraphModule
from ..fx.passes import functionalize
from ..fx.passes.functionalize import _is_view, _writes
from ..utils._python_dispatch import _disable_current_modes
from ..utils._pytree import tree_leaves, tree_map
from .bytecode_analysis import NULL, in_for_loop, in_try_block, resume_offset, stack_below
from .guards import TensorGuards
from .pgo import FrameState

__all__ = ["GENERIC_JUMP", "ITEM_BREAK", "BreakingTracer", "PythonWrites", "RequiresGradBreak", "ResumeCache",
           "Segmented", "breaking_tracer", "reading_as", "trace_with_breaks", "traced_print", "watching_requires_grad"]

# torch's reasons (the first line): ``.item()`` read eagerly, and an ``if`` on a tensor.
ITEM_BREAK = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
GENERIC_JUMP = "generic_jump TensorVariable()"
PRINT_BREAK = "Failed to trace builtin operator"        # torch's first line for ``print``
OPERATOR_BREAK = "Dynamic shape operator"       # ``nonzero``, ``x[mask]``
REQUIRES_GRAD_BREAK = "requires_grad_() intermediate leaked as output"

# Operators whose results the trace could not reproduce: another run draws other numbers.
_RANDOM = ("rand", "bernoulli", "normal", "uniform", "exponential", "multinomial", "poisson", "dropout",
           "cauchy", "geometric", "log_normal", "random_")

# The package's own files: a size they read is no decision of the program's.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# Where the standard library and installed packages live: their functions are not the user's.
_LIBRARIES = tuple({f(p) + os.sep for p in (os.path.dirname(os.__file__), *(p for p in sys.path if "-packages" in p))
                   for f in (os.path.abspath, os.path.realpath)})
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR

# sys.getrefcount of a TensorImpl the tracer alone holds: its (impl, node) pair, the loop's
# variable, the call's argument. One more and a tensor of the program still holds it.
_TRACER_REFS = 3
# sys.getrefcount of a size only a print's arguments hold (``BreakingTracer._printed_size``),
# where the interpreter runs a call of a Python function inline (``_caller_refs``: none more).
_PRINTED_REFS = 5


def _argument_refs(*args):
    return sys.getrefcount(args[0])


def _caller_refs():
    """The references a caller's frame keeps to an argument while the Python function it calls
    runs: none where CPython runs the call inline in its own loop, one where a frame evaluator
    (PEP 523) is installed -- a debugger's, or torch.compile's, which a compile that raised
    (``ConstraintViolationError``) leaves installed for the rest of the process, even across
    ``torch._dynamo.reset()`` -- for then the call goes through vectorcall and the caller's
    stack holds its arguments until it returns. Asked at each print, as it can change while
    the process runs."""
    return _argument_refs(object()) - 2      # inline: the callee's ``args`` tuple and getrefcount's own


class RequiresGradBreak(RuntimeError):
    """The traced program asked a tensor it computed to require grad (``requires_grad_()``):
    Dynamo breaks the graph there, and so does this compiler (``watching_requires_grad``)."""


class PythonWrites(Exception):  # noqa: N818 -- a signal, not a failure
    """A trace again wrote Python state (``side_effects.py``): the entry runs eagerly from now on."""


class BreakInForLoop(PythonWrites):
    """A break inside a ``for`` loop's body or a ``try`` block: Dynamo runs such a frame
    without graphs (no resume function starts inside a loop over an iterator or a block of
    handlers), and so does this compiler."""


@dataclasses.dataclass
class Break:
    """A read the trace cut at: the value read, torch's reason, the nodes alive at the cut and
    the user's frames."""

    value: object
    reason: str
    live: list
    user_stack: list
    symbolic: bool = False      # the value is an input of the segments after the cut
    locals: dict = dataclasses.field(default_factory=dict)     # node -> the user's variable holding it
    # node -> the stack slot Dynamo's resume function receives it in (``stack0``), and the value
    # read's own slot (None where no call leaves it on the stack: an ``if`` consumes it)
    stack: dict = dataclasses.field(default_factory=dict)
    value_slot: str | None = None
    convert: object = None      # ``int`` for ``int(t)``: the call's result, not the tensor's value, is read
    # where the code goes on after it: (code, instruction offset) of the innermost frame of the
    # user's, as Dynamo makes a resume function for an instruction, whatever path led there
    site: tuple = ()
    # a cut at no read: ``"enter"`` before a call of the user's function inside which the program
    # read a tensor, ``"return"`` after it. Dynamo cannot inline a function that breaks: the
    # caller's graph ends at the call, the callee runs as a frame of its own (compiled, with
    # its own graphs around the read) and the caller goes on in a resume function
    kind: str | None = None
    method: str = "item"    # how a call reads the tensor: ``item``, or ``tolist``/``numpy`` (a host read)
    # for ``method == "call"``, a comprehension run eagerly: (its code, its globals, its arguments
    # and free variables by name, a tensor by its node's ``_Name``), called again by each call
    call: tuple = dataclasses.field(default=(), repr=False)
    # the writes to Python state the program made in the segment before the cut: (their
    # ``side_effects.Replay``, the nodes of the tensors they write), made again after its graph
    writes: tuple | None = dataclasses.field(default=None, repr=False)
    # the read is an argument of a method call on a tensor (``y.add(v.item())``): Dynamo
    # compiles the graph before it and runs the rest of the frame uncompiled (``_Step.skip_rest``)
    skip_rest: bool = False


def _dynamic_output_shape(func, args):
    """Whether ``func``'s output size depends on the values of its input (fake tensors refuse it)."""
    name = func.name()
    return name in DYNAMIC_OUTPUT_SHAPE or name == "aten::index.Tensor" and len(args) > 1 and \
        any(isinstance(i, TensorBase) and i.dtype in (bool_, uint8) for i in args[1] or ())


def _requires_grad(tensor):
    """What the cut at ``requires_grad_()`` runs between two graphs."""
    return tensor.requires_grad_()


_requires_grad_watch = {"traces": 0, "method": None, "property": None}


def _asks_for_grad(tensor, requires_grad, set_flag):
    """``tensor.requires_grad_()`` or ``tensor.requires_grad = True`` by the traced program
    (``set_flag``: the package's own way to set it): a cut where the tracer of reads runs,
    else ``RequiresGradBreak``. Anything else sets the flag as it would."""
    if not (requires_grad and not tensor.requires_grad and getattr(_tracing, "compiling", 0)) or \
            sys._getframe(2).f_code.co_filename.startswith(_PACKAGE):
        return set_flag(tensor, requires_grad)
    tracer = getattr(_tracing, "tracer", None)
    if tracer is None or id(tensor._impl) not in tracer._nodes:
        raise RequiresGradBreak("requires_grad_() of a tensor the compiled function computed")
    set_flag(tensor, requires_grad)
    tracer.cut_requires_grad(tensor)
    return tensor


@contextlib.contextmanager
def watching_requires_grad():
    """While a compiled function is traced, its ``requires_grad_()`` (or ``requires_grad =
    True``) of a tensor that does not require grad is a graph break (``_asks_for_grad``): a
    fake trace's graph would not make its output require grad."""
    with _watch_lock:
        if _requires_grad_watch["traces"] == 0:
            method = _requires_grad_watch["method"] = vars(Tensor)["requires_grad_"]
            flag = _requires_grad_watch["property"] = vars(Tensor)["requires_grad"]

            @functools.wraps(method)
            def requires_grad_(self, requires_grad=True):
                return _asks_for_grad(self, requires_grad, method)

            def set_requires_grad(self, value):
                _asks_for_grad(self, value, flag.fset)
            Tensor.requires_grad_ = requires_grad_
            Tensor.requires_grad = property(flag.fget, set_requires_grad, flag.fdel, flag.__doc__)
        _requires_grad_watch["traces"] += 1
    _tracing.compiling = getattr(_tracing, "compiling", 0) + 1
    try:
        yield
    finally:
        _tracing.compiling -= 1
        with _watch_lock:
            _requires_grad_watch["traces"] -= 1
            if _requires_grad_watch["traces"] == 0:
                Tensor.requires_grad_ = _requires_grad_watch["method"]
                Tensor.requires_grad = _requires_grad_watch["property"]


def _host_reason(tensor, method):
    """torch's first line for a break at ``tolist()`` or ``numpy()``."""
    if method == "numpy":
        return "Data dependent operator"
    return "Tensor.tolist() with non-integer tensor" if tensor.is_floating_point() else "Tensor.tolist()"


def _host_read(tensor):
    """The target of a cut at ``tolist()`` or ``numpy()`` (``Break.method``): it computes nothing."""


def _call_boundary():
    """The target of a cut at a call's start or end (``Break.kind``): it computes nothing."""


def _eager_call():
    """The target of a cut at a comprehension run eagerly (``Break.call``): its arguments are the
    tensors the comprehension takes; the step calls it (``_call_eagerly``)."""


def _in_loop(frame):
    return in_for_loop(frame.f_code, frame.f_lasti) or in_try_block(frame.f_code, frame.f_lasti)


class _TensorItem:
    """A tensor in the list a comprehension run eagerly returned, as the cut's value shows it: the
    children of the cut are keyed by the list's numbers and the places of its tensors."""

    def __repr__(self):
        return "Tensor"


TENSOR_ITEM = _TensorItem()


def _shown(result):
    return [TENSOR_ITEM if isinstance(v, Tensor) else v for v in result]


@dataclasses.dataclass(frozen=True)
class _Iterated:
    """An iterator a comprehension is called with, rebuilt over these items for each call."""

    items: tuple


@dataclasses.dataclass(frozen=True)
class _TensorRows:
    """The iterator over a tensor's rows (``Tensor.__iter__``), not started."""

    tensor: object


def _comprehension_arguments(frame):
    """{name: value} of a list comprehension's frame at its call -- its iterator (``.0``) and the
    free variables it reads -- from which its step calls it again; None for another frame, one
    that writes a variable of its caller's (``:=``), or an iterator that cannot be rebuilt."""
    code = frame.f_code
    if code.co_name != "<listcomp>" or any(i.opname == "STORE_DEREF" for i in dis.get_instructions(code)):
        return None
    arguments = {name: frame.f_locals[name] for name in (*code.co_varnames[:code.co_argcount], *code.co_freevars)
                 if name in frame.f_locals}
    iterator = _iterator_items(arguments.get(".0"))
    if iterator is None or len(arguments) != code.co_argcount + len(code.co_freevars):
        return None
    return arguments | {".0": iterator}


# the code of the generator ``Tensor.__iter__`` returns (the method itself is wrapped while traced)
_ROWS_CODES = tuple(c for c in inspect.unwrap(Tensor.__iter__).__code__.co_consts if isinstance(c, types.CodeType))


def _iterator_items(iterator):
    """The rest of ``iterator`` without taking it: a tensor's rows not yet started, the rest of a
    list, tuple or range iterator; None for another."""
    if inspect.isgenerator(iterator) and iterator.gi_code in _ROWS_CODES and \
            inspect.getgeneratorstate(iterator) == inspect.GEN_CREATED:
        return _TensorRows(iterator.gi_frame.f_locals["self"])
    if type(iterator).__name__ not in ("list_iterator", "tuple_iterator", "range_iterator"):
        return None
    _, (sequence, *_), *state = iterator.__reduce__()
    return _Iterated(tuple(sequence[state[0] if state else 0:]))


def _names_in(value, graph):
    """The nodes (of ``graph``) that the ``_Name``s in a rebuilt argument name, once each."""
    by_name = {n.name: n for n in graph.nodes}
    found = {}

    def visit(v):
        if isinstance(v, _Name):
            found[by_name[v.name]] = None
        elif isinstance(v, _Iterated):
            for x in v.items:
                visit(x)
        elif type(v) in (list, tuple):
            for x in v:
                visit(x)
        elif type(v) is dict:
            for x in v.values():
                visit(x)
    visit(value)
    return list(found)


def _call_eagerly(call, env):
    """Call a comprehension again (``Break.call``) with the values of this call (``env``)."""
    code, f_globals, named = call

    def value(v):
        if isinstance(v, _Name):
            return env[v.name]
        if isinstance(v, _Iterated):
            return iter([value(x) for x in v.items])
        if type(v) in (list, tuple):
            return type(v)(value(x) for x in v)
        if type(v) is dict:
            return {k: value(x) for k, x in v.items()}
        return v
    bound = {name: value(v) for name, v in named.items()}
    cells = tuple(types.CellType(bound[name]) for name in code.co_freevars)
    function = types.FunctionType(code, f_globals, code.co_name, None, cells)
    return function(*(bound[name] for name in code.co_varnames[:code.co_argcount]))


class BreakingTracer(ProxyTorchDispatchMode):
    """Real tracing that answers a read of a traced tensor (``_local_scalar_dense``) with its
    value and writes a cut into the graph there (a node whose ``meta['graph_break']`` is a
    ``Break``), instead of refusing it."""

    def __init__(self, graph, user_codes=(), symbolic_reads=(), answers=None):
        super().__init__(graph, None, decomposition_table, fold_constant_reads=False)
        self.user_codes = user_codes
        # the reads (by order) answered with a value a call already read: a trace again follows
        # the path the compiled segments took (whose sum may differ from an eager one in its
        # last bit), not the one its own eager arithmetic would
        self.answers = answers or {}
        # the reads (by their order in the trace) answered by a backed symbol, not the value
        self.symbolic_reads, self.reads = set(symbolic_reads), 0
        self.shape_env = ShapeEnv() if self.symbolic_reads else None
        self.read_symbols = {}      # the symbol answering a read -> the read's node name
        # the segments (by the number of reads before them) whose Python read a tensor's size:
        # the trace holds for the sizes it ran with only (``x.shape[0] * y``, ``x[:4]``)
        self.size_reads, self._depth = {}, 0     # {segment: how many reads}
        # the sizes (``x.size()``, ``x.shape``) read by the program: id -> (the size, its tensor, the
        # segment); one the program only hands to ``print`` is no decision on it (``cut_print``)
        self._sizes = {}
        # the calls of the user's functions in progress inside the compiled function, innermost
        # last: [frame, the number of nodes at its start, whether a read happened inside, the
        # tensors its parameters hold]
        self._calls, self._top, self._user_files = [], 0, {}
        # the call in progress that runs eagerly as one step (a comprehension whose loop broke),
        # the reason and stack of the first break inside it, and the tensors made inside it,
        # whose nodes are gone (a later use of one runs the function eagerly): id -> impl
        self._eager, self._eager_break, self._dead = None, None, {}
        # Python state as the last cut left it (``side_effects.PythonState``, set by the traced
        # function): the writes after it are the next segment's; whether one could not be made
        # again, and the writes after the last cut (the last segment's)
        self.python_state, self.unreplayable, self.tail_writes = None, False, None
        # an operator the program ran with grad mode off (``with no_grad():``): the segments are
        # differentiated whole, which would follow it, so with gradients the function runs eagerly
        self.grad_disabled = False

    def _note_writes(self, brk, replayable=True):
        """The writes to Python state made since the last cut, as ``brk.writes``: the segment
        that ends at ``brk`` makes them again after its graph, with its tensors, as Dynamo
        applies the side effects before the instruction that breaks. ``replayable`` False (a
        comprehension run eagerly: the writes inside it are made by its call again, the ones
        before it cannot be told apart) or a write no replay can make marks the trace
        ``unreplayable``: the function then runs eagerly."""
        state = self.python_state
        if state is None or not state.written():
            return
        plan = state.replay() if replayable else None
        self.python_state = state.again()
        nodes = [] if plan is None else [self.node_of(t) for t in plan.outputs]
        if plan is None or plan.numbers_written or any(n.op not in ("call_function", "placeholder") for n in nodes):
            self.unreplayable = True        # (an int computed from a symbol: the segments take no such input)
            return
        brk.writes = (plan, nodes)

    def finish_writes(self):
        """Note the writes after the last cut (the last segment's); whether every write of the
        trace can be made again after its segment's graph."""
        tail = Break(None, None, [], [])
        self._note_writes(tail)
        self.tail_writes = tail.writes
        return not self.unreplayable

    def node_of(self, value):
        if isinstance(value, Tensor) and id(value._impl) in self._dead:
            raise BreakInForLoop()      # a tensor a comprehension made, kept otherwise than in its list
        return super().node_of(value)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self._depth += 1            # an operator's own reads of sizes are not the program's
        try:
            out = super().__torch_dispatch__(func, types, args, kwargs)
        finally:
            self._depth -= 1
        if self._depth == 0 and not is_grad_enabled():
            self._note_no_grad(out)
        if self._depth == 0 and _dynamic_output_shape(func, args):
            self._cut_operator(out)
        return out

    def _note_no_grad(self, out):
        """Mark the nodes of an operator run with grad mode off (``meta['no_grad']``)."""
        self.grad_disabled = True
        for t in tree_leaves(out):
            hit = self._nodes.get(id(t._impl)) if isinstance(t, Tensor) else None
            if hit is not None:
                hit[1].meta["no_grad"] = True

    def _cut_operator(self, out):
        """An operator whose output's size depends on the data (``nonzero``, ``x[mask]``): a cut
        whose step runs it eagerly, as Dynamo breaks the graph at it
        (``capture_dynamic_output_shape_ops=False``); the graphs after it take its result."""
        if self._breaking(OPERATOR_BREAK):
            return
        # of several outputs (``unique``), the call that their getitem nodes take apart
        node = self.node_of(out) if not isinstance(out, (tuple, list)) else self.node_of(out[0]).args[0]
        named = tree_map(lambda a: _Name(a.name) if isinstance(a, Node) else a, (node.args, node.kwargs))
        node.meta["graph_break"] = Break((node.target, named), OPERATOR_BREAK, [], self._user_stack(),
                                         site=self._site(), kind="operator")
        self._note_writes(node.meta["graph_break"])

    def cut_requires_grad(self, tensor):
        """``tensor.requires_grad_()`` by the program: a cut whose step makes the call's tensor
        require grad, so that the graphs after it follow its gradient."""
        if self._breaking(REQUIRES_GRAD_BREAK):
            return
        node = self.node_of(tensor)
        cut = self.graph.call_function(_requires_grad, (node,))
        cut.meta["graph_break"] = Break((_requires_grad, ((_Name(node.name),), {})), REQUIRES_GRAD_BREAK, [],
                                        self._user_stack(), site=self._site(), kind="operator")
        self._note_writes(cut.meta["graph_break"])

    def read_host(self, tensor, method, read):
        """``tensor.tolist()`` or ``tensor.numpy()`` by the program (``read``: the method itself):
        a read whose value is the list or array, as Dynamo breaks the graph there."""
        absorbed = self._breaking(_host_reason(tensor, method))
        with _disable_current_modes():
            value = read(tensor)
        if absorbed:
            return value
        node = self.node_of(tensor)
        value = self.answers.get(self.reads, value)
        live = {n: None for impl, n in self._nodes.values()
                if n.op == "call_function" and sys.getrefcount(impl) > _TRACER_REFS}
        cut = self.graph.call_function(_host_read, (node,))
        symbolic = self.reads in self.symbolic_reads and method == "tolist" and _may_be_symbol(value)
        self.reads += 1
        cut.meta["graph_break"] = Break(value, _host_reason(tensor, method), list(live), self._user_stack(),
                                        symbolic, locals=self._locals(), site=self._site(), method=method)
        self._note_writes(cut.meta["graph_break"])
        if not symbolic:
            return value
        # a list of numbers that changed: each item a symbol, as Dynamo's automatic dynamic makes
        # each number of the list its resume function takes an input (``L_stack0_0_``)
        symbols = []
        for i, v in enumerate(value):
            item = self.graph.call_function(operator.getitem, (cut, i))
            symbols.append(self._read_symbol(item, v, f"L['___stack{self.reads - 1}'][{i}]"))
        return symbols

    def _read_symbol(self, node, value, source):
        """A symbol for a number read from a tensor, standing for ``node``'s value in the graphs
        after the read (named by ``source``, the resume function's input Dynamo would guard)."""
        symbol = self.shape_env.create_symbolic_float(value, source) if type(value) is float else \
            self.shape_env.create_symbolic_size(value, source, positive=None, specialize_zero_one=False)
        node.meta["val"] = symbol
        self._symbols[id(symbol.node)] = (symbol.node, node)
        self.read_symbols[symbol.node._expr] = node.name
        return symbol

    def note_size_read(self, caller=None, size=None, tensor=None):
        """A size read by the program: from its own code (``caller``: the reading frame's file,
        not this package's), or by an index (``caller`` None), outside any operator. ``size``:
        the whole size read, of ``tensor``."""
        if self._depth == 0 and (caller is None or not caller.startswith(_PACKAGE)):
            self.size_reads[self.reads] = self.size_reads.get(self.reads, 0) + 1
            hit = self._nodes.get(id(tensor._impl)) if isinstance(size, tuple) and isinstance(tensor, Tensor) else None
            if hit is not None:
                self._sizes[id(size)] = (size, hit[1], self.reads)

    def _printed_size(self, value):
        """The node of the tensor whose size ``value`` is, where the program read it only to print it (no
        other reference holds it: ``print(y.size())``): the read is no decision on the size,
        as Dynamo prints a symbolic size without a guard, and the print shows the call's own."""
        found = self._sizes.get(id(value))
        # references: the print's arguments, ``_sizes``, the caller's ``map``, this frame, getrefcount
        # (and the program's frame, where it calls print through a frame evaluator)
        if found is None or found[0] is not value or sys.getrefcount(value) > _PRINTED_REFS + _caller_refs():
            return None
        _, node, segment = self._sizes.pop(id(value))
        self.size_reads[segment] -= 1
        if not self.size_reads[segment]:
            del self.size_reads[segment]
        return node

    def __enter__(self):
        recorders.append(self.record_arithmetic)     # arithmetic on a read symbol becomes nodes
        try:
            return super().__enter__()
        except BaseException:
            recorders.remove(self.record_arithmetic)    # no ``__exit__`` will take it out
            raise

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            recorders.remove(self.record_arithmetic)

    def _read_value(self, func, args):
        if func.name() != "aten::_local_scalar_dense" or not isinstance(args[0], Tensor):
            raise GuardOnDataDependentSymNode(f"a read of a traced tensor ({func}) that is no .item()")
        absorbed = self._breaking(self._reason())
        tensor = args[0]
        with _disable_current_modes():
            value = func.redispatch(DispatchKeySet([backend_key_for(tensor.device.type)]), tensor)
        convert = getattr(_converting, "to", None)
        if absorbed:
            return convert(value) if convert is not None else value
        node = self.node_of(tensor)
        value = self.answers.get(self.reads, convert(value) if convert is not None else value)
        live = {n: None for impl, n in self._nodes.values()
                if n.op == "call_function" and sys.getrefcount(impl) > _TRACER_REFS}
        cut = self.graph.call_function(func, (node,))
        symbolic = self.reads in self.symbolic_reads and _may_be_symbol(value)
        self.reads += 1
        held = self._locals()
        stack, value_slot = self._stack(live, held)
        reason = self._reason()
        site = self._site(bool(value) if reason == GENERIC_JUMP else None)
        cut.meta["graph_break"] = Break(value, reason, list(live), self._user_stack(), symbolic,
                                        held, stack, value_slot, convert, site,
                                        skip_rest=self._in_a_tensor_methods_arguments())
        self._note_writes(cut.meta["graph_break"])
        if not symbolic:
            return value
        return self._read_symbol(cut, value, f"L['___stack{self.reads - 1}']")

    def _reason(self):
        """An ``if`` (or ``bool()``) on a tensor reads it through ``Tensor.__bool__``: torch's
        generic jump; any other read is ``.item()``'s."""
        frame = sys._getframe()
        while frame is not None:
            if frame.f_code is Tensor.__bool__.__code__:
                return GENERIC_JUMP
            frame = frame.f_back
        return ITEM_BREAK

    @contextlib.contextmanager
    def watching_calls(self):
        """While the program runs, note the calls of the user's functions it makes (a profile
        function, chained to one already set): a call inside which it reads a tensor is cut at
        its start and its end (``Break.kind``)."""
        outer = sys.getprofile()

        def profile(frame, event, arg):
            if outer is not None:
                outer(frame, event, arg)
            if event == "call":
                self._called(frame)
            elif event == "return":
                self._returned(frame, arg)
        sys.setprofile(profile)
        try:
            yield
        finally:
            sys.setprofile(outer)

    def _is_user_code(self, code, generators=False):
        """A function of the user's that Dynamo would inline: not this package's, the standard
        library's or an installed package's, no generator (but with ``generators``)."""
        if generators:
            name = code.co_filename
            return not (name.startswith((_PACKAGE, *_LIBRARIES)) or name.startswith("<frozen"))
        found = self._user_files.get(code)
        if found is None:
            name = code.co_filename
            found = not (name.startswith((_PACKAGE, *_LIBRARIES)) or name.startswith("<frozen")
                         or code.co_flags & _GENERATOR_FLAGS)
            self._user_files[code] = found
        return found

    def _called(self, frame):
        code = frame.f_code
        if code in self.user_codes:
            self._top += 1
        elif self._top and self._is_user_code(code):
            self._calls.append([frame, len(self.graph.nodes), False, self._held(frame),
                                _comprehension_arguments(frame)])

    def _returned(self, frame, result):
        if self._calls and self._calls[-1][0] is frame:
            call = self._calls.pop()
            _, start, read_inside, parameters, _ = call
            if call is self._eager:
                self._cut_eager_call(call, result)
            elif read_inside:
                self._cut_call(frame, start, parameters, result)
        elif frame.f_code in self.user_codes:
            self._top -= 1

    def _cut_call(self, frame, start, parameters, result):
        """Cut the graph before the call of ``frame`` (at node ``start``) and after it (which
        returned ``result``): the segment after the start is the callee's frame (its inputs
        named by its parameters), the one after the end the caller's resume function (named by
        the caller's stack, the call's result in the slot it takes)."""
        nodes = self.graph.nodes
        with self.graph.inserting_before(nodes[start]) if start < len(nodes) else contextlib.nullcontext():
            enter = self.graph.call_function(_call_boundary, ())
        enter.meta["graph_break"] = Break(None, None, [], [], locals=parameters, site=((frame.f_code, 0),),
                                          kind="enter")
        caller = frame.f_back
        while caller is not None and not (caller.f_code in self.user_codes or self._is_user_code(caller.f_code)):
            caller = caller.f_back
        after = self.graph.call_function(_call_boundary, ())
        site = ((caller.f_code, caller.f_lasti),) if caller is not None else ()
        live = {n: None for impl, n in self._nodes.values()
                if n.op == "call_function" and sys.getrefcount(impl) > _TRACER_REFS}
        held = self._held(caller)
        stack, slot = self._stack(live, held)
        if slot is not None and isinstance(result, Tensor) and id(result._impl) in self._nodes:
            stack[self._nodes[id(result._impl)][1]] = slot
        after.meta["graph_break"] = Break(None, None, [], [], locals=held, stack=stack, site=site, kind="return")

    def cut_print(self, args, kwargs):
        """A ``print`` of the program: a cut whose step prints the values it was given (the
        tensors, the symbols of values read) when a call reaches it, as Dynamo breaks the graph
        at ``print`` and calls it between two graphs."""
        if self._breaking(PRINT_BREAK):
            return          # inside a comprehension run eagerly: each call prints as it runs it
        sizes = {i: t for i, t in enumerate(map(self._printed_size, args)) if t is not None}
        args = tuple(sizes.get(i, a) for i, a in enumerate(args))     # the tensor's node: the step reads its size
        cut = self.graph.call_function(print, tree_map(self.node_of, args), tree_map(self.node_of, kwargs))
        named = tree_map(lambda a: _Name(a.name) if isinstance(a, Node) else a, (cut.args, cut.kwargs))
        named = (tuple(_SizeOf(a.name) if i in sizes else a for i, a in enumerate(named[0])), named[1])
        cut.meta["graph_break"] = Break(named, PRINT_BREAK, [], self._user_stack(), site=self._site(), kind="print")
        self._note_writes(cut.meta["graph_break"])

    def _breaking(self, reason):
        """A break here, for ``reason``: the calls in progress break too (``_cut_call``).
        Where a frame of the user's is inside a ``for`` loop's body or a ``try`` block, Dynamo
        runs that frame without graphs: the compiled function's own, ``BreakInForLoop``; a list
        comprehension's, True -- the break is absorbed: the comprehension runs eagerly as one
        step (``_cut_eager_call``), its caller's graph ending at its call and going on after it,
        and the read is answered with its value, no cut."""
        if self._eager is not None:
            return True
        frame = sys._getframe()
        while frame is not None and frame.f_code not in self.user_codes:
            if frame.f_code.co_flags & _GENERATOR_FLAGS and self._is_user_code(frame.f_code, generators=True):
                # Dynamo inlines a generator (``v.item() for v in x``) and cannot resume inside
                # one: the frame that consumes it runs without graphs, as a loop's body does
                raise BreakInForLoop()
            frame = frame.f_back
        if frame is not None and _in_loop(frame):
            raise BreakInForLoop()
        for i, call in enumerate(self._calls):
            if _in_loop(call[0]):
                if call[4] is None:     # no comprehension, or its arguments cannot be rebuilt
                    raise BreakInForLoop()
                self._eager, self._eager_break = call, (reason, self._user_stack())
                for outer in self._calls[:i]:
                    outer[2] = True
                return True
        for call in self._calls:
            call[2] = True
        return False

    def _cut_eager_call(self, call, result):
        """The comprehension ``call`` returned ``result``: its operators leave the graph (each
        call runs it again, eagerly), and a cut takes their place, a read whose value is the
        list (tensors in it by place, ``_shown``) and whose step calls the comprehension again
        with the call's values. Its tensors are the cut's items; a list of numbers that changed
        is a symbol per item, as ``tolist()``'s."""
        frame, start, _, _, arguments = call
        (reason, user_stack), self._eager, self._eager_break = self._eager_break, None, None
        if type(result) is not list or not all(isinstance(v, Tensor) or type(v) in (int, float, bool)
                                               for v in result):
            raise BreakInForLoop()
        inner = self.graph.nodes[start:]
        made = {n for n in inner}
        for key in [k for k, (_, n) in self._nodes.items() if n in made]:
            self._dead[key] = self._nodes.pop(key)[0]       # the impl kept: its id stays unique
        for key in [k for k, (_, n) in self._symbols.items() if n in made]:
            del self._symbols[key]
        for n in reversed(inner):
            self.graph.erase_node(n)
        named = {name: self._rebuilt(v) for name, v in arguments.items()}
        value = _shown(result)
        answer = self.answers.get(self.reads, value)
        if answer != value and TENSOR_ITEM not in value and len(answer) == len(result):
            result[:] = answer      # a trace again follows the values the call read
            value = answer
        live = {n: None for impl, n in self._nodes.values()
                if n.op == "call_function" and sys.getrefcount(impl) > _TRACER_REFS}
        cut = self.graph.call_function(_eager_call, tuple(_names_in(named, self.graph)))
        symbolic = self.reads in self.symbolic_reads and _may_be_symbol(value)
        self.reads += 1
        caller = frame.f_back
        while caller is not None and not (caller.f_code in self.user_codes or self._is_user_code(caller.f_code)):
            caller = caller.f_back
        held = self._held(caller)
        stack, slot = self._stack(live, held)
        site = ((caller.f_code, caller.f_lasti),) if caller is not None else ()
        cut.meta["graph_break"] = Break(value, reason, list(live), user_stack, symbolic, held, stack, slot,
                                        site=site, method="call", call=(frame.f_code, frame.f_globals, named))
        self._note_writes(cut.meta["graph_break"], replayable=False)
        for i, v in enumerate(result):
            if isinstance(v, Tensor) or symbolic:
                item = self.graph.call_function(operator.getitem, (cut, i))
                if slot is not None:
                    stack[item] = f"{slot}_{i}"
            if isinstance(v, Tensor):
                item.meta["val"] = self._meta_val(v)
                self._dead.pop(id(v._impl), None)
                self.track(v, item)
            elif symbolic:
                result[i] = self._read_symbol(item, v, f"L['___stack{self.reads - 1}'][{i}]")

    def _rebuilt(self, value):
        """An argument of an eager comprehension as its step rebuilds it from a call's values: a
        tensor the trace made by its node's ``_Name``, the iterator over a tensor as the tensor's
        rows (taken apart here, in the caller's graph, as Dynamo unpacks a tensor it iterates)."""
        if isinstance(value, _TensorRows):
            rows = [value.tensor[i] for i in range(len(value.tensor))]
            return _Iterated(tuple(self._rebuilt(r) for r in rows))
        if isinstance(value, _Iterated):
            return _Iterated(tuple(self._rebuilt(v) for v in value.items))
        if isinstance(value, Tensor):
            hit = self._nodes.get(id(value._impl))
            return value if hit is None else _Name(hit[1].name)
        if is_symbolic(value):
            if id(value.node) not in self._symbols:
                raise BreakInForLoop()
            return _Name(self._symbols[id(value.node)][1].name)
        if type(value) in (list, tuple):
            return type(value)(self._rebuilt(v) for v in value)
        if type(value) is dict:
            return {k: self._rebuilt(v) for k, v in value.items()}
        return value

    def _user_frame(self):
        """The innermost frame of the user's code inside the compiled function (the function's
        own, or one it called into), or None."""
        if self._calls:
            return self._calls[-1][0]
        frame, codes = sys._getframe(), set(self.user_codes)
        while frame is not None and frame.f_code not in codes:
            frame = frame.f_back
        return frame

    def _site(self, truth=None):
        """Where the code goes on after the read: (code, instruction offset) of the innermost
        frame of the user's, one element; for an ``if`` on the value (its ``truth``), the
        offset the jump goes on at."""
        frame = self._user_frame()
        if frame is None:
            return ()
        offset = frame.f_lasti if truth is None else resume_offset(frame.f_code, frame.f_lasti, truth)
        return ((frame.f_code, offset),)

    def _locals(self):
        """{node: name} of the tensors (and the symbols of earlier reads) the innermost frame of
        the compiled function's code holds in its variables: the names Dynamo gives a resume
        function's inputs (``L_y_``)."""
        return self._held(self._user_frame())

    def _held(self, frame):
        """{node: name} of the tensors and read symbols ``frame`` holds in its variables."""
        if frame is None:
            return {}
        held = {id(v._impl): name for name, v in frame.f_locals.items() if isinstance(v, Tensor)}
        found = {node: held[key] for key, (_, node) in self._nodes.items() if key in held}
        for name, v in frame.f_locals.items():
            if is_symbolic(v) and id(v.node) in self._symbols:
                found.setdefault(self._symbols[id(v.node)][1], name)
        return found

    def _in_a_tensor_methods_arguments(self):
        """Whether the read is made while the program builds the arguments of a method call on a
        tensor it holds in a variable (``x.repeat(int(x.sum().item()))``: ``x.repeat`` waits on
        the stack). Dynamo then compiles the graph before the read and runs the rest of the frame
        uncompiled, with no resume function (torch 2.13; a method of another object, or a
        function, waiting there does not stop it)."""
        frame = self._user_frame()
        found = stack_below(frame.f_code, frame.f_lasti, frame.f_globals, methods=True) \
            if frame is not None else None
        if found is None:
            return False
        return any(label[0] == "method" and label[1][0] == "local" and
                   isinstance(frame.f_locals.get(label[1][1]), Tensor) for label in found[0])

    def _stack(self, live, held):
        """({node: ``stackN``}, the value read's slot): the slots of Dynamo's resume function
        (``bytecode_analysis``) that hold the tensors alive at the read -- a variable's tensor
        loaded before the read, or, in order, the results computed before it -- and the slot
        the read's result takes. Empty where the frame's stack cannot be read."""
        frame = self._user_frame()
        found = stack_below(frame.f_code, frame.f_lasti, frame.f_globals) if frame is not None else None
        if found is None:
            return {}, None
        below, leaves_result = found
        slots = [label for label in below if label != NULL]
        by_name = {name: node for node, name in held.items()}
        unnamed = [n for n in live if n not in held]
        results = [i for i, label in enumerate(slots) if label == ("value",)]
        names = {}
        for i, label in enumerate(slots):
            if label[0] == "local" and label[1] in by_name:
                names.setdefault(by_name[label[1]], f"stack{i}")
        if len(results) == len(unnamed):        # the results on the stack are the unnamed tensors alive
            names.update({node: f"stack{i}" for node, i in zip(unnamed, results, strict=True)})
        return names, f"stack{len(slots)}" if leaves_result else None

    def _user_stack(self):
        """The frames of the compiled function's code on the stack, outermost first."""
        codes = {(c.co_filename, c.co_name) for c in self.user_codes}
        return [s for s in traceback.extract_stack() if (s.filename, s.name) in codes]


def traced_print(writes):
    """``print`` as a traced function sees it: a cut where the tracer of reads runs (``cut_print``),
    else a note in ``writes`` (a fake trace cannot print the values a call will have)."""
    def print_(*args, **kwargs):
        tracer = getattr(_tracing, "tracer", None)
        if tracer is None:
            writes.append("print")
        else:
            tracer.cut_print(args, kwargs)
    return print_


def breaking_tracer():
    """The ``BreakingTracer`` tracing on this thread, or None."""
    return getattr(_tracing, "tracer", None)


def _may_be_symbol(value):
    """A read value a symbol may stand for: an int or float (not a bool, not a nan), as torch's
    automatic dynamic makes an int or float input of a resume function dynamic, 0 and 1 too; a
    list of them (``tolist()`` of a vector), each item a symbol."""
    if type(value) is list:
        return bool(value) and all(_may_be_symbol(v) for v in value)
    return type(value) in (int, float) and value == value


def _same_kind(a, b):
    return a == b or a.startswith("list") and b.startswith("list")


def _kind(value):
    """A read value's kind, as a child's key names it: its type, a list's with its length (the
    segments after a list read take one input per item)."""
    return f"list{len(value)}" if type(value) is list else type(value).__name__


def trace_with_breaks(flat, tensors, user_codes=(), symbolic_reads=(), answers=None):
    """Run ``flat`` on copies of ``tensors`` under a ``BreakingTracer``; the graph and its
    constants. The reads ``symbolic_reads`` (by order) are answered by symbols, those in
    ``answers`` (read number -> value) by the value given; a trace in which the program decided
    on a symbol (a guard) is refused: its segments would hold for one value only."""
    graph = Graph()
    tracer = BreakingTracer(graph, user_codes, symbolic_reads, answers)
    copies = []
    for name, t in zip(_placeholder_names(flat, len(tensors)), tensors, strict=True):
        node = graph.placeholder(name)
        copy = _copy(t)
        node.meta["val"] = tracer._meta_val(copy)
        tracer.track(copy, node)
        copies.append(copy)
    with tracer, _watching_sizes(tracer), tracer.watching_calls():
        out = flat(*copies)
    graph.output(tree_map(tracer.node_of, out))
    graph.size_reads, graph.arg_shapes = tracer.size_reads, arg_layouts(tensors)
    graph.tail_writes, graph.grad_disabled = tracer.tail_writes, tracer.grad_disabled
    # what the program decided on the symbols: the values for which this trace's path holds
    graph.read_guards = (list(tracer.shape_env.guards) if tracer.shape_env is not None else [], tracer.read_symbols)
    return graph, tracer.constants


def arg_layouts(tensors):
    """The arguments' sizes, strides and offsets: what a segment whose code read a size (or a
    stride: ``_watching_sizes`` watches both) holds for, as Dynamo's tensor guards check them."""
    return tuple((tuple(t.shape), tuple(t.stride()), t.storage_offset()) for t in tensors)


# The size reads are watched by wrapping the Tensor's size methods, which every thread shares:
# the wrappers are installed by the first trace that starts and removed by the last that ends
# (two threads tracing at once would otherwise each restore what the other installed), and a
# wrapper notes a read for the tracer of its own thread only.
_watch_lock = threading.Lock()
_watch = {"traces": 0, "saved": []}
_tracing = threading.local()
_converting = threading.local()


@contextlib.contextmanager
def reading_as(convert):
    """A read of a tensor made inside is read as ``convert`` (``int``) of its value: ``int(t)``
    breaks the graph at the call of ``int``, and the value after it is the int, as Dynamo's
    resume function receives it (an int symbol, no truncation in the graph)."""
    outer, _converting.to = getattr(_converting, "to", None), convert
    try:
        yield
    finally:
        _converting.to = outer


@contextlib.contextmanager
def _watching_sizes(tracer):
    """While the program runs, its reads of a tensor's size (``shape``, ``size()``, ``numel()``, ``stride()``,
    ``len``, iteration, an index's bounds) are noted by ``tracer``."""
    with _watch_lock:
        if _watch["traces"] == 0:
            _watch["saved"] = _install_size_watch()
        _watch["traces"] += 1
    outer, _tracing.tracer = getattr(_tracing, "tracer", None), tracer
    try:
        yield
    finally:
        _tracing.tracer = outer
        with _watch_lock:
            _watch["traces"] -= 1
            if _watch["traces"] == 0:
                for owner, name, old in _watch["saved"]:
                    setattr(owner, name, old)


def _install_size_watch():
    """Wrap the size methods; the originals, to put back."""
    def watch(function, by_index=False):
        @functools.wraps(function)
        def read(*args, **kwargs):
            tracer = getattr(_tracing, "tracer", None)
            result = function(*args, **kwargs)
            if tracer is not None:
                tracer.note_size_read(None if by_index else sys._getframe(1).f_code.co_filename, result,
                                      args[0] if args and not kwargs and len(args) == 1 else None)
            return result
        return read
    places = [(owner, name) for name in ("shape", "size", "numel", "nelement", "stride", "__len__", "__iter__")
              for owner in (Tensor, TensorBase) if name in owner.__dict__] + [(_tensor_indexing, "_size")]
    saved = [(owner, name, vars(owner)[name]) for owner, name in places]
    for owner, name, old in saved:
        setattr(owner, name, property(watch(old.fget)) if isinstance(old, property) else
                watch(old, by_index=owner is _tensor_indexing))
    for name in ("tolist", "numpy"):
        saved.append((Tensor, name, vars(Tensor)[name]))
        setattr(Tensor, name, _host_reader(name, vars(Tensor)[name]))
    saved.append((SymNumber, "__format__", SymNumber.__format__))
    SymNumber.__format__ = _format_value
    return saved


def _host_reader(name, method):
    """``Tensor.tolist`` or ``Tensor.numpy`` noting a call by the traced program (not this
    package's own) on a tensor it computed as a read (``BreakingTracer.read_host``)."""
    @functools.wraps(method)
    def read(self, *args, **kwargs):
        tracer = getattr(_tracing, "tracer", None)
        if tracer is None or tracer._depth or args or kwargs or id(self._impl) not in tracer._nodes or \
                sys._getframe(1).f_code.co_filename.startswith(_PACKAGE):
            return method(self, *args, **kwargs)
        return tracer.read_host(self, name, method)
    return read


def _format_value(value, spec):
    """A value read made a symbol, formatted by the traced program (``f"{v:.2f}"``, ``print``'s
    ``str``) in this thread: the text needs the number, a decision that pins the symbol to it,
    as Dynamo specializes a number it formats. (A symbol's own name, ``zf0``, elsewhere, and
    where this package formats it.)"""
    if getattr(_tracing, "tracer", None) is None or sys._getframe(1).f_code.co_filename.startswith(_PACKAGE):
        return object.__format__(value, spec)
    _tracing.formatted = True       # (``Segmented._trace_child``: Dynamo skips such a resume function)
    number = float(value) if isinstance(value, SymFloat) else bool(value) if isinstance(value, SymBool) else int(value)
    return format(number, spec)


@dataclasses.dataclass
class _Name:
    """A value of the program by its node's name, in an output's structure."""

    name: str


@dataclasses.dataclass(frozen=True)
class _SizeOf:
    """A printed size, by its tensor's node name: read again from the call's tensor."""

    name: str


class _Step:
    """One segment: its graph (placeholders: ``inputs``' names), compiled at its first run, and
    then either the read that ends it (``read``: the tensor's name; ``children`` by value) or the
    program's result (``result``)."""

    def __init__(self, gm, inputs, outputs, read=None, cut=None, result=None):
        self.gm, self.inputs, self.outputs, self.read, self.cut = gm, inputs, outputs, read, cut
        self.result, self.children, self.compiled, self.reported = result, {}, None, False
        self.path = ()      # the slots from the first segment to this one: its place in every trace
        self.regions = {}   # a child key of a read made a symbol -> (guards, {symbol: read's name})
        self.state_path = ()    # the same, any number read as any value: the segment whatever was read
        # the resume function this segment is the graph of: the place of the read before it, the
        # value taken there and the segment's operations. Two paths that reach the same read and
        # go on the same way (a loop's next turn) share its compiled graphs, as Dynamo makes one
        # resume function per instruction and reuses it
        self.resume_key = None
        self.replay = None      # writes to Python state made again after its graph: (Replay, tensors' names)
        # the program formats the value read at the end of this segment once it changed: the
        # segments after it run their operators uncompiled, as Dynamo skips a resume function it
        # fails to trace with the value an input and runs it eagerly from then on
        self.skip_rest = False


def _key(value):
    """A read value as a child's key: 1, 1.0 and True apart, -0.0 apart from 0.0; an array
    by its bytes (its repr leaves out the middle of a long one)."""
    if isinstance(value, np.ndarray):
        return "ndarray", value.dtype.str, value.shape, value.tobytes()
    return _kind(value), repr(value)


def _any_number(slot):
    """A child key with a number's value left out: Dynamo's resume function is the same code
    whatever number it is given."""
    return ("any", slot[1]) if slot[0] == "any" else ("any", slot[0]) if slot[0] in ("int", "float") else slot


def _slot(cut):
    """The child key of a cut: its value's, or, for a value made an input, any value of its type
    (the first such region: a program that decides on the value has one per outcome); a
    call's start or end has one child."""
    if cut.kind is not None:
        return ("call", cut.kind)
    return ("any", _kind(cut.value), 0) if cut.symbolic else _key(cut.value)


def _holds(region, values):
    """Whether the values read ({read's node name: value}) pass a region's guards."""
    import sympy  # a heavy module: only a read made a symbol pays for it
    guards, symbols = region
    return all(bool(g.xreplace({s: sympy.sympify(values[name]) for s, name in symbols.items()})) for g in guards)


def _repath(parent, key, child, cut=None):
    """Set ``child``'s path (and its descendants') below ``parent`` at ``key``, after the read
    ``cut`` (``parent``'s own, or that of the new trace's segment grafted there: where the code
    goes on depends on the value that trace read)."""
    _link(parent, key, child, cut)
    for k, c in child.children.items():
        _repath(child, k, c)


def _link(parent, key, child, cut=None):
    """Place ``child`` after ``parent``'s read (or ``cut``) at the child key ``key``: its path,
    state path and resume key."""
    child.path, child.state_path = (*parent.path, key), (*parent.state_path, _any_number(key))
    child.resume_key = ((cut or parent.cut).site, key, _structure(child.gm))


def _structure(gm):
    """A graph's operations with its nodes numbered in order instead of named: two traces of the
    same code give the same structure though their nodes' names differ (``mul_3``, ``mul_5``)."""
    index, out = {}, []
    for n in gm.graph.nodes:
        index[n] = len(index)
        if n.op == "get_attr":
            value = getattr(gm, n.target, None)
            out.append(("get_attr", n.target if not isinstance(value, Tensor) or value.numel() > 16 else
                        (str(value.dtype), tuple(value.shape), tuple(value.reshape(-1).tolist()))))
            continue
        args = tree_map(lambda a: ("node", index[a]) if isinstance(a, Node) else repr(a), (n.args, n.kwargs))
        out.append((n.op, str(n.target) if n.op != "placeholder" else n.target, repr(args)))
    return tuple(out)


def _segments(graph, constants):
    """The chain of ``_Step``s of one trace: the nodes cut at each read."""
    nodes = [n for n in graph.nodes if n.op not in ("placeholder", "output")]
    output = next(n for n in graph.nodes if n.op == "output")
    written = _read_through_writes(nodes)
    groups, cuts = [[]], []
    items = {}      # a cut operator of several outputs: its getitem nodes, set by the call itself
    for n in nodes:
        if "graph_break" in n.meta:
            cuts.append(n)
            groups.append([])
        elif n.op == "call_function" and n.target is operator.getitem and isinstance(n.args[0], Node) \
                and "graph_break" in n.args[0].meta:
            items.setdefault(n.args[0], []).append((n.name, n.args[1]))
        elif n.op == "call_function":
            groups[-1].append(n)
    steps = []
    # per segment, the reads before it: what the trace's size reads are numbered by
    reads = [sum(c.meta["graph_break"].kind is None for c in cuts[:i]) for i in range(len(groups))]
    for i, group in enumerate(groups):
        inside = set(group)
        if i < len(cuts) and cuts[i].meta["graph_break"].kind is not None:
            # a call's start or end: the results that a later node uses
            cut, wanted = cuts[i].meta["graph_break"], [n for n in group if any(u not in inside for u in n.users)]
            wanted += cut.writes[1] if cut.writes else []
        elif i < len(cuts):
            cut = cuts[i].meta["graph_break"]
            # the read tensor, the tensors alive at the read, and any other result a later node
            # uses (a sum of values read, ``total += x[i].item()``, lives in no tensor)
            wanted = [*cuts[i].all_input_nodes, *(written.get(n, n) for n in cut.live),
                      *(n for n in group if any(u not in inside for u in n.users)),
                      *(cut.writes[1] if cut.writes else [])]
        else:
            cut, wanted = None, [a for a in tree_leaves(output.args[0]) if isinstance(a, Node)]
            wanted += graph.tail_writes[1] if getattr(graph, "tail_writes", None) else []
        outputs = list(dict.fromkeys(n for n in wanted if n in inside))
        # the first segment takes every argument, as the function's frame: its guards are the entry's;
        # a later one that ends at a print of a size takes that tensor, as Dynamo's frame reads it
        arguments = _printed_tensors(graph, cut, inside) if i else [n for n in graph.nodes if n.op == "placeholder"]
        gm, inputs = _segment_module(group, outputs, constants, cuts[i - 1].meta["graph_break"] if i else None,
                                     arguments)
        result = tree_map(lambda a: _Name(a.name) if isinstance(a, Node) else a, output.args[0]) \
            if cut is None else None
        # a call's cut reads nothing; a comprehension's calls it
        read = cuts[i].args[0].name if cut is not None and cut.kind is None and cut.method != "call" else None
        steps.append(_Step(gm, inputs, [n.name for n in outputs], read, cut, result))
        steps[-1].skip_rest = cut is not None and cut.skip_rest
        writes = cut.writes if cut is not None else getattr(graph, "tail_writes", None)
        if writes is not None:
            steps[-1].replay = (writes[0], [n.name for n in writes[1]])
            _check_replay(steps, graph)
        steps[-1].cut_name = cuts[i].name if cut else None
        steps[-1].cut_items = items.get(cuts[i], []) if cut else []
        # the items of a list read before this segment that it takes as inputs (symbols)
        steps[-1].read_items = steps[i - 1].cut_items if i and steps[i - 1].cut.kind is None else []
        if i:
            # a segment whose Python read a size is the child of these sizes only
            key = (*_slot(steps[i - 1].cut), *((graph.arg_shapes,) if reads[i] in graph.size_reads else ()))
            steps[i - 1].children[key] = steps[i]
            if steps[i - 1].cut.symbolic:
                steps[i - 1].regions[key] = getattr(graph, "read_guards", ([], {}))
            _link(steps[i - 1], key, steps[i])
    return steps


def _printed_tensors(graph, cut, inside):
    """The tensors made before a segment whose sizes the print that ends it prints
    (``print(y.size())``, ``_SizeOf``): inputs of the segment, guarded by their sizes, so that a
    size that changed makes the segment's dim a symbol, as Dynamo's frame holds the tensor whose
    size it prints (``_prints_a_symbolic_size``)."""
    if cut is None or cut.kind != "print":
        return []
    names = {a.name for a in tree_leaves(cut.value) if isinstance(a, _SizeOf)}
    return [n for n in graph.nodes if n.name in names and n not in inside and n.op != "get_attr"]


def _check_replay(steps, graph):
    """The last of ``steps`` makes writes again after its graph: each tensor they write must be
    at hand then, an argument or an output of a segment up to it; else the trace cannot be cut
    with its writes (the function runs eagerly)."""
    at_hand = {n.name for n in graph.nodes if n.op == "placeholder"}
    for step in steps:
        at_hand.update(step.outputs)
        at_hand.update(name for name, _ in getattr(step, "cut_items", ()))
        if step.cut is not None:
            at_hand.add(getattr(step, "cut_name", None))
    if any(name not in at_hand for name in steps[-1].replay[1]):
        raise PythonWrites()


def _read_through_writes(nodes):
    """Make every read of an in-place operator's result (``add_``) a read of the tensor it wrote,
    which it returns: a segment then writes into its input, not into a copy the compiled graph
    made of it, and an argument the function writes and returns is the same tensor after the
    break, as in eager. {written node: the tensor it wrote}."""
    written = {}
    for n in nodes:
        name = getattr(getattr(n.target, "overloadpacket", None), "__name__", "")
        if n.is_impure() and name.endswith("_") and n.args and isinstance(n.args[0], Node):
            written[n] = written.get(n.args[0], n.args[0])
            n.replace_all_uses_with(written[n])
    return written


def _input_name(a, before):
    """A segment input's name as Dynamo's: an argument's own; after the read ``before``, its
    stack slot (the value read, a tensor loaded before it), else the variable holding it;
    None for a value named by the next free stack slot."""
    if before is not None and before.kind == "enter":     # the callee's frame: its parameters' names
        return before.locals.get(a)
    if a.op == "placeholder":
        return a.name.removesuffix("_1")
    if before is None:
        return None
    if a.meta.get("graph_break") is before and before.value_slot is not None:
        return before.value_slot
    return before.stack.get(a) or before.locals.get(a)


def _segment_module(group, outputs, constants, before=None, arguments=()):
    """A GraphModule of the nodes ``group`` returning ``outputs``; the names of its inputs. Its
    placeholders are named as Dynamo names its graph's inputs (``_input_name``)."""
    inside = set(group)
    # in the order the computation uses them, as Dynamo makes an input when the code first uses
    # it: a decision on a symbol (``i < 4``, an index's bounds) is a guard, no use, and comes last
    decisions = [n for n in group if not n.users and n not in outputs and not isinstance(n.target, OpOverload)]
    order = [n for n in group if n not in decisions] + decisions
    inputs = list(dict.fromkeys([*arguments, *(a for n in order for a in n.all_input_nodes
                                                if a not in inside and a.op != "get_attr")]))
    graph, env = Graph(), {}
    names = [_input_name(a, before) for a in inputs]
    free = (f"stack{i}" for i in range(len(inputs) + len(names)) if f"stack{i}" not in names)
    for a, name in zip(inputs, names, strict=True):
        env[a] = graph.placeholder(name or next(free))
        env[a].meta = dict(a.meta)

    def copy(a):
        if isinstance(a, Node) and a not in env:    # a constant: named again in each segment
            env[a] = graph.get_attr(a.target)
            env[a].meta = dict(a.meta)
        return env[a] if isinstance(a, Node) else a
    for n in group:
        args, kwargs = tree_map(copy, n.args), tree_map(copy, n.kwargs)
        env[n] = graph.create_node(n.op, n.target, args, kwargs, name=n.name)
        env[n].meta = dict(n.meta)
    graph.output(tuple(env[n] for n in outputs))
    used = {n.target for n in graph.nodes if n.op == "get_attr"}
    gm = GraphModule({k: v for k, v in constants.items() if k in used}, graph)
    return gm, [a.name for a in inputs]


class ResumeCache:
    """What the segments after a read remember across the cache entries of one set of
    non-tensor arguments, as a resume function's frame state outlives the entries of the
    function that led to it: the sizes each segment's inputs had, so that a size that changed
    makes that dim a symbol of the segment's next compile (automatic dynamic shapes,
    ``pgo.py``), and the values each read gave. The compiled graphs are kept by resume key
    (``Segmented.shared``), which holds a segment's operations: what the program decided on
    its other tensors (``x.dtype``) shows in them."""

    def __init__(self):
        self.frame_state = FrameState()
        self.values = {}    # per segment ending at a read (its state_path), the values read there


def _writes_aliases_across_a_cut(graph):
    """Whether the trace writes in place, after a cut, into a tensor that shares memory with a
    view made before the cut (``v = x[1:]``, a read, then ``x.add_(1)`` or ``v.add_(1)``): each
    segment hands the next its tensors as separate inputs, so the write would not reach the
    other alias. A view made after the cut, of an argument, stays right: the segment sees both."""
    root, members, segment, made = {}, {}, 0, {}
    for n in graph.nodes:
        made[n] = segment
        if "graph_break" in n.meta:
            segment += 1
            continue
        if n.op != "call_function":
            continue
        source = n.args[0] if n.args and isinstance(n.args[0], Node) else None
        if source is None:
            continue
        base = root.get(source, source)
        if _is_view(n.target) or n.target is operator.getitem and source.target is not None and \
                source.op == "call_function" and _is_view(source.target):
            root[n] = base
            members.setdefault(base, [base]).append(n)
        elif isinstance(n.target, OpOverload) and _writes(n.target):
            if any(made[m] < segment and m.op != "placeholder" for m in members.get(base, [])):
                return True
            root[n] = base      # ``v.mul_(2)`` returns ``v``: the tracer follows it by this node
    return False


def _loses_grad_mode(graph, tensors):
    """Whether the trace ran an operator with grad mode off (``with no_grad():``) where gradients
    are followed: the segments' graphs are differentiated as a whole, so they would give that
    operator's output a gradient eager execution does not."""
    if not (graph.grad_disabled and is_grad_enabled() and any(t.requires_grad for t in tensors)):
        return False
    for node in graph.nodes:
        if node.meta.get("no_grad"):
            # read only (``.item()`` under no_grad) it is harmless; used by an operator run with
            # grad mode on, or returned, the segments would give it a gradient
            if any(u.op == "output" or u.op == "call_function" and not u.meta.get("no_grad") and
                   "graph_break" not in u.meta for u in node.users):
                return True
    return False


class Segmented:
    """A cache entry whose function breaks at reads: ``trace`` (the function, its argument
    tensors -> the chain of a fresh trace) grows the tree; ``graphs`` collects the compiled
    segments' graphs and ``record`` each break's reason, as the CompiledFunction keeps them.
    The first segment is compiled at once with the argument dims ``dims`` traced as symbols
    (the entry's automatic dynamic shapes): its traced inputs (``traced``) and ShapeEnv
    (``shape_env``) are the entry's guards. The later segments' graphs live in ``entries``,
    compiled as the sizes and values remembered in ``resumed`` say."""

    def __init__(self, trace, tensors, graphs, record, device, dims=None, resumed=None, writes=None, shared=None):
        self.trace, self.graphs, self.record, self.device = trace, graphs, record, device
        # the log a trace notes its writes to Python state in (undone): one in a trace again
        # makes the entry eager (``eager``: the function, set by the compiler)
        self.python_writes, self.eager, self.fallen_back = writes if writes is not None else [], None, False
        self.resumed = ResumeCache() if resumed is None else resumed
        # per resume key of a later segment (``_Step.resume_key``), its graphs: (guards, compiled graph, pinned numbers)
        self.entries = {}
        # the same for the segments of no constant tensor, shared with the function's other
        # entries (``shared``): Dynamo's resume function is one frame, whichever entry of the
        # function led to it (a write to a list the entry guards recompiles the function's
        # frame, not the code after its break); a segment's resume key holds its operations
        # and outputs, and its guards its inputs'
        self.shared = {} if shared is None else shared
        graph, constants = trace(tensors, ())
        if _loses_grad_mode(graph, tensors):
            raise RequiresGradBreak("an operator run under no_grad between graph breaks: the segments would "
                                    "differentiate it")
        if _writes_aliases_across_a_cut(graph):
            raise RequiresGradBreak("a write after a graph break to a tensor a view made before it shares: "
                                    "the segments hand over copies")
        self.constants = constants
        self.names = [n.name for n in graph.nodes if n.op == "placeholder"]
        targets = [str(n.target) for n in graph.nodes if n.op == "call_function"]
        if any(word in t for t in targets for word in _RANDOM):
            raise GuardOnDataDependentSymNode("a random operator before a read: a trace again would draw "
                                              "other numbers")
        # a write in the graph: then a call keeps copies to trace again
        self.writes = any(n.op == "call_function" and n.is_impure() for n in graph.nodes)
        self.root = _segments(graph, constants)[0]
        if 0 in graph.size_reads:       # the code before the first read decided on sizes: exact
            dims = None
        self.kernels, self.graph_module = [], None
        self.traced, self.shape_env = None, None
        self.root.compiled, traced = self._compile_or_static(self.root, list(tensors), dims, False)
        if traced is not None:
            self.traced = [n.meta["val"] for n in traced.graph.nodes if n.op == "placeholder"][:len(tensors)]
            self.shape_env = getattr(traced, "shape_env", None)

    def __call__(self, args, kwargs):
        if self.fallen_back:
            return self.eager(*args, **kwargs)
        tensors = [a for a in tree_leaves((args, kwargs)) if isinstance(a, Tensor)]
        before = [_copy(t) for t in tensors] if self.writes else tensors
        try:
            return self._run_segments(args, kwargs, tensors, before)
        except PythonWrites:
            self.fallen_back = True
            with no_grad():         # the segments run so far may have written the arguments
                for t, b in zip(tensors, before, strict=True):
                    if t is not b:
                        t.copy_(b)
            return self.eager(*args, **kwargs)

    def _run_segments(self, args, kwargs, tensors, before):
        env = dict(zip(self.names, tensors, strict=True)) | dict(self.constants)
        shapes = arg_layouts(tensors)
        step, depth, symbolic = self.root, 0, set()     # symbolic: the reads on the path made inputs
        read = []       # the values this call read, in order
        eager = False   # past a read whose segments after it are skipped: their operators run uncompiled
        while True:
            outs = self._run(step, env, eager)
            env.update(zip(step.outputs, outs, strict=True))
            if step.replay is not None:     # the segment's writes, after its graph, before the break
                plan, names = step.replay
                plan(self.eager, [env[name] for name in names])
            if step.cut is None:
                return tree_map(lambda a: env[a.name] if isinstance(a, _Name) else a, step.result)
            if step.cut.reason is not None and not step.reported:      # a print, an operator run eagerly
                step.reported = True
                self.record(step.cut)
            if step.cut.kind == "print":
                args, kwargs = tree_map(lambda a: env[a.name].size() if isinstance(a, _SizeOf) else
                                        env[a.name] if isinstance(a, _Name) else a, step.cut.value)
                print(*args, **kwargs)
            if step.cut.kind == "operator":
                target, (args, kwargs) = step.cut.value
                env[step.cut_name] = target(*tree_map(lambda a: env[a.name] if isinstance(a, _Name) else a, args),
                                            **tree_map(lambda a: env[a.name] if isinstance(a, _Name) else a, kwargs))
                env.update((name, env[step.cut_name][i]) for name, i in step.cut_items)
            if step.cut.kind is not None:       # a call's start or end, a print: no read, one way on
                step = next(c for k, c in step.children.items() if k[:2] == ("call", step.cut.kind)
                            and k[2:] in ((), (shapes,)))
                continue
            if not step.reported:       # Dynamo reports a break when it compiles the frame around it
                step.reported = True
                self.record(step.cut)
            if step.cut.method == "call":       # a comprehension, run eagerly; its tensors by place
                got = _call_eagerly(step.cut.call, env)
                value = _shown(got)
            else:
                got = value = getattr(env[step.read], step.cut.method)()    # the read, run eagerly as between graphs
            if step.cut.convert is not None:
                got = value = step.cut.convert(value)
            env[step.cut_name] = got
            read.append(value)
            self.resumed.values.setdefault(step.state_path, set()).add(_key(value))
            child = self._child(step, value, env, shapes)
            if child is None or child.path[-1:] == (_key(value),) and self._changed_value(step, value) \
                    and not self._entries(child).get(child.resume_key) and not step.skip_rest:
                child = self._trace_child(step, value, before, depth, symbolic, env, shapes, read)
            eager = eager or step.skip_rest
            if child.path[-1][0] == "any":
                symbolic.add(depth)
            env.update((name, got[i]) for name, i in child.read_items)     # a list's items made inputs
            step, depth = child, depth + 1

    def _child(self, step, value, env, shapes):
        """The segment after ``step`` for the read ``value``: the one for that value, else one
        taking any value of its type whose guards the values read (``env``) pass; one traced
        for the arguments' sizes ``shapes`` only where its code read them."""
        child = self._exact_child(step, value, shapes)
        return self._region_child(step, value, env, shapes) if child is None else child

    def _region_child(self, step, value, env, shapes):
        """The child of ``step`` taking any value of ``value``'s type whose guards ``env`` passes."""
        if not _may_be_symbol(value):
            return None
        return next((step.children[k] for k, region in step.regions.items()
                     if k[1] == _kind(value) and k[3:] in ((), (shapes,)) and _holds(region, env)), None)

    def _exact_child(self, step, value, shapes):
        return step.children.get(_key(value)) or step.children.get((*_key(value), shapes))

    def _changed_value(self, step, value):
        """Whether the read ending ``step`` gave another value of ``value``'s type before (in this
        entry or another): then automatic dynamic makes it an input."""
        # (a list of another length counts: torch's automatic dynamic marks each item's source)
        return _may_be_symbol(value) and any(_same_kind(k[0], _kind(value)) and k != _key(value)
                                             for k in self.resumed.values.get(step.state_path, ()))

    def _trace_child(self, step, value, before, depth, symbolic, env, shapes, read):
        """Trace again to reach a value no child of ``step`` has. A second value of an int or
        float read (without gradients to follow) is traced as a symbol: the segments after it
        take it as an input, as torch's resume function takes a changed argument; where that
        fails (the program decides on the value), the value gets segments of its own."""
        if self._changed_value(step, value):
            _tracing.formatted = False
            try:
                answers = {i: v for i, v in enumerate(read) if i not in symbolic and i != depth}
                self._graft(self._traced(before, (*symbolic, depth), answers))
            except PythonWrites:
                raise
            except Exception:  # noqa: BLE001 -- a kernel refusing a symbol: the value stays a constant
                pass
            # a value formatted (``f"{v}"``): Dynamo's trace of the resume function with the value
            # an input fails there, and it runs that function eagerly from then on
            step.skip_rest = step.skip_rest or getattr(_tracing, "formatted", False)
            child = None if step.skip_rest else self._region_child(step, value, env, shapes)
            if child is not None:
                return child
        if self._exact_child(step, value, shapes) is None:
            answers = {i: v for i, v in enumerate(read) if i not in symbolic}
            self._graft(self._traced(before, tuple(symbolic), answers))
        child = self._exact_child(step, value, shapes)
        if child is None:
            raise RuntimeError("a trace again took another path before the same read")
        return child

    def _traced(self, tensors, symbolic, answers):
        """A trace again's graph; PythonWrites where it wrote Python state."""
        graph = self.trace(tensors, symbolic, answers)[0]
        if self.python_writes or _loses_grad_mode(graph, tensors) or _writes_aliases_across_a_cut(graph):
            raise PythonWrites()        # the function runs eagerly from then on
        return graph

    def _graft(self, graph):
        """Add the chain of a new trace to the tree where it leaves it."""
        new = _segments(graph, self.constants)
        values = {here.cut_name: here.cut.value for here in new if here.cut is not None}
        values |= {name: here.cut.value[i] for here in new for name, i in here.cut_items}
        step = self.root
        for here, there in zip(new, new[1:]):
            key = self._region(step, here, there, values)
            if key not in step.children:
                step.children[key] = there
                _repath(step, key, there, here.cut)
                return
            step = step.children[key]

    def _region(self, step, here, there, values):
        """The child key of ``step`` that the new trace's ``here`` ends at (``there`` after it):
        its value's, or the region of its symbol whose guards its values pass, or a new region
        with its guards (the sizes, where ``there`` read them, kept last)."""
        key = next(k for k, c in here.children.items() if c is there)
        if not here.cut.symbolic:
            return key
        same = [k for k in step.regions if k[:2] == key[:2] and k[3:] == key[3:]]
        for k in same:
            if _holds(step.regions[k], values):
                return k
        new = (*key[:2], len(same), *key[3:])
        step.regions[new] = here.regions[key]
        return new

    def _run(self, step, env, eager=False):
        inputs = [env[name] for name in step.inputs]
        if eager and step is not self.root:     # a skipped resume function: its operators, uncompiled
            compiled = step.gm
        else:
            compiled = step.compiled if step is self.root else self._resume(step, inputs)
        outs = compiled(*inputs)
        return outs if isinstance(outs, (tuple, list)) else (outs,)

    def _resume(self, step, inputs):
        """The compiled graph of a later segment whose guards ``inputs`` pass, compiled now if
        none does: a dim of an input whose size changed since the segment's first compile is a
        symbol, and so is a number input (a value read that changed, 0 and 1 too), guarded as
        the graph needs; a number a guard pinned is guarded by its value."""
        entries = self._entries(step).setdefault(step.resume_key, [])
        labels = [n.target for n in step.gm.graph.nodes if n.op == "placeholder"]
        tensors = [t for t in inputs if isinstance(t, Tensor)]
        numbers = {label: v for label, v in zip(labels, inputs, strict=True) if not isinstance(v, Tensor)}
        for guards, compiled, pinned in entries:
            if guards.check(tensors, numbers) is None and all(numbers[n] == v for n, v in pinned.items()):
                return compiled
        dims = [self._changed(step, label, t) for label, t in zip(labels, inputs, strict=True)]
        compiled, traced = self._compile_or_static(step, inputs, dims, bool(numbers))
        vals = [n.meta.get("val") for n in traced.graph.nodes if n.op == "placeholder"][:len(inputs)] \
            if traced is not None else []
        if len(vals) != len(inputs):        # no graph (no operation): every input as it is now
            vals = [_exact(v) if isinstance(v, Tensor) else v for v in inputs]
        symbols = {label: v.node._expr for label, v in zip(labels, vals, strict=True) if is_symbolic(v)}
        pinned = {label: v for label, v in numbers.items() if label not in symbols}
        guards = TensorGuards([n for n in labels if n not in numbers], [v for v in vals if isinstance(v, Tensor)],
                              getattr(traced, "shape_env", None), int_symbols=symbols)
        entries.insert(0, (guards, compiled, pinned))
        return compiled

    def _entries(self, step):
        """Where ``step``'s compiled graphs live: this entry's, for a segment that holds a
        constant tensor (a closure's tensor of this entry, named as another entry's) or that
        writes into a list or dict (Dynamo's resume function guards its length or keys: each
        entry's changed them), else the function's."""
        writes_into = step.replay is not None and any(kind in ("extend", "items", "dict")
                                                      for kind, *_ in step.replay[0].steps)
        if writes_into or any(n.op == "get_attr" for n in step.gm.graph.nodes):
            return self.entries
        return self.shared

    def _changed(self, step, label, value):
        """A tensor input's dims to trace as symbols: those whose size changed since the segment
        was first compiled (None for a number, or no dim)."""
        if not isinstance(value, Tensor):
            return None
        dims = self.resumed.frame_state.update((step.state_path, label), tuple(value.shape))
        return (f"L['{label}']", dims) if dims else None

    def _compile_or_static(self, step, inputs, dims, numbers):
        """``_compile`` with symbols; where the fake run cannot follow them (``repeat(n)`` of a
        number read, a kernel that needs known sizes), with every size and number a constant,
        guarded exactly."""
        if not numbers and not any(dims or ()):
            return self._compile(step, inputs, dims)
        try:
            return self._compile(step, inputs, dims)
        except Exception:  # noqa: BLE001 -- the static graph below is the answer, or raises itself
            return self._compile(step, inputs, None, numbers_symbolic=False)

    def _compile(self, step, inputs, dims=None, numbers_symbolic=True):
        """A segment's graph as the whole function's would be compiled: by AOTAutograd when an
        input requires grad, else traced with fake tensors, functionalized and compiled; the
        dims ``dims`` (per input, as make_fx's ``_dynamic_dims``) traced as symbols. A number
        input (a value read before it) is traced as a symbol. A segment without an operation is no graph
        (Dynamo compiles none either). The compiled graph and the traced one (None for none; for
        a segment without an operation whose dims are symbols, the trace of its inputs alone)."""
        gm = step.gm
        if not any(n.op == "call_function" for n in gm.graph.nodes):
            # no graph; a dim made dynamic is still a symbol of the guards, as Dynamo's frame
            # without a graph is guarded by its automatic dynamic sizes (``2 <= x.size()[0]``)
            shapes_only = any(dims or ()) and make_fx(_named(gm), decomposition_table, tracing_mode="fake",
                                                      _dynamic_dims=dims)(*inputs)
            if _breaks_in_a_subscript(step.cut) or shapes_only and _prints_a_symbolic_size(step, dims):
                # Dynamo's graph before ``x[mask]`` returns the tensors on the stack, and the
                # one before ``print(y.size())`` the symbolic size (its ``sym_size`` call): graphs
                shown = shapes_only or gm
                shown.segment = gm
                self.graphs.append(shown)
            return gm, shapes_only or None
        dims = [(f"L['{name}']", "number") if type(v) in (int, float) and numbers_symbolic else d
                for name, v, d in zip(step.inputs, inputs, dims or [None] * len(inputs), strict=True)]

        def compiler(g):
            return compile_fx(g, self.device)
        if is_grad_enabled() and any(t.requires_grad for t in inputs if isinstance(t, Tensor)):
            compiled = AOTCompiled(_named(gm), inputs, compiler, dims)
            self.graphs.append(compiled.joint)
        else:
            traced = make_fx(_named(gm), decomposition_table, tracing_mode="fake", _fold_constant_reads=False,
                             _dynamic_dims=dims)(*inputs)
            shape_env = traced.shape_env
            traced = functionalize(traced)
            traced.graph.eliminate_dead_code()
            traced.recompile()
            traced.shape_env = shape_env
            compiled = compiler(traced)
            self.graphs.append(traced)
        # the segment as the trace cut it: its nodes know the user's calls (``explain``), as the
        # trace again of the segment's graph does not
        self.graphs[-1].segment = gm
        self.graph_module, self.kernels = self.graphs[-1], compiled.kernels
        return compiled, self.graphs[-1]


def _prints_a_symbolic_size(step, dims):
    """Whether ``step`` ends at a ``print`` of the size of one of its inputs whose dims
    ``dims`` made symbols (``print(y.size())`` once the sizes are dynamic)."""
    if step.cut is None or step.cut.kind != "print":
        return False
    symbolic = {name for name, d in zip(step.inputs, dims or (), strict=False) if d}
    return any(isinstance(a, _SizeOf) and a.name in symbolic for a in tree_leaves(step.cut.value))


def _breaks_in_a_subscript(cut):
    """Whether ``cut`` is an operator whose output size depends on the data that the program
    wrote as a subscript (``x[mask]``). Dynamo breaks at a call (``nonzero()``,
    ``masked_select``) before it, the graph before it holding no call then compiled not at all;
    ``BINARY_SUBSCR`` it gives up inside, after its operands were made graph inputs, and the
    graph before the break returns them (``return (l_m_, l_x_)``): a graph though it has no
    call (``compile_subgraph``: calls or outputs)."""
    if cut is None or cut.kind != "operator" or cut.reason != OPERATOR_BREAK or not cut.site:
        return False
    code, offset = cut.site[0]
    return any(i.offset == offset and i.opname == "BINARY_SUBSCR" for i in dis.get_instructions(code))


def _named(gm):
    """``gm`` as a function whose parameters are its placeholders' names: make_fx names the
    traced graph's inputs after them (``y_1``), as the whole function's graph after its own."""
    def run(*args):
        return gm(*args)
    names = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    run.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    run.__name__ = "forward"
    return run


def _exact(t):
    """A tensor's metadata as guards check it, every size a number."""
    return FakeTensorMode().from_tensor(t)


def _copy(t):
    """A copy of ``t`` with its sizes and strides (a strided view keeps its strides, as ``clone``
    would not), so that a stride the program reads while traced again is the caller's."""
    with no_grad():
        if t.is_contiguous():
            copy = t.clone()
        else:       # the elements the view reaches, copied flat, then viewed as ``t`` views them
            reach = required_storage_elements(tuple(t.shape), t.stride(), 0)
            flat = t.as_strided((reach,), (1,), t.storage_offset()).clone()
            copy = flat.as_strided(t.shape, t.stride(), 0)
    return copy.requires_grad_() if t.requires_grad else copy
