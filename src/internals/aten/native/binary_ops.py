"""Binary operators (``aten/src/ATen/native/BinaryOps.cpp``, ``Pow.cpp``, ``TensorCompare.cpp``,
``Lerp.cpp``).

Declared as torch declares them, structured: per family a **meta** step (the argument checks
and the TensorIterator: broadcast shape, common and output dtype, the output allocated or
``out=`` resized) and an **impl** step (the loop, with the op number of the scalar function
for the compute dtype, or an answer that needs no loop). ``structured(meta, impl)`` makes the
out= kernel, which the YAML names (``structured: True``); the functional and in-place kernels
are derived from it (``structured_delegate:``, see ``structured.structured_variant``). The
overloads torch writes in terms of another (a number wrapped as a tensor, ``floor_divide``,
the logical operators, clamp) call the derived kernels directly.
"""
import functools

import numpy as np

from ..._tensor_base import TensorBase
from ...c10 import scalar_type as st
from ...c10.dispatch_key import DispatchKey
from ...c10.local_dispatch_key_set import tls
from ..dispatcher import call
from ..tensor_iterator import BinaryOpConfig, TensorIterator, TensorIteratorConfig
from . import scalar_ops as ops
from .copy import cast_like, to
from .dispatch_stub import loops, refuse_float8, refuse_unlisted_dtypes
from .elementwise import binary_loop as _run  # each impl's last step: the loop of an op number
from .elementwise import common_device, complex32_in_opmath, complex32_product, complex32_sum, rounded_to_complex32
from .structured import structured, structured_variant
from .tensor_factories import wrap_scalar


def _alpha_check(common, alpha):
    """``alpha_check`` (BinaryOps.h), in its order: a complex alpha on integers fails the first
    check that applies, the float one."""
    if isinstance(alpha, bool) and common is not st.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if common.category <= st.INTEGRAL and isinstance(alpha, (float, complex)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not common.is_complex and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def _sub_check(self, other):
    """``sub_check``: no bool operand, whatever the other one is."""
    if st.bool_ in (self.dtype, other.dtype):
        if self.dtype is other.dtype:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _rounded_to_16_bits(value, dtype):
    """A float32 value rounded to float16 or bfloat16 and widened again."""
    bits = np.float32(value).view(np.uint32)
    if dtype is st.float16:
        return np.uint32(ops.half_bits_to_float(ops.float_bits_to_half(bits))).view(np.float32)
    return np.uint32(ops.bf16_bits_to_float(ops.float_bits_to_bf16(bits))).view(np.float32)


def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}_cpu" not implemented for \'{dtype.torch_name}\'')


def _alpha(it, alpha):
    """alpha in the compute dtype; a float16 or bfloat16 result rounds it to that dtype first
    (``alpha.to<scalar_t>()``), checked against that dtype's range, not float's."""
    if it.common_dtype.is_reduced_float:
        st.checked_convert(alpha, it.common_dtype)
        return _rounded_to_16_bits(st.checked_convert(alpha, it.compute_dtype), it.common_dtype)
    if type(alpha) is int:      # alpha=1, the default, on nearly every call: looked up, no frame
        return _int_alpha(alpha, it.compute_dtype)
    return st.checked_convert(alpha, it.compute_dtype)


# ``checked_convert`` of an int alpha, remembered (``typed``: True stays apart from 1, as a bool
# alpha is a bool); an alpha out of range raises each time, as nothing is remembered for it
_int_alpha = functools.lru_cache(maxsize=256, typed=True)(st.checked_convert)


# ---- add and sub: TORCH_META_FUNC2(add, Tensor), TORCH_IMPL_FUNC(add_out)
def meta_add(out, self, other, *, alpha=1):
    """``alpha_check`` where alpha is not an int, then the binary iterator."""
    if type(alpha) is not int:
        _alpha_check(st.result_type(self, other), alpha)
    return BinaryOpConfig(out, self, other).build()


def _complex32_scaled(other, alpha):
    """``alpha * other`` as ``ufunc::add`` computes it on ``c10::complex<c10::Half>``: alpha
    converted to complex32, the product rounded to complex32 before the sum; alpha 1 multiplies
    too, so ``(1+2j) + (inf+0j)`` is inf+nanj (1*0 + 0*inf), as torch's is."""
    return rounded_to_complex32(complex32_product(rounded_to_complex32(wrap_scalar(alpha)), other))


def impl_add(it, self, other, *, alpha=1):
    if it.common_dtype is st.complex32:
        return complex32_in_opmath(it.result, lambda a, b: complex32_sum(a, _complex32_scaled(b, alpha)),
                                   self, other)
    return _run(it, ops.ADD, _alpha(it, alpha))


add_out = structured(meta_add, impl_add)     # and from it add.Tensor, add_.Tensor


def meta_sub(out, self, other, *, alpha=1):
    """``sub_check`` (no bool operand) and alpha's checks, then the binary iterator."""
    _sub_check(self, other)
    _alpha_check(st.result_type(self, other), alpha)
    return BinaryOpConfig(out, self, other).build()


def impl_sub(it, self, other, *, alpha=1):
    if it.common_dtype is st.complex32:      # ``add_stub(device_type(), *this, -alpha)``
        return complex32_in_opmath(it.result, lambda a, b: complex32_sum(a, _complex32_scaled(b, -alpha)),
                                   self, other)
    return _run(it, ops.SUB, _alpha(it, alpha))


sub_out = structured(meta_sub, impl_sub)
_sub = structured_variant(sub_out, inplace=False)


def rsub(self, other, *, alpha=1):
    """``rsub.Tensor``: ``other - alpha * self``, sub with its operands swapped (sub's checks,
    iterator and loop; a mode sees ``rsub`` alone, as torch's kernel redispatches below it)."""
    return _sub(other, self, alpha=alpha)


def rsub_scalar(self, other, alpha=1):
    """``rsub.Scalar``: ``other - alpha * self`` (``1 - x``)."""
    return _sub(wrap_scalar(other), self, alpha=alpha)


