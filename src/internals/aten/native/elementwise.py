"""Elementwise operators: unary, binary and ``where`` (``UnaryOps.cpp``, ``BinaryOps.cpp``,
``TensorCompare.cpp`` in ``aten/src/ATen/native``).

Each follows the same path as a structured ATen kernel: check the devices, compute the result
dtype by torch's promotion rules, broadcast, allocate the output with the layout TensorIterator
gives it (or check the in-place output), cast inputs to the computation dtype, and run one loop.
float16 and bfloat16 compute in float32 and round once at the end, as ATen's ``opmath`` does.
"""
import warnings

import numpy as np

from ...c10 import scalar_type as st
from ...c10.tensor_impl import strided
from .. import dispatcher
from ..tensor_iterator import TensorIterator, TensorIteratorConfig, common_device
from . import scalar_ops as ops
from .copy import to
from .dispatch_stub import loops
from .tensor_factories import wrap_scalar

__all__ = ["unary", "binary", "where", "common_device"]


def unary(op, x, *, out=None, floating=False, name=None):
    """A unary op. ``floating`` ops (exp, log, ...) turn integer inputs into the default float."""
    if x.dtype is st.bool_ and op in (ops.NEG, ops.ABS, ops.RELU):
        raise _bool_error(op, name)
    if x.dtype.is_complex:
        op = _complex_op(op, name)
    it = TensorIterator.unary_float_op(out, x) if floating else TensorIterator.unary_op(out, x)
    return it.for_each(lambda buffers, *geometry: loops(it.device).unary_loop(op, *buffers, *geometry))


# The unary ops with a complex kernel here, and the scalar function each uses for complex numbers.
_COMPLEX_UNARY = {ops.NEG: ops.NEG, ops.CONJ: ops.CONJ, ops.EXP: ops.EXP_COMPLEX, ops.LOG: ops.LOG_COMPLEX,
                  ops.SQRT: ops.SQRT_COMPLEX, ops.SIN: ops.SIN_COMPLEX, ops.COS: ops.COS_COMPLEX,
                  ops.TAN: ops.TAN_COMPLEX, ops.TANH: ops.TANH_COMPLEX, ops.SIGMOID: ops.SIGMOID_COMPLEX}


def _complex_op(op, name):
    if op == ops.RELU:
        raise NotImplementedError("clamp is not supported for complex types")
    if op not in _COMPLEX_UNARY:      # torch has complex kernels for most of these: internals not yet
        raise NotImplementedError(f"internals: {name} is not implemented for complex tensors")
    return _COMPLEX_UNARY[op]


def real_valued_unary(op, complex_op, x):
    """abs and angle (``abs``, ``angle`` in UnaryOps.cpp): a complex input gives a real output,
    of the matching real dtype; a real input keeps its dtype (angle: integers become floats)."""
    if not x.dtype.is_complex:
        return unary(op, x, floating=op == ops.ANGLE, name="abs" if op == ops.ABS else "angle")
    it = (TensorIteratorConfig().add_output(None, st.to_real(x.dtype)).add_const_input(x)
          .compute_in_opmath(False).build())
    return it.for_each(lambda buffers, *geometry: loops(it.device).unary_loop(complex_op, *buffers, *geometry))


def _bool_error(op, name):
    if op == ops.NEG:
        return RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                            "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if op == ops.RELU:
        return RuntimeError("Boolean inputs not supported for relu")
    return NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')


