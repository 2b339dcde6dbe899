"""Unary operators (``aten/src/ATen/native/UnaryOps.cpp``, ``Activation.cpp``,
``TensorCompare.cpp``): exp, log, the trigonometry, erf, the rounding functions, sign, the
activations gelu/silu/softplus, bitwise_not and the float classifiers.

Declared as torch declares them, structured: per family a **meta** step (the argument checks
and the TensorIterator: the output allocated, or ``out=`` checked and resized) and an **impl**
step (the loop of a scalar function, named by its op number in ``scalar_ops``).
``structured(meta, impl)`` makes the out= kernel, which the YAML names (``structured: True``);
the functional and in-place kernels are derived from it (``structured_delegate:``). The meta
steps share torch's three iterator builders: ``TensorIterator.unary_float_op`` (integers
computed as the default float: ``CREATE_UNARY_FLOAT_META_FUNC``), ``unary_op`` (the input's
dtype, which ``out`` must have) and ``unary_force_boolean_op`` (a bool result). The operators
torch does not declare structured (abs, angle, relu, conj_physical) run ``unary_op_impl``, as
its ``unary_op_impl_out`` does.
"""
import math

import numpy as np

from ...c10 import scalar_type as st
from .. import dispatcher
from ..tensor_iterator import TensorIterator, TensorIteratorConfig, _output_strides, _reorder
from . import scalar_ops as ops
from .binary_ops import div_out
from .copy import cast_like, contiguous
from .dispatch_stub import loops
from .elementwise import binary_loop
from .resize import resize_output
from .structured import structured
from .tensor_factories import wrap_scalar, zeros_like


def _not_implemented(kernel, x):
    return NotImplementedError(f'"{kernel}" not implemented for \'{x.dtype.torch_name}\'')


def unary_loop(it, op):
    """An impl's last step (``sin_stub(device_type(), *this)``): the loop of scalar function
    ``op`` over the built iterator; returns the result (``out`` itself for out=)."""
    return it.for_each(lambda buffers, *geometry: loops(it.device).unary_loop(op, *buffers, *geometry))


def unary_op_impl(op, self, out=None):
    """``unary_op_impl_out``: the unary iterator and one loop, for the unstructured operators."""
    return unary_loop(TensorIterator.unary_op(out, self), op)


def _declare(name, meta, impl):
    """Name a family's steps as the binary ones are named (``meta_sin``, ``impl_sin``) and make
    its out= kernel, ``sin_out``."""
    for step, prefix in ((meta, "meta_"), (impl, "impl_")):
        step.__name__ = step.__qualname__ = prefix + name
    return structured(meta, impl)


def _float_only(x, kernel):
    """The activation kernels dispatch on floating types only (``AT_DISPATCH_FLOATING_TYPES``)."""
    if not x.dtype.is_floating_point:
        raise _not_implemented(kernel, x)


# ---- CREATE_UNARY_FLOAT_META_FUNC(sin) and TORCH_IMPL_FUNC(sin_out): integers and bool
# compute in the default float dtype; complex inputs take the op's complex scalar function.
def _float_op(name, op, complex_op=None):
    def meta(out, self):
        if self.dtype.is_complex and complex_op is None:    # torch has the kernel; internals not yet
            raise NotImplementedError(f"internals: {name} is not implemented for complex tensors")
        return TensorIterator.unary_float_op(out, self)

    def impl(it, self):
        return unary_loop(it, complex_op if it.compute_dtype.is_complex else op)
    return _declare(name, meta, impl)


exp_out = _float_op("exp", ops.EXP, ops.EXP_COMPLEX)
log_out = _float_op("log", ops.LOG, ops.LOG_COMPLEX)
sqrt_out = _float_op("sqrt", ops.SQRT, ops.SQRT_COMPLEX)
sigmoid_out = _float_op("sigmoid", ops.SIGMOID, ops.SIGMOID_COMPLEX)
tanh_out = _float_op("tanh", ops.TANH, ops.TANH_COMPLEX)
sin_out = _float_op("sin", ops.SIN, ops.SIN_COMPLEX)
cos_out = _float_op("cos", ops.COS, ops.COS_COMPLEX)
tan_out = _float_op("tan", ops.TAN, ops.TAN_COMPLEX)
erf_out = _float_op("erf", ops.ERF)
rsqrt_out = _float_op("rsqrt", ops.RSQRT)
log1p_out = _float_op("log1p", ops.LOG1P)
asin_out = _float_op("asin", ops.ASIN)
acos_out = _float_op("acos", ops.ACOS)
atan_out = _float_op("atan", ops.ATAN)
sinh_out = _float_op("sinh", ops.SINH)
cosh_out = _float_op("cosh", ops.COSH)
asinh_out = _float_op("asinh", ops.ASINH)
acosh_out = _float_op("acosh", ops.ACOSH)
atanh_out = _float_op("atanh", ops.ATANH)
log2_out = _float_op("log2", ops.LOG2)
log10_out = _float_op("log10", ops.LOG10)
expm1_out = _float_op("expm1", ops.EXPM1)
exp2_out = _float_op("exp2", ops.EXP2)
lgamma_out = _float_op("lgamma", ops.LGAMMA)
erfinv_out = _float_op("erfinv", ops.ERFINV)
digamma_out = _float_op("digamma", ops.DIGAMMA)


