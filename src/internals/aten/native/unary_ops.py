"""Unary operators (``aten/src/ATen/native/UnaryOps.cpp``, ``TensorCompare.cpp``): exp, log,
the trigonometry, erf, the rounding functions, sign, bitwise_not and the float classifiers
(the activations are in ``activation.py``).

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

from ...c10 import scalar_type as st
from .. import dispatcher
from ..tensor_iterator import TensorIterator, TensorIteratorConfig
from . import scalar_ops as ops
from .binary_ops import div_out
from .copy import _bits_copy
from .dispatch_stub import loops, refuse_unlisted_dtypes
from .elementwise import binary_loop, complex32_in_opmath
from .resize import resize_output
from .structured import structured
from .tensor_factories import wrap_scalar, zeros_like


def _not_implemented(kernel, x):
    return NotImplementedError(f'"{kernel}" not implemented for \'{x.dtype.torch_name}\'')


def unary_loop(it, op):
    """An impl's last step (``sin_stub(device_type(), *this)``): the loop of scalar function
    ``op`` over the built iterator; returns the result (``out`` itself for out=)."""
    return it.for_each(lambda buffers, *geometry: loops(it.device).unary_loop(op, *buffers, *geometry),
                       float8=False)    # torch's one float8 unary kernel, abs, runs on the bits


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
    """Kernels that dispatch on floating types only (``AT_DISPATCH_FLOATING_TYPES``)."""
    if not x.dtype.is_floating_point:
        raise _not_implemented(kernel, x)


# ---- CREATE_UNARY_FLOAT_META_FUNC(sin) and TORCH_IMPL_FUNC(sin_out): integers and bool
# compute in the default float dtype; complex inputs take the op's complex scalar function, or
# (a string) are refused by the kernel torch names, whose dispatch has no complex types.
def _float_op(name, op, complex_op):
    kernel = complex_op if isinstance(complex_op, str) else _CPU_KERNEL_NAMES.get(name, f"{name}_vml_cpu")

    def meta(out, self):
        return TensorIterator.unary_float_op(out, self)

    def impl(it, self):
        if it.common_dtype is st.complex32 or it.common_dtype.is_float8:     # not in torch's dispatch either
            raise _not_implemented(kernel, self)
        if not it.compute_dtype.is_complex:
            return unary_loop(it, op)
        if isinstance(complex_op, str):
            raise NotImplementedError(f'"{complex_op}" not implemented for \'{it.compute_dtype.torch_name}\'')
        return unary_loop(it, complex_op)
    return _declare(name, meta, impl)


# the names of torch's CPU kernels, which its refusals quote, where they are not ``<name>_vml_cpu``
_CPU_KERNEL_NAMES = {"sigmoid": "sigmoid_cpu", "rsqrt": "rsqrt_cpu", "sinh": "sinh_cpu", "cosh": "cosh_cpu",
                     "asinh": "asinh_cpu", "acosh": "acosh_cpu", "atanh": "atanh_cpu", "exp2": "exp2",
                     "sinc": "sinc_cpu"}
exp_out = _float_op("exp", ops.EXP, ops.EXP_COMPLEX)
log_out = _float_op("log", ops.LOG, ops.LOG_COMPLEX)
sqrt_out = _float_op("sqrt", ops.SQRT, ops.SQRT_COMPLEX)
sigmoid_out = _float_op("sigmoid", ops.SIGMOID, ops.SIGMOID_COMPLEX)
tanh_out = _float_op("tanh", ops.TANH, ops.TANH_COMPLEX)
sin_out = _float_op("sin", ops.SIN, ops.SIN_COMPLEX)
cos_out = _float_op("cos", ops.COS, ops.COS_COMPLEX)
tan_out = _float_op("tan", ops.TAN, ops.TAN_COMPLEX)
erf_out = _float_op("erf", ops.ERF, "erf_vml_cpu")
rsqrt_out = _float_op("rsqrt", ops.RSQRT, ops.RSQRT_COMPLEX)
log1p_out = _float_op("log1p", ops.LOG1P, ops.LOG1P_COMPLEX)
asin_out = _float_op("asin", ops.ASIN, ops.ASIN_COMPLEX)
acos_out = _float_op("acos", ops.ACOS, ops.ACOS_COMPLEX)
atan_out = _float_op("atan", ops.ATAN, ops.ATAN_COMPLEX)
sinh_out = _float_op("sinh", ops.SINH, ops.SINH_COMPLEX)
cosh_out = _float_op("cosh", ops.COSH, ops.COSH_COMPLEX)
asinh_out = _float_op("asinh", ops.ASINH, ops.ASINH_COMPLEX)
acosh_out = _float_op("acosh", ops.ACOSH, ops.ACOSH_COMPLEX)
atanh_out = _float_op("atanh", ops.ATANH, ops.ATANH_COMPLEX)
log2_out = _float_op("log2", ops.LOG2, ops.LOG2_COMPLEX)
log10_out = _float_op("log10", ops.LOG10, ops.LOG10_COMPLEX)
expm1_out = _float_op("expm1", ops.EXPM1, ops.EXPM1_COMPLEX)
exp2_out = _float_op("exp2", ops.EXP2, ops.EXP2_COMPLEX)
lgamma_out = _float_op("lgamma", ops.LGAMMA, "lgamma_vml_cpu")
erfinv_out = _float_op("erfinv", ops.ERFINV, "erfinv_vml_cpu")
digamma_out = _float_op("digamma", ops.DIGAMMA, "digamma")
# the modified Bessel functions (i0 in UnaryOps.cpp, the others torch.special's own kernels):
# float16 and bfloat16 computed in float32, as calc_i0's overloads for them do
i0_out = _float_op("i0", ops.I0, "i0_vml_cpu")
special_i0e_out = _float_op("special_i0e", ops.I0E, "i0e_cpu")
special_i1_out = _float_op("special_i1", ops.I1, "i1_cpu")
special_i1e_out = _float_op("special_i1e", ops.I1E, "i1e_cpu")
sinc_out = _float_op("sinc", ops.SINC, ops.SINC_COMPLEX)
erfc_out = _float_op("erfc", ops.ERFC, "erfc_vml_cpu")


def _floating_op(name, op, kernel):
    """A float op whose kernel dispatches on float and double only (``AT_DISPATCH_FLOATING_TYPES``):
    integers still compute as the default float, the 16-bit floats and complex are refused."""
    def meta(out, self):
        return TensorIterator.unary_float_op(out, self)

    def impl(it, self):
        if it.common_dtype not in (st.float32, st.float64):
            raise NotImplementedError(f'"{kernel}" not implemented for \'{it.common_dtype.torch_name}\'')
        return unary_loop(it, op)
    return _declare(name, meta, impl)


# torch.special's normal-distribution functions (UnaryOps.cpp, UnaryOpsKernel.cpp)
special_ndtri_out = _floating_op("special_ndtri", ops.NDTRI, "ndtri_cpu")
special_log_ndtr_out = _floating_op("special_log_ndtr", ops.LOG_NDTR, "log_ndtr_cpu")
special_erfcx_out = _floating_op("special_erfcx", ops.ERFCX, "erfcx_cpu")


# ---- reciprocal (CREATE_UNARY_FLOAT_META_FUNC(reciprocal)): 1 / x, run by true division's
# loop into the output this iterator laid out
def meta_reciprocal(out, self):
    return TensorIterator.unary_float_op(out, self)


def impl_reciprocal(it, self):
    if it.common_dtype is st.complex32:
        raise _not_implemented("reciprocal_cpu", self)
    return div_out(wrap_scalar(1), self, out=it.result)


reciprocal_out = structured(meta_reciprocal, impl_reciprocal)


# ---- TORCH_META_FUNC(neg): no bool, then the unary iterator
def meta_neg(out, self):
    if self.dtype is st.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return TensorIterator.unary_op(out, self)


def impl_neg(it, self):
    if it.common_dtype is st.complex32:     # exact: each float16 part negated
        return complex32_in_opmath(it.result, lambda a: dispatcher.call("neg", a), self)
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
        if self.dtype in st.LIMITED_UNSIGNED:
            return _integer_copy(it, self)
        return unary_loop(it, op if self.dtype.is_floating_point else ops.IDENTITY)
    return _declare(name, meta, impl)


def _integer_copy(it, self):
    """An integer tensor rounded is a copy of itself (torch's kernel is ``copy_``): so it is for
    uint16, uint32 and uint64 too, which have no arithmetic loops, only copies."""
    return dispatcher.call("copy_", it.result, self)


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
    if self.dtype in st.LIMITED_UNSIGNED:
        return _integer_copy(it, self)
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
    if self.dtype is st.complex32:
        return complex32_in_opmath(it.result, _sgn_of_parts, self)
    magnitude = dispatcher.call("abs", self)
    quotient = dispatcher.call("div.Tensor", self, magnitude)
    zero_where = dispatcher.call("eq.Scalar", magnitude, 0)
    return dispatcher.call("copy_", it.result, dispatcher.call("masked_fill.Scalar", quotient, zero_where, 0))


sgn_out = structured(meta_sgn, impl_sgn)


def _sgn_of_parts(z):
    """``sgn_impl`` on ``complex<float>`` (``sgn_kernel``'s kComplexHalf branch): 0 at 0, else
    ``z / zabs(z)``, a complex division by ``(|z|, 0)`` in c10::complex's order (NumPy's: the
    ratio d/c, the scale 1/(c + d*ratio), then each part times the scale), so an infinite |z|
    gives NaN in both parts, as torch's does."""
    def call(name, *args):
        return dispatcher.call(name, *args)
    a, b = call("unbind.int", call("view_as_real", z), -1)
    c = call("abs", z)
    ratio = call("div.Tensor", call("zeros_like", c), c)
    scale = call("reciprocal", call("add.Tensor", c, call("mul.Tensor", ratio, wrap_scalar(0.0))))
    real = call("mul.Tensor", call("add.Tensor", a, call("mul.Tensor", b, ratio)), scale)
    imag = call("mul.Tensor", call("sub.Tensor", b, call("mul.Tensor", a, ratio)), scale)
    return call("masked_fill.Scalar", call("complex", real, imag), call("eq.Scalar", z, 0), 0)


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


# ---- isposinf, isneginf (TORCH_META_FUNC(isposinf)): a bool result; no integer is infinite
def _meta_is_infinite(name):
    def meta(out, self):
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} does not support complex inputs.")
        if out is not None and out.dtype is not st.bool_:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")
        return TensorIterator.unary_force_boolean_op(out, self)
    meta.__name__ = meta.__qualname__ = f"meta_{name}"
    return meta


