"""``copy_``: write one tensor's values into another, casting and crossing devices.

Mirrors ``aten/src/ATen/native/Copy.cpp``. A same-device copy is one strided loop with a cast.
float16 and bfloat16 pass through float32, converted on their bit patterns (Numba has no CPU
float16). A cross-device copy moves contiguous bytes, then lays them out on the far side.
"""

import numpy as np

from ...c10 import scalar_type as st
from ...c10.device import as_device
from ...c10.dispatch_key import DispatchKey, DispatchKeySet
from ...c10.exception import warn_once
from ...c10.memory_format import contiguous_format, preserve_format
from ...c10.storage import UntypedStorage
from ...c10.tensor_impl import TensorImpl
from .. import dispatcher
from ..empty_tensor import _meta
from ..tensor_iterator import TensorIterator, TensorIteratorConfig, scratch_like
from . import scalar_ops as ops
from .dispatch_stub import loops
from .tensor_factories import _host_impl, empty_strided, like_strides, wrap_scalar


def buffer(t):
    """The typed flat buffer behind a tensor (bit patterns for the 16-bit floats)."""
    return t._impl.storage.typed(t.dtype)


def _copy_iterator(dst, src):
    """``copy_``'s TensorIterator: ``dst`` keeps its shape and dtype, ``src`` is read as it is (the
    loop converts), no overlap check (``copy_`` checks itself, before broadcasting)."""
    return (TensorIteratorConfig().add_output(dst).add_const_input(src).resize_outputs(False)
            .check_mem_overlap(False).compute_in_opmath(False).only_moves().build())


_TO_FLOAT = {st.float16: ops.HALF_BITS_TO_FLOAT, st.bfloat16: ops.BF16_BITS_TO_FLOAT,
             st.float8_e4m3fn: ops.E4M3FN_BITS_TO_FLOAT, st.float8_e5m2: ops.E5M2_BITS_TO_FLOAT,
             st.float8_e4m3fnuz: ops.E4M3FNUZ_BITS_TO_FLOAT, st.float8_e5m2fnuz: ops.E5M2FNUZ_BITS_TO_FLOAT,
             st.float8_e8m0fnu: ops.E8M0FNU_BITS_TO_FLOAT}
_FROM_FLOAT = {st.float16: ops.FLOAT_BITS_TO_HALF, st.bfloat16: ops.FLOAT_BITS_TO_BF16,
               st.float8_e4m3fn: ops.FLOAT_BITS_TO_E4M3FN, st.float8_e5m2: ops.FLOAT_BITS_TO_E5M2,
               st.float8_e4m3fnuz: ops.FLOAT_BITS_TO_E4M3FNUZ, st.float8_e5m2fnuz: ops.FLOAT_BITS_TO_E5M2FNUZ,
               st.float8_e8m0fnu: ops.FLOAT_BITS_TO_E8M0FNU}

# The float8 types whose NaN becomes 0 as an integer in torch's casts (their NaN reaches float as
# a constant, and the compiler folds the float -> int conversion of it, which C leaves undefined)
_NAN_AS_ZERO_INTEGER = frozenset((st.float8_e4m3fnuz, st.float8_e5m2fnuz, st.float8_e8m0fnu))


def same_device_copy(dst, src):
    """dst[...] = src[...] (same shape, same device) with a cast.

    float16 and bfloat16 convert through float32 on their bit patterns (Numba has no CPU float16):
    as 32-bit words for the float32 side, the loop then runs a bit conversion. So do the float8
    types, as c10's do (a double becomes a float first: ``Float8_e4m3fn(float)``).
    """
    if (src.dtype is st.complex32) is not (dst.dtype is st.complex32):
        return _complex32_copy(dst, src)
    if src.dtype.is_complex and not dst.dtype.is_complex:
        return _complex_to_real_copy(dst, src)
    if src.dtype in _TO_FLOAT and src.dtype is not dst.dtype:
        wide = scratch_like(src, st.float32)
        _bits_copy(wide, src, _TO_FLOAT[src.dtype])
        if src.dtype in _NAN_AS_ZERO_INTEGER and dst.dtype.category == st.INTEGRAL:
            _bits_copy(wide, wide, ops.NAN_BITS_TO_ZERO)
        return same_device_copy(dst, wide)
    if dst.dtype in _FROM_FLOAT and src.dtype is not dst.dtype:
        return _bits_copy(dst, cast_like(src, st.float32), _FROM_FLOAT[dst.dtype])
    if dst.dtype is st.uint8 and src.dtype.is_floating_point:
        # c10's ``static_cast_with_inter_type<uint8_t>``: a float reaches uint8 through int64, so
        # -2**31 - 1.0 wraps to 255 (a direct cast goes through int32 and gives 0).
        return same_device_copy(dst, cast_like(src, st.int64))
    it = _copy_iterator(dst, src)
    it.for_each(lambda buffers, *geometry: loops(dst.device).copy_loop(*buffers, *geometry))