# ---- reciprocal (CREATE_UNARY_FLOAT_META_FUNC(reciprocal)): 1 / x, run by true division's
# loop into the output this iterator laid out
def meta_reciprocal(out, self):
    return TensorIterator.unary_float_op(out, self)


def impl_reciprocal(it, self):
    return div_out(wrap_scalar(1), self, out=it.result)


reciprocal_out = structured(meta_reciprocal, impl_reciprocal)


# ---- TORCH_META_FUNC(neg): no bool, then the unary iterator
def meta_neg(out, self):
    if self.dtype is st.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return TensorIterator.unary_op(out, self)


def impl_neg(it, self):
    return unary_loop(it, ops.NEG)      # one scalar function for real and complex numbers


neg_out = structured(meta_neg, impl_neg)


# The impl steps refuse the dtypes their loops lack, as torch's stubs do (``AT_DISPATCH_...``):
# after the meta step, so an ``out`` of the wrong dtype is reported first.

# ---- floor, ceil, trunc (TORCH_META_FUNC(floor), CREATE_UNARY_TORCH_IMPL_INTEGER_NO_OP_FUNC):
# complex tensors are refused by the meta step, bool ones by the loop; an integer tensor is its
# own result, copied.
def _rounding_op(name, op):
    def meta(out, self):
        if self.dtype.is_complex:
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        return TensorIterator.unary_op(out, self)

    def impl(it, self):
        if self.dtype is st.bool_:
            raise _not_implemented(f"{name}_vml_cpu", self)
        return unary_loop(it, op if self.dtype.is_floating_point else ops.IDENTITY)
    return _declare(name, meta, impl)


floor_out = _rounding_op("floor", ops.FLOOR)
ceil_out = _rounding_op("ceil", ops.CEIL)
trunc_out = _rounding_op("trunc", ops.TRUNC)


# ---- round (TORCH_META_FUNC(round), TORCH_META_FUNC2(round, decimals)): half to even;
# integers are already round (with decimals=0 only)
def _check_round(self, decimals):
    if decimals != 0 and not self.dtype.is_floating_point:
        raise _not_implemented("round_cpu", self)
    if self.dtype is st.bool_ or self.dtype.is_complex:
        raise _not_implemented("round_vml_cpu", self)


def meta_round(out, self):
    return TensorIterator.unary_op(out, self)


def impl_round(it, self):
    _check_round(self, 0)
    return unary_loop(it, ops.NEARBYINT if self.dtype.is_floating_point else ops.IDENTITY)


round_out = structured(meta_round, impl_round)


def meta_round_decimals(out, self, *, decimals):
    return TensorIterator.unary_op(out, self)


def impl_round_decimals(it, self, *, decimals):
    """``round_decimals_stub``: 10**|decimals| rides in a binary loop's second operand, whether
    to divide by it (decimals < 0) in its scalar."""
    _check_round(self, decimals)
    if decimals == 0:
        return impl_round(it, self)
    ten_pow = 10.0 ** (decimals if decimals > 0 else -decimals)     # ``abs`` here is the operator
    scaled = TensorIterator.binary_op(it.result, self, wrap_scalar(ten_pow))
    return binary_loop(scaled, ops.ROUND_DECIMALS, st.checked_convert(decimals < 0, scaled.compute_dtype))


round_decimals_out = structured(meta_round_decimals, impl_round_decimals)


# ---- frac and bitwise_not (CREATE_UNARY_META_FUNC): the unary iterator
def meta_frac(out, self):
    return TensorIterator.unary_op(out, self)


def impl_frac(it, self):
    if not self.dtype.is_floating_point:
        raise _not_implemented("frac_cpu", self)
    return unary_loop(it, ops.FRAC)


frac_out = structured(meta_frac, impl_frac)


def meta_bitwise_not(out, self):
    return TensorIterator.unary_op(out, self)


def impl_bitwise_not(it, self):
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise _not_implemented("bitwise_not_cpu", self)
    return unary_loop(it, ops.LOGICAL_NOT if self.dtype is st.bool_ else ops.BITWISE_NOT)


bitwise_not_out = structured(meta_bitwise_not, impl_bitwise_not)


# ---- sign and sgn (TORCH_META_FUNC(sign), TORCH_META_FUNC(sgn)); a bool is its own sign
def meta_sign(out, self):
    if self.dtype.is_complex:      # ``sign_kernel`` refuses them by name
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    return TensorIterator.unary_op(out, self)


def impl_sign(it, self):
    return unary_loop(it, ops.IDENTITY if self.dtype is st.bool_ else ops.SIGN)


sign_out = structured(meta_sign, impl_sign)


def meta_sgn(out, self):
    return TensorIterator.unary_op(out, self)


def impl_sgn(it, self):
    """sign's loop for real numbers; for complex ones z / |z| (0 at 0), as torch's
    ``sgn_kernel`` defines it, composed of ``abs``, ``div`` and a fill where |z| is 0."""
    if not self.dtype.is_complex:
        return impl_sign(it, self)
    magnitude = dispatcher.call("abs", self)
    quotient = dispatcher.call("div.Tensor", self, magnitude)
    zero_where = dispatcher.call("eq.Scalar", magnitude, 0)
    return dispatcher.call("copy_", it.result, dispatcher.call("masked_fill.Scalar", quotient, zero_where, 0))