# ---- mul and true division: TORCH_META_FUNC2(mul, Tensor), TORCH_META_FUNC2(div, Tensor)
def meta_mul(out, self, other):
    """The binary iterator; a one-element ``other`` is read at opmath precision from its own
    dtype (``mul_kernel``'s ``original_scalar_value``): float16 ``x * 2.3`` uses 2.3f."""
    return BinaryOpConfig(out, self, other).read_original_scalar(1).build()


def impl_mul(it, self, other):
    if it.common_dtype is st.complex32:        # ``mul_kernel``'s kComplexHalf branch
        return complex32_in_opmath(it.result, complex32_product, self, other)
    return _run(it, ops.MUL, _int_alpha(1, it.compute_dtype))


mul_out = structured(meta_mul, impl_mul)


def meta_div(out, self, other):
    """``build_borrowing_binary_float_op``: integer operands divide as the default float."""
    return BinaryOpConfig(out, self, other).promote_integer_inputs_to_float().read_original_scalar(1).build()


def impl_div(it, self, other):
    op = ops.DIV_COMPLEX if it.compute_dtype.is_complex else ops.DIV
    return _run(it, op, _int_alpha(1, it.compute_dtype))


div_out = structured(meta_div, impl_div)


# ---- pow (Pow.cpp): TORCH_META_FUNC2(pow, Tensor_Tensor), (pow, Tensor_Scalar), (pow, Scalar)
def _check_pow(base, exponent):
    """pow's checks before its iterator: bool has no pow (but ``x ** 0`` and ``x ** 1`` need
    none), and integers take no negative integer power (NumPy's rule, pow.Tensor_Scalar's meta)."""
    common = st.result_type(base, exponent)
    if common is st.bool_ and not _pow_by_zero_or_one(exponent):
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    if common.category <= st.INTEGRAL and exponent._impl.is_wrapped_number and exponent.item() < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _pow_by_zero_or_one(exponent):
    return exponent._impl.is_wrapped_number and exponent.item() in (0, 1)


def _one_to_the(base):
    """A wrapped base equal to 1 (Scalar::equal: True is not 1)."""
    return base._impl.is_wrapped_number and base.dtype is not st.bool_ and base.item() == 1


def _pow_impl(it, base, exponent):
    """The impl of the three overloads: the answers that need no loop (``x ** 0`` fills ones,
    ``x ** 1`` copies, ``1 ** x`` fills ones), else the loop of the compute dtype's pow: exact
    for integers, ``pow_tensor_scalar_kernel``'s short cuts for a number exponent of a float or
    double, the complex ones (with their own short cuts for a number exponent)."""
    if _pow_by_zero_or_one(exponent):
        if exponent.item() == 0:
            return call("fill_.Scalar", it.result, 1)
        return call("copy_", it.result, base)
    if _one_to_the(base):
        return call("fill_.Scalar", it.result, 1)
    return _run(it, _pow_op(it, exponent._impl.is_wrapped_number), _one(it))


def _pow_op(it, number_exponent):
    if it.compute_dtype.is_complex:
        return ops.POW_COMPLEX_SCALAR if number_exponent else ops.POW_COMPLEX
    if not it.compute_dtype.is_floating_point:
        return ops.INT_POW
    if number_exponent and it.common_dtype in (st.float32, st.float64):
        return ops.POW_FLOAT_SCALAR     # the 16-bit floats have short cuts of their own
    return ops.POW


def _one(it):
    """The loop's unused scalar argument, in the compute dtype."""
    return st.checked_convert(1, it.compute_dtype)


def meta_pow_tensor_tensor(out, self, exponent):
    _check_pow(self, exponent)
    return BinaryOpConfig(out, self, exponent).build()


def impl_pow_tensor_tensor(it, self, exponent):
    return _pow_impl(it, self, exponent)


pow_tensor_tensor_out = structured(meta_pow_tensor_tensor, impl_pow_tensor_tensor)


def meta_pow_tensor_scalar(out, self, exponent):
    """``exponent`` read as the kernel reads it (``check_pow_exponent``), then as pow.Tensor_Tensor
    with the number wrapped."""
    check_pow_exponent(self, exponent)
    return meta_pow_tensor_tensor(out, self, wrap_scalar(exponent))


def impl_pow_tensor_scalar(it, self, exponent):
    if _float32_loses(self, exponent):
        return _pow_float32(it, self, exponent)
    return _pow_impl(it, self, wrap_scalar(exponent))


pow_tensor_scalar_out = structured(meta_pow_tensor_scalar, impl_pow_tensor_scalar)
pow_tensor_scalar = structured_variant(pow_tensor_scalar_out, inplace=False)


def meta_pow_scalar(out, self, exponent):
    """``pow.Scalar``: a Python number raised to a tensor (``2 ** x``). torch's meta step makes
    the output contiguous, whatever the exponent's layout, then the impl runs pow.Tensor_Tensor
    into it with the number wrapped."""
    base = wrap_scalar(self)
    if out is None:
        out = call("empty.memory_format", list(exponent.shape), dtype=st.result_type(base, exponent),
                   device=exponent.device)
    return meta_pow_tensor_tensor(out, base, exponent)


def impl_pow_scalar(it, self, exponent):
    return _pow_impl(it, wrap_scalar(self), exponent)


pow_scalar_out = structured(meta_pow_scalar, impl_pow_scalar)


def check_pow_exponent(self, exponent):
    """``pow_tensor_scalar_kernel`` (``PowKernel.cpp``) takes the exponent as a double for float
    and double, as a complex double for complex types, and as the result's own type otherwise:
    300 is no uint8 exponent, 1e6 no float16. Before that, pow's meta function reads an integer
    exponent of an integer base as an int64 (``exp.toLong()``)."""
    if self.dtype.category <= st.INTEGRAL and type(exponent) is int and exponent >= 2**63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    dtype = st.result_type(self, exponent)
    if dtype in (st.float32, st.float64) or dtype.is_complex or (not dtype.is_floating_point and exponent < 0):
        return          # (negative integer powers are refused by the kernel, with torch's message)
    st.checked_convert(exponent, dtype)


