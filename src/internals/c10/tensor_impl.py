"""TensorImpl: the metadata that turns a flat storage into an n-dimensional tensor.

Mirrors ``c10/core/TensorImpl.h``: sizes, strides (in elements), a storage offset, a dtype, a
device (the storage's), a layout and a version counter shared by all views of one tensor. The
contiguity predicates are those of ``c10/core/Contiguity.h``.
"""
import math
import weakref
from types import MappingProxyType

from .dispatch_key import DispatchKey, DispatchKeySet, autocast_key_for, autograd_key_for, backend_key_for
from .grad_mode import _state as _modes
from .memory_format import channels_last, is_channels_last_contiguous
from .sym import SymInt, inside_operator, is_symbolic, size_oblivious, statically_known_true

__all__ = ["TensorImpl", "VersionCounter", "layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "COMPRESSED_LAYOUTS", "compute_key_set",
           "contiguous_strides"]


class layout:
    """A layout: its Python name (``sparse_csr``) and the name torch's C++ prints in messages
    (``SparseCsr``, ``c10/core/Layout.h``'s ``operator<<``)."""

    def __init__(self, name, cpp_name):
        self.name, self.cpp_name = name, cpp_name

    def __repr__(self):
        return f"internals.{self.name}"


strided = layout("strided", "Strided")
sparse_coo = layout("sparse_coo", "Sparse")
# The compressed layouts (``c10/core/Layout.h``): one dim's indices compressed into offsets, for
# rows (CSR, and BSR of blocks) or for columns (CSC, BSC). One tensor class and one pair of
# backend keys (SparseCsrCPU, SparseCsrCUDA) serve all four; the layout is a field of the tensor.
sparse_csr = layout("sparse_csr", "SparseCsr")
sparse_csc = layout("sparse_csc", "SparseCsc")
sparse_bsr = layout("sparse_bsr", "SparseBsr")
sparse_bsc = layout("sparse_bsc", "SparseBsc")
COMPRESSED_LAYOUTS = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)


class VersionCounter:
    """Bumped by every in-place write; shared by a tensor and all its views. Every new tensor
    makes one, so it has no ``__init__`` to call: the class attribute is each counter's 0 until
    its first bump."""
    version = 0


class NoStorage:
    """Stands where a storage would be, for tensors that only describe data held elsewhere."""

    def __init__(self, device, nbytes):
        self.device, self._nbytes = device, nbytes

    def nbytes(self):
        return self._nbytes

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    @property
    def _data(self):     # a read of the values (``tolist``, ``numpy``) asks for the data pointer
        self.data_ptr()

    _typed = MappingProxyType({})     # no flat views to look up (``TensorIterator.buffers``): ``typed`` refuses

    def typed(self, dtype):
        raise RuntimeError("Cannot access storage of a tensor subclass that holds no data of its own")


def compute_key_set(device_type, layout, inference=False):
    """The keys a new tensor carries (``TensorImpl``'s constructor).

    Its backend key (from device and layout), ADInplaceOrView and the Autograd key of its
    device -- unless it is born in inference mode: an inference tensor never records a graph or
    a view, so it carries neither -- and the Autocast key of its device.
    """
    cache_key = (device_type, layout, inference)
    keys = _key_sets.get(cache_key)
    if keys is None:
        listed = [backend_key_for(device_type, sparse=layout is sparse_coo, compressed=layout in COMPRESSED_LAYOUTS)]
        if not inference:
            listed += [DispatchKey.ADInplaceOrView, autograd_key_for(device_type)]
        if autocast_key_for(device_type) is not None:
            listed.append(autocast_key_for(device_type))
        keys = _key_sets[cache_key] = DispatchKeySet(listed)
    return keys


_key_sets = {}
_AD_INPLACE_OR_VIEW_BIT = int(DispatchKey.ADInplaceOrView)


