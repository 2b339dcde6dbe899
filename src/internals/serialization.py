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
functions, and refuses any other global (as ``torch.load(weights_only=True)`` does), unless
``weights_only=False`` is asked for: then the pickle's other globals are imported, as Python's
unpickler imports them (a whole module, as ``fx``'s ``to_folder`` saves one).

A sparse COO tensor pickles as ``torch._utils._rebuild_sparse_tensor(layout, (indices, values,
size, coalesced))``, a compressed one (CSR, CSC, BSR, BSC) as the same call with ``(compressed
indices, plain indices, values, size)``. Files written on a big-endian machine (``byteorder`` ``big``) are byteswapped
on load, and torch's legacy (pre-zip) format is read too. A damaged or unsafe file fails with the
exception class and message ``torch.load`` gives for the same bytes (``_serialization_errors``),
and no size, stride, offset or sparse index in a file can reach outside the bytes stored for it.
"""
import codecs
import collections
import contextlib
import enum
import io
import os
import pickle
import pickletools
import re
import struct
import sys
import types
import warnings
import zipfile

import numpy as np

from . import _tensor, cuda
from ._serialization_errors import reader_error, record_size_error, refused_global, weights_only_error
from ._tensor_base import Size
from .aten.native.sparse.sparse_csr_tensor import sparse_compressed_tensor
from .c10 import scalar_type as st
from .c10.device import as_device, device
from .c10.generator import Generator
from .c10.storage import UntypedStorage
from .c10.tensor_impl import COMPRESSED_LAYOUTS, NoStorage, TensorImpl, layout, sparse_coo, strided
from .nn.parameter import Parameter
from .storage import TypedStorage

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "LoadEndianness", "get_default_load_endianness",
           "set_default_load_endianness"]

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
_REBUILD_TENSOR_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = _Global("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE = _Global("torch._tensor", "_rebuild_from_type_v2")
_TENSOR_TYPE = _Global("torch", "Tensor")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_REBUILD_META = _Global("torch._utils", "_rebuild_meta_tensor_no_storage")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")
_UNTYPED = _Global("torch.storage", "UntypedStorage")
_ORDERED_DICT = collections.OrderedDict
_SIZE, _DEVICE = _Global("torch", "Size"), _Global("torch", "device")
_GENERATOR = _Global("torch._C", "Generator")
# The Python globals torch's weights-only unpickler also admits: sets, bytearrays, complex numbers, and bytes
# (protocol 2 writes bytes as _codecs.encode of a latin-1 string).
_SAFE_BUILTINS = {("_codecs", "encode"): codecs.encode}
for _builtins in ("builtins", "__builtin__"):      # protocol 2 names Python 2's module
    _SAFE_BUILTINS.update({(_builtins, "set"): set, (_builtins, "bytearray"): bytearray,
                           (_builtins, "complex"): complex})


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, taught torch's tensors, parameters and storages."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol=2):
        super().__init__(file, protocol=protocol)
        self.storages = {}        # key -> (UntypedStorage), in the order they were met
        self._keys = {}           # id(storage) -> key
        self._dtypes = {}         # data_ptr -> the dtype it was first saved as
        self.itemsizes = {}       # key -> the element size its count is given in

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
        self.itemsizes.setdefault(key, dtype.itemsize)     # the first dtype met counts the elements
        location = str(storage.device) if storage.device.type == "cuda" else "cpu"
        return ("storage", storage_type, key, location, storage.nbytes() // dtype.itemsize)

    def save_global_ref(self, obj, name=None):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = save_global_ref

    def save_global(self, obj, name=None):
        """As the base class, but a function or class defined inside a function is refused with
        the AttributeError of the C pickler torch's ``save`` uses (the pure-Python one wraps it
        in a PicklingError)."""
        qualname = name or getattr(obj, "__qualname__", "")
        if "<locals>" in qualname:
            raise AttributeError(f"Can't pickle local object {qualname!r}")
        try:
            return super().save_global(obj, name)
        except pickle.PicklingError as error:
            raise _c_pickler_wording(error, obj, qualname) from None

    dispatch[types.FunctionType] = save_global

    def save_tensor(self, obj):
        """A tensor as torch's ``Tensor.__reduce_ex__`` writes it: the plain rebuild call, or, for a
        subclass or when Python attributes were set on it, that call wrapped in
        ``_rebuild_from_type_v2`` with the class and the attributes as its state (a parameter's
        in ``_rebuild_parameter_with_state``)."""
        state = dict(obj.__dict__)
        if isinstance(obj, Parameter):
            args = (obj.detach(), obj.requires_grad, _ORDERED_DICT())
            if state:
                return self.save_reduce(_REBUILD_PARAMETER_WITH_STATE, (*args, state), obj=obj)
            return self.save_reduce(_REBUILD_PARAMETER, args, obj=obj)
        func, args = self._reduce_tensor(obj)
        if not type(obj).__module__.startswith("internals"):     # a user's subclass: its class by name
            return self.save_reduce(_REBUILD_FROM_TYPE, (func, type(obj), args, state), obj=obj)
        if state:
            return self.save_reduce(_REBUILD_FROM_TYPE, (func, _TENSOR_TYPE, args, state), obj=obj)
        return self.save_reduce(func, args, obj=obj)

    def _reduce_tensor(self, obj):
        """The rebuild function and its arguments (torch's ``Tensor._reduce_ex_internal``)."""
        if obj.is_sparse:       # torch's Tensor._reduce_ex_internal: the two tensors, the size, the flag
            data = (obj._indices(), obj._values(), obj.size(), obj.is_coalesced())
            return _REBUILD_SPARSE, (obj.layout, data)
        if obj.layout in COMPRESSED_LAYOUTS:
            impl = obj._impl
            data = (impl.compressed_indices, impl.plain_indices, impl.values, obj.size())
            return _REBUILD_SPARSE, (obj.layout, data)
        if obj.is_meta:         # no storage at all: dtype, size, stride (torch drops the offset too)
            args = (obj.dtype, tuple(obj.shape), tuple(obj.stride()), obj.requires_grad)
            return _REBUILD_META, args
        impl = obj._impl
        # torch's get_tensor_metadata: the math bits travel beside the stored values
        bits = {name: True for name, on in (("neg", impl.is_neg()), ("conj", impl.is_conj())) if on}
        if obj.dtype is st.complex32 or obj.dtype in st.LIMITED_UNSIGNED or obj.dtype.is_float8:
            # no legacy storage class (complex32, uint16/32/64, float8): the untyped bytes and the dtype (v3)
            args = (impl.storage, impl.storage_offset, tuple(obj.shape), tuple(obj.stride()),
                    obj.requires_grad, _ORDERED_DICT(), obj.dtype)
            return _REBUILD_TENSOR_V3, ((*args, bits) if bits else args)
        storage = TypedStorage(wrap_storage=impl.storage, dtype=obj.dtype, _internal=True)
        args = (storage, impl.storage_offset, tuple(obj.shape), tuple(obj.stride()),
                obj.requires_grad, _ORDERED_DICT())
        return _REBUILD_TENSOR, ((*args, bits) if bits else args)

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, st.dtype):             # torch.float32 and the like: a global of torch's
            self.write(pickle.GLOBAL + f"torch\n{obj.name}\n".encode())
            return None
        if isinstance(obj, Generator):            # under torch's name, so that either library reads it
            return self.save_reduce(_GENERATOR, *obj.__reduce__()[1:], obj=obj)
        if not isinstance(obj, (layout, Size, device, _tensor.Tensor)):
            return super().save(obj, save_persistent_id)
        memo = self.memo.get(id(obj))
        if memo is not None:            # met before: a reference, not a second copy
            self.write(self.get(memo[0]))
            return None
        if isinstance(obj, layout):     # torch pickles a layout as a call naming it (copyreg in serialization.py)
            return self.save_reduce(_GET_LAYOUT, (f"torch.{obj.name}",), obj=obj)
        if isinstance(obj, Size):
            return self.save_reduce(_SIZE, (tuple(obj),), obj=obj)
        if isinstance(obj, device):
            return self.save_reduce(_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index), obj=obj)
        return self.save_tensor(obj)