def pairs(t):
    """A complex tensor's (float) parts, one dim more: ``_view_as_real_physical``, not dispatched
    (a kernel's own view, nobody else sees it)."""
    impl = t._impl
    alias = TensorImpl(impl.storage, (*impl.sizes, 2), (*(2 * s for s in impl.strides), 1), 2 * impl.storage_offset,
                       st.to_real(impl.dtype), impl.version_counter)
    return type(t)._from_impl(alias)


def part(t, k):
    """Part ``k`` (0 real, 1 imaginary) of a complex tensor's elements, a view of its floats."""
    impl = t._impl
    return type(t)._from_impl(TensorImpl(impl.storage, impl.sizes, tuple(2 * s for s in impl.strides),
                                         2 * impl.storage_offset + k, st.to_real(impl.dtype), impl.version_counter))


def conj_complex32_(t):
    """The conjugates of a complex32 tensor, in place: its float16 imaginary parts negated
    (exact), since no loop computes with complex32 words."""
    from .unary_ops import unary_op_impl  # unary_ops builds on this module
    imag = part(t, 1)
    unary_op_impl(ops.NEG, imag, out=imag)
    return t


def _complex32_copy(dst, src):
    """A cast into or out of complex32 (``c10::complex<c10::Half>``), part by part as c10's
    conversions go: into it, the source as complex64 (or complex128) first, each part then
    rounded to float16 (a double rounds through float, as ``c10::Half`` takes a float); out of
    it, through complex64, which holds every float16 exactly."""
    if dst.dtype is st.complex32:
        if not src.dtype.is_complex:
            src = cast_like(src, st.complex64)
        return same_device_copy(pairs(dst), pairs(src))
    wide = scratch_like(src, st.complex64)
    same_device_copy(pairs(wide), pairs(src))
    return same_device_copy(dst, wide)


def _complex_to_real_copy(dst, src):
    """Complex into a real dtype: the real part (torch warns once that the imaginary part is
    lost), through a real dtype of the same width; into bool: nonzero-ness, without a warning."""
    if dst.dtype is st.bool_:
        it = _copy_iterator(dst, src)
        return it.for_each(lambda buffers, *geometry: loops(dst.device).unary_loop(ops.NONZERO, *buffers, *geometry))
    warn_once("_complex_to_real_copy", "Casting complex values to real discards the imaginary part", UserWarning,
              stacklevel=2)
    real = scratch_like(src, st.to_real(src.dtype))
    it = _copy_iterator(real, src)
    it.for_each(lambda buffers, *geometry: loops(dst.device).unary_loop(ops.REAL_PART, *buffers, *geometry))
    return same_device_copy(dst, real)


def _bits_copy(dst, src, op):
    """One bit-level conversion between a float32 tensor and a 16- or 8-bit one (same shape)."""
    def as_bits(b):
        return b.view(np.uint32) if b.dtype == np.float32 else b
    it = _copy_iterator(dst, src)
    it.for_each(lambda buffers, *geometry: loops(dst.device).unary_loop(op, *map(as_bits, buffers), *geometry))


def cast_like(src, dtype):
    """``src`` in ``dtype``, with its layout (a kernel's cast, not dispatched)."""
    impl = src._impl        # read directly: a wrapped ``x * 2`` is cast here on every call
    if impl.dtype is dtype:
        return src
    if impl.is_wrapped_number is st.WRAPPED_UINT64 and dtype.category > st.INTEGRAL:   # uint64 -> float:
        src = wrap_scalar(float(st.wrapped_uint64_value(impl)))                         # its unsigned value
        impl = src._impl
    have = impl.dtype
    if (not impl.sizes and impl.device.type == "cpu" and not (have in _TO_FLOAT or dtype in _TO_FLOAT)
            and dtype.is_complex >= have.is_complex        # complex -> real takes the loop (and warns)
            and have is not st.complex32 and dtype is not st.complex32     # (NumPy has no complex32 to cast with)
            and not _meta.active):       # (a fake's number, ``n`` of a traced size, has no value)
        return _cast_scalar(src, dtype)
    out = scratch_like(src, dtype)
    same_device_copy(out, src)
    return out