def _impl_is_infinite(name, op):
    def impl(it, self):
        # torch fills False for integers; the loop's comparison gives False for them too
        return unary_loop(it, op)
    impl.__name__ = impl.__qualname__ = f"impl_{name}"
    return impl


isposinf_out = structured(_meta_is_infinite("isposinf"), _impl_is_infinite("isposinf", ops.ISPOSINF))
isneginf_out = structured(_meta_is_infinite("isneginf"), _impl_is_infinite("isneginf", ops.ISNEGINF))



# ---- abs, angle, relu: not structured in torch (``unary_op_impl_with_complex_to_float``,
# ``relu`` as ``clamp_min``): functional kernels, their out= the generic one
def _complex_to_real(op, x):
    """A complex input gives a real output of the matching real dtype."""
    it = (TensorIteratorConfig().add_output(None, st.to_real(x.dtype)).add_const_input(x)
          .compute_in_opmath(False).build())
    return unary_loop(it, op)


def abs(x):      # shadows the builtin in this module: the YAML names the kernel ``abs``
    if x.dtype is st.complex32:     # hypot of the float parts, rounded to float16
        out = dispatcher.call("empty_like", x, dtype=st.float16)        # ``unary_op_impl_with_complex_to_float``
        return complex32_in_opmath(out, lambda z: dispatcher.call("abs", z), x)
    if x.dtype.is_complex:
        return _complex_to_real(ops.ABS, x)
    if x.dtype is st.bool_ or x.dtype is st.float8_e8m0fnu:
        raise _not_implemented("abs_cpu", x)
    if x.dtype.is_float8:
        return _float8_abs(dispatcher.call("empty_like", x), x)
    return unary_op_impl(ops.ABS, x)