def binary(op, a, b, *, alpha=1, out=None):
    """A binary op with broadcasting and type promotion; ``out`` is the in-place target, if any."""
    if op in ops.CHECKED or type(alpha) is not int:     # a float, complex or bool alpha has rules of its own
        _check_binary(op, a, b, alpha)
    if op in ops.COMPARISONS:
        it = TensorIterator.comparison_op(out, a, b)
    else:
        config = TensorIterator.binary_config(out, a, b)
        if op in ops.INTEGERS_AS_FLOATS:
            config.promote_integer_inputs_to_float()      # true division (atan2, ...): integers as floats
        if op in (ops.MUL, ops.DIV, ops.LOGIT):   # (logit's eps is read as a float, its ``opmath``)
            # ``mul_kernel`` and ``div_true_kernel`` (``BinaryOpsKernel.cpp``) read a one-element
            # second operand's original value at opmath precision (``original_scalar_value``):
            # a float16 ``x * 2.3`` uses 2.3f, where ``x + 2.3`` sees the float16 2.30078.
            config.read_original_scalar(1)
        it = config.build()
    compute = it.compute_dtype
    if op == ops.POW:
        short_cut = _pow_short_cut(it, a, b)
        if short_cut is not None:
            return short_cut
        if not compute.is_complex and not compute.is_floating_point:
            op = ops.INT_POW
        elif b._impl.is_wrapped_number and it.common_dtype in (st.float32, st.float64):
            op = ops.POW_FLOAT_SCALAR       # pow.Tensor_Scalar's short cuts (the 16-bit floats have others)
    if compute.is_complex:
        op = _complex_binary_op(op, compute, b)
    if it.common_dtype.is_reduced_float and op in (ops.ADD, ops.SUB):
        st.checked_convert(alpha, it.common_dtype)       # the 16-bit dtype's range, not float's
    scalar = st.checked_convert(alpha, compute)
    if it.common_dtype.is_reduced_float and op in (ops.ADD, ops.SUB):
        scalar = _rounded_to_16_bits(scalar, it.common_dtype)   # ``alpha.to<scalar_t>()``: Half
    return it.for_each(lambda buffers, *geometry: loops(it.device).binary_loop(op, *buffers, scalar, *geometry))


def _rounded_to_16_bits(value, dtype):
    """A float32 value rounded to float16 or bfloat16 and widened again."""
    bits = np.float32(value).view(np.uint32)
    if dtype is st.float16:
        return np.uint32(ops.half_bits_to_float(ops.float_bits_to_half(bits))).view(np.float32)
    return np.uint32(ops.bf16_bits_to_float(ops.float_bits_to_bf16(bits))).view(np.float32)


def _pow_short_cut(it, a, b):
    """pow's answers that need no loop, or None. ``pow(Tensor, Scalar)`` (Pow.cpp): x ** 0 is a
    fill with ones and x ** 1 a copy (that is why they work for bool, which has no pow);
    ``pow.Scalar``: 1 ** x is a fill, NaN exponents too."""
    if _pow_by_zero_or_one(b):
        if b.item() == 0:
            return dispatcher.call("fill_.Scalar", it.result, 1)
        return dispatcher.call("copy_", it.result, a)
    if _one_to_the(a):
        return dispatcher.call("fill_.Scalar", it.result, 1)
    return None


def _complex_binary_op(op, compute, b):
    """The op's complex kernel; complex numbers have no order. pow.Tensor_Scalar (the only
    caller whose exponent is a wrapped number) has short cuts of its own."""
    if op in ops.ORDERED:
        raise _complex_order_error(op, compute)
    if op == ops.POW:
        return ops.POW_COMPLEX_SCALAR if b._impl.is_wrapped_number else ops.POW_COMPLEX
    return ops.DIV_COMPLEX if op == ops.DIV else op


def _pow_by_zero_or_one(b):
    return b._impl.is_wrapped_number and b.item() in (0, 1)


def _one_to_the(a):
    """A wrapped base equal to 1 (Scalar::equal: True is not 1)."""
    return a._impl.is_wrapped_number and a.dtype is not st.bool_ and a.item() == 1