def _c_pickler_wording(error, obj, qualname):
    """A global that cannot be found again, worded as the C pickler (torch's) words it: the module
    that does not import, or the name that is not in it."""
    found = re.fullmatch(r"Can't pickle .*: it's not found as (.+)", str(error), re.DOTALL)
    if not found:
        return error
    module = pickle.whichmodule(obj, qualname)
    try:
        __import__(module)
    except ImportError:
        return pickle.PicklingError(f"Can't pickle {obj!r}: import of module {module!r} failed")
    return pickle.PicklingError(f"Can't pickle {obj!r}: attribute lookup {qualname} on {module} failed")


class _LegacyPickler(_Pickler):
    """The legacy format's object pickle (torch's ``_legacy_save``): a storage's id carries one
    more field, the slice of a larger storage it once could name; torch writes None (the whole)."""

    def persistent_id(self, obj):
        pid = super().persistent_id(obj)
        return None if pid is None else (*pid, None)


def _legacy_save(obj, f, pickle_protocol):
    """torch's pre-1.6 format, one stream of pickles: magic number, protocol version, system info,
    the object, the sorted storage keys; then each storage as its element count (8 bytes, this
    machine's order) and its raw bytes (``StorageImpl``'s ``_write_file``)."""
    info = {"protocol_version": _LEGACY_PROTOCOL, "little_endian": sys.byteorder == "little",
            "type_sizes": {name: struct.calcsize(code)
                           for name, code in (("short", "=h"), ("int", "=i"), ("long", "=l"))}}
    for head in (_MAGIC, _LEGACY_PROTOCOL, info):
        pickle.dump(head, f, protocol=pickle_protocol)
    pickler = _LegacyPickler(f, pickle_protocol)
    pickler.dump(obj)
    keys = sorted(pickler.storages)
    pickle.dump(keys, f, protocol=pickle_protocol)
    for key in keys:
        data = _storage_bytes(pickler.storages[key])
        f.write((len(data) // pickler.itemsizes[key]).to_bytes(8, sys.byteorder))
        f.write(data)


def _storage_bytes(storage):
    data = storage._data if storage.device.type == "cpu" else storage._data.copy_to_host()
    return data[: storage.nbytes()].view(np.uint8).tobytes()


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write ``obj`` (tensors, parameters, and dicts/lists/tuples/numbers of them, as a
    ``state_dict``) to ``f``, a path or a binary file, in torch's zip format, its data.pkl
    pickled with ``pickle_protocol``; or, with ``_use_new_zipfile_serialization=False``, in
    torch's legacy format."""
    if not _use_new_zipfile_serialization:       # a plain open(): a missing folder is FileNotFoundError
        with open(f, "wb") if isinstance(f, (str, os.PathLike)) else contextlib.nullcontext(f) as out:
            return _legacy_save(obj, out, pickle_protocol)
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.fspath(f)) or "."
        if not os.path.isdir(parent):          # torch's writer checks before opening
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, pickle_protocol)
    pickler.dump(obj)
    records = [("data.pkl", buffer.getvalue()), (".format_version", b"1"), (".storage_alignment", b"64"),
               ("byteorder", b"little")]
    records += [(f"data/{key}", _storage_bytes(storage)) for key, storage in pickler.storages.items()]
    records += [("version", b"3\n"), (".data/serialization_id", os.urandom(20).hex().encode())]
    with _zip_writer(f) as archive:
        for name, data in records:
            archive.writestr(_record(name), data)


