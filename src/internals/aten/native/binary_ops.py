"""Binary operators (``aten/src/ATen/native/BinaryOps.cpp``, ``TensorCompare.cpp``, ``Lerp.cpp``).

The arithmetic and comparison families are declared as torch declares them, structured: per
family a **meta** step (the argument checks and the TensorIterator: broadcast shape, common and
output dtype, the output allocated or ``out=`` resized) and an **impl** step (the loop, with the
op number of the scalar function). ``structured(meta, impl)`` makes the out= kernel, which the
YAML names (``structured: True``); the functional and in-place kernels are derived from it
(``structured_delegate:``, see ``structured.structured_variant``).

The others (division with a rounding mode, floor_divide, remainder, fmod, the bitwise and shift
operators, clamp and lerp) promote their operands as ``elementwise.binary`` does, then pick the
scalar function for the compute dtype (integer division floors and truncates exactly, floating
division through fmod, as ``BinaryOpsKernel.cpp`` does) and run the generic CPU or CUDA loop.
"""
from ..._tensor_base import TensorBase
from ...c10 import scalar_type as st
from ...c10.dispatch_key import DispatchKey
from ...c10.local_dispatch_key_set import tls
from ..dispatcher import call
from ..tensor_iterator import BinaryOpConfig, TensorIterator, check_no_overlap
from . import scalar_ops as ops
from .copy import to
from .dispatch_stub import loops
from .elementwise import (
    _alpha_check,
    _check_binary,
    _complex_order_error,
    _rounded_to_16_bits,
    binary,
    common_device,
    pow_tensor_scalar,
    where,
)
from .structured import structured
from .tensor_factories import wrap_scalar


def _run(it, op, scalar):
    """The impl's last step, ``add_stub(device_type(), *this, alpha)``: the loop of ``op`` over
    the iterator's operands; returns the result (``out`` itself for out=)."""
    return it.for_each(lambda buffers, *geometry: loops(it.device).binary_loop(op, *buffers, scalar, *geometry))


def _alpha(it, alpha):
    """alpha in the compute dtype; a float16 or bfloat16 result rounds it to that dtype first
    (``alpha.to<scalar_t>()``), checked against that dtype's range, not float's."""
    if it.common_dtype.is_reduced_float:
        st.checked_convert(alpha, it.common_dtype)
        return _rounded_to_16_bits(st.checked_convert(alpha, it.compute_dtype), it.common_dtype)
    return st.checked_convert(alpha, it.compute_dtype)


# ---- add and sub: TORCH_META_FUNC2(add, Tensor), TORCH_IMPL_FUNC(add_out)
def meta_add(out, self, other, *, alpha=1):
    """``alpha_check`` where alpha is not an int, then the binary iterator."""
    if type(alpha) is not int:
        _alpha_check(st.result_type(self, other), alpha)
    return BinaryOpConfig(out, self, other).build()


def impl_add(it, self, other, *, alpha=1):
    return _run(it, ops.ADD, _alpha(it, alpha))


add_out = structured(meta_add, impl_add)     # and from it add.Tensor, add_.Tensor


def meta_sub(out, self, other, *, alpha=1):
    """``sub_check`` (no bool operand) and alpha's checks, then the binary iterator."""
    _check_binary(ops.SUB, self, other, alpha)
    return BinaryOpConfig(out, self, other).build()


def impl_sub(it, self, other, *, alpha=1):
    return _run(it, ops.SUB, _alpha(it, alpha))


sub_out = structured(meta_sub, impl_sub)


# ---- mul and true division: TORCH_META_FUNC2(mul, Tensor), TORCH_META_FUNC2(div, Tensor)
def meta_mul(out, self, other):
    """The binary iterator; a one-element ``other`` is read at opmath precision from its own
    dtype (``mul_kernel``'s ``original_scalar_value``): float16 ``x * 2.3`` uses 2.3f."""
    return BinaryOpConfig(out, self, other).read_original_scalar(1).build()