# ``pow_tensor_scalar_optimized_kernel`` (PowKernel.cpp) hands a float32 loop its exponent as a
# double: the scalar loop computes ``std::pow(float, double)`` in double, while the vectorized
# loop (``Vectorized<float>::pow``) rounds the exponent to float32 first. ``cpu_kernel_vec`` runs
# the vectorized loop over blocks of two 8-lane vectors of a contiguous run and the scalar loop on
# the rest, and on every element of a run that is not contiguous (an integer tensor is cast to a
# contiguous float32 copy first, whose run is). So ``x ** 5e-324`` is ``x ** 0``
# on the first 32 elements of a contiguous float32 tensor and ``x ** 5e-324`` after them.
_VECTORIZED_BLOCK = 32


def _float32_loses(self, exponent):
    """A float exponent that float32 rounds, raising a tensor computed in float32."""
    if not isinstance(exponent, float) or exponent != exponent or st.result_type(self, exponent) is not st.float32:
        return False
    with np.errstate(over="ignore"):
        return float(np.float32(exponent)) != exponent


def _pow_float32(it, self, exponent):
    """Both loops' values: the vectorized one where torch runs it, the scalar one elsewhere. The
    blocks are counted in the memory order of a result laid out as the input is, so an ``out=``
    that is not ``self`` receives such a result, copied."""
    given = it.config.given_outputs
    if given and given[0] is not self:
        return call("copy_", it.result, pow_tensor_scalar(self, exponent))
    scalar_loop = to(pow_tensor_scalar(to(self, st.float64), exponent), st.float32)    # before self is written
    result = _pow_impl(it, self, wrap_scalar(exponent))
    if self.dtype is st.float32 and not self._impl.is_non_overlapping_and_dense():
        return call("copy_", result, scalar_loop)
    n = result.numel()
    start = n // _VECTORIZED_BLOCK * _VECTORIZED_BLOCK
    if start < n:   # a dense tensor's elements fill [offset, offset + n) of its storage
        def tail(t):
            return call("as_strided", t, [n - start], [1], t.storage_offset() + start)
        call("copy_", tail(result), tail(scalar_loop))
    return result


# ---- the everyday binary operators (BinaryOps.cpp, BinaryOpsKernel.cpp): TORCH_META_FUNC(atan2)
# and the rest, each a binary iterator after checks of the dtype the operands promote to
def _real_binary(name, op, *, float_op=False, floating_only=False, int_op=None, refuse_complex=None, kernel=None,
                 wide_only=False):
    """The out= kernel of one real-valued binary operator. Complex operands are refused by the
    kernel (``AT_DISPATCH_...`` in the impl, so after the iterator's own checks) by its name,
    unless ``refuse_complex`` words it (``not implemented for complex tensors``), "before" the
    iterator (fmax's meta) or "after" it (maximum's). ``float_op`` ones compute integers and bool
    as the default float (``build_borrowing_binary_float_op``); ``floating_only`` ones refuse
    integers and bool (``AT_DISPATCH_FLOATING_TYPES``), ``wide_only`` ones the 16-bit floats as
    well; ``int_op`` is the op for integer and bool operands. ``kernel`` names the kernel in the
    refusal, when it is not the operator's name."""
    def meta(out, self, other):
        if refuse_complex == "before" and st.result_type(self, other).is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        config = BinaryOpConfig(out, self, other)
        return (config.promote_integer_inputs_to_float() if float_op else config).build()

    def impl(it, self, other):
        common = it.common_dtype
        if common.is_complex and refuse_complex == "after":
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        refused = (floating_only and not common.is_floating_point) or (wide_only and common.is_reduced_float)
        if common.is_complex or refused:
            raise _not_implemented(kernel or name, common)
        use_int = int_op is not None and not common.is_floating_point
        return _run(it, int_op if use_int else op, _one(it))
    meta.__name__, meta.__module__ = f"meta_{name}", __name__
    return structured(meta, impl)


atan2_out = _real_binary("atan2", ops.ATAN2, float_op=True)
copysign_out = _real_binary("copysign", ops.COPYSIGN, float_op=True)
xlogy_out = _real_binary("xlogy", ops.XLOGY, float_op=True)
special_xlog1py_out = _real_binary("special_xlog1py", ops.XLOG1PY, float_op=True, kernel="xlog1py")
# the Hurwitz zeta function: computed in double for float32 too (Math.h's zeta sums in acc_type)
special_zeta_out = _real_binary("special_zeta", ops.ZETA, float_op=True, wide_only=True, kernel="zeta")
hypot_out = _real_binary("hypot", ops.HYPOT, floating_only=True)
logaddexp_out = _real_binary("logaddexp", ops.LOGADDEXP, floating_only=True)
logaddexp2_out = _real_binary("logaddexp2", ops.LOGADDEXP2, floating_only=True)
fmax_out = _real_binary("fmax", ops.FMAX, int_op=ops.MAXIMUM, refuse_complex="before")
fmin_out = _real_binary("fmin", ops.FMIN, int_op=ops.MINIMUM, refuse_complex="before")
maximum_out = _real_binary("maximum", ops.MAXIMUM, refuse_complex="after")
minimum_out = _real_binary("minimum", ops.MINIMUM, refuse_complex="after")
_maximum = structured_variant(maximum_out, inplace=False)      # clamp's steps
_minimum = structured_variant(minimum_out, inplace=False)


def max_other(self, other):
    """``max.other`` (``BinaryOps.cpp``): CompositeImplicitAutograd, maximum under max's name."""
    return call("maximum", self, other)


def min_other(self, other):
    return call("minimum", self, other)


def max_other_out(self, other, *, out):
    """``max.out``: maximum's out= form, as torch's ``max_out`` calls ``at::maximum_out``."""
    return call("maximum.out", self, other, out=out)


def min_other_out(self, other, *, out):
    return call("minimum.out", self, other, out=out)


