"""``Parameter``: a tensor that a Module registers as one of its learnable weights.

Mirrors ``torch/nn/parameter.py``. A Parameter is an ordinary tensor (same storage, sizes,
strides) whose class tells ``Module.__setattr__`` to file it under ``_parameters``, and which
requires grad unless told otherwise.
"""
from .._disable_torch_function import _disabled_torch_function_impl
from .._functional import empty
from .._tensor import Tensor
from ..c10.memory_format import preserve_format
from ..c10.tensor_impl import TensorImpl

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _make_subclass(cls, data, requires_grad):
    """``torch.Tensor._make_subclass``: ``data``'s storage seen as an instance of ``cls``, a leaf
    of its own with no grad_fn (a new TensorImpl over the same storage: it aliases ``data``)."""
    if not isinstance(requires_grad, bool):     # torch's argument parser: a Python bool, not a truth value
        raise TypeError(f"_make_subclass(): argument 'require_grad' (position 3) must be bool, not "
                        f"{type(requires_grad).__name__}")
    impl = data._impl
    alias = TensorImpl(impl.storage, impl.sizes, impl.strides, impl.storage_offset, impl.dtype)
    alias.key_set = impl.key_set
    return Tensor._from_impl.__func__(cls, alias).requires_grad_(requires_grad)


class Parameter(Tensor):
    """``Parameter(data=None, requires_grad=True)``: ``data``'s storage, seen as a leaf parameter."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty((0,))
        dtype = data._impl.dtype
        if requires_grad and not (dtype.is_floating_point or dtype.is_complex):    # _make_subclass's words
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        return _make_subclass(cls, data, requires_grad)

    # No override of its own: a Parameter counts as a plain Tensor for __torch_function__, so no
    # result of an operation on it is converted back to a Parameter.
    __torch_function__ = _disabled_torch_function_impl

    @classmethod
    def _from_impl(cls, impl, base=None):
        # and the results made below the bindings (a view, ``.data``, ``detach()``) are plain
        # Tensors too, as torch's C++ wraps them
        return Tensor._from_impl(impl, base)

    def __deepcopy__(self, memo):
        """torch's: a new Parameter over a clone of the data with the same ``requires_grad``;
        unlike a plain tensor's copy, no ``grad`` and no attributes come along."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(memory_format=preserve_format), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        """Pickled as a Parameter, with its attributes (``torch._utils._rebuild_parameter``, or
        ``_rebuild_parameter_with_state`` when it has some)."""
        return _rebuild_parameter, (self.data, self.requires_grad, self.__dict__)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


def _rebuild_parameter(data, requires_grad, state):
    param = Parameter(data, requires_grad)
    param.__dict__.update(state)
    return param


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` asks whether ``t`` was made by ``Buffer(...)``: the object made is
    a plain Tensor, marked (torch's ``_BufferMeta``)."""

    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """``Buffer(data=None, *, persistent=True)``: a tensor marked to be registered as a buffer when
    assigned to a Module attribute (saved in ``state_dict`` unless ``persistent=False``). What it
    returns is ``data`` detached, a plain Tensor with the marks as attributes."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty((0,))
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

    __torch_function__ = _disabled_torch_function_impl


# ---- parameters and buffers whose shape is not known yet (the lazy modules'): ``torch/nn/parameter.py``
class UninitializedTensorMixin:
    """An empty tensor standing for a parameter or buffer whose shape the module learns at its
    first call. Until ``materialize(shape)`` gives it data (and turns it into ``cls_to_become``),
    it refuses its shape and every function but the few that move or convert it."""

    _allowed_methods = [Tensor.__hash__, Tensor.size, Tensor.copy_, Tensor.is_complex, Tensor.is_floating_point,
                        Tensor.half, Tensor.float, Tensor.double, Tensor.char, Tensor.short, Tensor.int, Tensor.long,
                        Tensor.cuda, Tensor.cpu, Tensor.to]

    def materialize(self, shape, device=None, dtype=None):
        """Data of ``shape`` (uninitialised memory, as ``empty``), on this tensor's device and of
        its dtype unless told otherwise; the object becomes a plain Parameter or Tensor."""
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in cls._allowed_methods or func.__class__.__name__ == "method-wrapper":
            if func in cls._allowed_methods:
                # the kernels read ``shape``, which this class refuses (torch's C++ kernels never
                # ask Python for it): they get the same data as a plain tensor
                args = tuple(_plain(a) if isinstance(a, UninitializedTensorMixin) else a for a in args)
            # the next class's override: a Parameter's converts nothing (a plain result), a
            # buffer's, Tensor's, makes the result an uninitialized buffer, as torch's do
            override = super().__torch_function__
            if override is _disabled_torch_function_impl:
                return override(func, types, args, kwargs or {})
            return override.__func__(cls, func, types, args, kwargs or {})
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {func}. This error happens when you are using a "
            f"`LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` objects. When using "
            "LazyModules Call `forward` with a dummy batch to initialize the parameters before calling torch "
            "functions")


def _plain(t):
    """An uninitialized tensor's data as a plain Tensor over the same TensorImpl (not a leaf of
    autograd's: conversions of it run under ``no_grad`` in ``Module._apply``)."""
    return Tensor._from_impl(t._impl)


def is_lazy(param):
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of a lazy module before its first call (``LazyLinear``'s weight)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _make_subclass(cls, empty((0,), device=device, dtype=dtype), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module before its first call (``LazyBatchNorm1d``'s running statistics)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        buffer = _make_subclass(cls, empty((0,), device=device, dtype=dtype), requires_grad)
        buffer.persistent = persistent
        buffer._is_buffer = True
        return buffer