def impl_mul(it, self, other):
    return _run(it, ops.MUL, st.checked_convert(1, it.compute_dtype))


mul_out = structured(meta_mul, impl_mul)


def meta_div(out, self, other):
    """``build_borrowing_binary_float_op``: integer operands divide as the default float."""
    return BinaryOpConfig(out, self, other).promote_integer_inputs_to_float().read_original_scalar(1).build()


def impl_div(it, self, other):
    op = ops.DIV_COMPLEX if it.compute_dtype.is_complex else ops.DIV
    return _run(it, op, st.checked_convert(1, it.compute_dtype))


div_out = structured(meta_div, impl_div)


# ---- comparisons: TORCH_META_FUNC2(eq, Tensor) and the rest (``build_borrowing_comparison_op``)
def _comparison(name, op):
    """The Tensor and Scalar out= kernels of one comparison: a bool output (or ``out``'s dtype,
    cast into), and no kernel for complex operands where the comparison needs an order."""
    def meta(out, self, other):
        return TensorIterator.comparison_op(out, self, other)

    def impl(it, self, other):
        if op in ops.ORDERED and it.compute_dtype.is_complex:
            raise _complex_order_error(op, it.compute_dtype)
        return _run(it, op, st.checked_convert(1, it.compute_dtype))

    def meta_scalar(out, self, other):
        return TensorIterator.comparison_op(out, self, wrap_scalar(other))

    def impl_scalar(it, self, other):
        return impl(it, self, other)
    meta.__name__, meta_scalar.__name__ = f"meta_{name}", f"meta_{name}_scalar"
    meta.__module__ = meta_scalar.__module__ = __name__
    return structured(meta, impl), structured(meta_scalar, impl_scalar)


eq_out, eq_scalar_out = _comparison("eq", ops.EQ)
ne_out, ne_scalar_out = _comparison("ne", ops.NE)
lt_out, lt_scalar_out = _comparison("lt", ops.LT)
le_out, le_scalar_out = _comparison("le", ops.LE)
gt_out, gt_scalar_out = _comparison("gt", ops.GT)
ge_out, ge_scalar_out = _comparison("ge", ops.GE)


# ---- the others
def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}_cpu" not implemented for \'{dtype.torch_name}\'')


def _check_divisor(b, common):
    """Integer division by zero raises in torch (``ZeroDivisionError``, a RuntimeError); a float's
    gives inf or NaN. The divisor is read in the common dtype, so 256 divides an int8 tensor as 0."""
    if not common.is_floating_point and call("any", call("eq.Scalar", to(b, common), 0)).item():
        raise RuntimeError("ZeroDivisionError")


def _integer_or_float(name, int_op, float_op, a, b, out):
    common = st.result_type(a, b)
    if common is st.bool_ or common.is_complex:
        raise _not_implemented(name, common)
    _check_divisor(b, common)
    return binary(float_op if common.is_floating_point else int_op, a, b, out=out)


def div_mode(a, b, *, rounding_mode=None, out=None):
    """``div.Tensor_mode``: true division, or rounded toward zero ("trunc") or down ("floor")."""
    if rounding_mode is None:
        return binary(ops.DIV, a, b, out=out)
    if rounding_mode == "trunc":
        return _integer_or_float("div_trunc", ops.DIV_TRUNC_INT, ops.DIV_TRUNC_FLOAT, a, b, out)
    if rounding_mode == "floor":
        return _integer_or_float("div_floor", ops.DIV_FLOOR_INT, ops.DIV_FLOOR_FLOAT, a, b, out)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{rounding_mode}'")


def div_mode_(a, b, *, rounding_mode=None):
    return div_mode(a, b, rounding_mode=rounding_mode, out=a)


def div_scalar_mode(a, b, *, rounding_mode=None):
    return div_mode(a, wrap_scalar(b), rounding_mode=rounding_mode)


