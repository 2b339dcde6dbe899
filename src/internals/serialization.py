"""``save`` and ``load`` in torch's file format (``torch/serialization.py``), so files cross between
the two libraries in both directions.

A file is an uncompressed zip archive (``archive/`` below; torch names the folder after the file
and accepts any name):

- ``data.pkl``: the object, pickled (protocol 2). A tensor pickles as a call
  ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  OrderedDict())`` and a parameter as ``torch._utils._rebuild_parameter(tensor, requires_grad,
  OrderedDict())``: the pickle names torch's functions, and whoever loads it supplies them.
- A storage is not pickled at all: the pickler's ``persistent_id`` replaces it by a small tuple
  ``("storage", torch.FloatStorage, key, location, numel)`` and its bytes go to ``data/<key>``,
  once per storage. Two views of one storage share the key, so after loading they share memory
  again, each with its own offset and strides. A storage saved by itself is written the same way:
  a ``TypedStorage`` under its legacy class, an ``UntypedStorage`` as
  ``torch.storage.UntypedStorage`` with its bytes counted; either loads as a ``TypedStorage``
  (of uint8 for the untyped one), as torch's ``persistent_load`` makes it.
- ``byteorder`` (``little``), ``version`` (``3``), and the three small records torch 2.x adds.

Saving writes references to torch's globals without importing torch: the pickler below writes
the ``GLOBAL`` opcode for them itself. Loading maps those names to internals' own rebuild
functions, and refuses any other global (as ``torch.load(weights_only=True)`` does).
"""
import codecs
import collections
import contextlib
import io
import os
import pickle
import zipfile

import numpy as np

from . import _tensor
from ._tensor_base import Size
from .c10 import scalar_type as st
from .c10.device import as_device, device
from .c10.storage import UntypedStorage
from .c10.tensor_impl import TensorImpl
from .nn.parameter import Parameter
from .storage import TypedStorage

__all__ = ["save", "load"]

_STORAGE_TYPES = {st.float32: "FloatStorage", st.float64: "DoubleStorage", st.float16: "HalfStorage",
                  st.bfloat16: "BFloat16Storage", st.int64: "LongStorage", st.int32: "IntStorage",
                  st.int16: "ShortStorage", st.int8: "CharStorage", st.uint8: "ByteStorage", st.bool_: "BoolStorage",
                  st.complex64: "ComplexFloatStorage", st.complex128: "ComplexDoubleStorage"}
_DTYPE_OF_STORAGE = {name: dtype for dtype, name in _STORAGE_TYPES.items()}
_PREFIX = "archive"