def _record(name):
    """A record's zip entry dated as torch's writer dates each (the zero DOS date of 1980), so an
    object saves to the same bytes at any time, but for its serialization id."""
    return zipfile.ZipInfo(f"{_PREFIX}/{name}", date_time=(1980, 0, 0, 0, 0, 0))


def _zip_writer(f):
    """The archive ``save`` fills. A path that cannot be opened for writing (a folder, one without
    permission) fails as torch's file writer fails: a RuntimeError giving the system's reason."""
    try:
        return zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED)
    except OSError as error:
        if not isinstance(f, (str, os.PathLike)) or error.strerror is None:
            raise
        raise RuntimeError("[enforce fail at inline_container.cc:747] . open file failed with strerror: "
                           f"{error.strerror}") from None


# ---------------------------------------------------------------------- load
class _MetaStorage:
    """What a storage loaded onto the meta device rebuilds from: a byte count and a dtype."""

    def __init__(self, untyped, dtype):
        self._untyped_storage, self.dtype = untyped, dtype


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """torch's rebuild of a saved meta tensor: metadata only, at offset 0 of a storage just large
    enough for the view."""
    impl = TensorImpl.without_storage(tuple(size), tuple(stride), 0, dtype, device("meta"))
    t = _tensor.Tensor._from_impl(impl)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    try:
        impl = TensorImpl(storage._untyped_storage, tuple(size), tuple(stride), storage_offset, storage.dtype)
    except RuntimeError as error:    # torch sets the view on a storage it may not grow: that is its complaint
        if "out of bounds for storage" in str(error):
            raise RuntimeError("Trying to resize storage that is not resizable") from None
        raise
    t = _materialize_view_bits(_tensor.Tensor._from_impl(impl), metadata)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _materialize_view_bits(t, metadata):
    """torch saves a conjugate or negative view as its storage plus a bit in ``metadata``
    (``get_tensor_metadata``); the bits are set again (``set_tensor_metadata``)."""
    if metadata and metadata.get("conj"):
        t._impl._set_conj(True)
    if metadata and metadata.get("neg"):
        t._impl._set_neg(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """torch's rebuild of a tensor whose dtype has no legacy storage class (complex32, the wide
    unsigned types, float8): the storage comes as bytes, the dtype beside it."""
    return _rebuild_tensor_v2(TypedStorage(wrap_storage=storage._untyped_storage, dtype=dtype, _internal=True),
                              storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """A parameter with Python attributes set on it (``torch._utils._rebuild_parameter_with_state``)."""
    return _set_obj_state(Parameter(data, requires_grad), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor with Python attributes set on it, or of a subclass (``torch._tensor``): rebuilt by
    ``func``, made ``new_type``, its attributes set again."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    if getattr(new_type, "__setstate__", None) is not None:
        ret.__setstate__(state)
        return ret
    return _set_obj_state(ret, state)


def _set_obj_state(obj, state):
    """``torch._utils._set_obj_state``: a dict of attributes, or a pair (dict, slots)."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for attrs in (dict_state, slots_state):
        for name, value in (attrs or {}).items():
            setattr(obj, name, value)
    return obj


def _get_layout(name):
    """A layout from its printed name, as ``torch.serialization._get_layout`` (a KeyError for others)."""
    return {f"torch.{t.name}": t for t in (strided, sparse_coo, *COMPRESSED_LAYOUTS)}[name]


def _rebuild_sparse_tensor(layout, data):
    """torch's ``_rebuild_sparse_tensor``: COO (older files leave out the coalesced flag) or a
    compressed layout. The indices are checked against the size (torch checks them after
    loading), so no index can reach outside the values."""
    if layout in COMPRESSED_LAYOUTS:
        compressed_indices, plain_indices, values, size = data
        return sparse_compressed_tensor(compressed_indices, plain_indices, values, size, layout=layout,
                                        check_invariants=True)
    if layout is not sparse_coo:
        raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")
    indices, values, size = data[:3]
    coalesced = data[3] if len(data) > 3 else None
    return _tensor.sparse_coo_tensor(indices, values, size, check_invariants=True, is_coalesced=coalesced)


class _Unpickler(pickle.Unpickler):
    """Reads torch's pickles: its rebuild functions and storage types map to internals'."""

    trusted = False         # weights_only=False: other globals are imported (see ``_load_archive``)

    def __init__(self, file, archive, prefix, map_location, swap):
        super().__init__(file)
        self._archive, self._prefix, self._map_location = archive, prefix, map_location
        self._swap = swap          # the file's byte order is not this machine's
        self._loaded = {}

    def find_class(self, module, name):
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor_v2
        if module == "torch._utils" and name == "_rebuild_tensor_v3":
            return _rebuild_tensor_v3
        if module == "torch._utils" and name == "_rebuild_parameter":
            return _rebuild_parameter
        if module == "torch._utils" and name == "_rebuild_parameter_with_state":
            return _rebuild_parameter_with_state
        if module == "torch._tensor" and name == "_rebuild_from_type_v2":
            return _rebuild_from_type_v2
        if (module, name) in (("torch", "Tensor"), ("torch._tensor", "Tensor")):
            return _tensor.Tensor
        if (module, name) in (("torch.nn.parameter", "Parameter"), ("torch.nn", "Parameter")):
            return Parameter
        if module == "torch._utils" and name == "_rebuild_sparse_tensor":
            return _rebuild_sparse_tensor
        if module == "torch._utils" and name == "_rebuild_meta_tensor_no_storage":
            return _rebuild_meta_tensor_no_storage
        if module == "torch.serialization" and name == "_get_layout":
            return _get_layout
        if module == "torch" and name in _DTYPE_OF_STORAGE:
            return _DTYPE_OF_STORAGE[name]
        if module == "torch.storage" and name == "UntypedStorage":
            return st.uint8
        if module == "collections" and name in ("OrderedDict", "Counter"):
            return getattr(collections, name)
        if module == "torch" and name in st._BY_NAME:
            return st._BY_NAME[name]
        if module == "torch" and name == "Size":
            return Size
        if module == "torch" and name == "device":
            return device
        if (module, name) in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[(module, name)]
        allowed = _user_allowed_globals().get(f"{module}.{name}")
        if allowed is not None:
            return allowed
        if self.trusted and module == "torch._C" and name == "Generator":
            return Generator
        if self.trusted:
            return super().find_class(module, name)
        raise _Refused(module, name)

    def persistent_load(self, pid):
        if not self.trusted:
            _check_weights_only_pid(pid)
        if not isinstance(pid, tuple):      # torch's _load checks this before the fields
            raise AssertionError(f"saved_id must be a tuple, got {type(pid).__name__}")
        kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if kind != "storage":
            raise AssertionError(f"Unknown typename for persistent_load, expected 'storage' but got '{kind}'")
        dtype, key, location, numel = pid[1:]
        if key not in self._loaded:
            self._loaded[key] = self._storage(key, dtype, numel, location)
        if isinstance(self._loaded[key], NoStorage):
            return _MetaStorage(self._loaded[key], dtype)
        return TypedStorage(wrap_storage=self._loaded[key], dtype=dtype, _internal=True)

    def _storage(self, key, dtype, numel, location):
        """A storage's bytes from its record, on the device ``map_location`` names; on the meta
        device named as a device none are read (torch's ``_is_meta_location``; a dict is applied
        after reading, as torch applies it)."""
        if isinstance(self._map_location, (str, device)) and _names_meta(self._map_location):
            self._locate(f"data/{key}")         # torch still looks the record up, for its offset
            return NoStorage(device("meta"), numel * dtype.itemsize)
        raw = self._record(f"data/{key}", numel * dtype.itemsize)
        if self._swap:
            raw = _byteswap(raw, dtype)
        return self._restore(UntypedStorage(raw.size, "cpu", data=raw), location)

    def _locate(self, name):
        try:
            return self._archive.getinfo(self._prefix + name)
        except KeyError:
            raise reader_error(f"failed locating file {name}: file not found") from None

    def _record(self, name, nbytes):
        """A storage's bytes, which must be exactly as many as its pickle says (torch's
        ``get_storage_from_record``): fewer would leave the tensor reading past them."""
        data = _record_bytes(self._archive, self._locate(name))
        if len(data) != nbytes:
            raise record_size_error(len(data), nbytes)
        return np.frombuffer(data, np.uint8).copy()

    def _restore(self, storage, location):
        """The storage where ``map_location`` puts it: a device for all, a dict from saved location
        to new one, or a function of (storage on the CPU, saved location) whose None means 'where
        it was saved' (torch's ``_get_restore_location``)."""
        target = self._map_location
        if isinstance(target, dict):
            target = target.get(location, location)
        elif target is not None and not isinstance(target, (str, device)):
            moved = target(storage, location)       # anything else is called, as torch calls it
            if moved is not None and getattr(moved, "device", None) is not None and moved.device.type == "meta":
                # The function moved it to meta (``UntypedStorage(s.nbytes(), device="meta")``): a
                # size and no bytes, as torch's tensors on it have.
                return NoStorage(moved.device, moved.nbytes())
            if moved is not None:
                return moved
            target = None
        where = _restore_device(location if target is None else target)
        if where.type == "meta":        # torch's _meta_deserialize: the bytes read are dropped
            return NoStorage(where, storage.nbytes())
        return _to_device(storage, where) if where.type == "cuda" else storage


def _check_weights_only_pid(pid):
    """torch's weights-only unpickler admits a persistent id only as a tuple naming a storage (or
    an int); anything else is its UnpicklingError, not the AssertionError of the trusted path."""
    if type(pid) is not tuple and type(pid) is not int:
        raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
    kind = pid[0].decode("ascii") if pid and isinstance(pid[0], bytes) else pid[0] if pid else None
    if pid and kind != "storage":
        raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")


def _names_meta(target):
    """torch's ``_is_meta_location``: exactly ``meta`` (``meta:0`` is no location it knows)."""
    return str(target) == "meta"


