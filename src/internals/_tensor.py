"""The Tensor frontend: Python methods and operators that call the dispatcher.

Mirrors ``torch/_tensor.py`` over the generated ``TensorBase`` methods. A Tensor is a thin
handle on a TensorImpl (sizes, strides, offset, dtype, storage). Its operator methods
(``x.add(y)``, ``x.sum(0)``, ``x + 1``) are generated from ``aten/native_functions.yaml`` into
``_generated/python_variable_methods.py``: each parses its arguments (``_python_arg_parser.py``,
which also makes Python numbers 0-dim "wrapped number" tensors where torch does) and calls the
dispatcher by torch's operator name. Written here by hand, as in torch: metadata, conversions,
indexing, the autograd API and a few dunders.
"""
import numpy as np

from .c10 import scalar_type as st
from .c10.device import as_device
from .c10.local_dispatch_key_set import below_ad_inplace_or_view
from .c10.grad_mode import _state as _grad_mode
from .c10.tensor_impl import TensorImpl, sparse_coo

__all__ = ["Tensor", "Size"]


class Size(tuple):
    """``torch.Size``: a tuple of ints with torch's repr."""

    def __repr__(self):
        return f"internals.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


def wrap_scalar(value):
    """A Python number as a 0-dim CPU tensor marked as a wrapped number (``scalar_to_tensor``).

    Made directly over a NumPy scalar's bytes, not through the dispatcher: wrapping an argument
    is part of the call, not an operator of its own.
    """
    if isinstance(value, Tensor):
        return value
    from .aten.native.tensor_factories import _host_impl
    impl = _host_impl(np.array(value, dtype=st.scalar_dtype(value).numpy_type))
    impl.is_wrapped_number = True
    return Tensor._from_impl(impl)


class _ArrayBase:
    """The base of an array made by ``Tensor.numpy()``: the memory's description and its owner."""

    def __init__(self, interface, tensor):
        self.__array_interface__ = interface
        self.tensor = tensor


