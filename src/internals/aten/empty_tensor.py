"""Allocating a tensor: fresh storage just large enough for a view (``aten/src/ATen/EmptyTensor.cpp``).

Below the operators: TensorIterator calls it for the outputs it allocates, as torch's calls
``at::detail::empty_strided_cpu``, and ``tensor_factories`` registers it as the CPU and CUDA
kernel of ``empty_strided``.
"""
import contextlib
import math
import threading

import numpy as np

from .. import _tensor_base
from .._tensor_base import TensorBase
from ..c10 import scalar_type as st
from ..c10.allocator import cpu_allocator
from ..c10.device import _CPU, as_device
from ..c10.grad_mode import _state as _modes
from ..c10.local_dispatch_key_set import below_ad_inplace_or_view
from ..c10.storage import UntypedStorage
from ..c10.sym import is_symbolic
from ..c10.tensor_impl import (
    NoStorage,
    TensorImpl,
    VersionCounter,
    check_size_nonnegative,
    check_sizes_and_strides,
    compute_key_set,
    contiguous_strides,
    required_storage_elements,
    strided,
)
from .context import global_context

_INT64_MAX = 2**63 - 1

__all__ = ["empty_strided", "empty_strided_generic", "fill_empty_deterministic_", "meta_execution", "is_meta_execution"]


class _MetaExecution(threading.local):
    active = False


_meta = _MetaExecution()
# How many ``meta_execution`` blocks are open now, on all threads. Every kernel call asks whether
# it runs for metadata only, and a thread-local attribute costs about ten times a list item to
# read, so kernels test this count first: it is 0 unless a fake tensor is being traced somewhere.
_meta_blocks = [0]
_meta_blocks_lock = threading.Lock()


_context = global_context()


@contextlib.contextmanager
def meta_execution():
    """Kernels run for their outputs' metadata only, as torch's structured kernels run on the Meta
    device: every tensor allocated here holds no memory, and TensorIterator skips its loops (a
    kernel that reads values then fails, on the storage that is not there)."""
    with _meta_blocks_lock:
        _meta_blocks[0] += 1
    before, _meta.active = _meta.active, True
    try:
        yield
    finally:
        _meta.active = before
        with _meta_blocks_lock:
            _meta_blocks[0] -= 1


def is_meta_execution():
    return _meta_blocks[0] != 0 and _meta.active


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    """``empty_strided``'s CPU and CUDA kernel: its arguments checked, then ``empty_strided_generic``."""
    device = as_device(device)
    if pin_memory:
        raise NotImplementedError("internals has no pinned-memory allocator: pin_memory=True is not supported")
    size, stride = tuple(map(_as_int, size)), tuple(map(_as_int, stride))
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match "
                           f"dimensionality of strides ({len(stride)})")
    check_size_nonnegative(size)
    # ``computeStorageNbytes`` multiplies as uint64: a negative stride over a dim of two or more
    # elements overflows (one over a dim of 0 or 1 moves nowhere; internals refuses it below)
    dtype = dtype or st.get_default_dtype()
    # and the bytes are counted before the elements, with the strides in the message
    if any(s < 0 and n > 1 for n, s in zip(size, stride)) or (
            not any(is_symbolic(n) for n in (*size, *stride))
            and required_storage_elements(size, stride, 0) * dtype.itemsize > _INT64_MAX):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    check_sizes_and_strides(size, stride)   # no negative size or stride, nothing int64 cannot hold
    out = empty_strided_generic(size, stride, dtype, device)
    if _context.fills_uninitialized_memory():
        # torch fills in ``empty_cpu``/``empty_strided_cpu``; the kernels here that call this function
        # directly (torch's ``at::detail``) get filled outputs too, which they then write in full
        fill_empty_deterministic_(out)
    return out


def check_contiguous_nbytes(size, dtype):
    """``computeStorageNbytesContiguous``: the bytes of a contiguous tensor of ``size`` must fit
    in int64 (an element count past int64 is reported the same way); a traced size has no value
    to check (torch's symbolic form checks nothing)."""
    if not any(is_symbolic(n) for n in size) and math.prod(size) * dtype.itemsize >= 2**63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)}")