sgn_out = structured(meta_sgn, impl_sgn)


# ---- signbit (TORCH_META_FUNC(signbit)): a bool result; integers: x < 0 (``signbit_kernel``)
def meta_signbit(out, self):
    if self.dtype.is_complex:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if out is not None and out.dtype is not st.bool_:
        raise RuntimeError("signbit does not support non-boolean outputs.")
    return TensorIterator.unary_force_boolean_op(out, self)


def impl_signbit(it, self):
    return unary_loop(it, ops.SIGNBIT if self.dtype.is_floating_point else ops.SIGNBIT_INT)


signbit_out = structured(meta_signbit, impl_signbit)


# ---- the activations gelu, silu, softplus (TORCH_META_FUNC(gelu), ...): the unary iterator
# over floating inputs
def meta_gelu(out, self, *, approximate="none"):
    return TensorIterator.unary_op(out, self)


def impl_gelu(it, self, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(self, "GeluKernelImpl")
    return unary_loop(it, ops.GELU if approximate == "none" else ops.GELU_TANH)


gelu_out = structured(meta_gelu, impl_gelu)


def meta_silu(out, self):
    return TensorIterator.unary_op(out, self)


def impl_silu(it, self):
    _float_only(self, "silu_cpu")
    return unary_loop(it, ops.SILU)


silu_out = structured(meta_silu, impl_silu)


def meta_softplus(out, self, beta=1, threshold=20):
    return TensorIterator.unary_op(out, self)


def impl_softplus(it, self, beta=1, threshold=20):
    """``softplus_stub``: beta rides in a binary loop's second operand, threshold in its scalar."""
    _float_only(self, "softplus_cpu")
    over_beta = TensorIterator.binary_op(it.result, self, wrap_scalar(beta))
    return binary_loop(over_beta, ops.SOFTPLUS, st.checked_convert(threshold, over_beta.compute_dtype))


softplus_out = structured(meta_softplus, impl_softplus)


# ---- abs, angle, relu: not structured in torch (``unary_op_impl_with_complex_to_float``,
# ``relu`` as ``clamp_min``): functional kernels, their out= the generic one
def _complex_to_real(op, x):
    """A complex input gives a real output of the matching real dtype."""
    it = (TensorIteratorConfig().add_output(None, st.to_real(x.dtype)).add_const_input(x)
          .compute_in_opmath(False).build())
    return unary_loop(it, op)


def abs(x):      # shadows the builtin in this module: the YAML names the kernel ``abs``
    if x.dtype.is_complex:
        return _complex_to_real(ops.ABS, x)
    if x.dtype is st.bool_:
        raise _not_implemented("abs_cpu", x)
    return unary_op_impl(ops.ABS, x)


def abs_(x):
    if x.dtype.is_complex:     # the result is real: it cannot go back into x
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    if x.dtype is st.bool_:
        raise _not_implemented("abs_cpu", x)
    return unary_op_impl(ops.ABS, x, out=x)


def angle(x):
    """The argument of a complex number; of a real one 0 or pi (integers give floats)."""
    if x.dtype.is_complex:
        return _complex_to_real(ops.ANGLE_COMPLEX, x)
    return unary_loop(TensorIterator.unary_float_op(None, x), ops.ANGLE)


def _check_relu(x):
    if x.dtype is st.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    if x.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")


def relu(x):
    _check_relu(x)
    return unary_op_impl(ops.RELU, x)


def relu_(x):
    _check_relu(x)
    return unary_op_impl(ops.RELU, x, out=x)


def _alias(name, target):
    """NumPy's names (arcsin, ...), CompositeImplicitAutograd in torch: the operator they rename."""
    def kernel(x):
        return dispatcher.call(target, x)

    def kernel_(x):
        return dispatcher.call(target + "_", x)
    kernel.__name__, kernel_.__name__ = name, name + "_"
    return kernel, kernel_


arcsin, arcsin_ = _alias("arcsin", "asin")
arccos, arccos_ = _alias("arccos", "acos")
arctan, arctan_ = _alias("arctan", "atan")
arcsinh, arcsinh_ = _alias("arcsinh", "asinh")
arccosh, arccosh_ = _alias("arccosh", "acosh")
arctanh, arctanh_ = _alias("arctanh", "atanh")
negative, negative_ = _alias("negative", "neg")
absolute, absolute_ = _alias("absolute", "abs")

def _in_opmath(compute, *tensors):
    """``compute`` over float16/bfloat16 tensors widened to float32, its result rounded once.

    torch's activation kernels (``cpu/Activation.cpp``) load reduced floats into float32 vectors,
    run the whole formula there and store once; composed of float16 operators, every step would
    round. Mixed dtypes compute as they are."""
    dtype = tensors[0].dtype
    if not dtype.is_reduced_float or any(t.dtype is not dtype for t in tensors):
        result = compute(*tensors)
    else:
        result = cast_like(compute(*(cast_like(t, st.float32) for t in tensors)), dtype)
    return result if len(tensors) == 1 else _iterator_layout(result, *tensors)


def _iterator_layout(result, *operands):
    """``result`` laid out as a TensorIterator over ``operands``, in that order, would allocate it:
    torch's backward kernels read (grad_output, self), so the gradient follows grad_output's
    layout where the two differ, while a composition of ``where`` calls follows its condition's."""
    shape = tuple(result.shape)
    if result.numel() <= 1:
        return result
    strides = []
    for t in operands:
        lead = len(shape) - t.dim()
        strides.append([0] * lead + [0 if size == 1 and shape[lead + i] != 1 else stride
                                     for i, (size, stride) in enumerate(zip(t.shape, t.stride()))])
    wanted = _output_strides(shape, _reorder(shape, strides))
    if tuple(result.stride()) == tuple(wanted):
        return result
    return dispatcher.call("copy_", dispatcher.call("empty_strided", list(shape), list(wanted), dtype=result.dtype,
                                                    device=result.device), result)


def _store(result, out):
    return result if out is None else dispatcher.call("copy_", out, result)


# The activations' backward kernels (``GeluKernel.cpp``, ``Activation.cpp``): operators of their own,
# written here with operators called below autograd, so that a dispatch mode sees only their name.
def gelu_backward(grad_output, self, *, approximate="none"):
    """d/dx x Phi(x) = Phi(x) + x phi(x); with approximate="tanh", the derivative of that fit."""
    return _in_opmath(lambda g, x: _gelu_backward(g, x, approximate), grad_output, self)


def _gelu_backward(grad_output, self, approximate):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = (k * (self + 0.044715 * self * self * self)).tanh()
        d_inner = k * (1 + 3 * 0.044715 * self * self)
        return grad_output * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * d_inner)
    cdf = 0.5 * (1 + (self * math.sqrt(0.5)).erf())
    pdf = (self * self * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return grad_output * (cdf + self * pdf)


def silu_backward(grad_output, self):
    """d/dx x sigmoid(x) = sigmoid(x) (1 + x (1 - sigmoid(x)))."""
    def formula(grad, x):
        s = x.sigmoid()
        return grad * s * (1 + x * (1 - s))
    return _in_opmath(formula, grad_output, self)


def softplus_backward(grad_output, self, beta, threshold):
    """sigmoid(beta x), or 1 past the threshold, where softplus is the identity."""
    def formula(grad, x):
        z = (x * beta).exp()
        return dispatcher.call("where.self", x * beta > threshold, grad, grad * z / (z + 1))
    return _in_opmath(formula, grad_output, self)


def leaky_relu(x, negative_slope=0.01, *, out=None):
    """x where x > 0, else x times the slope (``leaky_relu_kernel``): a ``where`` over the two."""
    _float_only(x, "leaky_relu_cpu")
    result = dispatcher.call("where.self", dispatcher.call("gt.Scalar", x, 0), x,
                             dispatcher.call("mul.Tensor", x, wrap_scalar(negative_slope)))
    return result if out is None else dispatcher.call("copy_", out, result)


def leaky_relu_(x, negative_slope=0.01):
    return leaky_relu(x, negative_slope, out=x)


def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    """grad where self > 0, else grad times the slope; from the result (in place) only for a
    slope that keeps the sign, as torch refuses the other."""
    if self_is_result and negative_slope < 0:
        raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead. File an issue at "
                           "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward "
                           "calculation with negative slope")
    return dispatcher.call("where.self", dispatcher.call("gt.Scalar", self, 0), grad_output,
                           dispatcher.call("mul.Tensor", grad_output, wrap_scalar(negative_slope)))


