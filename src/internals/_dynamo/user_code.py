"""Which line of the user's code made a failing call (``torch/_dynamo/symbolic_convert.py``, ``exc.py``).

Dynamo reads the user's bytecode, so when an operation fails on fake tensors it knows the
operation as written -- ``x + y`` is ``<built-in function add>``, ``x.view(7)`` is
``call_method view`` -- and the line it is on, which its message quotes under "from user code".
This compiler traces below Python, at the aten level, so it learns the same two facts another
way: a TorchFunctionMode sees each public call the traced function makes (``Tensor.add``,
``internals.matmul``), and the calling frame's current instruction says whether the user wrote
an operator (``BINARY_OP +``) or a method call. Only a failing call pays for the lookup.
"""
import dis
import operator
import os
import sys
import traceback

from .._tensor import Tensor
from ..fx.experimental.proxy_tensor import current_user_call
from ..overrides import TorchFunctionMode

__all__ = ["CallSites", "UserCalls"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The instruction that ran an operator, by its text in ``dis`` -> the function Dynamo names.
_OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "@": operator.matmul, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "@=": operator.imatmul,
    "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}
_UNARY = {"UNARY_NEGATIVE": operator.neg, "UNARY_INVERT": operator.invert, "UNARY_POSITIVE": operator.pos,
          "BINARY_SUBSCR": operator.getitem, "STORE_SUBSCR": operator.setitem}


class UserCalls(TorchFunctionMode):
    """While a function is traced: a call that raises gets ``user_call`` (the operation as
    Dynamo would name it, with its arguments) and ``user_stack`` (the user's frames, innermost
    last, from the frame running one of ``codes`` -- the compiled function's -- inwards).
    ``tensor_calls`` counts the calls that gave a tensor: each is a node of Dynamo's graph
    (``count_calls`` in ``torch/_dynamo/output_graph.py``), even one the aten trace sees
    nothing of (``F.dropout`` in eval, ``x.contiguous()`` of a contiguous ``x``)."""

    def __init__(self, codes=()):
        super().__init__()
        self.codes, self.tensor_calls = set(codes), 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            result = func(*args, **kwargs)
        except Exception as error:
            if not hasattr(error, "user_call"):
                frames = _user_frames(sys._getframe(), self.codes)
                error.user_call = _describe(func, args, kwargs, frames[-1][0] if frames else None)
                error.user_stack = traceback.StackSummary.from_list([summary for _, summary in frames])
            raise
        if _makes_a_node(func, result):
            self.tensor_calls += 1
        return result


def _makes_a_node(func, result):
    """Whether Dynamo's graph holds a node for a call of ``func`` that gave ``result``: a
    function or method that gives a tensor does; an attribute read (``x.grad``, ``x.shape``:
    a property's getter) is a source Dynamo reads, no node, and so is a call that gives no
    tensor (``x.size()``, ``x.dim()``), whose value Dynamo knows while it traces."""
    return isinstance(result, Tensor) and getattr(func, "__name__", None) != "__get__"


class CallSites(TorchFunctionMode):
    """While ``explain`` runs a function: each call the function's code makes (``codes``: the
    compiled function's) is tagged, while it runs, with its number and the target Dynamo's graph
    would call (an operator for ``x * 2``, the function for ``internals.sin(x)``, None for a
    method, which Dynamo's graph calls as ``call_method``); the tracer copies the tag to the
    operators' nodes (``proxy_tensor.current_user_call``). Calls of this package's own code
    are not tagged."""

    def __init__(self, codes=()):
        super().__init__()
        self.codes, self.count = set(codes), 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        frames = _user_frames(sys._getframe(), self.codes)
        if not frames or frames[0][0].f_code not in self.codes:
            return func(*args, **kwargs)
        self.count += 1
        kind, target = _target(func, args, frames[-1][0])
        before = getattr(current_user_call, "tag", None)
        current_user_call.tag = (self.count, target if kind == "call_function" else None)
        try:
            return func(*args, **kwargs)
        finally:
            current_user_call.tag = before


def _user_frames(frame, codes):
    """(frame, FrameSummary) for each frame outside this package, outermost first, up to the one
    running a code in ``codes`` (only the innermost when none does)."""
    found = []
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
            found.append((frame, _summary(frame)))
            if frame.f_code in codes:
                return found[::-1]
        frame = frame.f_back
    return found[:1]


def _instruction(frame):
    return next((i for i in dis.get_instructions(frame.f_code) if i.offset == frame.f_lasti), None)


def _summary(frame):
    """The frame's current line, with the columns of its current instruction (for the carets)."""
    positions = getattr(_instruction(frame), "positions", None)
    if positions is None or positions.lineno is None:
        return traceback.FrameSummary(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    return traceback.FrameSummary(frame.f_code.co_filename, positions.lineno, frame.f_code.co_name,
                                  end_lineno=positions.end_lineno, colno=positions.col_offset,
                                  end_colno=positions.end_col_offset)


def _describe(func, args, kwargs, frame):
    """``call_function <built-in function add>(*(...), **{})`` for ``x + y``, ``call_method
    view(*(...), **{})`` for ``x.view(7)``, ``call_function <function add ...>`` for
    ``internals.add(x, y)``: the words of Dynamo's ``get_fake_value``."""
    kind, target = _target(func, args, frame)
    shown = target.__name__ if kind == "call_method" else target
    return f"{kind} {shown}(*{tuple(args)!r}, **{kwargs!r})"


def _target(func, args, frame):
    """("call_function", the operator or function) or ("call_method", the method) for a call
    ``frame`` makes: the node Dynamo's graph would hold for it."""
    instruction = _instruction(frame) if frame is not None else None
    target = None
    if instruction is not None and instruction.opname in ("BINARY_OP", "COMPARE_OP"):
        target = _OPERATORS.get(instruction.argrepr)
    elif instruction is not None:
        target = _UNARY.get(instruction.opname)
    if target is not None:
        return "call_function", target
    if args and _is_method(func, args[0]):
        return "call_method", func
    return "call_function", func


def _is_method(func, self):
    """``func`` is the method of ``type(self)`` by that name (``Tensor.view``)."""
    name = getattr(func, "__name__", None)
    return name is not None and getattr(type(self), name, None) is func
