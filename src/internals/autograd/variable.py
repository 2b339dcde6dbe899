"""``Variable`` (``torch/autograd/variable.py`` over ``torch/csrc/autograd/python_legacy_variable.cpp``):
since the Variable/Tensor merge a Variable *is* a Tensor, and the name is kept for old code.
``Variable._execution_engine`` is the handle Python code uses to reach the backward engine while
it runs, here only for ``queue_callback``."""
import warnings

from .._tensor_base import TensorBase
from ..aten import dispatcher
from .engine import queue_callback


class ImperativeEngine:
    """The engine as Python sees it (``python_engine.cpp``'s ``THPEngine``)."""

    @staticmethod
    def queue_callback(callback):
        """Run ``callback`` after the running backward pass's last node."""
        queue_callback(callback)


class VariableMeta(type):
    """Every tensor is a Variable: ``isinstance(t, Variable)`` asks ``isinstance(t, Tensor)``."""

    def __instancecheck__(cls, other):
        return isinstance(other, TensorBase)


class Variable(metaclass=VariableMeta):
    """``Variable(data, requires_grad=False)``: not a wrapper any more, but ``data.detach()`` (same
    storage and version counter, no history) with ``requires_grad`` set, as the legacy constructor
    ``THPVariable_pynew`` makes it; no argument gives an empty float tensor."""
    _execution_engine = ImperativeEngine()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            data = dispatcher.call("empty.memory_format", (0,))
        elif not isinstance(data, TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            # the constructor's own words (``requires_grad_`` says it in lower case, without complex)
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        # the legacy constructor reads the flag as a C char (``PyArg_ParseTupleAndKeywords``'s "b"):
        # any number is taken, where ``requires_grad_`` takes only a bool
        return data.detach().requires_grad_(bool(requires_grad))
