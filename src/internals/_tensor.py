"""The Tensor frontend: Python methods and operators that call the dispatcher.

Mirrors ``torch/_tensor.py`` over the generated ``TensorBase`` methods. A Tensor is a thin
handle on a TensorImpl (sizes, strides, offset, dtype, storage). Its operator methods
(``x.add(y)``, ``x.sum(0)``, ``x + 1``) are generated from ``aten/native_functions.yaml`` into
``_generated/python_variable_methods.py``: each parses its arguments (``_python_arg_parser.py``,
which also makes Python numbers 0-dim "wrapped number" tensors where torch does) and calls the
dispatcher by torch's operator name. Written here by hand, as in torch: metadata, conversions,
indexing, the autograd API and a few dunders.
"""
import copy
import warnings
import weakref

import numpy as np

from . import _tensor_indexing
from ._disable_torch_function import (
    DisableTorchFunctionSubclass,
    asking_method,
    asking_property,
    check_has_torch_function,
)
from ._functional import nonzero, norm, unique, unique_consecutive
from ._generated.python_torch_functions import FUNCTIONS as _torch_functions
from ._generated.python_variable_methods import METHODS
from ._interop import to_torch
from ._python_arg_parser import (
    PythonArgParser,
    append_overloaded_arg,
    handle_torch_function_getter,
    handle_torch_function_method,
    handle_torch_function_no_python_arg_parser,
    handle_torch_function_setter,
)
from ._tensor_base import Size, TensorBase
from ._tensor_str import tensor_repr
from .aten import dispatcher
from .aten import python_torch_function_tls as _tf
from .aten.native.sparse.sparse_csr_tensor import sparse_compressed_tensor, sparse_compressed_to
from .aten.native.sparse.sparse_tensor import layout_name, sparse_coo_tensor, sparse_to
from .aten.native.tensor_factories import check_flag_argument, from_numpy, tensor, wrap_scalar
from .aten.native.tensor_shape import alias_impl
from .autograd import backward
from .autograd.grad_mode import is_grad_enabled, no_grad
from .autograd.graph import RemovableHandle, gradient_edge
from .c10 import scalar_type as st
from .c10.device import as_device
from .c10.dispatch_key import PYTHON_KEYS
from .c10.grad_mode import InferenceMode
from .c10.memory_format import (
    contiguous_format,
    preserve_format,
    suggest_memory_format,
)
from .c10.tensor_impl import TensorImpl, VersionCounter, contiguous_strides
from .overrides import handle_torch_function, has_torch_function
from .storage import TypedStorage, _warn_typed_storage_removal
from .utils._python_dispatch import _disable_current_modes, _get_current_dispatch_mode, mode_detach

__all__ = ["Tensor", "Size"]


class _ArrayBase:
    """The base of an array made by ``Tensor.numpy()``: the memory's description and its owner."""

    def __init__(self, interface, tensor):
        self.__array_interface__ = interface
        self.tensor = tensor


_LEGACY_TYPES = {f"{prefix}{d.torch_name}Tensor": (d, device) for d in st.ALL_DTYPES
                 for prefix, device in (("", "cpu"), ("cuda.", "cuda"))}


def _legacy_type(name):
    """``torch.cuda.FloatTensor`` (or ``internals.``...) -> (float32, "cuda"), for ``Tensor.type``."""
    for module in ("internals.", "torch."):
        if name.startswith(module) and name[len(module):] in _LEGACY_TYPES:
            dtype, device = _LEGACY_TYPES[name[len(module):]]
            return device, dtype
    raise ValueError(f"invalid type: '{name}'")