def fix(x):
    """CompositeImplicitAutograd: fix is trunc under another name."""
    return dispatcher.call("trunc", x)


def fix_(x):
    return dispatcher.call("trunc_", x)


def fix_out(x, *, out):
    return dispatcher.call("trunc.out", x, out=out)


def logical_not(x, *, out=None):
    """``logical_not``: bool, True where ``x`` is zero; in place or into ``out``, 0 or 1 in that
    tensor's own dtype (``out`` resized to ``x``'s shape first, as ``resize_output`` does)."""
    result = dispatcher.call("eq.Scalar", x, 0)
    if out is None:
        return result
    if out is not x:
        resize_output(out, list(result.shape))
    return dispatcher.call("copy_", out, result)


def logical_not_(x):
    return logical_not(x, out=x)


# ---- classifiers (TensorCompare.cpp): compositions of comparisons, as torch writes them
def isnan(x):
    return dispatcher.call("ne.Tensor", x, x)


def isinf(x):
    if not x.dtype.is_floating_point:
        return zeros_like(x, dtype=st.bool_)      # no integer is infinite: torch's shortcut too
    return dispatcher.call("eq.Scalar", dispatcher.call("abs", x), math.inf)


def isfinite(x):
    """CompositeImplicitAutograd, as torch's: ``(x == x) * (x.abs() != inf)`` (torch's compiler
    evaluates the right operand first); an integer is always finite, a complex number when both
    its parts are."""
    if x.dtype.category <= st.INTEGRAL:
        return dispatcher.call("ones_like", x, dtype=st.bool_)
    if x.dtype.is_complex:
        return dispatcher.call("bitwise_and_.Tensor", isfinite(dispatcher.call("real", x)),
                               isfinite(dispatcher.call("imag", x)))
    finite_size = dispatcher.call("ne.Scalar", dispatcher.call("abs", x), math.inf)
    return dispatcher.call("mul.Tensor", dispatcher.call("eq.Tensor", x, x), finite_size)