def to(x, dtype):
    """``x.to(dtype)`` below the frontend (``TensorConversions.cpp``'s ``to``): ``x`` itself when
    the dtype already matches, else ``_to_copy`` through the dispatcher."""
    return x if x.dtype is dtype else dispatcher.call("_to_copy", x, dtype=dtype)


def to_device(x, dtype, device):
    """``x.to(dtype=dtype, device=device)`` below the frontend: ``x`` itself when both already
    match, else ``_to_copy`` through the dispatcher."""
    device = as_device(device)
    if x.dtype is dtype and x.device == device:
        return x
    return dispatcher.call("_to_copy", x, dtype=dtype, device=device, non_blocking=False,
                           memory_format=preserve_format)


def cpu(x):
    """``x.cpu()`` below the frontend."""
    return to_device(x, x.dtype, "cpu")


def contiguous(x):
    """``x.contiguous()`` below the frontend (``TensorBase::contiguous``): ``x`` itself when it is
    contiguous, else a ``clone`` through the dispatcher."""
    return x if x.is_contiguous() else dispatcher.call("clone", x, memory_format=contiguous_format)


def _cast_scalar(src, dtype):
    """A 0-dim CPU tensor cast on the host: a wrapped Python number (``x * 2``) is cast on every
    call, and a loop over one element would cost more than the op. NumPy converts as C does, as
    the loop would (the 16-bit floats, cast on their bit patterns, take the loop)."""
    impl = src._impl
    value = impl.storage.typed(impl.dtype)[impl.storage_offset]
    if impl.dtype.category <= st.INTEGRAL:     # the usual ``x * 2``: an integer (or bool) raises no FP flag
        return type(src)._from_impl(_host_impl(np.array(value, dtype=dtype.numpy_type)))
    with np.errstate(over="ignore", invalid="ignore"):      # a C cast warns of nothing (1e39 -> inf)
        if dtype is st.uint8 and impl.dtype.is_floating_point:
            value = np.array(value).astype(np.int64)        # through int64, as the loop above
        return type(src)._from_impl(_host_impl(np.array(value, dtype=dtype.numpy_type)))


def _cross_device_copy(dst, src):
    """Copy between the host and the device through contiguous bytes."""
    from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
    staged = contiguous(to(src, dst.dtype))
    raw = staged._impl.storage._data[staged.storage_offset() * staged.element_size():][: staged.nbytes]
    moved = cuda.to_device(raw) if dst.device.type == "cuda" else raw.copy_to_host()
    impl = TensorImpl(UntypedStorage(len(moved), dst.device, data=moved), staged.shape, staged.stride(), 0, dst.dtype)
    same_device_copy(dst, type(dst)._from_impl(impl))


def copy_(dst, src, non_blocking=False):
    """The overlap and shape checks of ``copy_``'s TensorIterator, then a same-device loop or a
    move across devices. A copy of the very same elements returns at once (``copy_impl``), so
    ``x.copy_(x)`` on an expanded ``x`` is no overlap error."""
    if (dst._impl.key_set.bits | src._impl.key_set.bits) & _MATH_BITS.bits:
        return _copy_through_math_bits(dst, src, non_blocking)
    d, s = dst._impl, src._impl
    if (d.storage is s.storage and d.storage_offset == s.storage_offset and d.strides == s.strides
            and d.sizes == s.sizes and d.dtype is s.dtype):
        return dst
    it = (TensorIteratorConfig().add_output(dst).add_const_input(src).resize_outputs(False)
          .compute_in_opmath(False))
    it = TensorIterator(it)
    it.compute_mem_overlaps()
    it.compute_shape()      # src broadcasts to dst's shape in the loops' iterators: no expand op runs
    if src.device == dst.device:
        same_device_copy(dst, src)
    else:
        _cross_device_copy(dst, src)
    return dst


def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    """``_to_copy`` (what ``Tensor.to`` calls): a new tensor with ``self``'s layout in ``dtype`` on
    ``device``, filled by ``copy_``'s kernel."""
    device = as_device(device) if device is not None else self.device
    out = empty_strided(self.shape, like_strides(self, memory_format), dtype=dtype or self.dtype, device=device,
                        pin_memory=pin_memory)
    return copy_(out, self, non_blocking)


def fill_(t, value):
    if t.dtype is st.complex32:     # each float16 part filled with its part of the value
        value = complex(st.checked_convert(value, st.complex64))
        fill_(part(t, 0), value.real)
        fill_(part(t, 1), value.imag)
        return t
    if t.dtype in _TO_FLOAT and t.device.type == "cpu" and t._impl.numel() == 1:
        # ``scalar_fill`` (Fill.cpp): one CPU element reads the value as a double and casts it
        # unchecked (1e6 makes a one-element float16 inf; two elements refuse it)
        with np.errstate(over="ignore"):
            value = np.float32(st.checked_convert(value, st.float64))
    else:
        value = st.checked_convert(value, t.dtype)     # 300 into int8 is an error, even for an empty t
    it = TensorIterator.nullary_op(t)
    return it.for_each(lambda buffers, *geometry: loops(t.device).fill_loop(*buffers, value, *geometry))


