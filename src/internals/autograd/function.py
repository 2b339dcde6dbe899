"""User-defined operations with their own backward (``torch/autograd/function.py``,
``torch/csrc/autograd/python_function.cpp``).

``MyFn.apply(*args)`` runs ``MyFn.forward(ctx, *args)`` with grad recording off and, if a
tensor input requires grad, makes ``ctx`` the outputs' grad_fn: ``ctx`` *is* the backward node,
an instance of ``MyFnBackward``, and the engine calls ``MyFn.backward(ctx, *grads)`` with one
gradient per output, expecting one per input (None where there is none).
"""
from .._tensor_base import TensorBase
from ..aten.native.tensor_factories import zeros
from ..c10.grad_mode import _state as _grad_mode
from .graph import Node, SavedVariable, _meta, collect_next_edges, set_history

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
        result = type(self)._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.needs_input_grad)
        if len(result) > expected and all(g is None for g in result[expected:]):
            result = result[:expected]          # extra results are allowed while they are None
        if len(result) != expected:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(result)})")
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
            outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            _grad_mode.grad_enabled = previous
        if not record:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        differentiable = [isinstance(o, TensorBase) and not any(o is n for n in ctx.non_differentiable) for o in outs]
        # An input returned as it is becomes a new tensor on the same data, which gets the history.
        outs = tuple(type(o)._from_impl(o._impl) if any(o is t for t in inputs) else o for o in outs)
        ctx._tensor_positions = tuple(positions)
        ctx._next_edges = collect_next_edges(*inputs)
        set_history([o if d else None for o, d in zip(outs, differentiable)], ctx)
        ctx._output_info = [_meta(o) if isinstance(o, TensorBase) else None for o in outs]
        ctx._saved = [SavedVariable(t, any(t is o for o in outs)) if t is not None else SavedVariable(None, False)
                      for t in ctx.to_save]
        return outs[0] if single else outs


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