def abs_(x):
    if x.dtype.is_complex:     # the result is real: it cannot go back into x
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    if x.dtype is st.bool_ or x.dtype is st.float8_e8m0fnu:
        raise _not_implemented("abs_cpu", x)
    if x.dtype.is_float8:
        return _float8_abs(x, x)
    return unary_op_impl(ops.ABS, x, out=x)


# ``abs_kernel`` on the float8 types works on the stored bits (see ``scalar_ops``)
_FLOAT8_ABS = {st.float8_e4m3fn: ops.E4M3FN_ABS_BITS, st.float8_e5m2: ops.E5M2_ABS_BITS,
               st.float8_e4m3fnuz: ops.FNUZ_ABS_BITS, st.float8_e5m2fnuz: ops.FNUZ_ABS_BITS}


def _float8_abs(out, x):
    """``abs`` of a float8 tensor into ``out`` (same shape and dtype), bit pattern to bit pattern."""
    _bits_copy(out, x, _FLOAT8_ABS[x.dtype])
    return out


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


def _special(name, target):
    """torch.special's name for an operator torch already has (``special_expit`` is ``sigmoid``,
    ``UnaryOps.cpp``): CompositeImplicitAutograd, so autograd records the operator it renames,
    and its out= form is the renamed operator's (the same checks of ``out``)."""
    def kernel(x):
        return dispatcher.call(target, x)

    def kernel_out(x, *, out):
        return dispatcher.call(target + ".out", x, out=out)
    kernel.__name__, kernel_out.__name__ = name, name + "_out"
    return kernel, kernel_out