class _Global:
    """A name in another module, written to the pickle as a ``GLOBAL`` opcode (never called here)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):
        raise TypeError(f"{self.module}.{self.name} is a reference for torch, not callable in internals")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_UNTYPED = _Global("torch.storage", "UntypedStorage")
_ORDERED_DICT = collections.OrderedDict
_SIZE, _DEVICE = _Global("torch", "Size"), _Global("torch", "device")
# The Python globals torch's weights-only unpickler also admits: sets, complex numbers, and bytes
# (protocol 2 writes bytes as _codecs.encode of a latin-1 string).
_SAFE_BUILTINS = {("_codecs", "encode"): codecs.encode}
for _builtins in ("builtins", "__builtin__"):      # protocol 2 names Python 2's module
    _SAFE_BUILTINS.update({(_builtins, "set"): set, (_builtins, "frozenset"): frozenset,
                           (_builtins, "complex"): complex})


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, taught torch's tensors, parameters and storages."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages = {}        # key -> (UntypedStorage), in the order they were met
        self._keys = {}           # id(storage) -> key
        self._dtypes = {}         # data_ptr -> the dtype it was first saved as

    def persistent_id(self, obj):
        if isinstance(obj, UntypedStorage):       # its bytes, as uint8 for the dtype check
            storage, dtype, storage_type = obj, st.uint8, _UNTYPED
        elif isinstance(obj, TypedStorage):
            storage, dtype, storage_type = obj._untyped_storage, obj.dtype, _Global("torch", _STORAGE_TYPES[obj.dtype])
        else:
            return None
        # storages on the same memory (a slice of another's bytes too) must agree on the dtype
        seen = self._dtypes.setdefault(storage.data_ptr(), dtype)
        if seen is not dtype and storage.data_ptr():       # as torch's persistent_id
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        key = self._keys.setdefault(id(storage), str(len(self._keys)))
        self.storages[key] = storage
        location = str(storage.device) if storage.device.type == "cuda" else "cpu"
        return ("storage", storage_type, key, location, storage.nbytes() // dtype.itemsize)

    def save_global_ref(self, obj, name=None):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = save_global_ref

    def save_tensor(self, obj):
        if obj.is_sparse:
            raise NotImplementedError("internals.save writes strided tensors only")
        if isinstance(obj, Parameter):
            data = obj.detach()
            return self.save_reduce(_REBUILD_PARAMETER, (data, obj.requires_grad, _ORDERED_DICT()), obj=obj)
        impl = obj._impl
        storage = TypedStorage(wrap_storage=impl.storage, dtype=obj.dtype, _internal=True)
        args = (storage, impl.storage_offset, tuple(obj.shape), tuple(obj.stride()),
                obj.requires_grad, _ORDERED_DICT())
        self.save_reduce(_REBUILD_TENSOR, args, obj=obj)

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, st.dtype):             # torch.float32 and the like: a global of torch's
            self.write(pickle.GLOBAL + f"torch\n{obj.name}\n".encode())
            return None
        if isinstance(obj, Size):
            return self.save_reduce(_SIZE, (tuple(obj),), obj=obj)
        if isinstance(obj, device):
            return self.save_reduce(_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index), obj=obj)
        if isinstance(obj, _tensor.Tensor):
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            return self.save_tensor(obj)
        return super().save(obj, save_persistent_id)


def _storage_bytes(storage):
    data = storage._data if storage.device.type == "cpu" else storage._data.copy_to_host()
    return data[: storage.nbytes()].view(np.uint8).tobytes()


def save(obj, f):
    """Write ``obj`` (tensors, parameters, and dicts/lists/tuples/numbers of them, as a
    ``state_dict``) to ``f``, a path or a binary file, in torch's zip format."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.fspath(f)) or "."
        if not os.path.isdir(parent):          # torch's writer checks before opening
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    buffer = io.BytesIO()
    pickler = _Pickler(buffer)
    pickler.dump(obj)
    records = [("data.pkl", buffer.getvalue()), (".format_version", b"1"), (".storage_alignment", b"64"),
               ("byteorder", b"little")]
    records += [(f"data/{key}", _storage_bytes(storage)) for key, storage in pickler.storages.items()]
    records += [("version", b"3\n"), (".data/serialization_id", os.urandom(20).hex().encode())]
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in records:
            archive.writestr(f"{_PREFIX}/{name}", data)


# ---------------------------------------------------------------------- load
def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    impl = TensorImpl(storage._untyped_storage, tuple(size), tuple(stride), storage_offset, storage.dtype)
    t = _tensor.Tensor._from_impl(impl)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, requires_grad)