# The largest finite value of each floating dtype (``std::numeric_limits<scalar_t>::max()``).
_FLOAT_MAX = {st.float16: 65504.0, st.bfloat16: 3.3895313892515355e38, st.float32: 3.4028234663852886e38,
              st.float64: 1.7976931348623157e308}


def nan_to_num(x, nan=None, posinf=None, neginf=None, *, out=None):
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite values unless
    given; ``nan_to_num_kernel`` converts each replacement to the dtype). Integers and bool have
    none to replace: a copy (torch's shortcut). Written as ``where`` over the classifiers, the
    values then copied into ``empty_like(x)``, the output torch's kernel writes. A complex
    tensor has its real and imaginary parts replaced each, as floats of its value type."""
    if x.dtype.is_complex:
        result = dispatcher.call("empty_like", x) if out is None else out
        nan_to_num(dispatcher.call("view_as_real", x), nan, posinf, neginf,
                   out=dispatcher.call("view_as_real", result))
        return result
    if not x.dtype.is_floating_point:
        return dispatcher.call("clone", x) if out is None else dispatcher.call("copy_", out, x)
    big = _FLOAT_MAX[x.dtype]
    replaced = x
    for mask, value in ((isnan(x), 0.0 if nan is None else nan),
                        (dispatcher.call("eq.Scalar", x, math.inf), big if posinf is None else posinf),
                        (dispatcher.call("eq.Scalar", x, -math.inf), -big if neginf is None else neginf)):
        replaced = dispatcher.call("where.self", mask, wrap_scalar(value), replaced)
    return dispatcher.call("copy_", dispatcher.call("empty_like", x) if out is None else out, replaced)


def nan_to_num_(x, nan=None, posinf=None, neginf=None):
    return nan_to_num(x, nan, posinf, neginf, out=x)


def square(x):
    """CompositeImplicitAutograd: ``at::pow(self, 2)``, so its node is pow's."""
    return dispatcher.call("pow.Tensor_Scalar", x, 2)


def square_(x):
    return dispatcher.call("pow_.Scalar", x, 2)


def square_out(x, *, out):
    return dispatcher.call("pow.Tensor_Scalar_out", x, 2, out=out)



# deg2rad and rad2deg (CompositeExplicitAutograd): a multiplication by a double constant into
# ``empty_like(self)`` (an integer input gets the default float dtype).
M_PI_180 = 0.017453292519943295
M_180_PI = 57.29577951308232


def _scaled(name, x, factor, out=None):
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    if out is None:
        dtype = st.get_default_dtype() if x.dtype.category <= st.INTEGRAL else x.dtype
        out = dispatcher.call("empty_like", x, dtype=dtype)
    return dispatcher.call("mul.out", x, wrap_scalar(factor), out=out)


def deg2rad(x):
    return _scaled("deg2rad", x, M_PI_180)


def deg2rad_(x):
    return _scaled("deg2rad", x, M_PI_180, out=x)


def rad2deg(x):
    return _scaled("rad2deg", x, M_180_PI)


def rad2deg_(x):
    return _scaled("rad2deg", x, M_180_PI, out=x)


def logit(x, eps=None, *, out=None):
    """log(x / (1 - x)), x clamped to [eps, 1 - eps] first if eps is given (``logit_kernel``);
    the eps rides in the loop's second operand, -1 for none."""
    if x.dtype.is_complex:
        raise _not_implemented("logit_cpu", x)
    if x.dtype.is_reduced_float:        # c10::Half arithmetic: each step rounded to the 16-bit type
        return _logit_16_bits(x, eps, out)
    eps = wrap_scalar(-1.0 if eps is None or eps != eps else float(eps))
    it = TensorIterator.binary_config(out, x, eps).read_original_scalar(1).build()    # eps read as a float: its opmath
    return binary_loop(it, ops.LOGIT, st.checked_convert(1, it.compute_dtype))


def _logit_16_bits(x, eps, out):
    """float16 and bfloat16: log(x / (1 - x)), x clamped first, each operation rounded to x's
    dtype as torch's loop over c10::Half (or BFloat16) values rounds it."""
    if eps is not None and eps == eps:
        x = dispatcher.call("clamp", x, eps, 1 - eps)
    ratio = dispatcher.call("div.Tensor", x, dispatcher.call("rsub.Scalar", x, 1))
    result = dispatcher.call("log", ratio)
    return result if out is None else dispatcher.call("copy_", out, result)


def logit_(x, eps=None):
    return logit(x, eps, out=x)


def logit_backward(grad_output, self, eps=None):
    """``logit_backward_kernel``: grad / (x (1 - x)) inside [eps, 1 - eps] (0 outside; with no
    eps, NaN outside [0, 1]), written with ``where``."""
    lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    inside = dispatcher.call("logical_and", dispatcher.call("ge.Scalar", self, lo),
                             dispatcher.call("le.Scalar", self, hi))
    grad = dispatcher.call("div.Tensor", grad_output,
                           dispatcher.call("mul.Tensor", self, dispatcher.call("rsub.Scalar", self, 1)))
    return dispatcher.call("where.self", inside, grad, wrap_scalar(math.nan if eps is None else 0.0))


def log_sigmoid_forward(x):
    """(min(x, 0) - log1p(e^-|x|), e^-|x|): the output and the buffer its backward reads
    (``log_sigmoid_cpu_kernel``); two loops here, one in torch."""
    _float_only(x, "log_sigmoid_cpu")
    x = contiguous(x)        # torch's kernel reads a contiguous input and writes contiguous outputs
    return unary_op_impl(ops.LOG_SIGMOID, x), unary_op_impl(ops.EXP_NEG_ABS, x)


def log_sigmoid(x):
    """CompositeImplicitAutograd: the output of ``log_sigmoid_forward``."""
    return dispatcher.call("log_sigmoid_forward", x)[0]


def log_sigmoid_backward(grad_output, self, buffer):
    """One ternary loop over (input, buffer, grad), as ``log_sigmoid_backward_cpu_kernel``."""
    _float_only(self, "log_sigmoid_backward_cpu")
    # torch writes into empty_like(grad_output), whose layout the gradient keeps
    out = dispatcher.call("empty_like", grad_output, dtype=st.promote_types(self.dtype, grad_output.dtype))
    it = (TensorIteratorConfig().add_output(out).add_const_input(self).add_const_input(buffer)
          .add_const_input(grad_output).promote_inputs_to_common_dtype().build())
    return it.for_each(lambda buffers, *geometry: loops(it.device).ternary_loop(ops.LOG_SIGMOID_BACKWARD, *buffers,
                                                                                 0, *geometry))


# ---- activations of a reader's own training script: hardtanh/relu6, elu/selu/celu (``Activation.cpp``)
def _call(name, *args, **kwargs):
    return dispatcher.call(name, *args, **kwargs)


def _mul(t, s):
    return _call("mul.Tensor", t, wrap_scalar(s))


def hardtanh(x, min_val=-1, max_val=1, *, out=None):
    """``clamp(x, min_val, max_val)``; on integer tensors the bounds are truncated to integers first,
    so they do not promote the result (torch's ``hardtanh_out``)."""
    if x.dtype is st.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        min_val, max_val = int(min_val), int(max_val)
        if x.dtype is st.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    # torch clamps into ``empty_like(x)``, whose layout (not clamp's) the result keeps
    return dispatcher.call("clamp.out", x, min_val, max_val, out=_call("empty_like", x) if out is None else out)


def hardtanh_(x, min_val=-1, max_val=1):
    return hardtanh(x, min_val, max_val, out=x)


def hardtanh_backward(grad_output, self, min_val, max_val):
    """grad inside (min_val, max_val), 0 on and beyond the bounds (NaN inputs pass the gradient)."""
    if not self.dtype.is_floating_point:
        raise _not_implemented("hardshrink_backward_cpu", self)    # torch's kernel carries this name
    outside = _call("logical_or", _call("le.Scalar", self, min_val), _call("ge.Scalar", self, max_val))
    return _iterator_layout(_call("where.self", outside, _call("zeros_like", grad_output), grad_output),
                            grad_output, self)


def relu6(x):
    """CompositeImplicitAutograd: ``hardtanh(x, 0, 6)``."""
    return _call("hardtanh", x, 0, 6)


def relu6_(x):
    return _call("hardtanh_", x, 0, 6)


def elu(x, alpha=1, scale=1, input_scale=1, *, out=None):
    """x·scale where x > 0, else expm1(x·input_scale)·alpha·scale (``elu_kernel``)."""
    _float_only(x, "elu_cpu")

    def formula(x):
        negative = _mul(_call("expm1", _mul(x, input_scale)), alpha * scale)
        return _call("where.self", _call("gt.Scalar", x, 0), _mul(x, scale), negative)
    return _store(_in_opmath(formula, x), out)


def elu_(x, alpha=1, scale=1, input_scale=1):
    return elu(x, alpha, scale, input_scale, out=x)


def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """grad·scale where the input was positive; else grad·input_scale·alpha·scale·exp(x·input_scale),
    which from the result r is grad·input_scale·(r + alpha·scale), in torch's order of products."""
    if is_result and alpha < 0:
        raise RuntimeError("In-place elu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead.")
    _float_only(self_or_result, "elu_backward_cpu")

    def formula(grad, x):
        negcoef, scaled = alpha * scale, _mul(grad, input_scale)
        if is_result:
            negative = _call("mul.Tensor", scaled, _call("add.Tensor", x, wrap_scalar(negcoef)))
        else:
            negative = _call("mul.Tensor", _mul(scaled, negcoef), _call("exp", _mul(x, input_scale)))
        return _call("where.self", _call("le.Scalar", x, 0), negative, _mul(grad, scale))
    return _in_opmath(formula, grad_output, self_or_result)


# torch's SELU constants (Activation.cpp), as the paper's closed forms evaluated to double
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """CompositeImplicitAutograd: ``elu(x, SELU_ALPHA, SELU_SCALE)``."""
    return _call("elu", x, SELU_ALPHA, SELU_SCALE)


def selu_(x):
    return _call("elu_", x, SELU_ALPHA, SELU_SCALE)


def _celu_input_scale(alpha):
    """1 / alpha in double (celu's derivative formula, in derivatives.yaml, divides by alpha rounded
    to float32 instead, as torch's does)."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return 1.0 / alpha


def celu(x, alpha=1.0):
    """CompositeExplicitAutograd: ``elu(x, alpha, 1, 1 / alpha)``."""
    return _call("elu", x, alpha, 1.0, _celu_input_scale(alpha))


def celu_(x, alpha=1.0):
    return _call("elu_", x, alpha, 1.0, _celu_input_scale(alpha))


# ---- more activations: hardsigmoid/hardswish, the shrinks, threshold, mish, prelu, glu
# (``Activation.cpp``, ``cpu/Activation.cpp``, ``GatedLinearUnit.cpp``), each written with the
# pointwise operators in the order of torch's scalar loop, so the roundings are torch's.
def _where(cond, a, b):
    return _call("where.self", cond, a, b)


def _zero_like(x):
    """A 0-dim zero of ``x``'s dtype: ``where`` broadcasts it without promoting."""
    return _call("scalar_tensor", 0, dtype=x.dtype, device=x.device)


def _relu6_of_shifted(x):
    """min(max(x + 3, 0), 6), the piece hardsigmoid and hardswish share."""
    return _call("clamp", _call("add.Tensor", x, wrap_scalar(3)), 0, 6)


def hardsigmoid(x, *, out=None):
    """min(max(x + 3, 0), 6) / 6 (``hardsigmoid_kernel``)."""
    _float_only(x, "hardsigmoid_cpu")
    return _store(_in_opmath(lambda x: _call("div.Tensor", _relu6_of_shifted(x), wrap_scalar(6)), x), out)


def hardsigmoid_(x):
    return hardsigmoid(x, out=x)


# torch's kernel multiplies by 1.0f / 6.0f, a float32 constant, whatever the dtype
_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


def hardsigmoid_backward(grad_output, self):
    """grad / 6 strictly inside (-3, 3), else 0 (a NaN input gives 0, as the vector loop does)."""
    _float_only(self, "hardsigmoid_backward")
    inside = _call("logical_and", _call("gt.Scalar", self, -3), _call("lt.Scalar", self, 3))
    return _iterator_layout(_where(inside, _mul(grad_output, _ONE_SIXTH_F32), _zero_like(grad_output)),
                            grad_output, self)


def hardswish(x, *, out=None):
    """x · min(max(x + 3, 0), 6) / 6 (``hardswish_kernel``)."""
    _float_only(x, "hardswish_cpu")

    def formula(x):
        return _call("div.Tensor", _call("mul.Tensor", x, _relu6_of_shifted(x)), wrap_scalar(6))
    return _store(_in_opmath(formula, x), out)


def hardswish_(x):
    return hardswish(x, out=x)


def hardswish_backward(grad_output, self):
    """0 at and below -3, grad · (x / 3 + 1/2) below 3, grad elsewhere, NaN included (torch 2.13's
    ``hardswish_backward_kernel``; the two ends are where its derivative formula puts them)."""
    _float_only(self, "hardswish_backward_cpu")

    def formula(grad, x):
        ramp = _call("mul.Tensor", grad, _call("add.Tensor", _call("div.Tensor", x, wrap_scalar(3)), wrap_scalar(0.5)))
        upper = _where(_call("lt.Scalar", x, 3), ramp, grad)
        return _where(_call("le.Scalar", x, -3), _zero_like(grad), upper)
    return _in_opmath(formula, grad_output, self)


def _shrink_kept(x, lambd):
    """Where a shrink keeps its input: x < -lambd or x > lambd (False for NaN)."""
    return _call("logical_or", _call("lt.Scalar", x, -lambd), _call("gt.Scalar", x, lambd))


def hardshrink(x, lambd=0.5, *, out=None):
    """0 on [-lambd, lambd], x elsewhere (NaN stays NaN) (``hardshrink_kernel``)."""
    _float_only(x, "hardshrink_cpu")
    inside = _call("logical_and", _call("ge.Scalar", x, -lambd), _call("le.Scalar", x, lambd))
    result = _where(inside, _zero_like(x), x)
    return result if out is None else _call("copy_", out, result)


def hardshrink_backward(grad_out, self, lambd):
    """grad where the input was kept, else 0 (``shrink_backward_kernel``)."""
    _float_only(self, "shrink_backward_cpu")
    return _iterator_layout(_where(_shrink_kept(self, lambd), grad_out, _zero_like(grad_out)), grad_out, self)


# the largest finite value of each floating dtype, which bounds softshrink's lambda
_FLOAT_MAX = {st.float16: 65504.0, st.bfloat16: (2 - 2.0 ** -7) * 2.0 ** 127,
              st.float32: float(np.finfo(np.float32).max), st.float64: float(np.finfo(np.float64).max)}


def _softshrink_check(x, lambd):
    """Floating inputs only, and 0 <= lambd <= the dtype's largest value (NaN fails)."""
    if not x.dtype.is_floating_point:
        raise _not_implemented("softshrink_check", x)
    top = _FLOAT_MAX[x.dtype]
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {x.dtype.torch_name}, but found "
                           f"{float(lambd):g}")