special_expit, special_expit_out = _special("special_expit", "sigmoid")
special_erf, special_erf_out = _special("special_erf", "erf")
special_erfc, special_erfc_out = _special("special_erfc", "erfc")
special_erfinv, special_erfinv_out = _special("special_erfinv", "erfinv")
special_gammaln, special_gammaln_out = _special("special_gammaln", "lgamma")
special_digamma, special_digamma_out = _special("special_digamma", "digamma")
special_psi, special_psi_out = _special("special_psi", "digamma")
special_exp2, special_exp2_out = _special("special_exp2", "exp2")
special_expm1, special_expm1_out = _special("special_expm1", "expm1")
special_log1p, special_log1p_out = _special("special_log1p", "log1p")
special_i0, special_i0_out = _special("special_i0", "i0")
special_sinc, special_sinc_out = _special("special_sinc", "sinc")



# ---- polygamma (TORCH_META_FUNC(polygamma), polygamma_kernel): the n-th derivative of digamma;
# n = 0 and n = 1 run digamma's and trigamma's loops, larger n the zeta formula with n riding in
# a binary loop's second operand (as round's 10**decimals does)
def meta_polygamma(out, n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return TensorIterator.unary_float_op(out, self)


def impl_polygamma(it, n, self):
    kernel = ("digamma", "trigamma", "polygamma")[min(n, 2)]
    if not it.common_dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{it.common_dtype.torch_name}\'')
    if n < 2:
        return unary_loop(it, ops.DIGAMMA if n == 0 else ops.TRIGAMMA)
    orders = TensorIterator.binary_float_op(it.result, self, wrap_scalar(n))
    if it.common_dtype.is_reduced_float:
        # torch's 16-bit path rounds n + 1 and zeta's result to the 16-bit type, the rest float32
        bits = 11 if it.common_dtype is st.float16 else 8
        return binary_loop(orders, ops.POLYGAMMA_16_BIT, st.checked_convert(bits, orders.compute_dtype))
    return binary_loop(orders, ops.POLYGAMMA, st.checked_convert(1, orders.compute_dtype))


polygamma_out = structured(meta_polygamma, impl_polygamma)


def polygamma_(self, n):
    """CompositeExplicitAutograd: polygamma into self (``at::polygamma_out(self, n, self)``)."""
    return dispatcher.call("polygamma.out", n, self, out=self)