def fill_empty_deterministic_(t):
    """Fill ``t`` with what deterministic mode gives uninitialized memory (``TensorFactories.h``):
    NaN for floating and complex types, True for bool, the largest value for integers. A meta
    tensor has no memory to fill."""
    if t._impl.device.type not in ("cpu", "cuda") or is_meta_execution():
        return t
    from . import dispatcher  # the dispatcher's operator tables sit above this module: a real cycle
    dtype = t._impl.dtype
    if dtype.is_floating_point or dtype.is_complex:
        value = math.nan
    elif dtype is st.bool_:
        value = True
    else:
        value = int(np.iinfo(dtype.numpy_type).max)
    with below_ad_inplace_or_view():
        dispatcher.call("fill_.Scalar", t, value)
    return t


def _as_int(n):
    """A size as an int; a traced size (a SymInt, ``nonzero``'s row count) stays a symbol."""
    return n if is_symbolic(n) else int(n)


def empty_planned(size, stride, dtype, device, nbytes):
    """``empty_strided_generic`` for sizes and strides it allocated for before, ``nbytes`` being
    what it found then (a remembered TensorIterator plan's output): a CPU tensor of a plain
    dtype needs none of its checks again.

    Its three objects are made here in one step, as ``empty_generic`` makes the StorageImpl and
    the TensorImpl itself: the storage (``UntypedStorage._fresh_cpu``), its impl
    (``TensorImpl._fresh``) and the tensor (``TensorBase._from_impl``), each with the fields its
    own constructor sets (``tests/aten/test_tensor_iterator_plans.py`` compares them). Every elementwise
    call of a known layout allocates its output here, and those three calls and their checks
    cost a third of the allocation."""
    if device.type != "cpu" or dtype is st.complex32 or (_meta_blocks[0] and _meta.active):
        return empty_strided_generic(size, stride, dtype, device)
    data = cpu_allocator.allocate(nbytes)       # first: a failed allocation leaves no storage to free
    storage = object.__new__(UntypedStorage)
    storage._allocator, storage._data, storage.device, storage._nbytes = cpu_allocator, data, _CPU, nbytes
    storage._resizable, storage._base, storage._mapping = True, None, None
    storage._typed = {dtype: data.view(dtype.numpy_type)}      # the loop's flat view, made once
    impl = object.__new__(TensorImpl)
    impl.storage, impl.sizes, impl.strides, impl.storage_offset, impl.dtype = storage, size, stride, 0, dtype
    impl.device, impl.layout, impl.version_counter, impl.is_wrapped_number = _CPU, strided, VersionCounter(), False
    impl.key_set = _CPU_KEY_SETS[_modes.inference]
    t = object.__new__(_tensor_base._tensor_class)
    t._impl, t._requires_grad, t._output_nr = impl, False, 0
    t._base = t._grad = t._grad_fn = t._grad_accumulator = t._backward_hooks = t._attr_version = None
    t._creation_meta = t._post_accumulate_grad_hooks = t._view_fn = None
    return t


# a new CPU tensor's keys, born outside inference mode and inside it (``compute_key_set``)
_CPU_KEY_SETS = (compute_key_set("cpu", strided, False), compute_key_set("cpu", strided, True))


def empty_strided_generic(size, stride, dtype, device):
    """``empty_strided_generic``: fresh storage just large enough for the view. ``size`` and
    ``stride`` are tuples of non-negative ints of one length; TensorIterator calls this directly
    for the outputs it allocates (sizes broadcast from valid tensors, strides it computed), as
    torch's calls ``empty_strided_cpu``."""
    if dtype is st.complex32:       # the warning's own test, here: every new tensor passes
        st.warn_if_experimental(dtype)
    if device.type == "cuda":
        from .. import cuda  # the cuda package sits above aten: a real cycle
        cuda._announce_simulator()
    nbytes = required_storage_elements(size, stride, 0) * dtype.itemsize
    # ``computeStorageNbytes``: broadcasting can reach past int64 (a data-dependent size under
    # fake tracing, ``8*u0``, is not checked: torch's symbolic check is deferred to run time)
    if (type(nbytes) is int or not is_symbolic(nbytes)) and nbytes > _INT64_MAX:
        shown = "" if stride == contiguous_strides(size) else f" and strides={list(stride)}"
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)}{shown}")
    if _meta_blocks[0] and _meta.active:
        storage = NoStorage(device, nbytes)
    elif device.type == "cpu":
        storage = UntypedStorage._fresh_cpu(nbytes)
        # a kernel writes the new tensor next: its flat view, ready for the loop
        storage._typed[dtype] = storage._data.view(dtype.numpy_type)
    else:
        storage = UntypedStorage(nbytes, device)
    return TensorBase._from_impl(TensorImpl._fresh(storage, size, stride, dtype))
