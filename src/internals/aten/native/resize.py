"""Resizing a tensor and pointing it at another storage (``aten/src/ATen/native/Resize.h``,
``Resize.cpp``; the ``set_`` kernels are in torch's ``TensorShape.cpp``, built from Resize.h's helpers).

``resize_`` gives a tensor new sizes with contiguous strides, keeping its storage and offset; the
storage grows (never shrinks) when the new sizes reach past its end, the old bytes copied over.
``set_`` makes a tensor look at a storage with a given offset, sizes and strides, growing that
storage in the same way. Both are in-place *metadata* changes of the same TensorImpl.

Every check runs before anything changes: torch sets the sizes first and may then fail to grow a
storage that is not resizable, leaving a tensor that reaches past its storage; here a failed call
leaves the tensor as it was.
"""
import warnings

from ...c10.memory_format import channels_last_strides, contiguous_format, preserve_format, suggest_memory_format
from ...c10.storage import UntypedStorage
from ...c10.tensor_impl import check_in_bounds, contiguous_strides, required_storage_elements
from .. import dispatcher
from ..context import global_context
from ..empty_tensor import fill_empty_deterministic_

__all__ = ["resize_", "resize_output", "set_", "set_storage_", "set_tensor_", "set__symint", "set_cpu_"]


def _new_geometry(impl, size, stride):
    """The (sizes, strides) to set -- contiguous strides when none are given -- or None when the
    sizes (and the strides, if given) are these already: ``resize_impl_cpu_``'s early return."""
    if impl.sizes == size and (stride is None or impl.strides == stride):
        return None
    if _numel_overflows(size):        # what torch finds while counting the elements
        raise RuntimeError("numel: integer multiplication overflow")
    if stride is not None and any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    return size, contiguous_strides(size) if stride is None else stride


def _numel_overflows(size):
    """``safe_compute_numel``: the sizes multiplied as uint64 (a negative one is huge), any step
    past 64 bits flagged even if a later 0 makes the product 0, and the product within int64."""
    product, overflowed = 1, False
    for n in size:
        product *= n % 2**64
        overflowed |= product >= 2**64
        product %= 2**64
    return overflowed or product >= 2**63


def _maybe_resize_storage(storage, geometry, offset, itemsize, strides_given=False):
    """``maybe_resize_storage_cpu``: grow ``storage`` to the bytes this geometry reaches (an empty
    tensor reaches none, whatever its offset). It never shrinks."""
    needed = required_storage_elements(*geometry, offset) * itemsize
    if needed >= 2**63:         # ``computeStorageNbytes``
        size, stride = geometry
        shown = f" and strides={list(stride)}" if strides_given or stride != contiguous_strides(size) else ""
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)}{shown}")
    if needed > storage.nbytes():
        storage.resize_(needed)


def resize_(self, size, *, memory_format=None):
    """``resize_``: contiguous strides for ``size`` (or those of ``memory_format``), the storage grown
    to fit; the data up to the old end of the storage is kept."""
    if memory_format is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    impl, size = self._impl, tuple(size)
    old_nbytes = impl.storage.nbytes()
    restride = memory_format is not None and memory_format is not contiguous_format
    if restride:
        channels_last_strides(size, memory_format)     # the rank check, before anything changes
    geometry = _new_geometry(impl, size, None)
    if geometry is not None:
        _maybe_resize_storage(impl.storage, geometry, impl.storage_offset, impl.dtype.itemsize)
        impl.sizes, impl.strides = geometry
    if memory_format is not None:                      # ``empty_tensor_restride``
        strides = channels_last_strides(size, memory_format) if restride else contiguous_strides(size)
        # torch restrides without a look at the storage, so an expanded tensor made dense reaches
        # past its end; here the storage grows to fit, as it does for new sizes.
        _maybe_resize_storage(impl.storage, (size, strides), impl.storage_offset, impl.dtype.itemsize)
        impl.strides = strides
    if global_context().fills_uninitialized_memory():
        _fill_resize_deterministic_(self, old_nbytes)
    return self