def special_polygamma(n, self):
    return dispatcher.call("polygamma", n, self)


def special_polygamma_out(n, self, *, out):
    return dispatcher.call("polygamma.out", n, self, out=out)


# ---- mvlgamma (UnaryOps.cpp): log of the multivariate gamma function of dimension p, the sum
# of lgamma(x - i / 2) over i < p plus p (p - 1) / 4 log(pi), computed as torch writes it: an
# arange of half steps added to x's trailing new axis, lgamma in place, a sum over that axis
_LOG_PI = math.log(math.pi)


def _check_mvlgamma(self, p):
    if self.dtype is st.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if self.dtype.is_complex:       # torch's arange (its first step) has no complex kernel
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{self.dtype.torch_name}\'')


def _mvlgamma_of(self, p, dtype):
    args = dispatcher.call("arange.start_step", -p * 0.5 + 0.5, 0.5, 0.5, dtype=dtype, device=self.device)
    args = dispatcher.call("add.Tensor", args, dispatcher.call("unsqueeze", self, -1))
    total = dispatcher.call("sum.dim_IntList", dispatcher.call("lgamma_", args), [-1])
    return dispatcher.call("add_.Tensor", total, wrap_scalar(float(p * (p - 1)) * _LOG_PI * 0.25))


def mvlgamma(self, p):
    """Integers and bool (refused) aside, in x's dtype; integers in the default float."""
    _check_mvlgamma(self, p)
    dtype = self.dtype if self.dtype.is_floating_point or self.dtype.is_complex else st.get_default_dtype()
    return _mvlgamma_of(self, p, dtype)


def mvlgamma_out(self, p, *, out):
    """``mvlgamma_out``: the functional result, checked against out's dtype (torch's message names
    x's dtype first), out resized, the values copied (cast)."""
    result = dispatcher.call("mvlgamma", self, p)
    if not st.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"mvlgamma: result type {self.dtype.torch_name} can't be cast to the desired output "
                           f"type {result.dtype.torch_name}")
    resize_output(out, result.shape)
    return dispatcher.call("copy_", out, result)


def mvlgamma_(self, p):
    """CompositeExplicitAutograd: ``mvlgamma_out`` into self (an integer self is refused there)."""
    return mvlgamma_out(self, p, out=self)


def special_multigammaln(self, p):
    return dispatcher.call("mvlgamma", self, p)


def special_multigammaln_out(self, p, *, out):
    return dispatcher.call("mvlgamma.out", self, p, out=out)


M_SQRT1_2 = 0.7071067811865476


def special_ndtr(x):
    """The standard normal CDF, (1 + erf(x / sqrt(2))) / 2, in the three operators torch's
    ``special_ndtr`` composes, each with a number operand (``mul.Scalar``, ``add.Scalar``): an
    integer input becomes float at the first product."""
    erf = dispatcher.call("erf", dispatcher.call("mul.Scalar", x, M_SQRT1_2))
    return dispatcher.call("mul.Scalar", dispatcher.call("add.Scalar", erf, 1), 0.5)


def special_round(x, *, decimals=0):
    return dispatcher.call("round.decimals", x, decimals=decimals)


def special_round_out(x, *, decimals=0, out):
    return dispatcher.call("round.decimals_out", x, decimals=decimals, out=out)


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
    refuse_unlisted_dtypes("logical_not_cpu", x)
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
    if x.dtype is not st.float8_e5m2:       # the one float8 type with an infinity has a kernel
        refuse_unlisted_dtypes("isinf", x, complex32=False, limited_unsigned=False)
    return dispatcher.call("eq.Scalar", dispatcher.call("abs", x), math.inf)


