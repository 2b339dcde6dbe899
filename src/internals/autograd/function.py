"""User-defined operations with their own backward (``torch/autograd/function.py``,
``torch/csrc/autograd/python_function.cpp``).

``MyFn.apply(*args)`` runs ``MyFn.forward(ctx, *args)`` with grad recording off and, if a
tensor input requires grad, makes ``ctx`` the outputs' grad_fn: ``ctx`` *is* the backward node,
an instance of ``MyFnBackward``, and the engine calls ``MyFn.backward(ctx, *grads)`` with one
gradient per output, expecting one per input (None where there is none).
"""
import inspect

from .._tensor_base import TensorBase
from ..aten.native.tensor_factories import zeros
from ..c10.grad_mode import _state as _grad_mode
from .grad_mode import no_grad
from .graph import Node, SavedVariable, _meta, collect_next_edges, set_history
from .variable_type_manual import IN_CUSTOM_FUNCTION, rebase_history

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """What ``forward`` may tell ``backward`` through ``ctx``."""

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def mark_dirty(self, *tensors):
        self.dirty_tensors = tensors

    def set_materialize_grads(self, value):
        """With True (the default), a missing output gradient reaches backward as zeros, not None."""
        if type(value) is not bool:     # torch's binding takes a bool only
            raise TypeError("set_materialize_grads received an invalid combination of arguments - got (), "
                            "but expected (bool)")
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one call of a Function; ``name()`` is ``<Function>Backward``."""
    _forward_cls = None

    def __init__(self):
        Node.__init__(self)
        self.to_save, self.non_differentiable, self.dirty_tensors = (), (), ()
        self.materialize_grads = True
        self._saved = None
        self._tensor_positions = ()

    # A Python class in torch (``torch.autograd.function.MyFnBackward``): object's own repr, with
    # the module name, where the C++ nodes print their bare name (``<AddBackward0 object at ...>``).
    __repr__ = object.__repr__

    @property
    def saved_tensors(self):
        if self._saved is None:      # forward recorded no graph: the tensors are kept as given
            return tuple(self.to_save)
        return tuple(s.unpack(self) for s in self._saved)

    def release_variables(self):
        for s in self._saved or ():
            s.release()

    def apply(self, grads):
        if self.materialize_grads:
            # Every tensor output, differentiable or not, gets zeros (torch's materialize_non_diff_grads).
            grads = [g if g is not None or m is None else zeros(m[0], dtype=m[1], device=m[2])
                     for g, m in zip(grads, self._output_info)]      # (no metadata: not a tensor)
        result = _user_backward(type(self)._forward_cls)(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.needs_input_grad)
        if len(result) > expected and all(g is None for g in result[expected:]):
            result = result[:expected]          # extra results are allowed while they are None
        if len(result) != expected:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(result)})")
        for i, g in enumerate(result):          # ``PyNode::apply``'s checks, in its order
            if g is not None and i not in self._tensor_positions:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
            if g is not None and not isinstance(g, TensorBase):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        return tuple(result[i] for i in self._tensor_positions)


class Function(FunctionCtx):
    """Subclass with ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` static methods; call ``apply``."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,), {"_forward_cls": cls})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Override it (with a ``forward`` that takes no ctx) to fill ``ctx`` after the forward."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = cls._backward_cls()
        positions = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        inputs = [args[i] for i in positions]
        ctx.needs_input_grad = tuple(isinstance(a, TensorBase) and a._requires_grad for a in args)
        record = _grad_mode.grad_enabled and any(t._requires_grad for t in inputs)
        previous = _grad_mode.grad_enabled
        _grad_mode.grad_enabled = False
        try:
            if cls.setup_context is Function.setup_context:
                outputs = cls.forward(ctx, *args, **kwargs)
            else:           # the forward takes no ctx; setup_context gets the inputs with their defaults
                bound = inspect.signature(cls.forward).bind(*args, **kwargs)
                bound.apply_defaults()
                outputs = cls.forward(*bound.args, **bound.kwargs)
                cls.setup_context(ctx, bound.args, outputs)
        finally:
            _grad_mode.grad_enabled = previous
        single = not isinstance(outputs, tuple)
        outs, differentiable = _wrap_outputs(ctx, (outputs,) if single else outputs, inputs, record)
        if record:
            ctx._tensor_positions = tuple(positions)
            ctx._next_edges = collect_next_edges(*inputs)
            set_history([o if d else None for o, d in zip(outs, differentiable)], ctx)
            for o, d in zip(outs, differentiable):
                if d and _among(o, ctx.dirty_tensors) and o._base is not None:
                    rebase_history(o, ctx)      # the view's base gets CopySlices (one output only)
                elif d and o._base is not None:
                    # writing it in place would replace this node's backward by a view's: refused
                    o._creation_meta = IN_CUSTOM_FUNCTION
            ctx._output_info = [_meta(o) if isinstance(o, TensorBase) else None for o in outs]
            ctx._saved = [SavedVariable(t, any(t is o for o in outs)) if t is not None else SavedVariable(None, False)
                          for t in ctx.to_save]
        return outs[0] if single else outs


def _wrap_outputs(ctx, outs, inputs, record):
    """``_wrap_outputs`` (custom_function.cpp), with its checks in its order; the outputs to
    return and which of them get this node as history. An input returned as it is becomes a new
    tensor on the same data (with the history, or else a detached alias); an input modified in
    place (``mark_dirty``) is returned itself, its history rebased onto this node."""
    dirty = _dirty_inputs(ctx)
    differentiable = [record and isinstance(o, TensorBase) and not _among(o, ctx.non_differentiable) for o in outs]
    for o, d in zip(outs, differentiable):
        if d and _among(o, dirty):
            _check_dirty_output(o, len(outs))
    if not all(_among(t, outs) for t in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    if record:
        _check_saved(ctx.to_save)
    outs = tuple(o if not _among(o, inputs) or (_among(o, dirty) and (d or not o._requires_grad))
                 else _view_as_self(o) if d else _alias(o) for o, d in zip(outs, differentiable))
    return outs, differentiable


def _user_backward(fn_cls):
    """``BackwardCFunction._get_user_fn``: ``backward``, or ``vjp`` (its other name), not both."""
    if fn_cls.backward is not Function.backward and fn_cls.vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
                           "only implement one of them.")
    return fn_cls.vjp if fn_cls.vjp is not Function.vjp else fn_cls.backward


def _among(t, tensors):
    return any(t is u for u in tensors)


def _check_saved(to_save):
    for i, t in enumerate(to_save):
        if t is not None and not isinstance(t, TensorBase):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                            f"{type(t).__name__}")


def _dirty_inputs(ctx):
    """``_mark_dirty`` and ``_parse_non_differentiable`` (python_function.cpp): every marked object
    is a tensor (torch's message stops at "argument "), and each dirty tensor's version moves."""
    for marked, message in ((ctx.dirty_tensors, "mark_dirty can only accept variables, but argument "),
                            (ctx.non_differentiable, "mark_non_differentiable only accepts variable arguments, "
                                                     "but got ")):
        if not all(isinstance(t, TensorBase) for t in marked):
            raise RuntimeError(message)
    for t in ctx.dirty_tensors:
        t._impl.version_counter.version += 1
    return ctx.dirty_tensors


def _check_dirty_output(t, num_outputs):
    """``_wrap_outputs``' checks of a modified input (custom_function.cpp)."""
    if t._grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    if t._base is not None and num_outputs > 1:
        raise RuntimeError(_DIRTY_VIEW_OF_MANY)


_DIRTY_VIEW_OF_MANY = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return "
    "more than one Tensor. This is not supported by the current autograd engine. You should either make sure "
    "the input is not a view (using .clone() for example) or make your Function only return one Tensor "
    "(potentially splitting it into two Functions: one doing the inplace that returns a single Tensor and a "
    "second one that does the other operations). You can ask on the forum https://discuss.pytorch.org/ if you "
    "need help to do this change.")


def _view_as_self(t):
    """An input returned as it is, with this node for history: ``_view_as_self_with_no_grad``, a
    view of the input (torch's output is a view, and writing it in place is refused)."""
    with no_grad():
        return t.view_as(t)


def _alias(t):
    """An input returned by a forward that records no graph: ``detach()`` if it requires grad,
    else ``_view_as_self_with_no_grad`` (a view whose base is the input)."""
    if t._requires_grad:
        return t.detach()
    with no_grad():
        return t.view_as(t)


def once_differentiable(fn):
    """Mark a backward as not differentiable again: it runs with grad recording off."""
    def wrapped(ctx, *args):
        previous = _grad_mode.grad_enabled
        _grad_mode.grad_enabled = False
        try:
            return fn(ctx, *args)
        finally:
            _grad_mode.grad_enabled = previous
    return wrapped