def div_scalar_mode_(a, b, *, rounding_mode=None):
    return div_mode(a, wrap_scalar(b), rounding_mode=rounding_mode, out=a)


def floor_divide(a, b, *, out=None):
    return _integer_or_float("div_floor", ops.DIV_FLOOR_INT, ops.DIV_FLOOR_FLOAT, a, _as_tensor(b), out)


def floor_divide_(a, b):
    return floor_divide(a, b, out=a)


def remainder(a, b, *, out=None):
    return _integer_or_float("remainder", ops.REMAINDER_INT, ops.REMAINDER_FLOAT, _as_tensor(a), _as_tensor(b), out)


def remainder_(a, b):
    return remainder(a, b, out=a)


def fmod(a, b, *, out=None):
    return _integer_or_float("fmod", ops.FMOD_INT, ops.FMOD_FLOAT, a, _as_tensor(b), out)


def fmod_(a, b):
    return fmod(a, b, out=a)


def _as_tensor(value):
    """A ``.Scalar`` overload's Python number, wrapped as the loops take it."""
    return value if hasattr(value, "_impl") else wrap_scalar(value)


# ---- bitwise and shift operators: integers and bool only (shifts: integers only)
def _bitwise(name, op, a, b, out, bool_ok=True):
    common = st.result_type(a, b)       # before a number is wrapped: a float's 2**63 is refused by dtype
    if common.is_floating_point or common.is_complex or (common is st.bool_ and not bool_ok):
        raise _not_implemented(name, common)
    return binary(op, _as_tensor(a), _as_tensor(b), out=out)


def _bitwise_kernels(name, kernel_name, op, bool_ok=True):
    def kernel(a, b):
        return _bitwise(kernel_name, op, a, b, None, bool_ok)

    def kernel_(a, b):
        return _bitwise(kernel_name, op, a, b, a, bool_ok)
    kernel.__name__, kernel_.__name__ = name, name + "_"
    return kernel, kernel_


bitwise_and, bitwise_and_ = _bitwise_kernels("bitwise_and", "bitwise_and", ops.BITWISE_AND)
bitwise_or, bitwise_or_ = _bitwise_kernels("bitwise_or", "bitwise_or", ops.BITWISE_OR)
bitwise_xor, bitwise_xor_ = _bitwise_kernels("bitwise_xor", "bitwise_xor", ops.BITWISE_XOR)
bitwise_left_shift, bitwise_left_shift_ = _bitwise_kernels("bitwise_left_shift", "lshift", ops.LSHIFT, False)
bitwise_right_shift, bitwise_right_shift_ = _bitwise_kernels("bitwise_right_shift", "rshift", ops.RSHIFT, False)


# ---- logical operators (``BinaryOps.cpp``): any dtype, each operand read as nonzero or not; the
# result is bool, or 0 and 1 in ``self``'s dtype in place
def _logical_kernels(name, op):
    def kernel(a, b):
        return binary(op, call("ne.Scalar", a, 0), call("ne.Scalar", b, 0))

    def kernel_(a, b):
        return call("copy_", a, kernel(a, b))
    kernel.__name__, kernel_.__name__ = name, name + "_"
    return kernel, kernel_


logical_and, logical_and_ = _logical_kernels("logical_and", ops.BITWISE_AND)
logical_or, logical_or_ = _logical_kernels("logical_or", ops.BITWISE_OR)
logical_xor, logical_xor_ = _logical_kernels("logical_xor", ops.BITWISE_XOR)