class Tensor:
    __slots__ = ("_impl", "_base", "__weakref__",
                 # autograd metadata (torch's AutogradMeta): see the autograd section below
                 "_requires_grad", "grad", "_grad_fn", "_output_nr", "_grad_accumulator", "_backward_hooks",
                 "_attr_version")

    # ------------------------------------------------------------------ construction
    @classmethod
    def _from_impl(cls, impl, base=None):
        if hasattr(cls, "__torch_dispatch__"):     # a subclass that handles its own ops: the Python keys
            from .utils._python_dispatch import PYTHON_KEYS
            impl.key_set = impl.key_set | PYTHON_KEYS
        t = object.__new__(cls)
        t._impl = impl
        t._base = base._base if base is not None and base._base is not None else base
        t._requires_grad = False
        t.grad = t._grad_fn = t._grad_accumulator = t._backward_hooks = t._attr_version = None
        t._output_nr = 0
        return t

    @staticmethod
    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=0, dtype=None, device=None,
                               requires_grad=False, **_):
        """A tensor of class ``cls`` with metadata but no data of its own: its ``__torch_dispatch__``
        works on the tensors it wraps (``torch.Tensor._make_wrapper_subclass``)."""
        from .c10.tensor_impl import TensorImpl, contiguous_strides
        size = tuple(size)
        impl = TensorImpl.without_storage(size, contiguous_strides(size) if strides is None else tuple(strides),
                                          storage_offset, dtype or st.get_default_dtype(), as_device(device))
        t = cls._from_impl(impl)
        t._requires_grad = requires_grad
        return t

    def _empty_like(self, dtype):
        """A kernel's scratch tensor with this one's layout: allocated directly, not dispatched."""
        from .aten.native.tensor_factories import empty_strided, like_strides
        return empty_strided(self.shape, like_strides(self), dtype=dtype, device=self.device)

    def _flat_buffer(self):
        """The typed buffer starting at this (contiguous) tensor's first element."""
        buf = self._impl.storage.typed(self.dtype)
        return buf[self.storage_offset(): self.storage_offset() + self.numel()]

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self):
        return Size(self._impl.sizes)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self._impl.sizes[self._metadata_dim(dim)]

    def stride(self, dim=None):
        if dim is None:
            return self._impl.strides
        return self._impl.strides[self._metadata_dim(dim)]

    def _metadata_dim(self, dim):
        """``dim`` wrapped for size(dim)/stride(dim), which unlike ops accept no dim of a 0-dim tensor."""
        if self.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        from .aten.native.tensor_shape import wrap_dim
        return wrap_dim(dim, self.dim())

    def storage_offset(self):
        return self._impl.storage_offset

    @property
    def dtype(self):
        return self._impl.dtype

    @property
    def device(self):
        return self._impl.device

    @property
    def layout(self):
        return self._impl.layout

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def _version(self):
        return self._impl.version_counter.version

    def dim(self):
        return len(self._impl.sizes)

    ndim = property(dim)

    def numel(self):
        return self._impl.numel()

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        if self.is_sparse:
            raise RuntimeError("nbytes is not defined for sparse tensors.  If you want the size of the constituent "
                               "tensors, add the nbytes of the indices and values.  If you want the size of the  "
                               "equivalent dense tensor, multiply numel() by element_size()")
        return self.numel() * self.dtype.itemsize

    def is_contiguous(self, memory_format=None):
        return self._impl.is_contiguous()

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def untyped_storage(self):
        return self._impl.storage

    def data_ptr(self):
        if self.is_sparse:
            raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
        if self.numel() == 0:    # no first element to point at: torch answers nullptr
            return 0
        return self._impl.storage.data_ptr() + self.storage_offset() * self.element_size()

    def _type_name(self):
        """The type string torch's error messages print: the legacy ``torch.FloatTensor`` names,
        and ``CPUBoolType`` style for the dtypes that never had one."""
        name = self.dtype.torch_name
        if name in ("Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"):
            return f"torch.{'cuda.' if self.is_cuda else ''}{name}Tensor"
        return f"{'CUDA' if self.is_cuda else 'CPU'}{name}Type"

    # ------------------------------------------------------------------ conversion
    def numpy(self):
        """A NumPy array sharing this tensor's memory (CPU only)."""
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                            "copy the tensor to host memory first.")
        if self.is_sparse:
            raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")
        if self.dtype is st.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16")
        np_type = np.float16 if self.dtype is st.float16 else self.dtype.numpy_type
        buf = self._impl.storage._data.view(np.uint8)
        itemsize = self.element_size()
        # An array with no elements gets zero strides, as torch's does.
        strides = [s * itemsize for s in self.stride()] if self.numel() else [0] * self.dim()
        array = np.lib.stride_tricks.as_strided(
            buf[self.storage_offset() * itemsize:].view(np_type) if self.numel() else np.empty(0, np_type),
            shape=self.shape, strides=strides, writeable=True)
        # As in torch, the array's base holds the tensor: the storage (and the bytes the allocator
        # counts for it) then lives as long as the array does, even after the tensor is deleted.
        # The strides are spelled out: NumPy leaves them out of the interface of any array it counts
        # as C-contiguous, and would then give an empty array its own non-zero strides.
        interface = dict(array.__array_interface__, strides=tuple(strides))
        return np.asarray(_ArrayBase(interface, self))

    def tolist(self):
        return self._host_values().tolist()

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._host_values().reshape(-1)[0].item()

    def _host_values(self):
        t = self.cpu()
        if t.dtype is st.bfloat16:
            t = t.to(st.float32)
        return t.numpy()

    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
        for a in args:
            if isinstance(a, st.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a
        dtype = dtype or self.dtype
        device = as_device(device) if device is not None else self.device
        if self.is_sparse:
            from .aten.native.sparse.sparse_tensor import sparse_to
            return sparse_to(self, dtype, device)
        if dtype is self.dtype and device == self.device and not copy:
            return self
        from .aten.native.tensor_factories import empty_strided, like_strides
        out = empty_strided(self.shape, like_strides(self), dtype=dtype, device=device)   # allocated, not dispatched
        with below_ad_inplace_or_view():   # filling a fresh tensor is not a user's write
            out.copy_(self)
        from .autograd.variable_type_manual import record_to_copy
        return record_to_copy(self, out)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else as_device(device if not isinstance(device, int) else f"cuda:{device}"))

    def to_torch(self):
        from ._interop import to_torch
        return to_torch(self)

    def float(self):
        return self.to(st.float32)

    def double(self):
        return self.to(st.float64)

    def half(self):
        return self.to(st.float16)

    def bfloat16(self):
        return self.to(st.bfloat16)

    def int(self):
        return self.to(st.int32)

    def long(self):
        return self.to(st.int64)

    def bool(self):
        return self.to(st.bool_)

    def type_as(self, other):
        return self.to(other.dtype)

    # ------------------------------------------------------------------ copies, views and math
    # The operators' methods (add, sum, view, ...) are generated from native_functions.yaml into
    # _generated/python_variable_methods.py and attached below the class. Written here: what is
    # not an operator in internals, and the dunders torch also writes by hand in torch/_tensor.py.
    def contiguous(self, memory_format=None):
        return self if self.is_contiguous() else self.clone(memory_format="contiguous")

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    @property
    def T(self):
        return self.permute(list(reversed(range(self.dim()))))

    @property
    def mT(self):
        if self.dim() == 0:      # torch returns it unchanged (with a deprecation warning)
            return self.transpose(0, 0)
        if self.dim() == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    def expand_as(self, other):
        return self.expand(other.shape)

    def broadcast_to(self, size):
        return self.expand(size)

    def __getitem__(self, index):
        if self._requires_grad and _grad_mode.grad_enabled:
            return _getitem_recorded(self, index)
        from .aten.native.tensor_shape import getitem
        return getitem(self, index)

    def __setitem__(self, index, value):
        self[index].copy_(value if isinstance(value, Tensor) else wrap_scalar(value))

    __hash__ = object.__hash__

    # The reflected operators that are not their operator with the operands swapped
    # (torch/_tensor.py): ``2 - x`` is rsub(x, 2), ``2 ** x`` is pow(2, x).
    def __rsub__(self, other):
        return _torch_functions.rsub(self, other)

    def __rtruediv__(self, other):
        # As torch/_tensor.py's ``__rdiv__``: ``other / x`` is ``x.reciprocal() * other``, two
        # roundings rather than one (float16: reciprocal rounds to float16, then the product).
        return wrap_scalar(1).div(self).mul(other)

    def __rpow__(self, other):
        return _torch_functions.pow(other, self)

    def __invert__(self):
        if self.dtype.is_floating_point:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return self.bitwise_not()

    # math (issue 16): the reflected operators torch/_tensor.py writes out (``2 // x``, ``2 % x``).
    def __rfloordiv__(self, other):
        return wrap_scalar(other).floor_divide(self)

    def __rmod__(self, other):
        return _torch_functions.remainder(other, self)

    def __rlshift__(self, other):
        return _torch_functions.bitwise_left_shift(other, self)

    def __rrshift__(self, other):
        return _torch_functions.bitwise_right_shift(other, self)

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    # ------------------------------------------------------------------ sparse (COO layout)
    # The SparseCPU/SparseCUDA operators of aten/native/sparse (to_sparse, coalesce, indices, ...)
    # are generated methods; ``layout``, ``stride()`` and the rest of the metadata above read the
    # SparseTensorImpl as they read a strided one.
    @property
    def is_sparse(self):
        return self._impl.layout is sparse_coo
    # ------------------------------------------------------------------ end of sparse

    # ------------------------------------------------------------------ autograd
    # torch keeps these in the TensorImpl's AutogradMeta; here they are slots of the Tensor.
    # _requires_grad is also True for non-leaves (set with their grad_fn), so kernels test one slot.
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self._grad_fn is not None and not value:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if value and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if self._grad_fn is None:
            self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        if self._attr_version is not None:
            from .autograd.graph import gradient_edge
            gradient_edge(self)          # a view modified in place gets its grad_fn made anew
        return self._grad_fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    def is_inference(self):
        """Was this tensor made in inference mode? (``TensorImpl::is_inference``: it carries no
        autograd keys; a view has its base's keys, so a view of a normal tensor is normal.)"""
        return self._impl.is_inference()

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def retains_grad(self):
        fn = self._grad_fn
        return fn is not None and bool(fn._retains_grad) and self._output_nr in fn._retains_grad

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a replacement."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is not None:
            return fn._add_tensor_pre_hook(self._output_nr, hook)
        from .autograd.graph import RemovableHandle
        if self._backward_hooks is None:
            self._backward_hooks = []
        self._backward_hooks.append(hook)
        return RemovableHandle(self._backward_hooks, hook)

    def retain_grad(self):
        """Keep this non-leaf's gradient in ``.grad`` (a leaf keeps it anyway)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self.grad_fn
        if fn is None or (fn._retains_grad and self._output_nr in fn._retains_grad):
            return
        import weakref
        ref = weakref.ref(self)

        def retain(grad):
            t = ref()
            if t is not None:
                t.grad = grad.clone() if t.grad is None else t.grad + grad
        if fn._retains_grad is None:
            fn._retains_grad = {}
        fn._retains_grad[self._output_nr] = retain

    def detach(self):
        """The same data, out of the graph: no grad_fn, no requires_grad (``Tensor.detach``).

        It shares the version counter, so autograd still sees in-place writes through it, but
        it is no view: its ``_base`` is None, as torch's.
        """
        return self._alias(self._impl.version_counter)

    def detach_(self):
        if self._attr_version is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                               "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of "
                               "DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, "
                               "please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                               "solution.")
        self._grad_fn, self._requires_grad, self._output_nr = None, False, 0
        return self

    @property
    def data(self):
        """The same storage and geometry with its own version counter, outside autograd's view."""
        return self._alias(None)

    def _alias(self, version_counter):
        impl = self._impl
        alias = TensorImpl(impl.storage, impl.sizes, impl.strides, impl.storage_offset, impl.dtype, version_counter)
        alias.key_set = impl.key_set
        return type(self)._from_impl(alias)

    @data.setter
    def data(self, new):
        self._impl = new._impl


