"""Storage: a flat, untyped byte buffer on one device (``c10/core/StorageImpl.h``).

A storage knows nothing of dtypes, shapes or strides: that is the TensorImpl's job. Many tensors
(views) may share one storage. Its bytes live in a NumPy ``uint8`` array on the CPU and in a
Numba device array of bytes on cuda.
"""
import gc
import operator
import sys

import numpy as np

from .allocator import cpu_allocator, get_allocator
from .device import _CPU
from .device import device as _device
from .map_allocator import map_shared_fd, new_shared_fd
from .tensor_impl import required_storage_elements

__all__ = ["UntypedStorage"]


def _negative_nbytes(nbytes):
    """The error for a negative size: torch passes it on to the allocator as a size_t."""
    return RuntimeError(f"[enforce fail at alloc_cpu.cpp:98] ((ptrdiff_t)nbytes) >= 0. alloc_cpu() seems "
                        f"to have been called with negative number: {nbytes % 2**64}")


def _typename(value):
    """``THPUtils_typename``: the type's ``tp_name``, which only C types (NumPy's) prefix with a module."""
    name = type(value).__name__
    return f"numpy.{name}" if type(value).__module__ == "numpy" else name


def _storage_index(index, error):
    """An index as ``THPUtils_checkLong`` takes one (an int or NumPy integer, not a bool), read as an int64."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise error(f"can't index a torch.UntypedStorage with {_typename(index)}")
    index = operator.index(index)
    if not -2**63 <= index < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return index


def _byte(value):
    """``THPByteUtils_unpackReal``: the int read as an int64, then cast to ``uint8_t`` (modulo 256)."""
    if not -2**63 <= value < 2**63:
        raise RuntimeError("Overflow when unpacking long")
    return value % 256


class UntypedStorage:
    __slots__ = ("device", "_data", "_nbytes", "_resizable", "_typed", "_allocator", "_base", "_mapping",
                 "__weakref__")

    def __init__(self, nbytes, device="cpu", *, data=None, allocator=None, resizable=True):
        """Allocate ``nbytes`` on ``device``, or wrap ``data`` (a byte array) without copying.
        ``resizable=False`` for memory someone else owns (``from_numpy``), as torch marks it."""
        device = device if isinstance(device, _device) else _device(device)
        if device.type == "cpu":
            # 'cpu:0' is the CPU, as in torch; and every CPU storage holds the one CPU device object,
            # so that kernels compare their operands' devices by identity (TensorIterator's
            # ``compute_types``: a wrapped ``x * 2`` is on the same device as ``x``)
            device = _CPU
        if data is None:
            if nbytes < 0:
                raise _negative_nbytes(nbytes)
            if allocator is None:
                allocator = cpu_allocator if device.type == "cpu" else _allocator_for(device)
            data = allocator.allocate(nbytes)
        self._allocator = allocator      # None for ``data`` someone else allocated
        self.device = device
        self._data = data
        self._nbytes = nbytes
        self._resizable = resizable
        self._typed = {}        # dtype -> the flat view ``typed`` made: views are cheap, not free
        self._base = None       # the storage a slice's bytes belong to, kept alive while the slice lives
        self._mapping = None    # a SharedMapping once the bytes live in shared memory

    @classmethod
    def _fresh_cpu(cls, nbytes, allocator=cpu_allocator):
        """What ``UntypedStorage(nbytes, "cpu")`` makes, for ``nbytes >= 0``, without its argument
        handling (a device to parse, data to wrap, an allocator to find): ``empty_cpu`` makes the
        storage of every new CPU tensor so (``make_storage_impl``), and Python's class call and
        ``__init__``'s branches cost as much as the allocation."""
        data = allocator.allocate(nbytes)      # first: a failed allocation leaves no storage to free
        self = object.__new__(cls)
        self._allocator, self._data = allocator, data
        self.device, self._nbytes, self._resizable = _CPU, nbytes, True
        self._typed, self._base, self._mapping = {}, None, None
        return self

    def __del__(self, _exiting=sys.is_finalizing):
        """The last reference is gone (Python's refcount plays c10's intrusive_ptr): the allocator
        gets back what it handed out, the cuda one finding its block by address. At interpreter
        exit there is nothing left to give memory back to. (A ``weakref.finalize`` would work too,
        at about 2 us more per storage: a tenth of a one-element add.)"""
        allocator = getattr(self, "_allocator", None)  # unset if allocation failed
        if allocator is not None and not _exiting():
            allocator.free(self._data, self._nbytes)

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def _no_bytes(self):
        """Refuse to touch the bytes of a meta storage (it has none), with torch's error."""
        if self._data is None:
            raise NotImplementedError(f"Not available for '{self.device.type}' device type")

    def data_ptr(self):
        if self._nbytes == 0 or self._data is None:    # nullptr for zero bytes, and on meta
            return 0
        if self.device.type == "cpu":
            return self._data.ctypes.data
        # Each device's allocator knows its buffers' addresses (on Numba's simulator a
        # device array wraps a host one, so the address is a host address).
        return (self._allocator or _allocator_for(self.device)).address_of(self._data)

    def resizable(self):
        return self._resizable

    # ------------------------------------------------------------------ shared memory
    # ``torch/storage.py`` (``share_memory_``, ``is_shared``) over ``StorageSharing.cpp``.
    def is_shared(self):
        """Whether the bytes live in shared memory (a cuda storage counts as shared, as in torch)."""
        return self.device.type == "cuda" or self._mapping is not None

    def share_memory_(self):
        """Move the bytes into a shared-memory segment, in place (a no-op when they are there
        already, or on cuda). Every tensor on this storage now reads and writes the segment."""
        self._no_bytes()
        if self.device.type == "cpu":
            self._share_fd_cpu_()
        return self

    def _share_fd_cpu_(self):
        """``THPStorage_shareFd``: the segment's descriptor and size, the bytes copied into a new
        segment first if they are not in one. torch swaps in the new bytes but keeps the storage
        marked resizable, and resizing it then crashes the process; a shared storage refuses to
        resize here instead (the segment's size is fixed: other processes map it)."""
        if self._mapping is None:
            data, mapping = new_shared_fd(self._nbytes)
            data[:] = self._data
            if self._allocator is not None:
                self._allocator.free(self._data, self._nbytes)
            self._data, self._mapping, self._allocator, self._typed = data, mapping, None, {}
        return self._mapping.fd, self._nbytes

    @classmethod
    def _new_shared_fd_cpu(cls, fd, nbytes):
        """``THPStorage_newSharedFd``: a storage over the segment behind ``fd`` (the caller keeps
        ``fd``; the storage holds its own duplicate)."""
        data, mapping = map_shared_fd(fd, nbytes)
        storage = cls(nbytes, "cpu", data=data, resizable=False)
        storage._mapping = mapping
        return storage

    def resize_(self, nbytes):
        """New bytes of size ``nbytes``, the old ones copied up to the smaller size, the old block
        given back (``resize_bytes_cpu`` in ``aten/src/ATen/native/Resize.cpp``). The data pointer
        changes; every tensor on this storage sees the new bytes.

        One difference from torch, on purpose: torch lets a storage shrink under a tensor that
        still reaches past the new end (reading it then reads freed memory); here that raises,
        because no tensor may reach outside its storage. A meta storage has no bytes to move:
        only its size changes, as torch's."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):    # THPUtils_checkLong
            raise RuntimeError(f"resize_ expects an int, but got {type(nbytes).__name__}")
        nbytes = operator.index(nbytes)
        if not -2**63 <= nbytes < 2**63:
            raise ValueError("Overflow when unpacking long long")
        if nbytes < 0:
            raise _negative_nbytes(nbytes)
        if not self._resizable or self._mapping is not None:
            raise RuntimeError("Trying to resize storage that is not resizable")
        if nbytes < self._nbytes:
            self._check_no_tensor_reaches(nbytes)
        if self._data is None:
            self._nbytes = nbytes
            return self
        allocator = self._allocator or _allocator_for(self.device)
        new = allocator.allocate(nbytes)
        kept = min(nbytes, self._nbytes)
        if kept:
            if self.device.type == "cpu":
                new[:kept] = self._data[:kept]
            else:
                new[:kept].copy_to_device(self._data[:kept])
        if self._allocator is not None:
            self._allocator.free(self._data, self._nbytes)
        self._data, self._nbytes, self._allocator, self._typed = new, nbytes, allocator, {}
        return self

    def _check_no_tensor_reaches(self, nbytes):
        """Refuse to shrink below the last byte a live tensor on this storage reaches. Shrinking
        is rare, so the tensors are found by asking the garbage collector who refers to us."""
        for impl in gc.get_referrers(self):
            if getattr(impl, "storage", None) is self and hasattr(impl, "strides"):
                needed = required_storage_elements(impl.sizes, impl.strides, impl.storage_offset) * impl.dtype.itemsize
                if needed > nbytes:
                    raise RuntimeError(f"internals: cannot resize a storage to {nbytes} bytes while a tensor of "
                                       f"sizes {list(impl.sizes)} reaches {needed} bytes into it")

    def typed(self, dtype):
        """The bytes viewed as a flat array of ``dtype`` (what a kernel indexes)."""
        view = self._typed.get(dtype)
        if view is None:
            if self._data is None:
                self._no_bytes()        # a meta storage: torch's error
            used = self._nbytes - self._nbytes % dtype.itemsize     # whole items only
            data = self._data if used == self._nbytes else self._data[:used]
            view = self._typed[dtype] = data.view(dtype.numpy_type)
        return view

    def __len__(self):
        return self._nbytes

    def __getitem__(self, index):
        """One byte as an int, as torch's ``storage[i]`` gives it (negative indices count from the
        end), or a slice of step 1 as a storage on the same bytes (``THPStorage_get``)."""
        self._no_bytes()
        if isinstance(index, slice):
            start, stop = self._slice_bounds(index)
            part = UntypedStorage(max(stop - start, 0), self.device, data=self._data[start:max(stop, start)],
                                  resizable=False)
            part._base = self
            return part
        index = _storage_index(index, TypeError)
        if index < 0:
            index += self._nbytes
        if not 0 <= index < self._nbytes:
            raise IndexError(f"index {index} out of range for storage of size {self._nbytes}")
        return int(self._data[index])

    def __setitem__(self, index, value):
        """Write one byte, or the same byte over a slice of step 1 (``THPStorage_set``): the value is
        a Python int, kept modulo 256; an index out of range, negative ones included, is refused."""
        self._no_bytes()
        if not isinstance(value, int):
            raise RuntimeError(f"can only set storage content with a int types, but got {_typename(value)} instead")
        value = _byte(value)
        if isinstance(index, slice):
            start, stop = self._slice_bounds(index)
        else:
            start = _storage_index(index, RuntimeError)
            if not 0 <= start < self._nbytes:
                raise RuntimeError("out of bounds")
            stop = start + 1
        if start < stop:
            self._data[start:stop] = value

    def fill_(self, value):
        """Every byte set to ``value`` modulo 256."""
        self._no_bytes()
        if not isinstance(value, int):
            raise RuntimeError(f"fill_ expects int, but got {_typename(value)}")
        if self._nbytes:
            self._data[:] = _byte(value)
        return self

    def _slice_bounds(self, index):
        start, stop, step = index.indices(self._nbytes)
        if step != 1:
            raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
        return start, stop

    def tolist(self):
        """All the bytes as a list of ints (copied to the host first for a cuda storage)."""
        self._no_bytes()
        host = self._data if self.device.type == "cpu" else self._data.copy_to_host()
        return host.tolist()

    def __iter__(self):
        # What ``bytes(storage)`` and ``list(storage)`` use, in torch as here.
        return iter(self.tolist())

    def __repr__(self):
        return f"internals.UntypedStorage(nbytes={self._nbytes}, device='{self.device}')"

    # ------------------------------------------------------------------ copy and pickle
    # Without these, ``copy.deepcopy`` and ``pickle`` would walk the attributes: the allocator
    # (every cached segment of it) and a cuda array's host-side internals.
    def clone(self):
        """A new storage on the same device holding a copy of the bytes (``UntypedStorage.clone``);
        on the meta device, of the size alone."""
        new = UntypedStorage(self._nbytes, self.device)
        if self._data is None:
            return new
        if self._nbytes:
            if self.device.type == "cpu":
                new._data[:] = self._data
            else:
                new._data.copy_to_device(self._data)
        return new

    def __deepcopy__(self, memo):
        """One copy per storage, however many tensors view it (``memo`` remembers it)."""
        if id(self) not in memo:
            memo[id(self)] = self.clone()
        return memo[id(self)]

    def __reduce__(self):
        """The bytes (copied to the host) and the device: unpickled, a new storage on that device.
        A meta storage pickles its size: torch's checkpoints of meta tensors hold no bytes either."""
        if self._data is None:
            return UntypedStorage, (self._nbytes, str(self.device))
        host = self._data if self.device.type == "cpu" else self._data.copy_to_host()
        return _rebuild_storage, (np.asarray(host).tobytes(), str(self.device))