def _restore_device(target):
    """The device a location names, as torch's deserializers recognise it (``default_restore_location``):
    exactly ``cpu`` or ``meta``, or ``cuda`` followed by ``:`` or a digit (a device string, or the
    device parser's error); anything else (``cpu:0``, ``CPU``, a device object printing as one) is
    torch's restore error."""
    location = str(target)
    if location in ("cpu", "meta") or location == "cuda" or re.match("cuda(:|[0-9]+)", location):
        return as_device(location)
    raise RuntimeError("don't know how to restore data location of torch.storage.UntypedStorage "
                       f"(tagged with {location})")


def _byteswap(raw, dtype):
    """Each element's bytes reversed (torch's ``TypedStorage.byteswap``): a complex number's two
    halves are swapped each in place, not exchanged."""
    width = dtype.itemsize // 2 if dtype.is_complex else dtype.itemsize
    if width == 1 or not raw.size:
        return raw
    return raw.reshape(-1, width)[:, ::-1].reshape(-1).copy()


def _to_device(storage, device):
    from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
    _validate_cuda_device(device)
    return UntypedStorage(storage.nbytes(), device, data=cuda.to_device(storage._data))


def _validate_cuda_device(where):
    """torch's ``_validate_device``: a storage goes to a cuda device that exists, else its
    RuntimeError naming the index and the count (the bytes are never put on a device with
    no allocator behind it)."""
    index, count = where.index or 0, cuda.device_count()
    if index >= count:
        raise RuntimeError(f"Attempting to deserialize object on CUDA device {index} but torch.cuda.device_count() "
                           f"is {count}. Please use torch.load with map_location to map your storages to an "
                           "existing device.")