# ---- clamp (TensorCompare.cpp) and lerp (Lerp.cpp)
def clamp(x, min=None, max=None, *, out=None):
    """``clamp`` and ``clamp.Tensor``: max(x, min), then min(., max), in the dtype all three
    promote to; NaN in x stays NaN (maximum and minimum propagate it)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if x.dtype.is_floating_point:        # a float's Python bounds are read as doubles (``toDouble``)
        min, max = (float(st.checked_convert(v, st.float64)) if isinstance(v, complex) else v for v in (min, max))
    bounds = [_as_tensor(v) for v in (min, max) if v is not None]
    if out is not None:         # TensorIterator's overlap checks come first (``clamp_(x, min=x[1:])``)
        check_no_overlap(out._impl, [t._impl for t in (x, *bounds)])
    dtype = st.result_type(x, *bounds)
    if dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if out is not None and not st.can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {dtype.torch_name} can't be cast to the desired output type "
                           f"{st.type_meta_name(out.dtype)}")
    if dtype is st.bool_ and not (len(bounds) == 1 and hasattr(min if max is None else max, "_impl")):
        raise _not_implemented(_clamp_kernel_name(min, max), dtype)    # one tensor bound: maximum/minimum
    for bound in (min, max):
        if bound is not None and not hasattr(bound, "_impl"):
            st.checked_convert(bound, dtype)        # ``clamp_scalar_kernel_impl``: ``min.to<scalar_t>()``
    result = to(x, dtype)
    if min is not None:
        result = binary(ops.MAXIMUM, result, _as_tensor(min))
    if max is not None:
        result = binary(ops.MINIMUM, result, _as_tensor(max))
    return result if out is None else call("copy_", out, result)


def _clamp_kernel_name(min, max):
    """The CPU kernel torch's clamp dispatches to: ``clamp_min_scalar``, ``clamp_scalar``, ``clamp``..."""
    if hasattr(min, "_impl") or hasattr(max, "_impl"):
        return "clamp"
    return {(True, True): "clamp_scalar", (True, False): "clamp_min_scalar"}.get((min is not None, max is not None),
                                                                                "clamp_max_scalar")


def clamp_(x, min=None, max=None):
    return clamp(x, min, max, out=x)


def clip(x, min=None, max=None):
    """CompositeImplicitAutograd: clip is clamp under another name (the overload with tensor
    bounds when a bound is a tensor, as C++ overload resolution picks in ``at::clamp``)."""
    return call(_clamp_overload("clamp", min, max), x, min, max)


def clip_(x, min=None, max=None):
    return call(_clamp_overload("clamp_", min, max), x, min, max)


def _clamp_overload(name, min, max):
    return f"{name}.Tensor" if isinstance(min, TensorBase) or isinstance(max, TensorBase) else name


def pow_tensor_scalar_(x, exponent):
    """``pow_.Scalar``, ``x **= 2``."""
    return pow_tensor_scalar(x, exponent, out=x)


def lerp(start, end, weight, *, out=None):
    """``lerp.Scalar`` in one loop (the weight as the loop's ``alpha``); ``lerp.Tensor`` from the
    same two formulas, picked elementwise by |weight| < 0.5 (from the nearer end)."""
    common = _check_lerp(start, end, weight, out)
    if not hasattr(weight, "_impl"):
        return binary(ops.LERP, start, end, alpha=weight, out=out)
    if common is not start.dtype or weight.dtype is not start.dtype:
        result = lerp(*(to(t, common) for t in (start, end, weight)))
        return result if out is None else call("copy_", out, result)
    diff = call("sub.Tensor", end, start)
    near_start = call("lt.Scalar", call("abs", weight), 0.5)
    from_start = call("add.Tensor", start, call("mul.Tensor", weight, diff))
    from_end = call("sub.Tensor", end, call("mul.Tensor", diff, call("rsub.Scalar", weight, 1)))
    result = where(near_start, from_start, from_end)
    return result if out is None else call("copy_", out, result)


def lerp_(start, end, weight):
    return lerp(start, end, weight, out=start)