class _Unpickler(pickle.Unpickler):
    """Reads torch's pickles: its rebuild functions and storage types map to internals'."""

    def __init__(self, file, archive, prefix, map_location):
        super().__init__(file)
        self._archive, self._prefix, self._map_location = archive, prefix, map_location
        self._loaded = {}

    def find_class(self, module, name):
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor_v2
        if module == "torch._utils" and name == "_rebuild_parameter":
            return _rebuild_parameter
        if module == "torch" and name in _DTYPE_OF_STORAGE:
            return _DTYPE_OF_STORAGE[name]
        if module == "torch.storage" and name == "UntypedStorage":
            return st.uint8
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch" and name in st._BY_NAME:
            return st._BY_NAME[name]
        if module == "torch" and name == "Size":
            return Size
        if module == "torch" and name == "device":
            return device
        if (module, name) in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[(module, name)]
        raise pickle.UnpicklingError(f"internals.load: unsupported global {module}.{name} (only tensors, parameters "
                                     "and plain containers are loaded)")

    def persistent_load(self, pid):
        kind, dtype, key, location, numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"internals.load: unknown persistent id {kind!r}")
        if key not in self._loaded:
            raw = np.frombuffer(self._archive.read(f"{self._prefix}data/{key}"), np.uint8).copy()
            self._loaded[key] = self._restore(UntypedStorage(raw.size, "cpu", data=raw), location)
        return TypedStorage(wrap_storage=self._loaded[key], dtype=dtype, _internal=True)


    def _restore(self, storage, location):
        """The storage where ``map_location`` puts it: a device for all, a dict from saved location
        to new one, or a function of (storage on the CPU, saved location) whose None means 'where
        it was saved' (torch's ``_get_restore_location``)."""
        target = self._map_location
        if callable(target):
            moved = target(storage, location)
            if moved is not None:
                return moved
            target = None
        elif isinstance(target, dict):
            target = target.get(location, location)
        where = as_device(target or location)
        return _to_device(storage, where) if where.type == "cuda" else storage


def _to_device(storage, device):
    from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
    return UntypedStorage(storage.nbytes(), device, data=cuda.to_device(storage._data))


def _refuse_legacy(head):
    """Not a zip archive: torch's legacy reader unpickles a magic number first, with the weights-only
    unpickler, which knows the protocol opcode and little else (internals reads no legacy file)."""
    if head == b"\x80":          # the protocol opcode without its protocol byte
        raise IndexError("index out of range")
    if not head or head == b"\x80\x02":
        raise EOFError("")
    if head[:1] != b"\x80":
        raise pickle.UnpicklingError(
            "Weights only load failed. In PyTorch 2.6, we changed the default value of the `weights_only` argument "
            "in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` "
            "will likely succeed, but it can result in arbitrary code execution. Do it only if you got the file "
            "from a trusted source.\nPlease file an issue with the following so that we can make `weights_only=True` "
            f"compatible with your use case: WeightsUnpickler error: \n\nUnsupported operand {head[0]}\n\nCheck the "
            "documentation of torch.load to learn more about types accepted by default with weights_only "
            "https://pytorch.org/docs/stable/generated/torch.load.html.")
    raise NotImplementedError("internals.load reads the zip format of torch.save only, not the legacy one")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what :func:`save` (or ``torch.save``) wrote. ``map_location``: a device for every
    storage, a dict from saved location to new one, or a function (torch's three forms). Only
    tensors, parameters, plain containers and the few safe globals load (``weights_only``; None is
    torch's default, True). ``mmap`` (map the file instead of reading it) needs a path, as in
    torch; the storages are read into memory either way."""
    if weights_only is False:
        raise NotImplementedError("internals.load reads tensors and containers only (weights_only=True)")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with open(f, "rb") if isinstance(f, (str, os.PathLike)) else contextlib.nullcontext(f) as opened:
        return _load_archive(opened, map_location)


def _load_archive(f, map_location):
    head = f.read(4)
    f.seek(-len(head), io.SEEK_CUR)
    if head != b"PK\x03\x04":
        _refuse_legacy(head)
    try:
        archive = zipfile.ZipFile(f)
    except zipfile.BadZipFile:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: not a ZIP archive. This is an internal "
                           "miniz error. If you are seeing this error, there is a high likelihood that your "
                           "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, "
                           "was transferred incorrectly, or the file was modified after saving.") from None
    with archive:
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl")]
        if len(pickles) != 1:
            raise RuntimeError("internals.load: not a file written by torch.save or internals.save")
        prefix = pickles[0][: -len("data.pkl")]
        unpickler = _Unpickler(io.BytesIO(archive.read(pickles[0])), archive, prefix, map_location)
        return unpickler.load()