class TensorImplBase:
    """What every tensor implementation answers the same way, strided or sparse."""
    __slots__ = ()
    blocksize = None        # the block of a BSR or BSC tensor (SparseCsrTensorImpl); no other has one

    def is_inference(self):
        # the ADInplaceOrView bit, read directly (every in-place write asks: no ``__contains__`` frame)
        return not self.key_set.bits >> _AD_INPLACE_OR_VIEW_BIT & 1

    def is_conj(self):
        """The conjugate bit (``TensorImpl::is_conj``): the values are the conjugates of the
        stored ones. It is the ``Conjugate`` key itself, so the dispatcher sees it for free."""
        return DispatchKey.Conjugate in self.key_set

    def _set_conj(self, value):
        """``TensorImpl::_set_conj``: set or clear the bit; only the key set changes."""
        self._set_key(DispatchKey.Conjugate, value)

    def is_neg(self):
        """The negative bit (``TensorImpl::is_neg``): the values are the negatives of the stored
        ones. Like the conjugate bit, it is a key of the set (``Negative``)."""
        return DispatchKey.Negative in self.key_set

    def _set_neg(self, value):
        """``TensorImpl::_set_neg``: set or clear the bit; only the key set changes."""
        self._set_key(DispatchKey.Negative, value)

    def _set_key(self, key, value):
        bit = 1 << int(key)
        bits = self.key_set.bits | bit if value else self.key_set.bits & ~bit
        self.key_set = DispatchKeySet._from_bits(bits)

    def numel(self):
        # a traced size's product is the tensor's own count (one ``sym_numel``), not the program's
        # arithmetic: multiplying here first would record a ``mul`` of the sizes as the program's
        if any(type(n) is not int for n in self.sizes):
            return _symbolic_numel(self)
        return math.prod(self.sizes)


class TensorImpl(TensorImplBase):
    __slots__ = ("storage", "storage_offset", "sizes", "strides", "dtype", "device", "layout",
                 "version_counter", "is_wrapped_number", "key_set", "__weakref__")

    def __init__(self, storage, sizes, strides, storage_offset, dtype,
                 version_counter=None, *, fresh=False):
        """``fresh``: ``storage`` was just allocated for exactly these sizes and
        strides, tuples of ints (``empty_strided``): in bounds by construction, so
        not checked again (torch's ``empty_generic`` does not check them either)."""
        if not fresh and isinstance(storage, NoStorage) and any(
                is_symbolic(v) for v in (*sizes, *strides, storage_offset)):
            # a traced size (a symbol) stays one, over a storage-less fake: a backed symbol has an
            # example value, but taking it would make the trace hold for that size alone
            sizes, strides = _ints_or_symbols(sizes), _ints_or_symbols(strides)
            storage_offset = _ints_or_symbols((storage_offset,))[0]
        elif not fresh:
            try:
                sizes, strides = tuple(map(int, sizes)), tuple(map(int, strides))
                storage_offset = int(storage_offset)
                check_in_bounds(storage.nbytes(), sizes, strides, storage_offset, dtype.itemsize, storage=storage)
            except RuntimeError:
                # a data-dependent size under fake tracing (u0) has no int: it stays a SymInt, over a
                # storage-less fake whose byte count was computed from these very sizes
                if not isinstance(storage, NoStorage):
                    raise
                sizes, strides = _ints_or_symbols(sizes), _ints_or_symbols(strides)
                storage_offset = _ints_or_symbols((storage_offset,))[0]
        self.storage = storage
        self.sizes = sizes
        self.strides = strides
        self.storage_offset = storage_offset
        self.dtype = dtype
        self.device = storage.device     # ``device_opt_``: ``set_`` keeps the device
        self.layout = strided
        self.version_counter = version_counter or VersionCounter()
        self.is_wrapped_number = False   # a Python scalar turned into a 0-dim tensor
        # the keys, from the cache ``compute_key_set`` fills (``_modes.inference`` is
        # InferenceMode.is_enabled(), read without a call)
        key = (storage.device.type, strided, _modes.inference)
        keys = _key_sets.get(key)
        self.key_set = keys if keys is not None else compute_key_set(*key)

    @classmethod
    def _fresh(cls, storage, sizes, strides, dtype):
        """``TensorImpl(storage, sizes, strides, 0, dtype, fresh=True)`` without Python's class call
        (``type.__call__`` finding ``__init__`` and its keyword): the impl of every tensor
        ``empty_strided_generic`` makes, where the call costs as much as the fields."""
        self = object.__new__(cls)
        self.storage, self.sizes, self.strides, self.storage_offset, self.dtype = storage, sizes, strides, 0, dtype
        self.device, self.layout = storage.device, strided
        self.version_counter, self.is_wrapped_number = VersionCounter(), False
        key = (storage.device.type, strided, _modes.inference)      # as ``__init__`` finds its keys
        keys = _key_sets.get(key)
        self.key_set = keys if keys is not None else compute_key_set(*key)
        return self

    @classmethod
    def without_storage(cls, sizes, strides, storage_offset, dtype, device):
        """Metadata with no memory behind it (a wrapper subclass's): any access to data raises."""
        return cls(NoStorage(device, required_storage_elements(sizes, strides, storage_offset) * dtype.itemsize),
                   sizes, strides, storage_offset, dtype)

    def is_contiguous(self):
        try:
            return _counted_is_contiguous(self.sizes, self.strides)
        except RuntimeError:    # a data-dependent size (u0): decided as torch's does, size-obliviously
            with size_oblivious():
                return is_contiguous(self.sizes, self.strides)

    def is_non_overlapping_and_dense(self):
        try:
            return is_non_overlapping_and_dense(self.sizes, self.strides)
        except RuntimeError:
            with size_oblivious():
                return is_non_overlapping_and_dense(self.sizes, self.strides)