def arctan2(a, b):
    """CompositeImplicitAutograd: atan2 under NumPy's name."""
    return call("atan2", a, b)


def arctan2_(a, b):
    return call("atan2_", a, b)


def arctan2_out(a, b, *, out):
    return call("atan2.out", a, b, out=out)


def copysign_scalar(a, b):
    """``copysign.Scalar`` (CompositeExplicitAutograd): the number wrapped, then ``copysign.Tensor``."""
    return call("copysign.Tensor", a, wrap_scalar(b))


def copysign_scalar_(a, b):
    return call("copysign_.Tensor", a, wrap_scalar(b))


def copysign_scalar_out(a, b, *, out):
    """``copysign.Scalar_out`` (CompositeExplicitAutograd): the number wrapped, then ``copysign.out``."""
    return call("copysign.out", a, wrap_scalar(b), out=out)


def xlogy_scalar_self_out(a, b, *, out):
    return call("xlogy.OutTensor", wrap_scalar(a), b, out=out)


def xlogy_scalar_other_out(a, b, *, out):
    return call("xlogy.OutTensor", a, wrap_scalar(b), out=out)


def xlogy_scalar_self(a, b):
    return call("xlogy.Tensor", wrap_scalar(a), b)


def xlogy_scalar_other(a, b):
    return call("xlogy.Tensor", a, wrap_scalar(b))


def xlogy_scalar_other_(a, b):
    return call("xlogy_.Tensor", a, wrap_scalar(b))


def _number_overloads(name):
    """The four Scalar overloads of a special binary operator (CompositeExplicitAutograd in
    BinaryOps.cpp): the number wrapped into a tensor, then the Tensor-Tensor operator or its out= form."""
    def self_scalar(a, b):
        return call(name, wrap_scalar(a), b)

    def other_scalar(a, b):
        return call(name, a, wrap_scalar(b))

    def self_scalar_out(a, b, *, out):
        return call(name + ".out", wrap_scalar(a), b, out=out)

    def other_scalar_out(a, b, *, out):
        return call(name + ".out", a, wrap_scalar(b), out=out)
    for fn, suffix in ((self_scalar, "self_scalar"), (other_scalar, "other_scalar"),
                       (self_scalar_out, "self_scalar_out"), (other_scalar_out, "other_scalar_out")):
        fn.__name__ = fn.__qualname__ = f"{name}_{suffix}"
    return self_scalar, other_scalar, self_scalar_out, other_scalar_out


(special_xlog1py_self_scalar, special_xlog1py_other_scalar, special_xlog1py_self_scalar_out,
 special_xlog1py_other_scalar_out) = _number_overloads("special_xlog1py")
(special_zeta_self_scalar, special_zeta_other_scalar, special_zeta_self_scalar_out,
 special_zeta_other_scalar_out) = _number_overloads("special_zeta")


def meta_heaviside(out, self, values):
    """``values`` where x is 0, else 0 or 1 by the sign of x; both (and ``out``) of one real dtype."""
    if any(t is not None and t.dtype.is_complex for t in (self, values, out)):     # out too, first
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self.dtype is not values.dtype or (out is not None and out.dtype is not self.dtype):
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return BinaryOpConfig(out, self, values).build()


def impl_heaviside(it, self, values):
    return _run(it, ops.HEAVISIDE, _one(it))


heaviside_out = structured(meta_heaviside, impl_heaviside)


# ---- comparisons: TORCH_META_FUNC2(eq, Tensor) and the rest (``build_borrowing_comparison_op``)
def _comparison(name, op, ordered=True):
    """The Tensor and Scalar out= kernels of one comparison: a bool output (or ``out``'s dtype,
    cast into), and no kernel for complex operands where the comparison needs an order."""
    def meta(out, self, other):
        return TensorIterator.comparison_op(out, self, other)

    def impl(it, self, other):
        if ordered and it.compute_dtype.is_complex:
            raise _not_implemented(name, it.common_dtype)
        if it.common_dtype is st.complex32:     # compared as complex64, which holds each part exactly
            wide = [t if isinstance(t, TensorBase) else wrap_scalar(t) for t in (self, other)]    # a Scalar too
            wide = [cast_like(t, st.complex64) if t.dtype is st.complex32 else t for t in wide]
            it = TensorIterator.comparison_op(it.result, *wide)
        return _run(it, op, st.checked_convert(1, it.compute_dtype))

    def meta_scalar(out, self, other):
        return TensorIterator.comparison_op(out, self, wrap_scalar(other))

    def impl_scalar(it, self, other):
        return impl(it, self, other)
    meta.__name__, meta_scalar.__name__ = f"meta_{name}", f"meta_{name}_scalar"
    meta.__module__ = meta_scalar.__module__ = __name__
    return structured(meta, impl), structured(meta_scalar, impl_scalar)


eq_out, eq_scalar_out = _comparison("eq", ops.EQ, ordered=False)
ne_out, ne_scalar_out = _comparison("ne", ops.NE, ordered=False)
lt_out, lt_scalar_out = _comparison("lt", ops.LT)
le_out, le_scalar_out = _comparison("le", ops.LE)
gt_out, gt_scalar_out = _comparison("gt", ops.GT)
ge_out, ge_scalar_out = _comparison("ge", ops.GE)


# ---- division with a rounding mode, remainder and fmod: TORCH_META_FUNC2(div, Tensor_mode),
# TORCH_META_FUNC2(remainder, Tensor), TORCH_META_FUNC2(fmod, Tensor). Integers divide exactly
# (floored or truncated), floats through fmod, as ``BinaryOpsKernel.cpp`` does.
_ROUNDED = {"trunc": ("div_trunc", ops.DIV_TRUNC_INT, ops.DIV_TRUNC_FLOAT),
            "floor": ("div_floor", ops.DIV_FLOOR_INT, ops.DIV_FLOOR_FLOAT)}