def isfinite(x):
    """CompositeImplicitAutograd, as torch's: ``(x == x) * (x.abs() != inf)`` (torch's compiler
    evaluates the right operand first); an integer is always finite, a complex number when both
    its parts are."""
    if x.dtype.category <= st.INTEGRAL:
        return dispatcher.call("ones_like", x, dtype=st.bool_)
    if x.dtype is st.float8_e8m0fnu:       # torch's shortcut: no infinity, so every value (NaN too)
        return dispatcher.call("ones_like", x, dtype=st.bool_)
    if x.dtype is not st.float8_e5m2:
        refuse_unlisted_dtypes("isfinite", x, complex32=False, limited_unsigned=False)
    if x.dtype.is_complex:
        return dispatcher.call("bitwise_and_.Tensor", isfinite(dispatcher.call("real", x)),
                               isfinite(dispatcher.call("imag", x)))
    finite_size = dispatcher.call("ne.Scalar", dispatcher.call("abs", x), math.inf)
    return dispatcher.call("mul.Tensor", dispatcher.call("eq.Tensor", x, x), finite_size)


# The largest finite value of each floating dtype (``std::numeric_limits<scalar_t>::max()``).
_FLOAT_MAX = {st.float16: 65504.0, st.bfloat16: 3.3895313892515355e38, st.float32: 3.4028234663852886e38,
              st.float64: 1.7976931348623157e308}


def nan_to_num_out(self, nan=None, posinf=None, neginf=None, *, out):
    """``nan_to_num_out`` (UnaryOps.cpp): ``out`` has the input's dtype. Integers and bool have
    nothing to replace: copied into ``out``, resized as ``resize_output`` resizes (contiguous).
    Floats run the unary iterator (a resized ``out`` laid out as the input), NaN, +inf and -inf
    replaced by 0 and the dtype's largest and lowest finite values unless given
    (``nan_to_num_kernel`` converts each replacement to the dtype): ``where`` over the
    classifiers, written into the iterator's output. A complex tensor has its real and
    imaginary parts replaced each, as floats of its value type."""
    if out.dtype is not self.dtype:
        raise RuntimeError(f"nan_to_num: dtype of out: {out.dtype.torch_name} should be same as input: "
                           f"{self.dtype.torch_name}")
    if self.dtype.category <= st.INTEGRAL:
        resize_output(out, self.shape)
        return dispatcher.call("copy_", out, self)
    it = TensorIterator.unary_op(out, self)
    refuse_unlisted_dtypes("nan_to_num", self, limited_unsigned=False)
    if self.dtype.is_complex:
        nan_to_num_out(dispatcher.call("view_as_real", self), nan, posinf, neginf,
                       out=dispatcher.call("view_as_real", it.result))
        return it.result
    big = _FLOAT_MAX[self.dtype]
    replaced = self
    for mask, value in ((isnan(self), 0.0 if nan is None else nan),
                        (dispatcher.call("eq.Scalar", self, math.inf), big if posinf is None else posinf),
                        (dispatcher.call("eq.Scalar", self, -math.inf), -big if neginf is None else neginf)):
        replaced = dispatcher.call("where.self", mask, wrap_scalar(value), replaced)
    return dispatcher.call("copy_", it.result, replaced)


def nan_to_num(x, nan=None, posinf=None, neginf=None):
    """Into ``empty_like(x)``, as torch's functional kernel writes it."""
    return nan_to_num_out(x, nan, posinf, neginf, out=dispatcher.call("empty_like", x))


def nan_to_num_(x, nan=None, posinf=None, neginf=None):
    return nan_to_num_out(x, nan, posinf, neginf, out=x)


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
    dtype as torch's loop over c10::Half (or BFloat16) values rounds it; an ``out`` checked and
    resized by the unary float iterator first."""
    it = None if out is None else TensorIterator.unary_float_op(out, x)
    if eps is not None and eps == eps:
        x = dispatcher.call("clamp", x, eps, 1 - eps)
    ratio = dispatcher.call("div.Tensor", x, dispatcher.call("rsub.Scalar", x, 1))
    result = dispatcher.call("log", ratio)
    return result if it is None else dispatcher.call("copy_", it.result, result)


def logit_out(self, eps=None, *, out):
    """``logit_out`` (UnaryOps.cpp), an out= kernel of its own: a float result, cast into an
    ``out`` that can hold it (``unary_float_op``'s rules)."""
    return logit(self, eps, out=out)


def logit_(x, eps=None):
    return logit(x, eps, out=x)