_numels = weakref.WeakKeyDictionary()


def _symbolic_numel(impl):
    """The element count of a tensor with a traced size, made once per tensor, as torch's
    ``SymbolicShapeMeta`` keeps it: the same symbol each time, which a tracer reads back with
    one ``sym_numel`` node. Computed as an operator's own arithmetic (no graph nodes)."""
    hit = _numels.get(impl)
    if hit is None or hit[0] is not impl.sizes:
        with inside_operator():
            hit = _numels[impl] = (impl.sizes, math.prod(impl.sizes))
    return hit[1]


def _ints_or_symbols(values):
    return tuple(v if isinstance(v, SymInt) else int(v) for v in values)


def contiguous_strides(sizes):
    """Row-major strides: the last dimension moves fastest. Size-0/1 dims count as 1."""
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


_INT64_MAX = 2**63 - 1


def required_storage_elements(sizes, strides, storage_offset):
    """One past the largest element index the view can reach (0 for an empty view)."""
    if 0 in sizes:
        return 0
    last = storage_offset
    for n, s in zip(sizes, strides):     # a plain loop, not sum(generator): every new tensor comes here
        last += (n - 1) * s
    return last + 1


_NUMEL_OVERFLOW = "numel: integer multiplication overflow"


def check_size_nonnegative(sizes):
    """``check_size_nonnegative``: the message names the first negative size."""
    for n in sizes:         # (n by n: two symbols are not compared)
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(sizes)}")


def check_sizes_and_strides(sizes, strides):
    """No negative size (a tensor cannot have -1 rows) and no negative stride (torch has none)."""
    # plain loops, not ``any(generator)``: every view is checked here, and a generator is a frame
    check_size_nonnegative(sizes)
    for s in strides:
        if s < 0:
            raise RuntimeError("as_strided: Negative strides are not supported at the moment, "
                               f"got strides: {list(strides)}")
    # torch's sizes and strides are int64, and so is the element count: a larger one cannot be expressed
    # (a traced size, a symbol, has no value to check: torch's symbolic checks wait for run time)
    for n in (*sizes, *strides):
        if type(n) is not int and is_symbolic(n):
            return
    if (sizes and max(sizes) > _INT64_MAX) or (strides and max(strides) > _INT64_MAX):
        raise RuntimeError(f"size or stride does not fit in int64: sizes {list(sizes)}, strides {list(strides)}")
    if math.prod(sizes) > _INT64_MAX:
        raise RuntimeError(_NUMEL_OVERFLOW)


