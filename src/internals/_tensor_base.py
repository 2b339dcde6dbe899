"""``torch._C.TensorBase`` and ``torch.Size``: what the layers below the frontend know of a tensor
(``torch/csrc/autograd/python_variable.cpp``, ``torch/csrc/Size.cpp``).

Kernels, factories and autograd make tensors and test ``isinstance(x, TensorBase)``; none of them
imports the frontend ``Tensor`` of ``_tensor.py``, which is built on top of all of them. As in
torch, a new tensor is an instance of the Python class registered at initialisation
(``THPVariableClass``): ``TensorBase._from_impl`` hands out ``internals.Tensor`` objects, and
a subclass's own ``_from_impl`` keeps the subclass.
"""
from .c10 import scalar_type as st
from .c10.dispatch_key import PYTHON_KEYS
from .c10.memory_format import channels_last, channels_last_3d, contiguous_format, is_channels_last_contiguous
from .c10.tensor_impl import COMPRESSED_LAYOUTS, sparse_coo, sparse_csr
from .c10.wrap_dim import wrap_dim

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
                 "_post_accumulate_grad_hooks", "_attr_version", "_creation_meta", "_view_fn",
                 "_fw_grads")      # forward AD's tangents, per level; unset until one is given (forward_grad.py)

    @classmethod
    def _from_impl(cls, impl, base=None):
        """Wrap a TensorImpl (``THPVariable_Wrap``); ``base`` makes the result a view of it."""
        if cls is TensorBase:
            cls = _tensor_class
        elif cls is not _tensor_class and hasattr(cls, "__torch_dispatch__"):
            impl.key_set = impl.key_set | PYTHON_KEYS     # a subclass that handles its own ops: the Python keys
        elif base is not None and not getattr(cls, "_mode_wraps_results", False):
            # A view an operator made of a subclass's tensor is a plain Tensor, as torch's C++ wraps
            # every new result; the subclass's __torch_function__ converts it back (as_subclass).
            # A class whose dispatch mode wraps every result itself (FakeTensor) keeps its class.
            cls = _tensor_class
        t = object.__new__(cls)
        t._impl = impl
        t._base = base._base if base is not None and base._base is not None else base
        t._requires_grad = False
        t._grad = t._grad_fn = t._grad_accumulator = t._backward_hooks = t._attr_version = t._creation_meta = None
        t._post_accumulate_grad_hooks = t._view_fn = None
        t._output_nr = 0
        return t

    # ------------------------------------------------------------------ metadata
    # What a kernel reads of a tensor (torch's ``at::TensorBase`` accessors): no operator runs.
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
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def is_meta(self):
        """Metadata with no data behind it (``load(map_location="meta")`` makes such tensors)."""
        return self.device.type == "meta"

    @property
    def _version(self):
        if self.is_inference():
            raise RuntimeError("Inference tensors do not track version counter.")
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
        if self.is_sparse:     # the compressed layouts answer numel() * element_size(), as torch's do
            raise RuntimeError("nbytes is not defined for sparse tensors.  If you want the size of the constituent "
                               "tensors, add the nbytes of the indices and values.  If you want the size of the  "
                               "equivalent dense tensor, multiply numel() by element_size()")
        return self.numel() * self.dtype.itemsize

    def is_contiguous(self, memory_format=contiguous_format):
        """Laid out in ``memory_format`` (``TensorImpl::is_contiguous``; preserve_format reads as contiguous)."""
        if memory_format in (channels_last, channels_last_3d):
            return is_channels_last_contiguous(self._impl.sizes, self._impl.strides, memory_format)
        return self._impl.is_contiguous()

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def is_conj(self):
        """Whether this is a lazy conjugate view (``conj()`` of a complex tensor): its values are
        the conjugates of its storage's (see ``aten/conjugate_fallback.py``)."""
        return self._impl.is_conj()

    def is_neg(self):
        """Whether this is a lazy negative view (``_neg_view``, ``conj().imag``): its values are
        the negatives of its storage's (see ``aten/negate_fallback.py``)."""
        return self._impl.is_neg()

    def untyped_storage(self):
        return self._impl.storage

    def data_ptr(self):
        if self._is_sparse_any():
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

    # ------------------------------------------------------------------ sparse (COO layout)
    # The SparseCPU/SparseCUDA operators of aten/native/sparse (to_sparse, coalesce, indices, ...)
    # are generated methods; ``layout``, ``stride()`` and the rest of the metadata above read the
    # SparseTensorImpl as they read a strided one.
    @property
    def is_sparse(self):
        return self._impl.layout is sparse_coo

    @property
    def is_sparse_csr(self):
        """torch's name, true of the CSR layout only (not CSC, BSR or BSC)."""
        return self._impl.layout is sparse_csr

    def _is_sparse_any(self):
        """COO or one of the compressed layouts: no storage, no strides."""
        return self._impl.layout is sparse_coo or self._impl.layout in COMPRESSED_LAYOUTS

    # ------------------------------------------------------------------ autograd metadata
    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, new):
        """torch's ``THPVariable_set_grad`` checks: a gradient is None or a tensor of the same size,
        dtype and device (an optimizer would otherwise broadcast it, or write another dtype)."""
        if new is not None:
            if not isinstance(new, TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(new).__name__}")
            if new is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if new.dtype is not self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{st.type_meta_name(new.dtype)}' "
                                   f"to a tensor with grad_dtype '{self.dtype.torch_name}'. The gradient must match "
                                   "the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                                   "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. "
                                   "Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
                                   "may break downstream systems that assume they match.")
            if new.device != self.device:
                raise RuntimeError("attempting to assign a gradient to a tensor that has data of a different device")
            if new.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(new.shape)}' to a tensor of size "
                                   f"'{list(self.shape)}'. Please ensure that the gradient and the tensor are the "
                                   "same size")
        self._grad = new


class Size(tuple):
    """``torch.Size``: a tuple of ints with torch's repr."""
    __module__ = "internals"     # the public name, as ``torch.Size.__module__`` is ``torch``

    def __repr__(self):
        return f"internals.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    # Slicing, concatenating and repeating give a Size back, as torch's sequence methods do
    # (``THPSize_as_sequence`` in ``torch/csrc/Size.cpp``); an index gives an int.
    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to internals.Size")
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, times):
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__




def torch_size_text(shape):
    """``shape`` as torch's error messages and warnings print it, ``torch.Size([2, 3])``: they
    print torch's own Size, whose repr names ``torch`` where this package's names ``internals``."""
    return f"torch.Size({list(shape)})"