def _check_lerp(start, end, weight, out):
    """``TORCH_META_FUNC(lerp_Tensor)``: ``end`` has the input's dtype, and so has a weight
    unless it is 0-dim: that one is promoted with the operands (a complex weight makes the
    result complex), and the result must cast safely into ``out``. Returns the dtype computed in."""
    for name, t in (("end", end), ("weight", weight)):
        if hasattr(t, "_impl") and t.dtype is not start.dtype and (t is end or t.dim()):
            raise RuntimeError(f"expected dtype {st.type_meta_name(start.dtype)} for `{name}` but got dtype "
                               f"{st.type_meta_name(t.dtype)}")
    promoted = hasattr(weight, "_impl") and weight.dim() == 0
    dtype = st.result_type(start, end, weight) if promoted else start.dtype
    if out is not None and not st.can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {dtype.torch_name} can't be cast to the desired output type "
                           f"{out.dtype.torch_name}")
    if not dtype.is_floating_point:
        kernel = "lerp_kernel_tensor" if hasattr(weight, "_impl") else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dtype.torch_name}\'')
    return dtype


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

# ---- the everyday binary operators (BinaryOps.cpp, BinaryOpsKernel.cpp)
def _real_binary(name, op, a, b, out=None, *, floating_only=False, int_op=None):
    """One of the real-valued binary kernels: complex operands refused by the kernel's name;
    ``floating_only`` ones refuse integers and bool too (``AT_DISPATCH_FLOATING_TYPES``);
    ``int_op`` is the op for integer and bool operands, where it differs."""
    a, b = _as_tensor(a), _as_tensor(b)
    common = st.result_type(a, b)
    if op in ops.INTEGERS_AS_FLOATS and common.category <= st.INTEGRAL:
        common = st.get_default_dtype()
    if common.is_complex and op in (ops.FMAX, ops.FMIN):     # refused by name, as maximum is
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    if common.is_complex or (floating_only and not common.is_floating_point):
        raise _not_implemented(name, common)
    return binary(int_op if int_op is not None and not common.is_floating_point else op, a, b, out=out)


def _real_binary_kernels(name, op, **kwargs):
    def kernel(a, b):
        return _real_binary(name, op, a, b, **kwargs)

    def kernel_(a, b):
        return _real_binary(name, op, a, b, a, **kwargs)
    kernel.__name__, kernel_.__name__ = name, name + "_"
    return kernel, kernel_


atan2, atan2_ = _real_binary_kernels("atan2", ops.ATAN2)
copysign, copysign_ = _real_binary_kernels("copysign", ops.COPYSIGN)
hypot, hypot_ = _real_binary_kernels("hypot", ops.HYPOT, floating_only=True)
logaddexp, logaddexp_ = _real_binary_kernels("logaddexp", ops.LOGADDEXP, floating_only=True)
logaddexp2, logaddexp2_ = _real_binary_kernels("logaddexp2", ops.LOGADDEXP2, floating_only=True)
fmax, fmax_ = _real_binary_kernels("fmax", ops.FMAX, int_op=ops.MAXIMUM)
fmin, fmin_ = _real_binary_kernels("fmin", ops.FMIN, int_op=ops.MINIMUM)
xlogy, xlogy_ = _real_binary_kernels("xlogy", ops.XLOGY)


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


def xlogy_scalar_self(a, b):
    return call("xlogy.Tensor", wrap_scalar(a), b)


def xlogy_scalar_other(a, b):
    return call("xlogy.Tensor", a, wrap_scalar(b))


def xlogy_scalar_other_(a, b):
    return call("xlogy_.Tensor", a, wrap_scalar(b))


def heaviside(x, values, *, out=None):
    """``values`` where x is 0, else 0 or 1 by the sign of x; both of one real dtype."""
    if x.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if x.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return binary(ops.HEAVISIDE, x, values, out=out)


def heaviside_(x, values):
    return heaviside(x, values, out=x)


# clamp_min and clamp_max: clamp with one bound (its checks, kernels and output dtype)
def clamp_min(x, min):
    return clamp(x, min, None)


def clamp_min_(x, min):
    return clamp(x, min, None, out=x)


def clamp_max(x, max):
    return clamp(x, None, max)


def clamp_max_(x, max):
    return clamp(x, None, max, out=x)