_MAGIC, _LEGACY_PROTOCOL = 0x1950A86A20F9469CFC6C, 1001     # what a legacy file starts with


# The opcodes torch's weights-only unpickler reads (torch/_weights_only_unpickler.py): pickle's
# protocol 2 set less the ones that build arbitrary objects; a newer protocol's are refused.
_WEIGHTS_ONLY_OPCODES = frozenset(b"c\x81Rbaesu(t\x85\x86\x87N\x89\x88)]}\x8fJKMGXUQhjqr\x8a\x80.")


def _check_legacy_head(head):
    """Not a zip archive: torch reads the legacy format, whose first pickle (a magic number) its
    weights-only unpickler reads. Files too short for that, or opening with an opcode that
    unpickler refuses, fail as they fail there."""
    if head == b"\x80":          # the protocol opcode without its protocol byte
        raise IndexError("index out of range")
    if not head or head == b"\x80\x02":
        raise EOFError("")
    if head[:1] == b"h":         # BINGET from a memo that is still empty
        raise KeyError(head[1]) if len(head) > 1 else IndexError("index out of range")
    if head[:1] != b"\x80":
        raise weights_only_error(f"Unsupported operand {head[0]}")
    if len(head) > 2 and head[2] not in _WEIGHTS_ONLY_OPCODES:    # a protocol 4 FRAME, for one
        raise weights_only_error(f"Unsupported operand {head[2]}")