def softshrink(x, lambd=0.5, *, out=None):
    """x - lambd above lambd, x + lambd below -lambd, else x · 0 (so NaN stays NaN and a negative
    input gives -0.0, as torch's scalar loop; its vector loop gives +0.0 there)."""
    _softshrink_check(x, lambd)
    shrunk = _where(_call("gt.Scalar", x, lambd), _call("sub.Tensor", x, wrap_scalar(lambd)),
                    _call("add.Tensor", x, wrap_scalar(lambd)))
    result = _where(_shrink_kept(x, lambd), shrunk, _mul(x, 0))
    return result if out is None else _call("copy_", out, result)


def softshrink_backward(grad_output, self, lambd):
    return hardshrink_backward(grad_output, self, lambd)


def _threshold(x, bound, value, out):
    """value where x <= bound, else x (``threshold_kernel``); the value is converted to x's dtype."""
    if x.dtype is st.bool_:
        raise _not_implemented("threshold_cpu", x)
    filler = _call("scalar_tensor", value, dtype=x.dtype, device=x.device)
    result = _where(_call("le.Scalar", x, bound), filler, x)
    return result if out is None else _call("copy_", out, result)


def threshold(x, threshold, value, *, out=None):
    return _threshold(x, threshold, value, out)


def threshold_(x, threshold, value):
    return _threshold(x, threshold, value, x)