class Tensor(TensorBase):
    """``torch.Tensor``: the frontend class over ``TensorBase`` (its state lives there).

    No ``__slots__``: like torch's Python class, each tensor has a ``__dict__``, so a user's
    attributes (``x.tag = ...``) live on the Python object, which autograd keeps alive while it
    holds the tensor (PyObject preservation); ``deepcopy`` and ``pickle`` carry them."""
    __module__ = "internals"     # ``type(x)`` prints ``<class 'internals.Tensor'>``, as torch's names ``torch``

    # ------------------------------------------------------------------ construction
    def __new__(cls, *args, **kwargs):
        """The legacy constructor (``THPVariable_pynew``): ``Tensor([1, 2])`` copies data into the
        default dtype, ``Tensor(2, 3)`` is uninitialized, ``Tensor()`` has no element; a subclass
        gets an instance of itself."""
        from ._legacy_tensor_types import legacy_new  # it imports this module's names

        t = legacy_new(st.get_default_dtype(), args, kwargs)
        return t if cls is Tensor else cls._from_impl(t._impl)

    @staticmethod
    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=0, dtype=None, device=None,
                               requires_grad=False, **_):
        """A tensor of class ``cls`` with metadata but no data of its own: its ``__torch_dispatch__``
        works on the tensors it wraps (``torch.Tensor._make_wrapper_subclass``)."""
        size = tuple(size)
        impl = TensorImpl.without_storage(size, contiguous_strides(size) if strides is None else tuple(strides),
                                          storage_offset, dtype or st.get_default_dtype(), as_device(device))
        t = cls._from_impl(impl)
        t._requires_grad = requires_grad
        return t

    # ------------------------------------------------------------------ __torch_function__
    # Real torch calls this hook too: to torch an internals tensor is any object with a
    # __torch_function__. Running torch's own function from here would ask again, forever;
    # declining lets torch raise its TypeError ("no implementation found").
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The override every subclass inherits (``torch/_tensor.py``): run ``func`` with subclass
        overrides off, and hand its tensors back as ``cls`` (``_convert``). A class that is not a
        subclass of every overriding type in the call declines: NotImplemented lets the others try."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types) or _is_torchs(func):
            return NotImplemented
        with DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in _DEFAULT_NOWRAP:
                return ret
            return _convert(ret, cls)

    def as_subclass(self, cls):
        """This tensor's data as an instance of ``cls``, a Tensor subclass: an alias (``aten.alias``,
        which autograd records as ``AliasBackward0``), made with dispatch modes off, as
        ``THPVariable_as_subclass`` makes it."""
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a type (got {type(cls).__name__})")
        if not issubclass(cls, Tensor):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        with _disable_current_modes():
            out = dispatcher.call("alias", self)
        out.__class__ = cls         # a new Python object over the alias: nothing else refers to it yet
        if hasattr(cls, "__torch_dispatch__"):
            out._impl.key_set = out._impl.key_set | PYTHON_KEYS
        return out

    grad = property(lambda self: self._grad, TensorBase.grad.fset, doc="The gradient accumulated into a leaf.")

    # ------------------------------------------------------------------ complex parts (views)
    @property
    def real(self):
        return _torch_functions["real"](self)

    @property
    def imag(self):
        return _torch_functions["imag"](self)

    # ------------------------------------------------------------------ storage
    def storage(self):
        """A TypedStorage over ``untyped_storage()`` with this tensor's dtype; deprecated, so the
        first call in a process warns (``torch/_tensor.py``)."""
        _warn_typed_storage_removal(stacklevel=2)
        return self._typed_storage()

    def _typed_storage(self):
        return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)

    def share_memory_(self):
        """Move the storage into shared memory, in place; a no-op when it is there already
        (``torch/_tensor.py``). Views of the storage share it with this tensor."""
        self._typed_storage()._share_memory_()
        return self

    def is_shared(self):
        return self._typed_storage()._is_shared()

    def is_pinned(self):
        """Page-locked host memory, which a GPU can copy from without a staging copy. The CPU
        allocator hands out ordinary pageable memory, so no tensor here is pinned."""
        return False

    def set_(self, *args, **kwargs):
        """Point this tensor at a storage (typed or untyped) or at another tensor's, with an offset,
        sizes and strides; or, with no argument, at a new empty storage. The binding torch writes by
        hand (``THPVariable_set_`` in ``python_variable_methods.cpp``): it checks the dtype of a
        typed storage, or of a tensor given alone, then calls one of the ``set_`` operators."""
        r = _set_parser.parse(args, kwargs)
        if r.idx == 0:
            return dispatcher.call("set_", self)
        if r.idx in (1, 2):
            source = _untyped_for_set(r.value(0), self)
            if r.idx == 1:
                return dispatcher.call("set_.source_Storage", self, source)
            return dispatcher.call("set_.source_Storage_storage_offset", self, source, r.to_int64(1), r.intlist(2),
                                   r.intlist(3))
        source = r.tensor(0)
        if r.idx == 4:     # no dtype check here: the tensor reads the source's bytes as its own dtype
            return dispatcher.call("set_.source_Tensor_storage_offset", self, source, r.to_int64(1), r.intlist(2),
                                   r.intlist(3))
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {st.type_meta_name(source.dtype)} to a tensor of "
                               f"type {st.type_meta_name(self.dtype)}")
        return dispatcher.call("set_.source_Tensor", self, source)

    # ------------------------------------------------------------------ conversion
    def numpy(self, *, force=False):
        """A NumPy array sharing this tensor's memory (CPU only). A tensor that requires grad is
        refused while grad mode is on (the array would let its values change behind autograd's
        back), unless ``force``. torch's ``tensor_to_numpy`` then detaches, an operator a dispatch
        mode sees. The package's own reads of values (``tolist``, printing) use ``_numpy``."""
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                            "copy the tensor to host memory first.")
        if self._is_sparse_any():
            raise TypeError(f"can't convert {layout_name(self.layout)} layout tensor to numpy. "
                            "Use Tensor.to_dense() first.")
        if self.requires_grad and is_grad_enabled() and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.is_conj():      # the array would share the stored values, not the conjugates shown
            raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. "
                               "Use tensor.resolve_conj().numpy() instead.")
        if self.is_neg():
            raise RuntimeError("Can't call numpy() on Tensor that has negative bit set. "
                               "Use tensor.resolve_neg().numpy() instead.")
        array = self._numpy()
        dispatcher.call("detach", self)
        return array

    def _numpy(self):
        if self.dtype is st.bfloat16 or self.dtype is st.complex32 or self.dtype.is_float8:   # NumPy has none
            raise TypeError(f"Got unsupported ScalarType {self.dtype.torch_name}")
        np_type = np.float16 if self.dtype is st.float16 else self.dtype.numpy_type
        buf = self._impl.storage._data.view(np.uint8)
        itemsize = self.element_size()
        # An array with no elements gets zero strides, as torch's does; byte strides are int64 and
        # wrap around as torch's do (a size-1 dim's stride of 2**62 becomes 0).
        strides = [(s * itemsize + 2**63) % 2**64 - 2**63 for s in self.stride()] if self.numel() else [0] * self.dim()
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
        if check_has_torch_function(self):      # torch's C++ tolist and item ask, as its bindings do
            return handle_torch_function_method(self, "tolist")
        return self._host_values().tolist()

    def item(self):
        if check_has_torch_function(self):
            return handle_torch_function_method(self, "item")
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return dispatcher.call("_local_scalar_dense", self)     # the operator torch's item() calls

    def _host_values(self):
        t = self.resolve_conj().cpu()      # the values shown, not the stored ones (torch's _tensor_str)
        if t.is_neg():      # asked only then: a trace of a kernel that reads values stays short
            t = t.resolve_neg()
        if t.dtype is st.bfloat16 or t.dtype.is_float8:     # float32 holds each of their values
            t = t.to(st.float32)
        elif t.dtype is st.complex32:   # complex64 holds each float16 part exactly
            t = t.to(st.complex64)
        return t._numpy()

    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False, memory_format=None):
        flags = [a for a in args if isinstance(a, bool)]      # positional non_blocking, then copy
        if flags:
            non_blocking, copy = (flags + [copy])[:2]
        other = None
        for a in args:
            if isinstance(a, bool):
                continue
            if isinstance(a, st.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                other, dtype, device = a, a.dtype, a.device
            else:
                device = a
        given = _to_copy_options(self, dtype, device, other)
        dtype = dtype or self.dtype
        device = as_device(device) if device is not None else self.device
        if self.is_sparse:
            return sparse_to(self, dtype, device)
        if self._is_sparse_any():
            return sparse_compressed_to(self, dtype, device)
        if dtype is self.dtype and device == self.device and not copy and (
                memory_format in (None, preserve_format)
                or suggest_memory_format(self.shape, self.stride()) is memory_format):
            return self     # torch's to_will_alias
        if non_blocking:
            given["non_blocking"] = True
        if memory_format is not None:
            given["memory_format"] = memory_format
        return dispatcher.call("_to_copy", self, **given)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        device = as_device("cuda" if device is None else device)
        if device.type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        return self.to(device)

    def to_torch(self):
        return to_torch(self)

    def type(self, dtype=None, non_blocking=False):
        """Without a dtype, the legacy type name: ``internals.FloatTensor`` (torch's
        ``torch.FloatTensor``); with a dtype, or such a name, ``to()`` it (``x.type(torch.float)``)."""
        prefix = {"cuda": "cuda.", "meta": "meta."}.get(self.device.type, "")
        if dtype is None:
            return f"internals.{prefix}{self.dtype.torch_name}Tensor"
        if isinstance(dtype, str):
            return self.to(*_legacy_type(dtype), non_blocking=non_blocking)
        if not isinstance(dtype, st.dtype):
            raise TypeError("dtype must be a type, str, or dtype object")
        return self.to(dtype, non_blocking=non_blocking)

    def get_device(self):
        """The device's index: -1 for the CPU and the meta device, which have none."""
        return self.device.index if self.device.type == "cuda" else -1

    def nelement(self):
        return self.numel()

    def ndimension(self):
        return self.dim()

    def is_signed(self):
        return self.dtype.is_signed

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """``tensor(data)`` with this tensor's dtype and device unless given (``new_tensor`` in
        ``tensor_new.cpp``); a tensor as data is copied, with torch's advice to say so."""
        check_flag_argument("new_tensor", "requires_grad", requires_grad)
        if isinstance(data, Tensor):
            warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                          "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                          "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        return tensor(data, dtype=dtype or self.dtype, device=self.device if device is None else device,
                      requires_grad=requires_grad)

    def float(self):
        return self.to(st.float32)

    def double(self):
        return self.to(st.float64)

    def half(self):
        return self.to(st.float16)

    def bfloat16(self):
        return self.to(st.bfloat16)

    def byte(self):
        return self.to(st.uint8)

    def char(self):
        return self.to(st.int8)

    def short(self):
        return self.to(st.int16)

    def int(self):
        return self.to(st.int32)

    def long(self):
        return self.to(st.int64)

    def chalf(self):
        return self.to(st.complex32)      # internals has no complex32 kernels: the copy refuses

    def cfloat(self):
        return self.to(st.complex64)

    def cdouble(self):
        return self.to(st.complex128)

    def bool(self):
        return self.to(st.bool_)

    def type_as(self, other):
        """``self.type(other.type())``: ``other``'s dtype on ``other``'s device (its type name,
        ``torch.meta.DoubleTensor``, names both)."""
        return self.to(device=other.device, dtype=other.dtype)

    # ------------------------------------------------------------------ copies, views and math
    # The operators' methods (add, sum, view, ...) are generated from native_functions.yaml into
    # _generated/python_variable_methods.py and attached below the class. Written here: what is
    # not an operator in internals, and the dunders torch also writes by hand in torch/_tensor.py.
    def contiguous(self, memory_format=contiguous_format):
        """Self if already laid out in ``memory_format``, else a copy that is (``TensorBase::contiguous``)."""
        if self.is_contiguous(memory_format):
            return self
        if memory_format is preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return self.clone(memory_format=memory_format)

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

    def _adjoint(self, name):
        """``_adjoint`` (TensorShape.cpp): the conjugate transpose of the last two dims (a real
        tensor's transpose); a 0-dim tensor is its own (conjugate)."""
        if self.dim() == 1:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
        if self.dim() == 0:
            return self.conj() if self.is_complex() else self
        flipped = self.transpose(-2, -1)
        return flipped.conj() if self.is_complex() else flipped

    def adjoint(self):
        return self._adjoint("adjoint()")

    @property
    def mH(self):
        if self.dim() == 0:
            warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return self._adjoint("mH")

    @property
    def H(self):
        if self.dim() == 0:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        elif self.dim() != 2:
            hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D "
                               f"tensor.{hint}")
        return self._adjoint("H")

    def expand_as(self, other):
        return self.expand(other.shape)

    def split(self, split_size, dim=0):
        """torch/_tensor.py's: an int (a tensor is tried as one) is one size; anything else is a
        list of sizes for ``split_with_sizes``, whose binding refuses what is not one (a float,
        a NumPy integer)."""
        if check_has_torch_function(self):
            return handle_torch_function(Tensor.split, (self,), self, split_size, dim=dim)
        if isinstance(split_size, TensorBase):
            try:
                split_size = int(split_size)
            except ValueError:
                pass
        if isinstance(split_size, int):
            return TensorBase.split(self, split_size, dim)
        return _torch_functions["split_with_sizes"](self, split_size, dim)     # torch._VF.split_with_sizes

    def broadcast_to(self, size):
        return self.expand(size)

    def __getitem__(self, index):
        """Views through the dispatcher (``select.int``, ``slice.Tensor``, ``unsqueeze``) for ints,
        slices and None; tensors, lists and bools go on to ``index.Tensor`` (a copy)."""
        if _tf.tls.mode_enabled or type(self) is not Tensor:
            overloaded = _indexing_overrides(self, index)
            if overloaded is not None:
                return handle_torch_function_no_python_arg_parser(overloaded, (self, index), None, "__getitem__",
                                                                  Tensor.__getitem__, "internals.Tensor")
        return _tensor_indexing.getitem(self, index)

    def __setitem__(self, index, value):
        if _tf.tls.mode_enabled or type(self) is not Tensor or type(value) not in (Tensor, int, float, bool):
            overloaded = _indexing_overrides(self, index, value)
            if overloaded is not None:
                return handle_torch_function_no_python_arg_parser(overloaded, (self, index, value), None,
                                                                  "__setitem__", Tensor.__setitem__,
                                                                  "internals.Tensor")
        _tensor_indexing.setitem(self, index, value)

    __hash__ = object.__hash__

    # The reflected operators that are not their operator with the operands swapped
    # (torch/_tensor.py): ``2 - x`` is rsub(x, 2), ``2 ** x`` is pow(2, x).
    def __rsub__(self, other):
        return _torch_functions["rsub"](self, other)

    def __rtruediv__(self, other):
        # As torch/_tensor.py's ``__rdiv__``: ``other / x`` is ``x.reciprocal() * other``, two
        # roundings rather than one (float16: reciprocal rounds to float16, then the product).
        return self.reciprocal() * other

    def __rpow__(self, other):
        return _torch_functions["pow"](other, self)

    def __invert__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return self.bitwise_not()

    # the reflected operators torch/_tensor.py writes out (``2 // x``, ``2 % x``).
    def __rfloordiv__(self, other):
        return wrap_scalar(other).floor_divide(self)

    def __rmod__(self, other):
        return _torch_functions["remainder"](other, self)

    def __rlshift__(self, other):
        return _torch_functions["bitwise_left_shift"](other, self)

    def __rrshift__(self, other):
        return _torch_functions["bitwise_right_shift"](other, self)

    def __rmatmul__(self, other):
        return _torch_functions["matmul"](other, self)

    def __bool__(self):
        if self.numel() != 1:
            what = "no values" if self.numel() == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        return bool(self._int64_checked(self.item()))

    def __float__(self):
        return float(self._real_item(st.float64))

    def __int__(self):
        return int(self._int64_checked(self._real_item(st.int64)))

    def _int64_checked(self, value):
        """torch reads a uint64 tensor's value as an int64 for ``int()``, ``bool()`` and an index
        (``item<int64_t>()``): one above int64's range overflows there."""
        if self.dtype is st.uint64 and value >= 2**63:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return value

    def __complex__(self):
        return complex(self._python_scalar())

    def _python_scalar(self):
        """``THPVariable_float_scalar`` and its twins: one element, else a ValueError (``item()``
        raises a RuntimeError of its own)."""
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def _real_item(self, dtype):
        """The value as ``Scalar::to<double>`` / ``to<int64_t>`` reads it: a complex one only
        with a zero imaginary part."""
        value = self._python_scalar()
        return st.checked_convert(value, dtype).item() if isinstance(value, complex) else value

    def __index__(self):
        if self.dtype.category > st.INTEGRAL or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._int64_checked(self.item()))

    def __len__(self):
        if check_has_torch_function(self):
            return handle_torch_function(Tensor.__len__, (self,), self)
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self, *, tensor_contents=None):
        if check_has_torch_function(self):
            return handle_torch_function(Tensor.__repr__, (self,), self, tensor_contents=tensor_contents)
        return tensor_repr(self)

    # ------------------------------------------------------------------ Python protocol (torch/_tensor.py)
    def __format__(self, format_spec):
        """A 0-dim tensor formats as its number (``f"{loss:.3f}"``, ``f"{x.grad}"`` -> ``294.0``)."""
        if check_has_torch_function(self):
            return handle_torch_function(Tensor.__format__, (self,), self, format_spec)
        if self.dim() == 0 and type(self) is Tensor:
            return self.detach().item().__format__(format_spec)
        return object.__format__(self, format_spec)

    __array_priority__ = 1000     # NumPy leaves mixed operations to the tensor's operators

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy result computed from a tensor (``np.sin(x)``, ``x + ndarray``) comes back as a tensor;
        a bool array as uint8, as torch's does."""
        if array.dtype == bool:
            array = array.astype("uint8")
        return from_numpy(np.ascontiguousarray(array))

    def _is_view(self):
        return self._base is not None

    # ------------------------------------------------------------------ autograd
    # torch keeps these in the TensorImpl's AutogradMeta; here they are slots of the Tensor.
    # _requires_grad is also True for non-leaves (set with their grad_fn), so kernels test one slot.
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        """``THPVariable_set_requires_grad``: a Python bool (not 1, not NumPy's bool), on a leaf
        only, whichever the value."""
        if not isinstance(value, bool):
            raise RuntimeError("requires_grad must be a bool")
        if self._grad_fn is not None:
            raise RuntimeError(_requires_grad_leaf_error(value))
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype can require gradients")

    def requires_grad_(self, *args, **kwargs):
        """``THPVariable_requires_grad_``: the flag goes through torch's argument parser, which takes
        a bool and nothing else (1, None or a tensor is a TypeError, not a truth value). On a
        computed tensor, True is accepted and changes nothing (it requires grad already)."""
        requires_grad = _requires_grad_parser.parse(args, kwargs).to_bool(0)
        if self._grad_fn is not None and not requires_grad:
            raise RuntimeError(_requires_grad_leaf_error(False))
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require gradients")
        return self

    def _set_requires_grad(self, value, dtype_error):
        """The checks both ways of setting the flag share (each its own words for a dtype without
        gradients), then the flag itself, on a leaf."""
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(dtype_error)
        # the impl's flag, read as C++ reads it: no ``__torch_function__`` (an UninitializedParameter refuses one)
        if value and self._impl.is_inference() and not InferenceMode.is_enabled():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if self._grad_fn is None:
            self._requires_grad = value

    @property
    def grad_fn(self):
        if self._attr_version is not None:
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
        if check_has_torch_function(self):       # torch/_tensor.py asks too: a mode sees backward
            return handle_torch_function(Tensor.backward, (self,), self, gradient=gradient,
                                         retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a replacement."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is not None:
            return fn._add_tensor_pre_hook(self._output_nr, hook)
        if self._backward_hooks is None:
            self._backward_hooks = []
        self._backward_hooks.append(hook)
        return RemovableHandle(self._backward_hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs on a leaf after its ``.grad`` has been accumulated; it returns None."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = []
        self._post_accumulate_grad_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_grad_hooks, hook)

    def retain_grad(self):
        """Keep this non-leaf's gradient in ``.grad`` (a leaf keeps it anyway)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self.grad_fn
        if fn is None or (fn._retains_grad and self._output_nr in fn._retains_grad):
            return
        ref = weakref.ref(self)

        def retain(grad):
            t = ref()
            if t is not None:
                t.grad = grad.clone() if t.grad is None else t.grad + grad
        if fn._retains_grad is None:
            fn._retains_grad = {}
        fn._retains_grad[self._output_nr] = retain

    def detach_(self):
        if self._attr_version is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() function "
                               "in torch/optim/optimizer.py as the solution.")
        self._grad_fn, self._requires_grad, self._output_nr = None, False, 0
        return self

    @property
    def data(self):
        """The same storage and geometry with its own version counter, outside autograd's view
        (``variable_data``: a ``shallow_copy_and_detach``, which a dispatch mode on the stack makes
        through ``aten.detach``; the copy then gets its fresh counter)."""
        impl = self._impl
        if _get_current_dispatch_mode() is not None:
            out = mode_detach(self)
            out._impl.version_counter = VersionCounter()
            return out
        return type(self)._from_impl(alias_impl(self, impl.sizes, impl.strides, None, None, None))

    @data.setter
    def data(self, new):
        if self._requires_grad and not (new.dtype.is_floating_point or new.dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        self._impl = new._impl

    # ------------------------------------------------------------------ copy and pickle (``torch/_tensor.py``)
    def __deepcopy__(self, memo):
        """A leaf with its own copy of the data: views of one storage stay views of one new storage
        (``memo`` maps each storage to its copy), on the same device; requires_grad and grad follow."""
        if id(self) in memo:
            return memo[id(self)]
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.")
        with no_grad():
            if self.is_sparse:
                new = _rebuild_sparse(copy.deepcopy(self._impl.indices, memo), copy.deepcopy(self._impl.values, memo),
                                      self.shape, self._impl.coalesced)
            elif self._is_sparse_any():
                impl = self._impl
                new = _rebuild_compressed(*(copy.deepcopy(t, memo) for t in (impl.compressed_indices,
                                                                              impl.plain_indices, impl.values)),
                                          self.shape, impl.layout)
            elif self._impl.device.type == "meta":      # no bytes to share: a clone, as torch's
                new = type(self)._from_impl(dispatcher.call("clone", self)._impl)
            else:
                impl = self._impl
                new = type(self)._from_impl(TensorImpl(copy.deepcopy(impl.storage, memo), impl.sizes, impl.strides,
                                                       impl.storage_offset, impl.dtype))
            new.requires_grad_(self.requires_grad)
            if self.grad is not None:
                new.grad = copy.deepcopy(self.grad, memo)
        new.__dict__ = copy.deepcopy(self.__dict__, memo)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, protocol):
        """Pickle as torch does: a rebuild function and its arguments, the storage among them (pickled
        once however many tensors share it). Gradients and graph are not pickled; requires_grad is."""
        if self.is_sparse:
            rebuild = _rebuild_sparse, (self._impl.indices, self._impl.values, tuple(self.shape),
                                        self._impl.coalesced)
        elif self._is_sparse_any():
            impl = self._impl
            rebuild = _rebuild_compressed, (impl.compressed_indices, impl.plain_indices, impl.values,
                                            tuple(self.shape), impl.layout)
        elif self._impl.device.type == "meta":      # no storage to carry: only the metadata
            rebuild = _rebuild_meta_tensor_no_storage, (self.dtype, tuple(self.shape), self.stride(),
                                                        self.requires_grad)
        else:
            impl = self._impl
            rebuild = _rebuild_tensor_v2, (impl.storage, impl.storage_offset, impl.sizes, impl.strides,
                                           impl.dtype, self.requires_grad)
        if not self.__dict__:       # torch's fast path: no Python state to carry
            return rebuild
        return _rebuild_with_state, (*rebuild, self.__dict__)


def _untyped_for_set(storage, tensor):
    """The bytes ``set_`` points at: a TypedStorage must have the tensor's dtype."""
    untyped = getattr(storage, "_untyped_storage", None)
    if untyped is None:
        return storage
    if storage.dtype is not tensor.dtype:
        raise RuntimeError(f"Expected a Storage of type {st.type_meta_name(tensor.dtype)} or an UntypedStorage, "
                           f"but got type {storage.dtype.torch_name} for argument 1 'storage'")
    return untyped


_requires_grad_parser = PythonArgParser(["requires_grad_(bool requires_grad=True)"])


def _requires_grad_leaf_error(requires_grad):
    """``requires_grad_leaf_error``: turning the flag off also says how to stop the gradient."""
    message = "you can only change requires_grad flags of leaf variables."
    if not requires_grad:
        message += (" If you want to use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
    return message

_set_parser = PythonArgParser([
    "set_()",
    "set_(Storage source)",
    "set_(Storage source, SymInt storage_offset, SymIntArrayRef size, SymIntArrayRef stride=None)",
    "set_(Tensor source)",
    "set_(Tensor source, SymInt storage_offset, SymIntArrayRef size, SymIntArrayRef stride=None)",
])


def _rebuild_tensor_v2(storage, storage_offset, size, stride, dtype, requires_grad):
    """Unpickle a strided tensor (``torch._utils._rebuild_tensor_v2``, with the dtype given here:
    this package's storages are untyped)."""
    t = Tensor._from_impl(TensorImpl(storage, size, stride, storage_offset, dtype))
    return t.requires_grad_() if requires_grad else t


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """Unpickle a meta tensor (``torch._utils._rebuild_meta_tensor_no_storage``): a fresh one of
    these sizes and strides, at offset 0 of a storage just large enough."""
    return dispatcher.call("empty_strided", size, stride, dtype=dtype, device="meta").requires_grad_(requires_grad)


def _rebuild_with_state(func, args, state):
    """Unpickle a tensor that carried attributes: rebuild it, then give back its ``__dict__``
    (``torch._tensor._rebuild_from_type_v2`` with ``_set_obj_state``)."""
    t = func(*args)
    t.__dict__.update(state)
    return t


def _rebuild_compressed(compressed_indices, plain_indices, values, size, layout):
    """Unpickle a compressed sparse tensor (``torch._utils._rebuild_sparse_tensor``): checked again."""
    return sparse_compressed_tensor(compressed_indices, plain_indices, values, size, layout=layout)


def _rebuild_sparse(indices, values, size, coalesced):
    """Unpickle a sparse COO tensor (``torch._utils._rebuild_sparse_tensor``): checked again."""
    return sparse_coo_tensor(indices, values, size, is_coalesced=coalesced or None)


def _attach_generated_methods():
    """The generated operator methods and dunders onto TensorBase, as torch's are,
    and the aliases and wrappers torch/_tensor.py adds by hand. Called by ``internals._initialize``."""
    for name, fn in METHODS.items():
        setattr(TensorBase, name, fn)
    Tensor.__neg__, Tensor.__abs__ = Tensor.neg, Tensor.abs
    for name in ("__rsub__", "__rpow__", "__rfloordiv__", "__rmod__", "__rlshift__", "__rrshift__", "__rmatmul__",
                 "__floordiv__"):
        setattr(Tensor, name, _handle_and_wrap_type_error(getattr(Tensor, name), name))
    # torch/_tensor.py writes ``__rdiv__`` and makes ``__rtruediv__`` the same function
    Tensor.__rdiv__ = Tensor.__rtruediv__ = _handle_and_wrap_type_error(Tensor.__rtruediv__, "__rdiv__")
    # torch binds ``__invert__`` in C++ by that name: an override sees the dunder
    Tensor.__invert__ = _asking_under_own_name(Tensor.__invert__, "__invert__")
    # torch/_tensor.py wraps the methods themselves: an override sees ``pow`` and ``pow_``
    Tensor.__pow__ = _handle_and_wrap_type_error(Tensor.__pow__, "pow")
    Tensor.__ipow__ = _handle_and_wrap_type_error(Tensor.__ipow__, "pow_")
    Tensor.nonzero = nonzero         # its ``as_tuple`` keyword belongs to the binding, not the operator
    Tensor.norm = _norm              # torch.norm is Python (torch/functional.py), and so is Tensor.norm
    Tensor.unique = _unique          # and so are torch.unique and Tensor.unique
    Tensor.unique_consecutive = _unique_consecutive
    for fn, name in ((_norm, "norm"), (_unique, "unique"), (_unique_consecutive, "unique_consecutive")):
        fn.__name__, fn.__qualname__ = name, f"Tensor.{name}"
    for name in _C_METHODS_WRITTEN_IN_PYTHON:
        setattr(Tensor, name, asking_method(getattr(Tensor, name), name, _ask_method))
    for alias, name in (("ndimension", "dim"), ("nelement", "numel")):   # one C function serves both names
        setattr(Tensor, alias, asking_method(getattr(Tensor, alias), name, _ask_method))


# Methods torch binds in C++ (python_variable_methods.cpp) that internals writes in Python: they
# ask for __torch_function__ first here too. Those torch parses with a PythonArgParser list only
# an overriding self among the types; the others hand self on as the overloaded argument always.
_PARSED_C_METHODS = frozenset({
    "bfloat16", "bool", "byte", "cdouble", "cfloat", "char", "contiguous", "cpu", "double", "float", "half", "int",
    "is_contiguous", "is_pinned", "long", "numpy", "short", "size", "stride", "to", "type", "nonzero"})
_C_METHODS_WRITTEN_IN_PYTHON = (*sorted(_PARSED_C_METHODS), "adjoint", "data_ptr", "dim", "element_size",
                                "is_complex", "is_conj", "is_floating_point", "is_inference", "is_neg", "is_shared",
                                "is_signed", "numel", "storage_offset")


def _ask_method(self, name, args, kwargs):
    """What a C++ method does when ``self`` or a mode overrides: ``Tensor.<name>`` with ``(self, *args)``
    and the keyword arguments (None when there were none) goes to ``__torch_function__``."""
    if name not in _PARSED_C_METHODS:
        return handle_torch_function_method(self, name, args, kwargs)
    overloaded = [self] if check_has_torch_function(self, ignore_mode=True) else []
    return handle_torch_function_no_python_arg_parser(overloaded, (self, *args), kwargs or None, name,
                                                      getattr(Tensor, name), "internals.Tensor")


# The properties whose getter asks for __torch_function__ first, and those whose setter does too:
# torch's C++ getters in python_variable.cpp (THPVariable_get_shape and the rest). internals keeps
# _base, _grad, _grad_fn and the hook lists as plain slots its own code reads, so they do not ask.
_CHECKED_GETTERS = ("T", "mT", "H", "mH", "real", "imag", "shape", "dtype", "device", "layout", "ndim",
                    "itemsize", "nbytes", "is_cpu", "is_cuda", "is_sparse", "is_leaf", "requires_grad",
                    "grad", "grad_fn", "data", "output_nr", "retains_grad", "_version")
_CHECKED_SETTERS = frozenset({"requires_grad", "grad", "data"})


# The checks are core code (_disable_torch_function, as torch's are C++ in python_variable.cpp):
# a kernel reading x.dtype calls down, and only an override or a mode reaches the handlers here.
for _name in _CHECKED_GETTERS:
    setattr(Tensor, _name, asking_property(_name, getattr(Tensor, _name), handle_torch_function_getter,
                                           handle_torch_function_setter if _name in _CHECKED_SETTERS else None))


# The getters whose results Tensor.__torch_function__ hands back unconverted (torch's list).
_DEFAULT_NOWRAP = frozenset({Tensor._base.__get__, Tensor.grad.__get__, Tensor._grad.__get__})


def _indexing_overrides(self, index, value=None):
    """The arguments of ``x[index]`` (or ``x[index] = value``) that override, or None when neither
    they nor a mode ask for ``__torch_function__`` (``handle_torch_function_indexing``)."""
    overloaded = []
    for obj in (self, *(index if isinstance(index, tuple) else (index,)), value):
        if check_has_torch_function(obj, ignore_mode=True):
            append_overloaded_arg(overloaded, obj)
    return overloaded if overloaded or _tf.tls.mode_enabled else None


def _handle_and_wrap_type_error(fn, name):
    """The reflected operators written in torch/_tensor.py: they ask for ``__torch_function__``
    first, with themselves as the function (``2 - x`` reaches a mode as ``Tensor.__rsub__``), and
    turn a TypeError into NotImplemented."""
    def dunder(*args):
        try:
            if has_torch_function(args):
                return handle_torch_function(dunder, args, *args)
            return fn(*args)
        except TypeError:
            return NotImplemented
    dunder.__name__ = name
    dunder.__qualname__ = f"Tensor.{name}"
    dunder.__wrapped__ = fn
    return dunder


def _asking_under_own_name(fn, name):
    """A unary operator that asks for ``__torch_function__`` first as itself (``~x`` reaches a mode
    as ``Tensor.__invert__``, not as the method it calls) and keeps its TypeError."""
    def dunder(self):
        if check_has_torch_function(self):
            return handle_torch_function_method(self, name)
        return fn(self)
    dunder.__name__ = name
    dunder.__qualname__ = f"Tensor.{name}"
    dunder.__wrapped__ = fn
    return dunder


def _is_torchs(func):
    """Whether ``func`` belongs to real torch (a ``torch.*`` function, or a method of its
    ``TensorBase``, whose descriptors carry no module of their own)."""
    owner = getattr(func, "__objclass__", None)
    module = getattr(func, "__module__", None) or getattr(owner, "__module__", None) or ""
    return module == "torch" or module.startswith("torch.")


def _convert(ret, cls):
    """A function's result, its tensors made instances of ``cls`` (``torch._tensor._convert``):
    a tuple or list (a named tuple too) is rebuilt with its items converted."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = (_convert(r, cls) for r in ret)
        # torch's return types are structseqs, built from one iterable; these are namedtuples
        ret = type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


# Tensor.norm, Tensor.unique and Tensor.unique_consecutive are Python in torch/_tensor.py: each
# asks for __torch_function__ under its own name before calling the namespace function.
def _norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    if check_has_torch_function(self):
        return handle_torch_function(Tensor.norm, (self,), self, p=p, dim=dim, keepdim=keepdim, dtype=dtype)
    return norm(self, p, dim, keepdim, dtype=dtype)


def _unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if check_has_torch_function(self):
        return handle_torch_function(Tensor.unique, (self,), self, sorted=sorted, return_inverse=return_inverse,
                                     return_counts=return_counts, dim=dim)
    return unique(self, sorted, return_inverse, return_counts, dim)


def _unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    if check_has_torch_function(self):
        return handle_torch_function(Tensor.unique_consecutive, (self,), self, return_inverse=return_inverse,
                                     return_counts=return_counts, dim=dim)
    return unique_consecutive(self, return_inverse, return_counts, dim)


def _to_copy_options(self, dtype, device, other):
    """The options ``Tensor.to`` hands ``_to_copy``, as torch's ``THPVariable_to`` and its
    ``dispatch_to`` forms pass them (a dispatch mode sees these): a dtype alone, or a device and a
    dtype, or another tensor's dtype and device go as given; a device alone (or neither) as the
    tensor's own options with that device: dtype, layout and device."""
    if other is not None or (dtype is not None and device is not None):
        return {"dtype": dtype, "device": as_device(device)}
    if dtype is not None:
        return {"dtype": dtype}
    return {"dtype": self.dtype, "layout": self.layout,
            "device": as_device(device) if device is not None else self.device}