def check_in_bounds(storage_nbytes, sizes, strides, storage_offset, itemsize, shown_strides=None, storage=None):
    """``setStorage``'s check: every element the view can reach lies inside the storage.

    This is the guard that lets kernels skip bounds checks: no TensorImpl exists whose
    elements fall outside its storage. ``shown_strides``: the strides as the caller was given
    them, for the message (``set_`` given none checks contiguous ones, and torch prints ``[]``).
    """
    try:
        check_sizes_and_strides(sizes, strides)
    except RuntimeError as error:
        # torch counts the storage's bytes first (``checkInBoundsForStorage``), then the elements;
        # a meta tensor's storage it does not count
        meta = storage is not None and storage.device.type == "meta"
        if str(error) == _NUMEL_OVERFLOW and not meta and \
                required_storage_elements(sizes, strides, storage_offset) * itemsize > _INT64_MAX:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(sizes)} and "
                               f"strides={list(strides)}") from None
        raise
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    needed = required_storage_elements(sizes, strides, storage_offset) * itemsize
    if needed > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(sizes)} and strides={list(strides)}")
    if needed > storage_nbytes:
        raise RuntimeError(
            f"setStorage: sizes {list(sizes)}, strides {list(strides if shown_strides is None else shown_strides)}, "
            f"storage offset {storage_offset}, "
            f"and itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage "
            f"of size {storage_nbytes}")


def is_contiguous(sizes, strides):
    """Row-major with no gaps; dims of size 1 may have any stride; an empty tensor is contiguous."""
    for n in sizes:     # a plain loop: every new tensor comes here
        if type(n) is not int:      # symbolic: first the answer that needs no guard
            if _known_contiguous(sizes, strides):
                return True
            break
    if 0 in sizes:
        return True
    expected = 1
    for n, s in zip(reversed(sizes), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def _known_contiguous(sizes, strides):
    """Contiguity of symbolic sizes decided without a guard: each stride is the product of the
    sizes after it, or its size is 1 whatever the symbols (c10's ``is_contiguous_or_false``,
    tried before the test that guards). A ``(s,)`` tensor of stride 1 is contiguous for every
    s: asking ``s != 1`` first would pin an example's size of 1 into the graph's guards."""
    expected = 1
    with inside_operator():     # the test's own arithmetic: no node of the traced program
        for n, s in zip(reversed(sizes), reversed(strides)):
            if statically_known_true(n == 1):
                continue
            if not statically_known_true(s == expected):
                return False
            expected *= n
    return True


def is_channels_last(sizes, strides):
    """4-d tensors laid out NHWC (``compute_channels_last_contiguous_2d``)."""
    return is_channels_last_contiguous(sizes, strides, channels_last)


def is_non_overlapping_and_dense(sizes, strides):
    """Some permutation of the dims is contiguous: every element in one block, none shared."""
    if len(sizes) == 1:
        return sizes[0] < 2 or strides[0] == 1
    if is_contiguous(sizes, strides):
        return True
    # Dims of size < 2 go last; the rest by ascending stride.
    order = sorted(range(len(sizes)), key=lambda d: (sizes[d] < 2, strides[d] if sizes[d] >= 2 else 0))
    expected = 1
    for d in order:
        if sizes[d] < 2:
            return True
        if strides[d] != expected:
            return False
        expected *= sizes[d]
    return True


def _counted_is_contiguous(sizes, strides):
    """``is_contiguous`` of a tensor's metadata. With symbolic sizes, torch's contiguity test
    starts from the element count (``sym_numel``), a product of the size symbols that a tracer
    records (and drops, nothing reading it): computed here too, so the traced graph's names are
    torch's (``x.t().contiguous() * 2``: its multiplication is ``mul_1``)."""
    if any(is_symbolic(n) for n in sizes):
        math.prod(sizes)
    return is_contiguous(sizes, strides)
