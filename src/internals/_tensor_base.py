"""``torch._C.TensorBase`` and ``torch.Size``: what the layers below the frontend know of a tensor
(``torch/csrc/autograd/python_variable.cpp``, ``torch/csrc/Size.cpp``).

Kernels, factories and autograd make tensors and test ``isinstance(x, TensorBase)``; none of them
imports the frontend ``Tensor`` of ``_tensor.py``, which is built on top of all of them. As in
torch, a new tensor is an instance of the Python class registered at initialisation
(``THPVariableClass``): ``TensorBase._from_impl`` hands out ``internals.Tensor`` objects, and
a subclass's own ``_from_impl`` keeps the subclass.
"""
from .c10.dispatch_key import PYTHON_KEYS

__all__ = ["TensorBase", "Size"]

_tensor_class = None      # the frontend class, set once by internals._initialize()


def _set_tensor_class(cls):
    """Register the Python class new tensors get (torch's ``THPVariableClass``)."""
    global _tensor_class
    _tensor_class = cls


class TensorBase:
    """A handle on a TensorImpl plus its autograd metadata (torch's ``THPVariable`` with its
    ``cdata``; the metadata fields are torch's ``AutogradMeta``). Its operator methods are the
    generated bindings, attached at initialisation."""
    __slots__ = ("_impl", "_base", "__weakref__",
                 "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_grad_accumulator", "_backward_hooks",
                 "_attr_version", "_creation_meta")

    @classmethod
    def _from_impl(cls, impl, base=None):
        """Wrap a TensorImpl (``THPVariable_Wrap``); ``base`` makes the result a view of it."""
        if cls is TensorBase:
            cls = _tensor_class
        if hasattr(cls, "__torch_dispatch__"):     # a subclass that handles its own ops: the Python keys
            impl.key_set = impl.key_set | PYTHON_KEYS
        t = object.__new__(cls)
        t._impl = impl
        t._base = base._base if base is not None and base._base is not None else base
        t._requires_grad = False
        t._grad = t._grad_fn = t._grad_accumulator = t._backward_hooks = t._attr_version = t._creation_meta = None
        t._output_nr = 0
        return t


class Size(tuple):
    """``torch.Size``: a tuple of ints with torch's repr."""

    def __repr__(self):
        return f"internals.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n