def _check_divisor(b, common):
    """Integer division by zero raises in torch (``ZeroDivisionError``, a RuntimeError); a float's
    gives inf or NaN. The divisor is read in the common dtype, so 256 divides an int8 tensor as 0."""
    if not common.is_floating_point and call("any", call("eq.Scalar", to(b, common), 0)).item():
        raise RuntimeError("ZeroDivisionError")


def _meta_integer_division(name, out, self, other):
    """No kernel for bool or complex operands; no integer divisor of zero; the binary iterator."""
    common = st.result_type(self, other)
    if common is st.bool_ or common.is_complex:
        raise _not_implemented(name, common)
    _check_divisor(other, common)
    return BinaryOpConfig(out, self, other).build()


def _integer_or_float(it, int_op, float_op):
    return _run(it, float_op if it.common_dtype.is_floating_point else int_op, _one(it))


def meta_div_mode(out, self, other, *, rounding_mode=None):
    """True division (``rounding_mode=None``), or rounded toward zero ("trunc") or down ("floor")."""
    if rounding_mode is None:
        return meta_div(out, self, other)
    if rounding_mode not in _ROUNDED:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    return _meta_integer_division(_ROUNDED[rounding_mode][0], out, self, other)


def impl_div_mode(it, self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return impl_div(it, self, other)
    return _integer_or_float(it, *_ROUNDED[rounding_mode][1:])


div_mode_out = structured(meta_div_mode, impl_div_mode)
_div_mode, _div_mode_ = (structured_variant(div_mode_out, inplace) for inplace in (False, True))


def div_scalar_mode(a, b, *, rounding_mode=None):
    return _div_mode(a, wrap_scalar(b), rounding_mode=rounding_mode)


def div_scalar_mode_(a, b, *, rounding_mode=None):
    return _div_mode_(a, wrap_scalar(b), rounding_mode=rounding_mode)


def floor_divide(a, b):
    """Not structured in torch either: the iterator and loop of division rounded down."""
    return _div_mode(a, wrap_scalar(b), rounding_mode="floor")


def floor_divide_(a, b):
    return _div_mode_(a, wrap_scalar(b), rounding_mode="floor")


def floor_divide_out(self, other, *, out):
    """``floor_divide_out``: division rounded down into ``out``, checked as div's out= is."""
    return div_mode_out(self, other, rounding_mode="floor", out=out)


# ---- gcd and lcm: TORCH_META_FUNC(gcd), TORCH_META_FUNC(lcm): the binary iterator; the loops
# (``gcd_stub``, ``lcm_stub``) are compiled for the five integer types only.
_GCD_TYPES = (st.uint8, st.int8, st.int16, st.int32, st.int64)


def meta_gcd(out, self, other):
    return BinaryOpConfig(out, self, other).build()


def _integer_loop(name, op):
    def impl(it, self, other):
        if it.common_dtype not in _GCD_TYPES:       # AT_DISPATCH_INTEGRAL_TYPES
            raise _not_implemented(name, it.common_dtype)
        return _run(it, op, _one(it))
    impl.__name__ = impl.__qualname__ = f"impl_{name}"
    return impl


def meta_lcm(out, self, other):
    return BinaryOpConfig(out, self, other).build()


gcd_out = structured(meta_gcd, _integer_loop("gcd", ops.GCD))
lcm_out = structured(meta_lcm, _integer_loop("lcm", ops.LCM))


def meta_remainder(out, self, other):
    return _meta_integer_division("remainder", out, self, other)


def impl_remainder(it, self, other):
    return _integer_or_float(it, ops.REMAINDER_INT, ops.REMAINDER_FLOAT)


remainder_out = structured(meta_remainder, impl_remainder)
_remainder, _remainder_ = (structured_variant(remainder_out, inplace) for inplace in (False, True))


def remainder_scalar(a, b):
    """``remainder.Scalar`` and ``remainder.Scalar_Tensor``: the number wrapped, as remainder.Tensor."""
    return _remainder(wrap_scalar(a), wrap_scalar(b))


def remainder_scalar_(a, b):
    return _remainder_(a, wrap_scalar(b))


def meta_fmod(out, self, other):
    return _meta_integer_division("fmod", out, self, other)


def impl_fmod(it, self, other):
    return _integer_or_float(it, ops.FMOD_INT, ops.FMOD_FLOAT)


fmod_out = structured(meta_fmod, impl_fmod)
_fmod, _fmod_ = (structured_variant(fmod_out, inplace) for inplace in (False, True))


def fmod_scalar(a, b):
    return _fmod(a, wrap_scalar(b))


def fmod_scalar_(a, b):
    return _fmod_(a, wrap_scalar(b))


def _as_tensor(value):
    """A ``.Scalar`` overload's Python number, wrapped as the loops take it."""
    return value if hasattr(value, "_impl") else wrap_scalar(value)


# ---- bitwise and shift operators (BinaryOps.cpp): TORCH_META_FUNC2(bitwise_and, Tensor) and
# the rest, integers and bool only (shifts: integers only)
def _check_bitwise(kernel_name, common, bool_ok):
    if common.is_floating_point or common.is_complex or (common is st.bool_ and not bool_ok):
        raise _not_implemented(kernel_name, common)


def _bitwise(name, kernel_name, op, bool_ok=True):
    """The out= kernel of one bitwise operator (the dtype refused by the kernel, after the
    iterator's checks), and the kernels of its overloads that take a number (either operand:
    the dtype is checked before the number is wrapped, so a float's 2**63 is refused by dtype)."""
    def meta(out, self, other):
        return BinaryOpConfig(out, self, other).build()

    def impl(it, self, other):
        _check_bitwise(kernel_name, it.common_dtype, bool_ok)
        return _run(it, op, _one(it))
    meta.__name__, meta.__module__ = f"meta_{name}", __name__
    out_kernel = structured(meta, impl)
    functional, inplace = (structured_variant(out_kernel, inplace) for inplace in (False, True))

    def with_number(a, b):
        _check_bitwise(kernel_name, st.result_type(a, b), bool_ok)
        return functional(wrap_scalar(a), wrap_scalar(b))

    def with_number_(a, b):
        _check_bitwise(kernel_name, st.result_type(a, b), bool_ok)
        return inplace(a, wrap_scalar(b))
    with_number.__name__, with_number_.__name__ = f"{name}_scalar", f"{name}_scalar_"
    return out_kernel, with_number, with_number_


bitwise_and_out, bitwise_and_scalar, bitwise_and_scalar_ = _bitwise("bitwise_and", "bitwise_and", ops.BITWISE_AND)
bitwise_or_out, bitwise_or_scalar, bitwise_or_scalar_ = _bitwise("bitwise_or", "bitwise_or", ops.BITWISE_OR)
bitwise_xor_out, bitwise_xor_scalar, bitwise_xor_scalar_ = _bitwise("bitwise_xor", "bitwise_xor", ops.BITWISE_XOR)
bitwise_left_shift_out, bitwise_left_shift_scalar, bitwise_left_shift_scalar_ = _bitwise(
    "bitwise_left_shift", "lshift", ops.LSHIFT, bool_ok=False)
bitwise_right_shift_out, bitwise_right_shift_scalar, bitwise_right_shift_scalar_ = _bitwise(
    "bitwise_right_shift", "rshift", ops.RSHIFT, bool_ok=False)


# ---- logical operators (``BinaryOps.cpp``): any dtype, each operand read as nonzero or not; the
# result is bool, or 0 and 1 in ``self``'s dtype in place
def _logical_kernels(name, bitwise):
    def kernel(a, b):
        refuse_unlisted_dtypes(f"{name}_cpu", st.result_type(a, b))
        return bitwise(call("ne.Scalar", a, 0), call("ne.Scalar", b, 0))

    def kernel_(a, b):
        return call("copy_", a, kernel(a, b))
    kernel.__name__, kernel_.__name__ = name, name + "_"
    return kernel, kernel_


logical_and, logical_and_ = _logical_kernels("logical_and", bitwise_and_scalar)
logical_or, logical_or_ = _logical_kernels("logical_or", bitwise_or_scalar)
logical_xor, logical_xor_ = _logical_kernels("logical_xor", bitwise_xor_scalar)


# ---- clamp, clamp_min, clamp_max (TensorCompare.cpp: TORCH_META_FUNC(clamp), ...). The
# overloads with number bounds promote only an integer input by them (a float one is the widest
# dtype they support), refuse a promotion in place, and run the unary iterator over the input
# cast; those with tensor bounds put the bounds in the iterator. The impl steps clamp by
# ``maximum`` and ``minimum`` (NaN propagates) in the iterator's dtype, into its output.
def _no_complex(*dtypes_or_numbers):
    if any(isinstance(v, complex) or getattr(v, "is_complex", False) for v in dtypes_or_numbers):
        raise NotImplementedError("clamp is not supported for complex types")


def _number_bounds_iterator(out, self, *bounds):
    """``clamp``'s, ``clamp_min``'s and ``clamp_max``'s meta with number bounds."""
    _no_complex(self.dtype)
    dtype = self.dtype
    if not dtype.is_floating_point:
        dtype = st.result_type(self, *(wrap_scalar(b) for b in bounds))
        if dtype is not self.dtype and out is self:
            raise RuntimeError(f"result type {dtype.torch_name} can't be cast to the desired output type "
                               f"{st.type_meta_name(self.dtype)}")
    _no_complex(dtype)
    return TensorIterator.unary_op(out, to(self, dtype))


def _clamp_into(it, self, min, max):
    """max(x, min), then min(., max), in the iterator's dtype; a number bound is converted to
    it first (``min.to<scalar_t>()``: a bound it cannot hold is refused)."""
    for bound in (min, max):
        if bound is not None and not hasattr(bound, "_impl"):
            st.checked_convert(bound, it.common_dtype)
    result = to(self, it.common_dtype)
    if min is not None:
        result = _maximum(result, _as_tensor(min))
    if max is not None:
        result = _minimum(result, _as_tensor(max))
    return call("copy_", it.result, result)


def _refuse_bool(it, kernel_name):
    if it.common_dtype is st.bool_:
        raise _not_implemented(kernel_name, st.bool_)


def _float_bound(self, bound):
    """A float input reads a complex number bound as a double (``toDouble``: a nonzero
    imaginary part is refused)."""
    if isinstance(bound, complex) and self.dtype.is_floating_point:
        return float(st.checked_convert(bound, st.float64))
    return bound


def meta_clamp(out, self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [_float_bound(self, b) for b in (min, max) if b is not None]
    return _number_bounds_iterator(out, self, *bounds)


def impl_clamp(it, self, min=None, max=None):
    _refuse_bool(it, "clamp_scalar" if min is not None and max is not None else
                 "clamp_min_scalar" if min is not None else "clamp_max_scalar")
    return _clamp_into(it, self, _float_bound(self, min), _float_bound(self, max))


clamp_out = structured(meta_clamp, impl_clamp)


def meta_clamp_Tensor(out, self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    _no_complex(self.dtype)
    config = (TensorIteratorConfig().add_output(out).add_const_input(self).promote_inputs_to_common_dtype()
              .cast_common_dtype_to_outputs().enforce_safe_casting_to_output())
    for bound in (min, max):
        if bound is not None:
            config.add_const_input(bound)
    return config.build()


def impl_clamp_Tensor(it, self, min=None, max=None):
    """Both bounds: ``clamp_stub``; one: ``maximum`` or ``minimum``, which take bools."""
    _no_complex(it.common_dtype)
    if min is not None and max is not None:
        _refuse_bool(it, "clamp")
    return _clamp_into(it, self, min, max)


clamp_Tensor_out = structured(meta_clamp_Tensor, impl_clamp_Tensor)


def meta_clamp_min(out, self, min):
    _no_complex(min)
    return _number_bounds_iterator(out, self, min)


def impl_clamp_min(it, self, min):
    _refuse_bool(it, "clamp_min_scalar")
    return _clamp_into(it, self, min, None)


clamp_min_out = structured(meta_clamp_min, impl_clamp_min)


def meta_clamp_min_Tensor(out, self, min):
    return TensorIterator.binary_op(out, self, min)


def impl_clamp_min_Tensor(it, self, min):
    if it.common_dtype.is_complex:      # torch runs ``maximum_stub``, whose dtypes leave complex out
        raise _not_implemented("maximum", it.common_dtype)
    return _clamp_into(it, self, min, None)


clamp_min_Tensor_out = structured(meta_clamp_min_Tensor, impl_clamp_min_Tensor)


def meta_clamp_max(out, self, max):
    _no_complex(max)
    return _number_bounds_iterator(out, self, max)


def impl_clamp_max(it, self, max):
    _refuse_bool(it, "clamp_max_scalar")
    return _clamp_into(it, self, None, max)


clamp_max_out = structured(meta_clamp_max, impl_clamp_max)


def meta_clamp_max_Tensor(out, self, max):
    return TensorIterator.binary_op(out, self, max)


def impl_clamp_max_Tensor(it, self, max):
    if it.common_dtype.is_complex:      # torch runs ``minimum_stub``, whose dtypes leave complex out
        raise _not_implemented("minimum", it.common_dtype)
    return _clamp_into(it, self, None, max)


clamp_max_Tensor_out = structured(meta_clamp_max_Tensor, impl_clamp_max_Tensor)


def clip(x, min=None, max=None):
    """CompositeImplicitAutograd: clip is clamp under another name (the overload with tensor
    bounds when a bound is a tensor, as C++ overload resolution picks in ``at::clamp``)."""
    return call(_clamp_overload("clamp", min, max), x, min, max)


def clip_(x, min=None, max=None):
    return call(_clamp_overload("clamp_", min, max), x, min, max)


def _clamp_overload(name, min, max):
    return f"{name}.Tensor" if isinstance(min, TensorBase) or isinstance(max, TensorBase) else name


# ---- lerp (Lerp.cpp): declared structured, a meta step (torch's dtype checks, then the iterator)
# and an impl step (lerp_kernel_scalar_weight / lerp_kernel_tensor_weight) per overload
def _check_lerp_operand(self, name, t):
    if t.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {st.type_meta_name(self.dtype)} for `{name}` but got dtype "
                           f"{st.type_meta_name(t.dtype)}")


def _refuse_non_float(it, kernel):
    """The kernels dispatch over floating and complex types only."""
    if not (it.common_dtype.is_floating_point or it.common_dtype.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{it.common_dtype.torch_name}\'')


def meta_lerp_Scalar(out, self, end, weight):
    """``TORCH_META_FUNC(lerp_Scalar)``: ``end`` of the input's dtype, then the binary iterator."""
    _check_lerp_operand(self, "end", end)
    return TensorIterator.binary_op(out, self, end)


def impl_lerp_Scalar(it, self, end, weight):
    """One loop, the weight in the loop's scalar, read as the computation type."""
    _refuse_non_float(it, "lerp_kernel_scalar")
    return _run(it, ops.LERP, st.checked_convert(weight, it.compute_dtype))


lerp_Scalar_out = structured(meta_lerp_Scalar, impl_lerp_Scalar)


def meta_lerp_Tensor(out, self, end, weight):
    """``TORCH_META_FUNC(lerp_Tensor)``: ``end`` of the input's dtype, and so a weight unless it is
    0-dim; that one is promoted with the operands (a complex weight makes the result complex), the
    result cast safely into ``out``. Otherwise no operand is cast: all of one dtype, ``out`` too."""
    _check_lerp_operand(self, "end", end)
    promote = weight.dim() == 0
    if not promote:
        _check_lerp_operand(self, "weight", weight)
    config = TensorIteratorConfig().add_output(out).add_const_input(self).add_const_input(end).add_const_input(weight)
    if promote:
        config.promote_inputs_to_common_dtype().enforce_safe_casting_to_output().cast_common_dtype_to_outputs()
    else:
        config.check_all_same_dtype()       # torch's default, which the promoting configuration turns off
    return config.build()


def impl_lerp_Tensor(it, self, end, weight):
    """The elementwise weight's loop: from the nearer end, one fma, in the computation type."""
    _refuse_non_float(it, "lerp_kernel_tensor")
    return it.for_each(lambda buffers, *geometry: loops(it.device).ternary_loop(
        ops.LERP_TENSOR, *buffers, st.checked_convert(0, it.compute_dtype), *geometry))


lerp_Tensor_out = structured(meta_lerp_Tensor, impl_lerp_Tensor)


# ---- closeness (TensorCompare.cpp): compositions of elementwise ops, as torch writes them
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol |b|, or exactly equal (so equal infinities are close). As torch's, it is
    CompositeImplicitAutograd: a dispatch mode sees the operators it is made of, in torch's order."""
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{a.dtype.torch_name} did not match {b.dtype.torch_name}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not tol >= 0:      # NaN too; printed as C++ prints a double (-1, not -1.0)
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {float(tol):g}")
    close = call("eq.Tensor", a, b)
    if equal_nan and (a.dtype.is_floating_point or a.dtype.is_complex):
        a_nan = call("isnan", a)
        # a subclass (or any tensor under a dispatch mode) gets the out-of-place and
        nan_and = "bitwise_and.Tensor" if _subclass_like(b) else "bitwise_and_.Tensor"
        call("bitwise_or_.Tensor", close, call(nan_and, a_nan, call("isnan", b)))
    if rtol == 0 and atol == 0:
        return close
    # integers (bool too) are compared in the default float dtype, so a - b cannot wrap around
    cast_a = to(a, st.get_default_dtype()) if a.dtype is st.bool_ else a
    cast_b = b if a.dtype.is_floating_point or a.dtype.is_complex else to(b, st.get_default_dtype())
    allowed_error = call("add.Scalar", call("abs", call("mul.Scalar", cast_b, rtol)), atol)
    actual_error = call("abs", call("sub.Tensor", cast_a, cast_b))
    finite = call("isfinite", actual_error)
    call("bitwise_and_.Tensor", finite, call("le.Tensor", actual_error, allowed_error))
    return call("bitwise_or_.Tensor", close, finite)


def _subclass_like(t):
    """``isTensorSubclassLike``: a tensor subclass, or any tensor while a dispatch mode is on."""
    return DispatchKey.Python in tls.included or DispatchKey.Python in t._impl.key_set


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(call("all", isclose(a, b, rtol, atol, equal_nan)).item())


def equal(a, b):
    """Same shape and equal values (NaN is never equal); dtypes promote as ``==`` does."""
    common_device(a, b)
    same = (a._impl.storage is b._impl.storage and a.storage_offset() == b.storage_offset()
            and a.stride() == b.stride())       # ``cpu_equal``'s path for one tensor twice
    if tuple(a.shape) == tuple(b.shape) and same and a.dtype is b.dtype:
        refuse_float8(f"equal_notnan_{a.device.type}", a)       # its NaN check lists no float8
    if tuple(a.shape) == tuple(b.shape) and st.result_type(a, b) is st.complex32:
        raise NotImplementedError(f'"{"equal_notnan_cpu" if same else "equal_cpu"}" not implemented for '
                                  "'ComplexHalf'")
    return tuple(a.shape) == tuple(b.shape) and bool(call("all", call("eq.Tensor", a, b)).item())


def isreal(x):
    """True where the imaginary part is zero: everywhere for a tensor that is not complex."""
    if not x.dtype.is_complex:
        return call("ones_like", x, dtype=st.bool_)
    return call("eq.Scalar", call("imag", x), 0)


def is_nonzero(x):
    """``bool(x)`` of a one-element tensor (TensorCompare.cpp)."""
    n = x.numel()
    if n != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
                           "is ambiguous")
    return bool(call("_local_scalar_dense", x) != 0)


def is_same_size(a, b):
    return tuple(a.shape) == tuple(b.shape)


# NumPy's names (BinaryOps.cpp), CompositeImplicitAutograd: the operators they rename.
def _renamed(name, target):
    def kernel(*args, **kwargs):
        return call(target, *args, **kwargs)
    kernel.__name__ = kernel.__qualname__ = name
    return kernel


subtract, subtract_ = _renamed("subtract", "sub.Tensor"), _renamed("subtract_", "sub_.Tensor")
subtract_scalar, subtract_scalar_ = _renamed("subtract_scalar", "sub.Scalar"), _renamed("subtract_scalar_",
                                                                                         "sub_.Scalar")
multiply, multiply_ = _renamed("multiply", "mul.Tensor"), _renamed("multiply_", "mul_.Tensor")
multiply_scalar, multiply_scalar_ = _renamed("multiply_scalar", "mul.Scalar"), _renamed("multiply_scalar_",
                                                                                         "mul_.Scalar")
true_divide, true_divide_ = _renamed("true_divide", "div.Tensor"), _renamed("true_divide_", "div_.Tensor")
# their out= forms too: the renamed operator's out= checks (a cast to a wider ``out`` allowed)
subtract_out, multiply_out, true_divide_out = (_renamed(f"{name}_out", f"{target}.out") for name, target in (
    ("subtract", "sub"), ("multiply", "mul"), ("true_divide", "div")))
true_divide_scalar, true_divide_scalar_ = (_renamed("true_divide_scalar", "div.Scalar"),
                                           _renamed("true_divide_scalar_", "div_.Scalar"))


# float_power (Pow.cpp): pow in double precision, complex double if either side is complex.
def _float_power_dtype(a, b):
    is_complex = any(x.dtype.is_complex if isinstance(x, TensorBase) else isinstance(x, complex) for x in (a, b))
    return st.complex128 if is_complex else st.float64


def _in_double(x, dtype):
    """An operand of float_power: a tensor cast to ``dtype``, a number as a double or complex."""
    if isinstance(x, TensorBase):
        return to(x, dtype)
    return complex(x) if dtype.is_complex else float(x)


def _pow(a, b, suffix=""):
    """The ``pow`` overload (``pow``, ``pow_``) that a tensor or number base and exponent make."""
    if not isinstance(b, TensorBase):
        return f"pow{suffix}.Scalar" if suffix else "pow.Tensor_Scalar"
    return "pow.Scalar" if not isinstance(a, TensorBase) else f"pow{suffix}.Tensor" if suffix else "pow.Tensor_Tensor"


def float_power(a, b):
    dtype = _float_power_dtype(a, b)
    return call(_pow(a, b), _in_double(a, dtype), _in_double(b, dtype))


def float_power_out(a, b, *, out):
    dtype = _float_power_dtype(a, b)
    if out.dtype is not dtype:
        raise RuntimeError(f"the output given to float_power has dtype {out.dtype.torch_name} but the operation's "
                           f"result requires dtype {dtype.torch_name}")
    return call(_pow(a, b) + "_out", _in_double(a, dtype), _in_double(b, dtype), out=out)


def float_power_(a, b):
    dtype = _float_power_dtype(a, b)
    if a.dtype is not dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {a.dtype.torch_name} but the operation's "
                           f"result requires dtype {dtype.torch_name}")
    return call(_pow(a, b, "_"), a, _in_double(b, dtype))


# ---- torch.special.xlogy (BinaryOps.cpp): CompositeImplicitAutograd, xlogy under torch.special's name
def special_xlogy(a, b):
    return call("xlogy.Tensor", a, b)


def special_xlogy_self_scalar(a, b):
    return call("xlogy.Scalar_Self", a, b)


def special_xlogy_other_scalar(a, b):
    return call("xlogy.Scalar_Other", a, b)


def special_xlogy_out(a, b, *, out):
    return call("xlogy.OutTensor", a, b, out=out)


def special_xlogy_self_scalar_out(a, b, *, out):
    return call("xlogy.OutScalar_Self", a, b, out=out)


def special_xlogy_other_scalar_out(a, b, *, out):
    return call("xlogy.OutScalar_Other", a, b, out=out)