def mish(x, *, out=None):
    """x · tanh(log1p(exp(x))) (``mish_kernel``)."""
    _float_only(x, "mish_cpu")
    return _store(_in_opmath(lambda x: _call("mul.Tensor", x, _call("tanh", _call("log1p", _call("exp", x)))), x), out)


def mish_(x):
    return mish(x, out=x)


def mish_backward(grad_output, self):
    """grad · (t + x · σ(x) · (1 - t²)) with t = tanh(softplus(x)) (``mish_backward_kernel``);
    with these operators it is also the formula torch differentiates again."""
    def formula(grad, x):
        sigmoid = _call("sigmoid", x)
        t = _call("tanh", _call("log1p", _call("exp", x)))
        slope = _call("rsub.Scalar", _call("mul.Tensor", t, t), 1)
        inner = _call("add.Tensor", t, _call("mul.Tensor", _call("mul.Tensor", x, sigmoid), slope))
        return _call("mul.Tensor", grad, inner)
    return _in_opmath(formula, grad_output, self)


def prelu(self, weight):
    """CompositeImplicitAutograd: checks, then ``weight`` reshaped to broadcast along dim 1."""
    if self.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {self.dtype.torch_name} and "
                           f"{weight.dtype.torch_name}")
    if weight.numel() != 1:
        if self.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self.shape[1] if self.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if self.dim() != weight.dim():
        shape = [1] * self.dim()
        if self.dim() > 1:
            shape[1] = weight.numel()
        weight = _call("reshape", weight, shape)
    return _call("_prelu_kernel", self, weight)


