"""TypedStorage: an untyped storage read as elements of one dtype (``torch/storage.py``).

Before PyTorch 2.0 a storage had a dtype (``FloatStorage``, ...). Today the storage is bytes
(``UntypedStorage``, ``c10/core/StorageImpl.h``) and the dtype belongs to the tensor; what
``tensor.storage()`` returns is this thin Python wrapper, kept for old code and deprecated: the
first use in a process warns. It holds the untyped storage and a dtype, nothing else, and reads
an element by making a tensor over the storage (``set_``) and indexing it, as torch's does.
"""
import collections.abc
import copy

from .c10 import scalar_type as st
from .c10.exception import reset_warn_once, warn_once
from .c10.storage import UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]

def _warn_typed_storage_removal(stacklevel=2):
    """Warn once per process, as torch's ``_warn_typed_storage_removal`` does; ``stacklevel``
    counts from the caller of the function that calls this one."""
    warn_once("_warn_typed_storage_removal",
              "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
              "storage class. This should only matter to you if you are using storages directly.  To access "
              "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
              UserWarning, stacklevel=stacklevel + 1)


def _reset_warn_typed_storage_removal():
    """Let the next use warn again (torch has the same hook, for its tests)."""
    reset_warn_once("_warn_typed_storage_removal")


_ARG_ERROR = ("TypedStorage.__init__ received an invalid combination of arguments. Expected one of:\n"
              " * (*, torch.device device, torch.dtype dtype)\n"
              " * (int size, *, torch.device device, torch.dtype dtype)\n"
              " * (Sequence data, *, torch.device device, torch.dtype dtype)\n"
              " * (*, UntypedStorage wrap_storage, torch.dtype dtype)")


def _check_wrapped(args, device, dtype, wrap_storage):
    """``TypedStorage(wrap_storage=..., dtype=...)``'s arguments, checked in torch's order."""
    if args:
        raise RuntimeError(_ARG_ERROR + "\nNo positional arguments should be given when using 'wrap_storage'")
    if dtype is None:
        raise RuntimeError(_ARG_ERROR + "\nArgument 'dtype' must be specified")
    if not isinstance(dtype, st.dtype):
        raise TypeError(_ARG_ERROR + f"\nArgument 'dtype' must be torch.dtype, not {type(dtype)}")
    if device is not None:
        raise RuntimeError(_ARG_ERROR + "\nArgument 'device' should not be specified when 'wrap_storage' is given")
    if not isinstance(wrap_storage, UntypedStorage):
        raise TypeError(_ARG_ERROR + f"\nArgument 'wrap_storage' must be UntypedStorage, but got {type(wrap_storage)}")
    return wrap_storage