def _check_binary(op, a, b, alpha):
    """The ops' own checks before TensorIterator's (``sub_check``, ``pow``'s, ``alpha_check``)."""
    if op == ops.SUB and st.bool_ in (a.dtype, b.dtype):      # ``sub_check``: whatever the other operand
        if a.dtype is b.dtype:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    common = st.result_type(a, b)
    if common is st.bool_:
        if op == ops.POW and not _pow_by_zero_or_one(b):
            raise NotImplementedError('"pow" not implemented for \'Bool\'')
    if op in (ops.ADD, ops.SUB):
        _alpha_check(common, alpha)
    if op == ops.POW and common.category <= st.INTEGRAL and b._impl.is_wrapped_number and b.item() < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _alpha_check(common, alpha):
    """``alpha_check`` (BinaryOps.h), in its order: a complex alpha on integers fails the first
    check that applies, the float one."""
    if isinstance(alpha, bool) and common is not st.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if common.category <= st.INTEGRAL and isinstance(alpha, (float, complex)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not common.is_complex and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def _complex_order_error(op, common):
    """Complex numbers have no order: the comparisons have no complex kernel, and maximum and
    minimum refuse them by name."""
    if op in (ops.MAXIMUM, ops.MINIMUM):
        return RuntimeError(f"{'maximum' if op == ops.MAXIMUM else 'minimum'} not implemented for complex tensors.")
    return NotImplementedError(f'"{_ORDER_NAMES[op]}_cpu" not implemented for \'{common.torch_name}\'')


_ORDER_NAMES = {ops.LT: "lt", ops.LE: "le", ops.GT: "gt", ops.GE: "ge"}


# where's Scalar overloads (TensorCompare.cpp): the number becomes a ``scalar_tensor`` of the
# result type, the tensor is cast to it, and ``where.self`` runs.
def _scalar_tensor(value, dtype, like):
    return dispatcher.call("scalar_tensor", value, dtype=dtype, layout=strided, device=like.device)


def where_scalar_self(cond, a, b):
    common = st.result_type(b, wrap_scalar(a))
    return dispatcher.call("where.self", cond, _scalar_tensor(a, common, b), to(b, common))


def where_scalar_other(cond, a, b):
    common = st.result_type(a, wrap_scalar(b))
    b_t = _scalar_tensor(b, common, a)
    return dispatcher.call("where.self", cond, to(a, common), b_t)


def where_scalar(cond, a, b):
    common = st.result_type(wrap_scalar(a), wrap_scalar(b))
    b_t = _scalar_tensor(b, common, cond)
    return dispatcher.call("where.self", cond, _scalar_tensor(a, common, cond), b_t)


def where(cond, a, b):
    """``where.self``: ``a`` where ``cond``, else ``b``; a uint8 condition still works, with
    torch's deprecation warning (TensorCompare.cpp), as its nonzero elements."""
    if cond.dtype is st.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in "
                      "a future version of PyTorch. Use a boolean condition instead.", stacklevel=2)
        cond = dispatcher.call("_to_copy", cond, dtype=st.bool_)
    if cond.dtype is not st.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{cond.dtype.torch_name}")
    common = st.result_type(a, b)
    device = common_device(cond, a, b)
    # where casts its values with ``.to(result_type)`` before building its TensorIterator (on
    # every device), so the output's layout follows the cast copies.
    cond, a, b = (x if x.device == device else dispatcher.call("_to_copy", x, device=device) for x in (cond, a, b))
    a, b = (x if x.dtype is common else dispatcher.call("_to_copy", x, dtype=common) for x in (a, b))
    it = (TensorIteratorConfig().add_output(None, common).add_const_input(cond).add_const_input(a).add_const_input(b)
          .compute_in_opmath(False).build())      # the loop only moves values: no arithmetic
    return it.for_each(lambda buffers, *geometry: loops(device).ternary_loop(ops.WHERE, *buffers, 0, *geometry))


# The kernels by their names in native_functions.yaml: each one TensorIterator loop over one op.
# ``name_`` is the in-place variant: its output is its first input.

def neg(x):
    return unary(ops.NEG, x, name="neg")


def neg_(x):
    return unary(ops.NEG, x, out=x, name="neg")


def reciprocal(x):
    """``1 / x`` (an integer or bool ``x`` gives the default float dtype, as true division does)."""
    return binary(ops.DIV, wrap_scalar(1), x)


def abs(x):
    return real_valued_unary(ops.ABS, ops.ABS, x)


def abs_(x):
    if x.dtype.is_complex:     # the result is real: it cannot go back into x
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return unary(ops.ABS, x, out=x, name="abs")


def angle(x):
    return real_valued_unary(ops.ANGLE, ops.ANGLE_COMPLEX, x)


def exp(x):
    return unary(ops.EXP, x, floating=True, name="exp")


def exp_(x):
    return unary(ops.EXP, x, out=x, floating=True, name="exp")


def log(x):
    return unary(ops.LOG, x, floating=True, name="log")


def log_(x):
    return unary(ops.LOG, x, out=x, floating=True, name="log")


def sqrt(x):
    return unary(ops.SQRT, x, floating=True, name="sqrt")


def sqrt_(x):
    return unary(ops.SQRT, x, out=x, floating=True, name="sqrt")


def relu(x):
    return unary(ops.RELU, x, name="relu")


def relu_(x):
    return unary(ops.RELU, x, out=x, name="relu")


def threshold_backward(grad_output, self, threshold):
    return binary(ops.THRESHOLD_BACKWARD, grad_output, self, alpha=threshold)