def _prelu_kernel(self, weight):
    """x where x > 0, else weight · x (``prelu_kernel``), written into ``empty_like(self)`` as
    torch's is, so the result keeps the input's layout (even an empty one's strides)."""
    _float_only(self, "prelu_cpu")
    result = _where(_call("gt.Scalar", self, 0), self, _call("mul.Tensor", weight, self))
    return _call("copy_", _call("empty_like", self), result)


def _prelu_kernel_backward(grad_output, self, weight):
    """(grad or weight · grad, 0 or x · grad), the weight's summed back to its shape."""
    _float_only(self, "prelu_backward_cpu")
    positive = _call("gt.Scalar", self, 0)
    grad_self = _where(positive, grad_output, _call("mul.Tensor", weight, grad_output))
    grad_weight = _where(positive, _zero_like(self), _call("mul.Tensor", self, grad_output))
    return grad_self, _sum_to(grad_weight, list(weight.shape))


def _sum_to(t, shape):
    """``sum_to_size``: sum away the leading dims, then keep-dim sums where ``shape`` has a 1."""
    lead = t.dim() - len(shape)
    if lead:
        t = _call("sum.dim_IntList", t, list(range(lead)), False, dtype=None)
    ones = [d for d, n in enumerate(shape) if n == 1 and t.shape[d] != 1]
    return _call("sum.dim_IntList", t, ones, True, dtype=None) if ones else t


def _glu_halves(self, dim):
    if self.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = dim + self.dim() if dim < 0 else dim
    if self.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {self.shape[dim]}")
    n = self.shape[dim] // 2
    return _call("narrow", self, dim, 0, n), _call("narrow", self, dim, n, n), dim


def glu(self, dim=-1):
    """a · 1 / (1 + exp(-b)) for the two halves a, b along ``dim`` (``glu_kernel``)."""
    _float_only(self, "glu_cpu")
    a, b, _ = _glu_halves(self, dim)
    gate = _call("reciprocal", _call("add.Tensor", _call("exp", _call("neg", b)), wrap_scalar(1)))
    return _call("mul.Tensor", a, gate)


def glu_backward(grad_output, self, dim):
    """(σ(b) · g, (1 - σ(b)) · σ(b) · a · g), side by side along ``dim`` (``glu_backward_cpu_out``)."""
    _float_only(self, "glu_backward_cpu")
    a, b, dim = _glu_halves(self, dim)
    s = _call("sigmoid", b)
    second = _call("mul.Tensor", _call("mul.Tensor", _call("mul.Tensor", _call("rsub.Scalar", s, 1), s), a),
                   grad_output)
    return _call("cat", [_call("mul.Tensor", s, grad_output), second], dim)