def fill_tensor_(t, value):
    """``fill_.Tensor`` (``Fill.cpp``): from another device, the value is read as a number and
    filled in; on the same device it is a ``copy_`` of the 0-dim value -- with copy_'s overlap
    check, so an expanded ``t`` is refused -- from a clone if ``value`` shares ``t``'s storage."""
    if value.dim() != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    if t.device != value.device:
        return fill_(t, value.item())
    if t._impl.storage is value._impl.storage:     # ``is_alias_of``: the value would be overwritten
        value = dispatcher.call("clone", value)
    return dispatcher.call("copy_", t, value)


def zero_(t):
    """torch's CPU kernel memsets a small dense tensor and otherwise calls ``fill_`` with 0; this
    one always fills (the kernel, not the operator: no nested dispatch)."""
    return fill_(t, 0)


def clone(x, memory_format=None):
    """A new tensor with ``x``'s values: a lazy conjugate's or negative's shown values, resolved
    (``empty_like`` makes no bit, so ``copy_`` applies them), as torch's ``clone``."""
    out = empty_strided(x.shape, like_strides(x, memory_format), dtype=x.dtype, device=x.device)
    if x._impl.key_set.bits & _MATH_BITS.bits:
        return _copy_through_math_bits(out, x, False)
    same_device_copy(out, x)
    return out


# The lazy math bits (math_bits_fallback.py): copy_ and clone are the fallback's building
# blocks, so they read the bits themselves instead of getting resolved inputs.
_MATH_BITS = DispatchKeySet([DispatchKey.Conjugate, DispatchKey.Negative])


def _stored(t):
    """``t`` without its math bits: the same storage, sizes and strides, showing the stored
    values. Not a tracked view: only this module's loops see it."""
    impl = t._impl
    alias = TensorImpl(impl.storage, impl.sizes, impl.strides, impl.storage_offset, impl.dtype, impl.version_counter)
    alias.key_set = impl.key_set - _MATH_BITS
    return type(t)._from_impl(alias)


def _copy_through_math_bits(dst, src, non_blocking):
    """``copy_impl`` with math bits (``Copy.cpp`` and the CPU copy kernel): the stored values are
    copied, then conjugated where the two conjugate bits differ and negated where the two
    negative bits differ, so ``dst`` shows ``src``'s values whatever either stores."""
    from .unary_ops import unary_op_impl  # unary_ops builds on this module
    target = _stored(dst)
    copy_(target, _stored(src), non_blocking)
    if dst._impl.is_conj() != src._impl.is_conj() and dst.dtype is st.complex32:
        conj_complex32_(target)
    elif dst._impl.is_conj() != src._impl.is_conj() and dst.dtype.is_complex:
        unary_op_impl(ops.CONJ, target, out=target)
    if dst._impl.is_neg() != src._impl.is_neg():
        if dst.dtype is st.bool_:
            raise NotImplementedError(f'"neg_{dst.device.type}" not implemented for \'Bool\'')
        unary_op_impl(ops.NEG, target, out=target)
    return dst


# The functional twins of the in-place writes (torch generates ``zero``, ``fill`` and ``copy``
# from ``zero_``, ``fill_`` and ``copy_``): a fresh copy of ``self``, written in place. They are
# what functionalization puts where a traced program wrote into a tensor.
def zero(x):
    return dispatcher.call("zero_", dispatcher.call("clone", x))


def fill(x, value):
    return dispatcher.call("fill_.Scalar", dispatcher.call("clone", x), value)


def fill_tensor(x, value):
    return dispatcher.call("fill_.Tensor", dispatcher.call("clone", x), value)


def copy(x, src, non_blocking=False):
    """``at::copy`` starts from ``clone_preserve_strides``: the whole storage copied, so the result
    keeps ``x``'s strides and offset even where ``x`` is not dense."""
    from .tensor_shape import clone_preserve_strides  # tensor_shape imports this module
    return dispatcher.call("copy_", clone_preserve_strides(x), src, non_blocking)


__all__ = ["copy_", "_to_copy", "fill_", "fill_tensor_", "zero_", "clone", "buffer", "cast_like", "same_device_copy",
           "zero", "fill", "fill_tensor", "copy"]