# sigmoid's and tanh's backward kernels (``sigmoid_backward``, ``tanh_backward`` in
# BinaryOpsKernel.cpp), from the output y: grad·(1 − y)·y and grad·(1 − y²).
def sigmoid_backward(grad_output, output):
    one_minus = dispatcher.call("rsub.Scalar", output, 1)
    return dispatcher.call("mul.Tensor", dispatcher.call("mul.Tensor", grad_output, one_minus), output)


def tanh_backward(grad_output, output):
    one_minus = dispatcher.call("rsub.Scalar", dispatcher.call("mul.Tensor", output, output), 1)
    return dispatcher.call("mul.Tensor", grad_output, one_minus)


def sigmoid(x):
    return unary(ops.SIGMOID, x, floating=True, name="sigmoid")


def sigmoid_(x):
    return unary(ops.SIGMOID, x, out=x, floating=True, name="sigmoid")


def tanh(x):
    return unary(ops.TANH, x, floating=True, name="tanh")


def tanh_(x):
    return unary(ops.TANH, x, out=x, floating=True, name="tanh")


def add_scalar(a, b, alpha=1):
    """``add.Scalar`` (CompositeExplicitAutograd): ``add.Tensor`` with the number wrapped."""
    return dispatcher.call("add.Tensor", a, wrap_scalar(b), alpha=alpha)


def sub_scalar(a, b, alpha=1):
    """``sub.Scalar`` (CompositeExplicitAutograd): ``sub.Tensor`` with the number wrapped."""
    return dispatcher.call("sub.Tensor", a, wrap_scalar(b), alpha=alpha)


def mul_scalar(a, b):
    """``mul.Scalar`` (CompositeExplicitAutograd): ``mul.Tensor`` with the number wrapped."""
    return dispatcher.call("mul.Tensor", a, wrap_scalar(b))


def div_scalar(a, b):
    return dispatcher.call("div.Tensor", a, wrap_scalar(b))


def div_scalar_(a, b):
    return dispatcher.call("div_.Tensor", a, wrap_scalar(b))


def pow(a, b, *, alpha=1):
    return binary(ops.POW, a, b, alpha=alpha)


def pow_(a, b, *, alpha=1):
    return binary(ops.POW, a, b, alpha=alpha, out=a)


def maximum(a, b, *, alpha=1):
    return binary(ops.MAXIMUM, a, b, alpha=alpha)


def maximum_(a, b, *, alpha=1):
    return binary(ops.MAXIMUM, a, b, alpha=alpha, out=a)


def minimum(a, b, *, alpha=1):
    return binary(ops.MINIMUM, a, b, alpha=alpha)


def minimum_(a, b, *, alpha=1):
    return binary(ops.MINIMUM, a, b, alpha=alpha, out=a)


def pow_tensor_scalar(self, exponent, out=None):
    """``pow.Tensor_Scalar`` (``out=self`` for ``pow_.Scalar``)."""
    check_pow_exponent(self, exponent)
    if _float32_loses(self, exponent):
        return _pow_float32(self, exponent, out)
    return binary(ops.POW, self, wrap_scalar(exponent), out=out)


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


def _pow_float32(self, exponent, out):
    """Both loops' values: the vectorized one where torch runs it, the scalar one elsewhere."""
    scalar_loop = to(binary(ops.POW, to(self, st.float64), wrap_scalar(exponent)), st.float32)
    result = binary(ops.POW, self, wrap_scalar(exponent), out=out)
    if self.dtype is st.float32 and not self._impl.is_non_overlapping_and_dense():
        return dispatcher.call("copy_", result, scalar_loop)
    n = result.numel()
    start = n // _VECTORIZED_BLOCK * _VECTORIZED_BLOCK
    if start < n:   # a dense tensor's elements fill [offset, offset + n) of its storage
        def tail(t):
            return dispatcher.call("as_strided", t, [n - start], [1], t.storage_offset() + start)
        dispatcher.call("copy_", tail(result), tail(scalar_loop))
    return result


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


def pow_scalar(self, exponent):
    """``pow.Scalar``: a Python number raised to a tensor (``2 ** x``)."""
    return binary(ops.POW, wrap_scalar(self), exponent)


def rsub_scalar(self, other, alpha=1):
    """``rsub.Scalar``: ``other - alpha * self`` (``1 - x``)."""
    return binary(ops.SUB, wrap_scalar(other), self, alpha=alpha)