def _rebuild_storage(data, device):
    storage = UntypedStorage(len(data), device)
    if data:
        array = np.frombuffer(data, dtype=np.uint8)
        if storage.device.type == "cpu":
            storage._data[:] = array
        else:
            storage._data.copy_to_device(array)
    return storage


class _MetaAllocator:
    """The meta device's: a storage there has a size and no bytes (what a checkpoint loaded with a
    ``map_location`` that moves storages to meta holds). Nothing is allocated, and every read or
    write of the bytes is refused (``UntypedStorage._no_bytes``), as torch's meta storages do."""

    def allocate(self, nbytes):
        return None

    def free(self, data, nbytes):
        pass


_META_ALLOCATOR = _MetaAllocator()


def _allocator_for(device):
    if device.type == "cpu":
        return cpu_allocator
    if device.type == "cuda" and device.index != 0:
        raise RuntimeError(f"CUDA error: invalid device ordinal (internals has one cuda device, cuda:0; "
                           f"asked for {device})")
    if device.type == "meta":
        return _META_ALLOCATOR
    allocator = get_allocator(device.type)    # the cuda one registers itself (internals.cuda)
    if allocator is not None:
        return allocator
    raise NotImplementedError(f"internals can allocate storage on cpu and cuda only, not on '{device.type}'")


def bytes_of(array):
    """A uint8 view of all the bytes a NumPy array's elements span, starting at its first one."""
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with "
                         "negative strides are not currently supported. (You can probably work around "
                         "this by making a copy of your array  with array.copy().) ")
    if array.size == 0:
        return np.empty(0, dtype=np.uint8)
    if array.flags.c_contiguous:
        return array.reshape(-1).view(np.uint8)
    span = 1 + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // array.itemsize
    flat = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(array.itemsize,))
    return flat.view(np.uint8)