def _getitem_recorded(x, index):
    """Basic indexing as differentiable operators: select for an int, narrow for a slice of step 1,
    as_strided for other steps, unsqueeze for None (torch records SelectBackward0/SliceBackward0)."""
    from .aten.native.tensor_shape import getitem
    out = getitem(x, index)                 # checks the index and gives the result's geometry
    if not isinstance(index, tuple):
        index = (index,)
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    result, d = x, 0
    for i in index:
        if i is Ellipsis:
            d += x.dim() - consumed
        elif i is None:
            result = result.unsqueeze(d)
            d += 1
        elif isinstance(i, slice):
            start, stop, step = slice(i.start, i.stop, i.step).indices(result.shape[d])
            length = max(0, -(-(stop - start) // step))
            if step == 1:
                result = result.narrow(d, start, length)
            else:
                sizes, strides = list(result.shape), list(result.stride())
                sizes[d], strides[d] = length, strides[d] * step
                result = result.as_strided(sizes, strides, result.storage_offset() + start * result.stride(d))
            d += 1
        else:
            result = result.select(d, int(i))
    return result if result is not x else out


def _attach_generated_methods():
    """The generated operator methods and dunders onto Tensor (torch's ``TensorBase`` methods),
    and the aliases and wrappers torch/_tensor.py adds by hand."""
    from ._generated.python_variable_methods import METHODS
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    Tensor.__neg__, Tensor.__abs__ = Tensor.neg, Tensor.abs
    for name in ("__rsub__", "__rtruediv__", "__rpow__", "__rfloordiv__", "__rmod__", "__rlshift__", "__rrshift__"):
        setattr(Tensor, name, type_error_to_not_implemented(getattr(Tensor, name), name))


# Imported last: the parser and the generated bindings import Tensor and wrap_scalar from here.
from ._python_arg_parser import type_error_to_not_implemented  # noqa: E402
from ._generated import python_torch_functions as _torch_functions  # noqa: E402
_attach_generated_methods()