class _LegacyUnpickler(_Unpickler):
    """The legacy format's object pickle: a storage's id names its root storage, whose bytes follow
    all the pickles, and may name a slice of it (torch's ``_legacy_load``)."""

    def __init__(self, file, map_location, data=None):
        super().__init__(file, None, "", map_location, False)
        self._data, self.wanted = data, {}      # root key -> (dtype, numel), filled on the first pass

    def find_class(self, module, name):
        found = super().find_class(module, name)
        rebuilds = (_rebuild_tensor_v2, _rebuild_parameter, _rebuild_sparse_tensor, _rebuild_meta_tensor_no_storage)
        return (lambda *args: None) if self._data is None and found in rebuilds else found

    def persistent_load(self, pid):
        kind, dtype, key, location, numel, view = pid
        if kind != "storage":
            raise RuntimeError(f"Unknown saved id type: {kind}")
        if self._data is None:                   # first pass: only learn which storages follow
            self.wanted.setdefault(key, (dtype, numel))
            return None
        if key not in self._loaded:
            raw = self._data[key]
            self._loaded[key] = self._restore(UntypedStorage(raw.size, "cpu", data=raw), location)
        storage = TypedStorage(wrap_storage=self._loaded[key], dtype=dtype, _internal=True)
        if view is None:
            return storage
        _, offset, size = view
        if offset < 0 or size < 0 or offset + size > storage.size():
            raise RuntimeError(f"storage view [{offset}, {offset + size}) is outside a storage of {storage.size()}")
        width = dtype.itemsize
        part = self._loaded[key][offset * width: (offset + size) * width]
        return TypedStorage(wrap_storage=part, dtype=dtype, _internal=True)


def _read_exactly(f, n):
    """``n`` bytes of a legacy file, or torch's complaint about how many are missing."""
    data = f.read(n)
    if len(data) < n:
        raise RuntimeError(f"unexpected EOF, expected {n - len(data)} more bytes. The file might be corrupted.")
    return data


class _LegacyReader:
    """The legacy file as one thing to load, so its errors are reworded as the zip format's are."""

    def __init__(self, f, map_location, trusted):
        self.f, self.map_location, self.trusted = f, map_location, trusted

    def load(self):
        return _load_legacy(self.f, self.map_location, self.trusted)