def _fill_resize_deterministic_(self, old_nbytes):
    """``fill_resize_deterministic_`` (Resize.h): the elements the storage gained, and only those,
    get what deterministic mode gives new memory; they are counted in the storage, from its old
    end to its new one, whatever part of them the tensor's own view covers."""
    impl = self._impl
    itemsize = impl.dtype.itemsize
    old, new = old_nbytes // itemsize, impl.storage.nbytes() // itemsize
    if new > old:
        grown = dispatcher.call("empty.memory_format", [0], dtype=impl.dtype, device=impl.storage.device)
        fill_empty_deterministic_(set_storage_(grown, impl.storage, old, [new - old], [1]))


def resize_as_(self, the_template, *, memory_format=None):
    """``resize_as_``: the template's sizes, never its strides; a memory format restrides
    (``preserve_format`` takes the one the template's strides suggest)."""
    if memory_format is preserve_format:
        memory_format = suggest_memory_format(the_template.shape, the_template.stride())
    return self.resize_(the_template.shape, memory_format=memory_format)


# ---------------------------------------------------------------------- set_
def _check_set_storage(impl, storage, offset, size, stride):
    """``checkSetStorage``: strides to match the sizes, an offset that is not negative, the same device;
    and, when sizes and strides stay as they are (so the storage will not be grown), the bounds."""
    if stride is not None and len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if impl.sizes == size and (stride is None or impl.strides == stride):
        checked = contiguous_strides(size) if stride is None else stride
        check_in_bounds(storage.nbytes(), size, checked, offset, impl.dtype.itemsize, shown_strides=stride or ())
    if storage is not impl.storage and storage.device != impl.storage.device:
        raise RuntimeError(f'Attempted to set the storage of a tensor on device "{impl.storage.device}" to a storage '
                           f'on different device "{storage.device}".  This is no longer allowed; the devices must '
                           'match.')


def set_storage_(self, source, storage_offset, size, stride=()):
    """``set_.source_Storage_storage_offset`` (``set_storage_cpu_``): this tensor now reads ``source``
    from ``storage_offset`` with ``size`` and ``stride`` (contiguous when empty), ``source`` grown to fit."""
    impl, size, stride = self._impl, tuple(size), tuple(stride) if stride else None
    _check_set_storage(impl, source, storage_offset, size, stride)
    geometry = _new_geometry(impl, size, stride)
    if geometry is not None:
        _maybe_resize_storage(source, geometry, storage_offset, impl.dtype.itemsize, stride is not None)
    impl.storage, impl.storage_offset = source, storage_offset
    if geometry is not None:
        impl.sizes, impl.strides = geometry
    return self


def set_(self, source):
    """``set_.source_Storage``: all of ``source``, as a 1-d tensor of this tensor's dtype."""
    return set_storage_(self, source, 0, [source.nbytes() // self.dtype.itemsize])


def set_tensor_(self, source):
    """``set_.source_Tensor``: the storage, offset, sizes and strides of ``source``."""
    if source._impl is self._impl:
        return self
    s = source._impl
    return set_storage_(self, s.storage, s.storage_offset, s.sizes, s.strides)


def set__symint(self, source, storage_offset, size, stride=()):
    """``set_.source_Tensor_storage_offset`` (CompositeImplicitAutograd): ``source``'s storage with
    the geometry given, through the storage overload."""
    return dispatcher.call("set_.source_Storage_storage_offset", self, source._impl.storage, storage_offset, size,
                           stride)


def set_cpu_(self):
    """``set_()``: a new, empty storage on this tensor's device, sizes ``[0]`` (torch's ``set_cpu_``,
    and ``set_cuda_``, which does the same on cuda)."""
    return set_storage_(self, UntypedStorage(0, self._impl.storage.device), 0, [0])


def resize_output(out, shape):
    """``at::native::resize_output``: give ``out`` the sizes ``shape``; whether it had to. An
    ``out`` that had elements is resized with torch's deprecation warning."""
    shape = tuple(shape)
    if out._impl.sizes == shape:
        return False
    if out._impl.numel() != 0:
        warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, which "
                      f"does not match the required output shape {list(shape)}. This behavior is deprecated, and in "
                      "a future PyTorch release outputs will not be resized unless they have zero elements. You can "
                      "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                      UserWarning, stacklevel=2)
    dispatcher.call("resize_", out, shape)
    return True