class TypedStorage:
    is_sparse = False

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        """``TypedStorage(wrap_storage=s, dtype=d)`` views the bytes of ``s``; ``TypedStorage(n, dtype=d,
        device=...)`` allocates ``n`` elements, ``TypedStorage([1, 2], dtype=d)`` holds those values,
        ``TypedStorage()`` nothing. The checks and messages are torch's."""
        if not _internal:
            _warn_typed_storage_removal()
        if wrap_storage is not None:
            self.dtype, self._untyped_storage = dtype, _check_wrapped(args, device, dtype, wrap_storage)
            return
        self.dtype = st.get_default_dtype() if dtype is None else dtype
        device = "cpu" if device is None else device
        if len(args) > 1:
            raise RuntimeError(_ARG_ERROR + "\nToo many positional arguments")
        if not args:
            self._untyped_storage = UntypedStorage(0, device)
        elif isinstance(args[0], int) and not isinstance(args[0], bool):
            self._untyped_storage = UntypedStorage(args[0] * self.dtype.itemsize, device)
        elif isinstance(args[0], collections.abc.Sequence):
            from . import tensor  # the package loads storage before tensor: a cycle
            self._untyped_storage = tensor(args[0], dtype=self.dtype, device=device).untyped_storage()
        else:
            raise TypeError(_ARG_ERROR + f"\nArgument type not recognized: {type(args[0])}")

    # ------------------------------------------------------------------ size and place
    def _size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self):
        _warn_typed_storage_removal()
        return self._size()

    def __len__(self):
        _warn_typed_storage_removal()
        return self._size()

    def nbytes(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.nbytes()

    def element_size(self):
        _warn_typed_storage_removal()
        return self.dtype.itemsize

    @property
    def device(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device.type == "cuda"

    def data_ptr(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.data_ptr()

    def untyped(self):
        """The UntypedStorage underneath: the same object ``tensor.untyped_storage()`` returns."""
        _warn_typed_storage_removal()
        return self._untyped_storage

    # ------------------------------------------------------------------ elements
    def _as_tensor(self):
        """A 1-d tensor over all of the storage (``torch.tensor([]).set_(self)``, as torch's ``_getitem``)."""
        from . import tensor  # the package loads storage before tensor: a cycle
        return tensor([], dtype=self.dtype, device=self._untyped_storage.device).set_(self)

    def _check_index(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if type(idx) is not int:
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if not -self._size() <= idx < self._size():
            raise IndexError(f"index {idx} out of range for storage of size {self._size()}")

    def __getitem__(self, idx):
        _warn_typed_storage_removal()
        self._check_index(idx)
        return self._as_tensor()[idx].item()

    def __setitem__(self, idx, value):
        _warn_typed_storage_removal()
        self._check_index(idx)
        self._as_tensor()[idx] = value

    def tolist(self):
        _warn_typed_storage_removal()
        return self._as_tensor().tolist()

    def __iter__(self):
        _warn_typed_storage_removal()
        return iter(self.tolist())

    def fill_(self, value):
        _warn_typed_storage_removal()
        self._as_tensor().fill_(value)
        return self

    # ------------------------------------------------------------------ copies and conversions
    def _wrap(self, untyped):
        return TypedStorage(wrap_storage=untyped, dtype=self.dtype, _internal=True)

    def clone(self):
        """A new storage holding a copy of the elements, on the same device."""
        _warn_typed_storage_removal()
        return self._wrap(self._untyped_storage.clone())

    def copy_(self, source, non_blocking=None):
        """The bytes of ``source`` (a TypedStorage or an UntypedStorage of the same size), copied in."""
        _warn_typed_storage_removal()
        source = source._untyped_storage if isinstance(source, TypedStorage) else source
        mine = self._untyped_storage
        if source.nbytes() != mine.nbytes():
            raise RuntimeError(f"size does not match, self was {mine.nbytes()} bytes but src was "
                               f"{source.nbytes()} bytes")
        as_bytes = self._bytes_tensor
        as_bytes(mine).copy_(as_bytes(source))
        return self

    @staticmethod
    def _bytes_tensor(untyped):
        from . import tensor, uint8  # the package imports storage before it defines tensor: a real cycle
        return tensor([], dtype=uint8, device=untyped.device).set_(untyped)

    def to(self, *, device, non_blocking=False):
        """This storage's elements on ``device``: the same bytes when they are there already."""
        _warn_typed_storage_removal()
        return self._as_tensor().to(device)._typed_storage()

    def cpu(self):
        _warn_typed_storage_removal()
        return self.to(device="cpu")

    def cuda(self, device=None, non_blocking=False):
        _warn_typed_storage_removal()
        return self.to(device="cuda" if device is None else device)

    def _to(self, dtype):
        """The elements converted to ``dtype``: always a new storage, even for this dtype (torch's ``_to``)."""
        converted = self._as_tensor().to(dtype)._typed_storage()
        if converted.data_ptr() == self.data_ptr():
            converted = converted.clone()
        return converted

    def resize_(self, size):
        """Grow or shrink to ``size`` elements (returns None, as torch's does)."""
        _warn_typed_storage_removal()
        self._untyped_storage.resize_(size * self.dtype.itemsize)

    def type(self, dtype=None, non_blocking=False):
        """Without a dtype: the legacy class name, ``FloatStorage`` for float32 (torch says ``torch.FloatStorage``)."""
        _warn_typed_storage_removal()
        if dtype is not None:
            raise NotImplementedError("internals: TypedStorage.type(dtype) is not supported; use the "
                                      "conversion methods (double(), int(), ...)")
        return f"internals.{self.pickle_storage_type()}"

    def pickle_storage_type(self):
        return f"{self.dtype.torch_name}Storage"

    def is_pinned(self, device="cuda"):
        return False

    def is_shared(self):
        _warn_typed_storage_removal()
        return self._is_shared()

    def _is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        _warn_typed_storage_removal()
        return self._share_memory_()

    def _share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        """One copy of the bytes per untyped storage, however many typed storages wrap it."""
        return self._wrap(copy.deepcopy(self._untyped_storage, memo))

    def __reduce__(self):
        return _rebuild_typed_storage, (self._untyped_storage, self.dtype)

    def __str__(self):
        _warn_typed_storage_removal()
        info = (f"[{type(self).__module__}.{type(self).__name__}(dtype={self.dtype}, "
                f"device={self._untyped_storage.device}) of size {self._size()}]")
        return " " + "\n ".join(str(v) for v in self._as_tensor().tolist()) + "\n" + info

    __repr__ = __str__


def _conversion(dtype_name):
    def convert(self):
        _warn_typed_storage_removal()
        return self._to(getattr(st, dtype_name))
    convert.__name__ = convert.__qualname__ = _CONVERSIONS[dtype_name]
    convert.__doc__ = f"The elements as {dtype_name}, in a new storage."
    return convert


# torch's legacy conversions: ``storage.double()`` and friends, one per dtype.
_CONVERSIONS = {"float64": "double", "float32": "float", "float16": "half", "bfloat16": "bfloat16",
                "int64": "long", "int32": "int", "int16": "short", "int8": "char", "uint8": "byte", "bool_": "bool",
                "complex64": "complex_float", "complex128": "complex_double"}
for _dtype_name, _method in _CONVERSIONS.items():
    setattr(TypedStorage, _method, _conversion(_dtype_name))


def _rebuild_typed_storage(untyped, dtype):
    return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)