def _load_legacy(f, map_location, trusted):
    """torch's legacy (pre-1.6) format: magic number, protocol, system info, the object, its storage
    keys, then each storage as an element count and raw bytes. Read in two passes, since the
    bytes come after the pickle that refers to them; ``trusted``, both passes import the object's
    other globals (the first builds it without its tensors)."""
    if _LegacyUnpickler(f, None).load() != _MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = _LegacyUnpickler(f, None).load()
    if protocol != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    info = _LegacyUnpickler(f, None).load()
    start = f.tell()
    scan = _LegacyUnpickler(f, None)
    scan.trusted = trusted
    scan.load()
    data = {}
    for key in _LegacyUnpickler(f, None).load():
        if key not in scan.wanted:
            raise AssertionError(f"storage key {key!r} not found in deserialized_objects")
        dtype, numel = scan.wanted[key]
        count = int.from_bytes(_read_exactly(f, 8), "little" if info.get("little_endian", True) else "big")
        raw = np.frombuffer(_read_exactly(f, count * dtype.itemsize), np.uint8).copy()
        if count != numel:
            raise RuntimeError(f"storage {key} holds {count} elements, not the {numel} its pickle says")
        data[key] = raw
    f.seek(start)
    unpickler = _LegacyUnpickler(f, map_location, data)
    unpickler.trusted = trusted
    return unpickler.load()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what :func:`save` (or ``torch.save``) wrote. ``map_location``: a device for every
    storage, a dict from saved location to new one, or a function (torch's three forms). Only
    tensors, parameters, plain containers and the few safe globals load (``weights_only``; None is
    torch's default, True); with ``weights_only=False`` any object does, its classes imported as
    the pickle names them. ``mmap`` (map the file instead of reading it) needs a path, as in
    torch; the storages are read into memory either way."""
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with open(f, "rb") if isinstance(f, (str, os.PathLike)) else contextlib.nullcontext(f) as opened:
        _check_seekable(opened)
        if mmap and not _is_zip(opened):
            name = f"{f}, " if isinstance(f, str) else ""
            raise RuntimeError("mmap can only be used with files saved with `torch.save("
                               f"{name}_use_new_zipfile_serialization=True), please torch.save your checkpoint "
                               "with this option in order to use mmap.")
        _check_pickle_load_args(pickle_load_args, weights_only)
        return _load_archive(opened, map_location, trusted=not weights_only)


def _check_seekable(f):
    """torch's ``_check_seekable``: what cannot seek (bytes, a pipe) fails with its own error,
    worded again with advice when it is about ``seek`` or ``tell``."""
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as error:
        if "seek" in str(error) or "tell" in str(error):
            raise type(error)(f"{error}. You can only torch.load from a file that is seekable. Please pre-load "
                              "the data into a buffer like io.BytesIO and try to load from it instead.") from None
        raise


def _check_pickle_load_args(pickle_load_args, weights_only):
    """torch hands ``pickle_load_args`` to its unpickler: the weights-only one takes only
    ``encoding`` (and warns that the rest is ignored), ``pickle.Unpickler`` its four keywords; any
    other name is the unpickler's TypeError. They are checked, not used: the package's unpickler
    reads the strings and bytes its own ``save`` wrote."""
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=3)
    known = ("encoding",) if weights_only else ("fix_imports", "encoding", "errors", "buffers")
    for name in pickle_load_args:
        if name not in known:
            raise TypeError(f"Unpickler.__init__() got an unexpected keyword argument '{name}'" if weights_only
                            else f"'{name}' is an invalid keyword argument for Unpickler()")



_TRUE_VALUES = ("1", "y", "yes", "true")


def _resolve_weights_only(weights_only, pickle_module):
    """torch.load's choice: weights only unless told otherwise or given a pickle module; the
    environment variables TORCH_FORCE_WEIGHTS_ONLY_LOAD and TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD
    override it (the second only where the call left weights_only unset)."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    force_not = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    if force and force_not:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        weights_only = True
    elif force_not and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    return bool(weights_only)


def _is_zip(f):
    head = f.read(4)
    f.seek(-len(head), io.SEEK_CUR)
    return head == b"PK\x03\x04"


def _load_archive(f, map_location, trusted=False):
    """``trusted`` (``weights_only=False``): any global the pickle names is imported and called,
    as Python's own unpickler does (a whole module saved by ``fx``'s ``to_folder``); only for
    files one trusts, in either format."""
    head = f.read(4)
    f.seek(-len(head), io.SEEK_CUR)
    if head != b"PK\x03\x04":
        if not trusted:
            _check_legacy_head(head)
        return _unpickle(_LegacyReader(f, map_location, trusted))
    with _open_zip(f) as archive:
        names = archive.namelist()
        prefix = names[0].split("/")[0] + "/" if names else ""     # torch names the folder by the first record
        swap = _byteorder(archive, prefix) != sys.byteorder
        try:
            pickled = _read_unchecked(archive, prefix + "data.pkl")
        except KeyError:
            raise reader_error("failed locating file data.pkl: file not found") from None
        if not trusted:
            _refuse_unsupported_opcodes(pickled)
        unpickler = _Unpickler(io.BytesIO(pickled), archive, prefix, map_location, swap)
        unpickler.trusted = trusted
        return _unpickle(unpickler)


def _read_unchecked(archive, name):
    """A record's bytes without zipfile's CRC check: torch reads data.pkl as it is, so damaged
    bytes reach the unpickler and fail there, not as a BadZipFile."""
    return _record_bytes(archive, archive.getinfo(name))


def _record_bytes(archive, info):
    """A record's bytes as torch's zip reader (miniz) takes them: no CRC check, and a stored
    record is found from its local header's lengths, whose copy of the name is not compared with
    the directory's (zipfile's BadZipFile where torch loads). Other damage is zipfile's to report."""
    header = b""
    if info.compress_type == zipfile.ZIP_STORED:
        archive.fp.seek(info.header_offset)
        header = archive.fp.read(30)
    if len(header) == 30 and header[:4] == b"PK\x03\x04":
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        archive.fp.seek(info.header_offset + 30 + name_length + extra_length)
        return archive.fp.read(info.compress_size)
    info.CRC = None               # ZipExtFile skips the check when the expected CRC is None
    with archive.open(info) as record:
        return record.read()


def _refuse_unsupported_opcodes(pickled):
    """torch's weights-only unpickler knows protocol 2's safe opcodes only: a pickle written with
    a newer protocol (its FRAME, 149, comes second) fails at the first opcode it does not know."""
    try:
        for op, _, _ in pickletools.genops(pickled):
            code = op.code.encode("latin-1")[0]
            if code not in _WEIGHTS_ONLY_OPCODES:
                raise weights_only_error(f"Unsupported operand {code}")
    except (ValueError, EOFError):       # damaged: the unpickler reports it in its own words
        return


# ---------------------------------------------------------------------- the user's allow-list
# torch/_weights_only_unpickler.py keeps one set for the process: add_safe_globals grows it, the
# safe_globals context takes its entries out again on leaving, and a weights-only load resolves a
# global its pickle names as ``module.qualname`` (or the name given beside it) from it.
_marked_safe_globals = set()


def add_safe_globals(safe_globals):
    """Let ``load(weights_only=True)`` resolve these globals: classes or functions, or pairs of
    one and the full name the pickle calls it by (``(cls, "old.module.Name")``)."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals.union(set(safe_globals))


def clear_safe_globals():
    global _marked_safe_globals
    _marked_safe_globals = set()


def get_safe_globals():
    return list(_marked_safe_globals)


class safe_globals:
    """``with safe_globals([cls]):`` allows ``cls`` for the loads inside the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc_info):
        global _marked_safe_globals
        _marked_safe_globals = _marked_safe_globals - set(self.safe_globals)


def _user_allowed_globals():
    """The allow-list by the names a pickle uses (torch's ``_get_user_allowed_globals``)."""
    allowed = {}
    for entry in _marked_safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), but got tuple "
                                 f"of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(entry[1])}")
            allowed[entry[1]] = entry[0]
        else:
            allowed[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return allowed


def get_unsafe_globals_in_checkpoint(f):
    """The ``module.name`` of each global in a checkpoint's pickle that a weights-only load would
    refuse, read from its opcodes without running them (torch's function of the same name)."""
    with open(f, "rb") if isinstance(f, (str, os.PathLike)) else contextlib.nullcontext(f) as opened:
        head = opened.read(4)
        opened.seek(-len(head), io.SEEK_CUR)
        if head != b"PK\x03\x04":
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        with _open_zip(opened) as archive:
            names = archive.namelist()
            prefix = names[0].split("/")[0] + "/" if names else ""
            pickled = _read_unchecked(archive, prefix + "data.pkl")
    judge = _Unpickler(io.BytesIO(), None, "", None, False)     # weights-only: refuses what it would not load
    unsafe = set()
    for op, arg, _ in pickletools.genops(pickled):
        if op.code.encode("latin-1")[0] not in _WEIGHTS_ONLY_OPCODES:
            raise pickle.UnpicklingError(f"Unsupported operand {op.code.encode('latin-1')[0]}")
        if op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            try:
                judge.find_class(module, name)
            except _Refused:
                unsafe.add(f"{module}.{name}")
    return list(unsafe)


class _Refused(pickle.UnpicklingError):
    """A global the loader will not resolve (raised inside the unpickler, reworded outside it)."""

    def __init__(self, module, name):
        super().__init__(module, name)
        self.module, self.name = module, name


def _unpickle(unpickler):
    """Run ``unpickler``, its errors re-raised as torch's load re-raises them: with advice on
    weights_only around the unpickler's own words."""
    try:
        return unpickler.load()
    except _Refused as error:
        raise refused_global(error.module, error.name) from None
    except pickle.UnpicklingError as error:
        memo = re.fullmatch(r"Memo value not found at index (\d+)", str(error))
        if memo and not unpickler.trusted:      # torch's weights-only unpickler reads its memo as a dict
            raise KeyError(int(memo.group(1))) from None
        raise weights_only_error(str(error)) from None


def _open_zip(f):
    """The archive, or torch's reader error: a file that starts as a zip but has lost its end lacks
    the central directory; one too short to hold that directory's end is no zip at all."""
    try:
        return zipfile.ZipFile(f)
    except zipfile.BadZipFile:
        f.seek(0, io.SEEK_END)
        short = f.tell() < 22           # the size of the end-of-central-directory record
        raise reader_error("failed reading zip archive: "
                           + ("not a ZIP archive" if short else "failed finding central directory")) from None


class LoadEndianness(enum.Enum):
    """How ``load`` reads a file that has no ``byteorder`` record (written before torch 2.1)."""
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_load_endianness = None       # None: such files are little-endian, as torch's default says


def get_default_load_endianness():
    return _load_endianness


def set_default_load_endianness(endianness):
    global _load_endianness
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _load_endianness = endianness


def _byteorder(archive, prefix):
    """The ``byteorder`` record; an old file without one is read as the default load endianness
    says (little-endian unless set; NATIVE: this machine's order, no byteswap)."""
    try:
        order = _read_unchecked(archive, prefix + "byteorder")
    except KeyError:
        if _load_endianness is LoadEndianness.NATIVE:
            return sys.byteorder
        return "big" if _load_endianness is LoadEndianness.BIG else "little"
    if order not in (b"little", b"big"):
        raise ValueError("Unknown endianness type: " + order.decode())
    return order.decode()
