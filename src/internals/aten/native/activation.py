"""Activation functions (``aten/src/ATen/native/Activation.cpp``, ``cpu/Activation.cpp``,
``GeluKernel.cpp``, ``GatedLinearUnit.cpp``) and their backward kernels.

Those torch declares structured are declared so here: a **meta** step and an **impl** step,
out= the primary kernel (``structured``), the functional and in-place kernels derived from it.
The forward meta steps build the unary iterator (``build_unary_op``: the output in the input's
dtype, which ``out`` must have); the backward ones the binary iterator over the gradient and
the input (``build_borrowing_binary_op``: promoted, cast into a wider ``grad_input``), whose
order sets the gradient's layout; ``threshold`` reads its input twice, as its backward reads
(input, gradient). The impl steps refuse the dtypes torch's stubs lack, after the meta step,
and write the values into the iterator's output: a scalar loop (gelu, silu, softplus,
threshold_backward), or the activation's formula composed of pointwise operators in the order
of torch's scalar loop (so the roundings are torch's), copied into it. hardtanh, hardswish,
log_sigmoid and prelu are not structured in torch: functional kernels, as there; of glu, only
the forward is.
"""
import math

import numpy as np

from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from .. import dispatcher
from ..tensor_iterator import TensorIterator, TensorIteratorConfig, _output_strides, _reorder
from . import scalar_ops as ops
from .copy import cast_like, contiguous, to
from .cpu import distribution_kernels as k
from .cuda.philox import _affine, philox_uniform01
from .dispatch_stub import loops
from .distributions import _generator, _mt19937
from .elementwise import binary_loop
from .resize import resize_output
from .structured import _meta, structured
from .tensor_factories import from_host, wrap_scalar
from .unary_ops import _float_only, _not_implemented, unary_loop, unary_op_impl


def _call(name, *args, **kwargs):
    return dispatcher.call(name, *args, **kwargs)


def _mul(t, s):
    return _call("mul.Tensor", t, wrap_scalar(s))


def _where(cond, a, b):
    return _call("where.self", cond, a, b)


def _zero_like(x):
    """A 0-dim zero of ``x``'s dtype: ``where`` broadcasts it without promoting."""
    return _call("scalar_tensor", 0, dtype=x.dtype, device=x.device)


def _into(it, values):
    """An impl's last step for a composed formula: the values written into the iterator's
    output (allocated, ``out=``, or ``self`` in place), cast to its dtype."""
    return _call("copy_", it.result, values)


def _in_opmath(compute, *tensors):
    """``compute`` over float16/bfloat16 tensors widened to float32, its result rounded once.

    torch's activation kernels (``cpu/Activation.cpp``) load reduced floats into float32 vectors,
    run the whole formula there and store once; composed of float16 operators, every step would
    round. Mixed dtypes compute as they are."""
    dtype = tensors[0].dtype
    if not dtype.is_reduced_float or any(t.dtype is not dtype for t in tensors):
        return compute(*tensors)
    return cast_like(compute(*(cast_like(t, st.float32) for t in tensors)), dtype)


def _iterator_layout(result, *operands):
    """``result`` laid out as a TensorIterator over ``operands``, in that order, would allocate it
    (for the backward kernels torch does not declare structured, whose iterator is not built
    here): torch's read (grad_output, self), so the gradient follows grad_output's layout where
    the two differ, while a composition of ``where`` calls follows its condition's."""
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
    return _call("copy_", _call("empty_strided", list(shape), list(wanted), dtype=result.dtype,
                                device=result.device), result)


def _backward_iterator(grad_input, grad_output, self):
    """``build_borrowing_binary_op(maybe_get_output(), grad_output, self)``, the meta step of
    most backward kernels here."""
    return TensorIterator.binary_op(grad_input, grad_output, self)


# ---- gelu, silu, softplus (TORCH_META_FUNC(gelu), ...): one scalar loop each
def meta_gelu(out, self, *, approximate="none"):
    return TensorIterator.unary_op(out, self)


def impl_gelu(it, self, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(self, "GeluKernelImpl")
    return unary_loop(it, ops.GELU if approximate == "none" else ops.GELU_TANH)


gelu_out = structured(meta_gelu, impl_gelu)


def meta_gelu_backward(grad_input, grad_output, self, *, approximate="none"):
    return _backward_iterator(grad_input, grad_output, self)


def impl_gelu_backward(it, grad_output, self, *, approximate="none"):
    """d/dx x Phi(x) = Phi(x) + x phi(x); with approximate="tanh", the derivative of that fit."""
    return _into(it, _in_opmath(lambda g, x: _gelu_derivative(g, x, approximate), grad_output, self))


def _gelu_derivative(grad_output, self, approximate):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = (k * (self + 0.044715 * self * self * self)).tanh()
        d_inner = k * (1 + 3 * 0.044715 * self * self)
        return grad_output * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * d_inner)
    cdf = 0.5 * (1 + (self * math.sqrt(0.5)).erf())
    pdf = (self * self * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return grad_output * (cdf + self * pdf)


gelu_backward_out = structured(meta_gelu_backward, impl_gelu_backward)


def meta_silu(out, self):
    return TensorIterator.unary_op(out, self)


def impl_silu(it, self):
    _float_only(self, "silu_cpu")
    return unary_loop(it, ops.SILU)


silu_out = structured(meta_silu, impl_silu)


def meta_silu_backward(grad_input, grad_output, self):
    return _backward_iterator(grad_input, grad_output, self)


def impl_silu_backward(it, grad_output, self):
    """d/dx x sigmoid(x) = sigmoid(x) (1 + x (1 - sigmoid(x)))."""
    def formula(grad, x):
        s = x.sigmoid()
        return grad * s * (1 + x * (1 - s))
    return _into(it, _in_opmath(formula, grad_output, self))


silu_backward_out = structured(meta_silu_backward, impl_silu_backward)


def meta_softplus(out, self, beta=1, threshold=20):
    return TensorIterator.unary_op(out, self)


def impl_softplus(it, self, beta=1, threshold=20):
    """``softplus_stub``: beta rides in a binary loop's second operand, threshold in its scalar."""
    _float_only(self, "softplus_cpu")
    over_beta = TensorIterator.binary_op(it.result, self, wrap_scalar(beta))
    return binary_loop(over_beta, ops.SOFTPLUS, st.checked_convert(threshold, over_beta.compute_dtype))


softplus_out = structured(meta_softplus, impl_softplus)


def meta_softplus_backward(grad_input, grad_output, self, beta, threshold):
    return _backward_iterator(grad_input, grad_output, self)


def impl_softplus_backward(it, grad_output, self, beta, threshold):
    """sigmoid(beta x), or 1 past the threshold, where softplus is the identity."""
    def formula(grad, x):
        z = (x * beta).exp()
        return _where(x * beta > threshold, grad, grad * z / (z + 1))
    return _into(it, _in_opmath(formula, grad_output, self))


softplus_backward_out = structured(meta_softplus_backward, impl_softplus_backward)


# ---- leaky_relu (TORCH_META_FUNC(leaky_relu)): x where x > 0, else x times the slope
def meta_leaky_relu(out, self, negative_slope=0.01):
    return TensorIterator.unary_op(out, self)


def impl_leaky_relu(it, self, negative_slope=0.01):
    _float_only(self, "leaky_relu_cpu")
    return _into(it, _where(_call("gt.Scalar", self, 0), self, _mul(self, negative_slope)))


leaky_relu_out = structured(meta_leaky_relu, impl_leaky_relu)


def meta_leaky_relu_backward(grad_input, grad_output, self, negative_slope, self_is_result):
    """From the result (in place) only for a slope that keeps the sign: a negative one hides
    which inputs were negative. The iterator reads (self, grad_output), in that order."""
    if self_is_result and negative_slope < 0:
        raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead. File an issue at "
                           "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward "
                           "calculation with negative slope")
    return TensorIterator.binary_op(grad_input, self, grad_output)


def impl_leaky_relu_backward(it, grad_output, self, negative_slope, self_is_result):
    """grad where self > 0, else grad times the slope."""
    return _into(it, _where(_call("gt.Scalar", self, 0), grad_output, _mul(grad_output, negative_slope)))


leaky_relu_backward_out = structured(meta_leaky_relu_backward, impl_leaky_relu_backward)


# ---- elu (TORCH_META_FUNC(elu)); selu and celu are elu with constants
def meta_elu(out, self, alpha=1, scale=1, input_scale=1):
    return TensorIterator.unary_op(out, self)


def impl_elu(it, self, alpha=1, scale=1, input_scale=1):
    """x·scale where x > 0, else expm1(x·input_scale)·alpha·scale (``elu_kernel``)."""
    _float_only(self, "elu_cpu")

    def formula(x):
        negative = _mul(_call("expm1", _mul(x, input_scale)), alpha * scale)
        return _where(_call("gt.Scalar", x, 0), _mul(x, scale), negative)
    return _into(it, _in_opmath(formula, self))


elu_out = structured(meta_elu, impl_elu)


def meta_elu_backward(grad_input, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    if is_result and alpha < 0:
        raise RuntimeError("In-place elu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead.")
    return _backward_iterator(grad_input, grad_output, self_or_result)


def impl_elu_backward(it, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """grad·scale where the input was positive; else grad·input_scale·alpha·scale·exp(x·input_scale),
    which from the result r is grad·input_scale·(r + alpha·scale), in torch's order of products."""
    _float_only(self_or_result, "elu_backward_cpu")

    def formula(grad, x):
        negcoef, scaled = alpha * scale, _mul(grad, input_scale)
        if is_result:
            negative = _call("mul.Tensor", scaled, _call("add.Tensor", x, wrap_scalar(negcoef)))
        else:
            negative = _call("mul.Tensor", _mul(scaled, negcoef), _call("exp", _mul(x, input_scale)))
        return _where(_call("le.Scalar", x, 0), negative, _mul(grad, scale))
    return _into(it, _in_opmath(formula, grad_output, self_or_result))


elu_backward_out = structured(meta_elu_backward, impl_elu_backward)


# ---- sigmoid's, tanh's and logit's backward kernels (TORCH_META_FUNC(sigmoid_backward) and kin
# in BinaryOps.cpp, their loops in cpu/BinaryOpsKernel.cpp): the binary iterator over the
# gradient and the saved output (or input, for logit). Floating and complex dtypes only (logit:
# floating); each loop's arithmetic in torch's order and precision.
def _floating_or_complex(it, kernel, complex_too=True):
    dtype = it.common_dtype
    if not (dtype.is_floating_point or (complex_too and dtype.is_complex)):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dtype.torch_name}\'')


def _conjugated(t):
    """A complex loop conjugates its derivative (``std::conj``); a real one has nothing to do."""
    return _call("conj_physical", t) if t.dtype.is_complex else t


def meta_sigmoid_backward(grad_input, grad_output, output):
    return _backward_iterator(grad_input, grad_output, output)


def impl_sigmoid_backward(it, grad_output, output):
    """grad·(1 − y)·y from the output y, left to right (complex: grad·conj((1 − y)·y)).
    bfloat16 computes in float32, rounded once; float16 rounds each step (its loop runs in
    c10::Half)."""
    _floating_or_complex(it, "sigmoid_backward_cpu")
    if it.common_dtype.is_complex:
        derivative = _call("mul.Tensor", _call("rsub.Scalar", output, 1), output)
        return _into(it, _call("mul.Tensor", grad_output, _conjugated(derivative)))

    def formula(grad, y):
        return _call("mul.Tensor", _call("mul.Tensor", grad, _call("rsub.Scalar", y, 1)), y)
    if it.common_dtype is st.float16:
        return _into(it, formula(grad_output, output))
    return _into(it, _in_opmath(formula, grad_output, output))


sigmoid_backward_out = structured(meta_sigmoid_backward, impl_sigmoid_backward)


def meta_tanh_backward(grad_input, grad_output, output):
    return _backward_iterator(grad_input, grad_output, output)


def impl_tanh_backward(it, grad_output, output):
    """grad·(1 − y²) from the output y; float16 and bfloat16 compute in float32, rounded once."""
    _floating_or_complex(it, "tanh_backward_cpu")
    return _into(it, _in_opmath(lambda grad, y: _call("mul.Tensor", grad, _conjugated(_call(
        "rsub.Scalar", _call("mul.Tensor", y, y), 1))), grad_output, output))


tanh_backward_out = structured(meta_tanh_backward, impl_tanh_backward)


def meta_logit_backward(grad_input, grad_output, self, eps=None):
    return _backward_iterator(grad_input, grad_output, self)


def impl_logit_backward(it, grad_output, self, eps=None):
    """grad / (x (1 − x)) inside [eps, 1 − eps], 0 outside; with no eps (or a negative one),
    inside [0, 1] and NaN outside; grad·inf at exactly 0 or 1. eps rides in the loop's scalar,
    -1 for none (``Scalar(eps ? eps.value() : -1.0)``)."""
    _floating_or_complex(it, "logit_backward_cpu", complex_too=False)
    eps = -1.0 if eps is None else eps
    if it.common_dtype.is_reduced_float:
        return _into(it, _logit_backward_16_bits(grad_output, self, eps, it.common_dtype))
    return binary_loop(it, ops.LOGIT_BACKWARD, st.checked_convert(eps, it.compute_dtype))


logit_backward_out = structured(meta_logit_backward, impl_logit_backward)


def _logit_backward_16_bits(grad_output, self, eps, dtype):
    """float16 and bfloat16: the loop runs in the 16-bit type, each step rounded to it, and eps
    and 1 − eps are 16-bit values too (``eps_scalar.to<scalar_t>()``)."""
    grad = _call("div.Tensor", grad_output, _call("mul.Tensor", self, _call("rsub.Scalar", self, 1)))
    at_an_end = _call("logical_or", _call("eq.Scalar", self, 0), _call("eq.Scalar", self, 1))
    grad = _where(at_an_end, _mul(grad_output, math.inf), grad)
    if eps < 0:
        lo, hi, outside = 0.0, 1.0, math.nan
    else:
        lo = float(_call("scalar_tensor", eps, dtype=dtype))       # 1 − eps: float arithmetic, then rounded
        hi, outside = float(_call("scalar_tensor", float(np.float32(1) - np.float32(lo)), dtype=dtype)), 0.0
    beyond = _call("logical_or", _call("lt.Scalar", self, lo), _call("gt.Scalar", self, hi))
    return _where(beyond, _call("scalar_tensor", outside, dtype=dtype, device=self.device), grad)


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


# ---- hardsigmoid (TORCH_META_FUNC(hardsigmoid)): min(max(x + 3, 0), 6) / 6
def _relu6_of_shifted(x):
    """min(max(x + 3, 0), 6), the piece hardsigmoid and hardswish share."""
    return _call("clamp", _call("add.Tensor", x, wrap_scalar(3)), 0, 6)


def meta_hardsigmoid(out, self):
    return TensorIterator.unary_op(out, self)


def impl_hardsigmoid(it, self):
    _float_only(self, "hardsigmoid_cpu")
    return _into(it, _in_opmath(lambda x: _call("div.Tensor", _relu6_of_shifted(x), wrap_scalar(6)), self))


hardsigmoid_out = structured(meta_hardsigmoid, impl_hardsigmoid)

# torch's kernel multiplies by 1.0f / 6.0f, a float32 constant, whatever the dtype
_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


def meta_hardsigmoid_backward(grad_input, grad_output, self):
    return _backward_iterator(grad_input, grad_output, self)


def impl_hardsigmoid_backward(it, grad_output, self):
    """grad / 6 strictly inside (-3, 3), else 0 (a NaN input gives 0, as the vector loop does)."""
    _float_only(self, "hardsigmoid_backward")
    inside = _call("logical_and", _call("gt.Scalar", self, -3), _call("lt.Scalar", self, 3))
    return _into(it, _where(inside, _mul(grad_output, _ONE_SIXTH_F32), _zero_like(grad_output)))


hardsigmoid_backward_out = structured(meta_hardsigmoid_backward, impl_hardsigmoid_backward)


# ---- hardswish: not structured in torch (``hardswish_out`` runs ``hardswish_stub`` itself)
def hardswish(x, *, out=None):
    """x · min(max(x + 3, 0), 6) / 6 (``hardswish_kernel``)."""
    _float_only(x, "hardswish_cpu")

    def formula(x):
        return _call("div.Tensor", _call("mul.Tensor", x, _relu6_of_shifted(x)), wrap_scalar(6))
    result = _in_opmath(formula, x)
    return result if out is None else _call("copy_", out, result)


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
    return _iterator_layout(_in_opmath(formula, grad_output, self), grad_output, self)


# ---- hardshrink and softshrink (TORCH_META_FUNC(hardshrink), ...), one backward stub for both
def _shrink_kept(x, lambd):
    """Where a shrink keeps its input: x < -lambd or x > lambd (False for NaN)."""
    return _call("logical_or", _call("lt.Scalar", x, -lambd), _call("gt.Scalar", x, lambd))


def meta_hardshrink(out, self, lambd=0.5):
    return TensorIterator.unary_op(out, self)


def _shrink_zeroed(x, lambd):
    """Where hardshrink gives 0: -lambd <= x <= lambd (False for NaN)."""
    return _call("logical_and", _call("ge.Scalar", x, -lambd), _call("le.Scalar", x, lambd))


def impl_hardshrink(it, self, lambd=0.5):
    """0 on [-lambd, lambd], x elsewhere (NaN stays NaN) (``hardshrink_kernel``)."""
    _float_only(self, "hardshrink_cpu")
    return _into(it, _where(_shrink_zeroed(self, lambd), _zero_like(self), self))


hardshrink_out = structured(meta_hardshrink, impl_hardshrink)


# the largest finite value of each floating dtype, which bounds softshrink's lambda
_FLOAT_MAX = {st.float16: 65504.0, st.bfloat16: (2 - 2.0 ** -7) * 2.0 ** 127,
              st.float32: float(np.finfo(np.float32).max), st.float64: float(np.finfo(np.float64).max)}


def meta_softshrink(out, self, lambd=0.5):
    """Floating inputs only, and 0 <= lambd <= the dtype's largest value (NaN fails)."""
    if not self.dtype.is_floating_point:
        raise _not_implemented("softshrink_check", self)
    top = _FLOAT_MAX[self.dtype]
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {self.dtype.torch_name}, but "
                           f"found {float(lambd):g}")
    return TensorIterator.unary_op(out, self)


def impl_softshrink(it, self, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else x · 0 (so NaN stays NaN and a negative
    input gives -0.0, as torch's scalar loop; its vector loop gives +0.0 there)."""
    shrunk = _where(_call("gt.Scalar", self, lambd), _call("sub.Tensor", self, wrap_scalar(lambd)),
                    _call("add.Tensor", self, wrap_scalar(lambd)))
    return _into(it, _where(_shrink_kept(self, lambd), shrunk, _mul(self, 0)))


softshrink_out = structured(meta_softshrink, impl_softshrink)


def _shrink_backward(it, grad_out, self, lambd):
    """``shrink_backward_stub``: 0 on [-lambd, lambd], else grad (a NaN input passes it)."""
    _float_only(self, "shrink_backward_cpu")
    return _into(it, _where(_shrink_zeroed(self, lambd), _zero_like(grad_out), grad_out))


def meta_hardshrink_backward(grad_input, grad_out, self, lambd):
    return _backward_iterator(grad_input, grad_out, self)


def impl_hardshrink_backward(it, grad_out, self, lambd):
    return _shrink_backward(it, grad_out, self, lambd)


hardshrink_backward_out = structured(meta_hardshrink_backward, impl_hardshrink_backward)


def meta_softshrink_backward(grad_input, grad_output, self, lambd):
    return _backward_iterator(grad_input, grad_output, self)


def impl_softshrink_backward(it, grad_output, self, lambd):
    return _shrink_backward(it, grad_output, self, lambd)


softshrink_backward_out = structured(meta_softshrink_backward, impl_softshrink_backward)


# ---- threshold (TORCH_META_FUNC(threshold)): value where x <= threshold, else the other
# operand (x forward, the gradient backward). One iterator over (x, other), promoted, and no
# overlap check: writing the result over an input is harmless, each element read once first.
def _threshold_iterator(out, self, other):
    return (TensorIteratorConfig().check_mem_overlap(False).add_output(out).add_const_input(self)
            .add_const_input(other).promote_inputs_to_common_dtype().cast_common_dtype_to_outputs()
            .enforce_safe_casting_to_output().build())


def meta_threshold(out, self, threshold, value):
    return _threshold_iterator(out, self, self)


def impl_threshold(it, self, threshold, value):
    """The value converted to x's dtype (``threshold_kernel``); bool has no kernel."""
    if self.dtype is st.bool_:
        raise _not_implemented("threshold_cpu", self)
    filler = _call("scalar_tensor", value, dtype=self.dtype, device=self.device)
    return _into(it, _where(_call("le.Scalar", self, threshold), filler, self))


threshold_out = structured(meta_threshold, impl_threshold)


def meta_threshold_backward(grad_input, grad_output, self, threshold):
    return _threshold_iterator(grad_input, self, grad_output)


def impl_threshold_backward(it, grad_output, self, threshold):
    return binary_loop(it, ops.THRESHOLD_BACKWARD, st.checked_convert(threshold, it.compute_dtype))


threshold_backward_out = structured(meta_threshold_backward, impl_threshold_backward)


# ---- mish (TORCH_META_FUNC(mish)): x · tanh(log1p(exp(x))); its backward is not structured
def meta_mish(out, self):
    return TensorIterator.unary_op(out, self)


def impl_mish(it, self):
    _float_only(self, "mish_cpu")
    return _into(it, _in_opmath(lambda x: _call("mul.Tensor", x, _call("tanh", _call("log1p", _call("exp", x)))),
                                self))


mish_out = structured(meta_mish, impl_mish)


def mish_backward(grad_output, self):
    """grad · (t + x · σ(x) · (1 - t²)) with t = tanh(softplus(x)) (``mish_backward_kernel``);
    with these operators it is also the formula torch differentiates again."""
    def formula(grad, x):
        sigmoid = _call("sigmoid", x)
        t = _call("tanh", _call("log1p", _call("exp", x)))
        slope = _call("rsub.Scalar", _call("mul.Tensor", t, t), 1)
        inner = _call("add.Tensor", t, _call("mul.Tensor", _call("mul.Tensor", x, sigmoid), slope))
        return _call("mul.Tensor", grad, inner)
    return _iterator_layout(_in_opmath(formula, grad_output, self), grad_output, self)


# ---- hardtanh and relu6: not structured in torch, clamp into ``empty_like(x)``
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
    return _call("clamp.out", x, min_val, max_val, out=_call("empty_like", x) if out is None else out)


def hardtanh_(x, min_val=-1, max_val=1):
    return hardtanh(x, min_val, max_val, out=x)


def hardtanh_backward(grad_output, self, min_val, max_val):
    """grad inside (min_val, max_val), 0 on and beyond the bounds (NaN inputs pass the gradient)."""
    if not self.dtype.is_floating_point:
        raise _not_implemented("hardshrink_backward_cpu", self)    # torch's kernel carries this name
    outside = _call("logical_or", _call("le.Scalar", self, min_val), _call("ge.Scalar", self, max_val))
    return _iterator_layout(_where(outside, _call("zeros_like", grad_output), grad_output), grad_output, self)


def relu6(x):
    """CompositeImplicitAutograd: ``hardtanh(x, 0, 6)``."""
    return _call("hardtanh", x, 0, 6)


def relu6_(x):
    return _call("hardtanh_", x, 0, 6)


# ---- log_sigmoid: not structured in torch (``log_sigmoid_forward`` returns the buffer too)
def log_sigmoid_forward(x):
    """(min(x, 0) - log1p(e^-|x|), e^-|x|): the output and the buffer its backward reads
    (``log_sigmoid_cpu_kernel``); two loops here, one in torch."""
    _float_only(x, "log_sigmoid_cpu")
    x = contiguous(x)        # torch's kernel reads a contiguous input and writes contiguous outputs
    return unary_op_impl(ops.LOG_SIGMOID, x), unary_op_impl(ops.EXP_NEG_ABS, x)


def log_sigmoid(x):
    """CompositeImplicitAutograd: the output of ``log_sigmoid_forward``."""
    return _call("log_sigmoid_forward", x)[0]


def log_sigmoid_backward(grad_output, self, buffer):
    """One ternary loop over (input, buffer, grad), as ``log_sigmoid_backward_cpu_kernel``."""
    _float_only(self, "log_sigmoid_backward_cpu")
    # torch writes into empty_like(grad_output), whose layout the gradient keeps
    out = _call("empty_like", grad_output, dtype=st.promote_types(self.dtype, grad_output.dtype))
    it = (TensorIteratorConfig().add_output(out).add_const_input(self).add_const_input(buffer)
          .add_const_input(grad_output).promote_inputs_to_common_dtype().build())
    return it.for_each(lambda buffers, *geometry: loops(it.device).ternary_loop(ops.LOG_SIGMOID_BACKWARD, *buffers,
                                                                                 0, *geometry))


# ---- prelu (``Activation.cpp``, not structured in torch) and glu (``GatedLinearUnit.cpp``: the
# forward structured, the backward a kernel of its own)
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
    """(grad or weight · grad, 0 or x · grad), both of the broadcast shape: torch's kernel writes
    the weight's gradient as one more TensorIterator output, and autograd's engine sums it down
    to the weight's shape (a ``SumBackward1`` node under ``create_graph``)."""
    _float_only(self, "prelu_backward_cpu")
    positive = _call("gt.Scalar", self, 0)
    grad_self = _where(positive, grad_output, _call("mul.Tensor", weight, grad_output))
    grad_weight = _where(positive, _zero_like(self), _call("mul.Tensor", self, grad_output))
    return grad_self, grad_weight


def _glu_halves(self, dim):
    if self.dim() == 0:
        raise RuntimeError("glu does not support 0-dimensional tensors")    # F.glu words it otherwise
    dim = dim + self.dim() if dim < 0 else dim
    if self.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {self.shape[dim]}")
    n = self.shape[dim] // 2
    return _call("narrow", self, dim, 0, n), _call("narrow", self, dim, n, n), dim


def meta_glu(out, self, dim=-1):
    """``TORCH_META_FUNC(glu)``: the halving checks, then the binary iterator over the two halves
    (``build_borrowing_binary_op``), which lays the output out and casts into a wider ``out``."""
    a, b, _ = _glu_halves(self, dim)
    return TensorIterator.binary_op(out, a, b)


def impl_glu(it, self, dim=-1):
    """a · 1 / (1 + exp(-b)) for the two halves a, b along ``dim`` (``glu_kernel``: reduced floats
    in float32, rounded once)."""
    _float_only(self, "glu_cpu")
    a, b, _ = _glu_halves(self, dim)
    return _into(it, _in_opmath(lambda a, b: _call("mul.Tensor", a, _call(
        "reciprocal", _call("add.Tensor", _call("exp", _call("neg", b)), wrap_scalar(1)))), a, b))


glu_out = structured(meta_glu, impl_glu)


def glu_backward(grad_output, self, dim):
    """(σ(b) · g, (1 - σ(b)) · σ(b) · a · g), side by side along ``dim`` (``glu_backward_cpu_out``)."""
    _float_only(self, "glu_backward_cpu")
    a, b, dim = _glu_halves(self, dim)
    s = _call("sigmoid", b)
    second = _call("mul.Tensor", _call("mul.Tensor", _call("mul.Tensor", _call("rsub.Scalar", s, 1), s), a),
                   grad_output)
    return _call("cat", [_call("mul.Tensor", s, grad_output), second], dim)


# ---- rrelu (``Activation.cpp``): a leaky ReLU whose slope, while training, is drawn per negative
# element from U(lower, upper). Not structured in torch: the out= kernel is the primary one and the
# functional and in-place kernels call it with a fresh output or with ``self``.
def rrelu(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """CompositeImplicitAutograd: a fresh ``noise`` (like ``self``, contiguous) for
    ``rrelu_with_noise``, which records the slopes it drew there for the backward pass."""
    _check_rrelu_bounds(lower, upper)
    noise = _call("empty_like", self, memory_format=contiguous_format)
    return _call("rrelu_with_noise", self, noise, lower, upper, training, generator)


def rrelu_(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_rrelu_bounds(lower, upper)
    noise = _call("empty_like", self, memory_format=contiguous_format)
    return _call("rrelu_with_noise_", self, noise, lower, upper, training, generator)


def _check_rrelu_bounds(lower, upper):
    if float(lower) > float(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu_with_noise_out_cpu(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None, *, out):
    """Training: ``_rrelu_with_noise_train``, a serial loop over the elements in row-major order
    that draws one ``uniform_real_distribution<double>(lower, upper)`` value (one 64-bit word) for
    each element <= 0 and for no other, so the generator advances by the number of such elements.
    ``lower`` and ``upper`` are first rounded to the compute type (float for float32), the draw
    rounded to it too; the output is x·r, the noise r (1 where x > 0, or NaN). Evaluation: a leaky
    ReLU with the slope (lower + upper) / 2, computed in double."""
    if tuple(self.shape) != tuple(noise.shape):
        raise RuntimeError(f"noise tensor shape must match self tensor shape. Got self.shape = {list(self.shape)} "
                           f"noise.shape = {list(noise.shape)}")
    if not training:
        return _call("leaky_relu.out", self, (float(lower) + float(upper)) / 2, out=out)
    cuda = self.device.type == "cuda"
    _float_only(self, "rrelu_with_noise_out_cuda" if cuda else "rrelu_with_noise_out_cpu")
    if self.dtype is st.float16 and not cuda:       # the CPU loop takes bfloat16 but not half
        raise _not_implemented("rrelu_with_noise_out_cpu", self)
    resize_output(out, self.shape)
    if _meta.active:        # a fake tensor's call: the output's metadata is all there is to make
        return out
    compute = st.opmath_type(self.dtype)
    x = to(contiguous(self), compute)
    if cuda:
        slopes = _rrelu_cuda_slopes(self, x, lower, upper, generator)
        _call("copy_", noise, slopes)
        return _call("copy_", out, _call("mul.Tensor", x, slopes))
    gen = _mt19937(generator, self, "rrelu_with_noise")
    negative = _call("le.Scalar", x, 0)
    count = int(_call("sum", negative).item())
    rounded = np.float32 if compute is st.float32 else np.float64
    with gen._lock:
        # Activation.cpp is built for the baseline CPU (no FMA instructions), unlike the uniform_
        # kernel's file, compiled once per vector capability: its x·(to - from) + from is never fused
        drawn = k.uniform_double(gen.random64(count), float(rounded(lower)), float(rounded(upper)), False)
    slopes = _call("ones_like", x)
    if count:
        _call("index_put_", slopes, [negative], from_host(drawn.astype(rounded), compute, self.device))
    result = _call("mul.Tensor", x, slopes)
    _call("copy_", noise, slopes)
    return _call("copy_", out, result)


def _rrelu_cuda_slopes(self, x, lower, upper, generator):
    """The slopes of ``rrelu_with_noise_cuda_kernel`` (``RreluWithNoise.cu``): every element takes
    one of cuRAND's (0, 1] uniforms (four per curand4 call, two for double) in the grid-stride
    order of torch's CUDA distributions, whatever its sign; the uniform is cast to the tensor's
    type, then r · (upper - lower) + lower is computed in double (one fused multiply-add, as nvcc
    compiles it) and cast back. An element <= 0 keeps r, any other (NaN too) the slope 1."""
    double = self.dtype is st.float64
    gen = _generator(generator, self.device)
    u = from_host(philox_uniform01(gen, self.numel(), double), st.float64 if double else st.float32, "cpu")
    r = to(to(u, self.dtype), st.float64)._numpy().reshape(-1)
    lower, upper = float(lower), float(upper)
    scaled = from_host(_affine(r, upper - lower, lower).reshape(tuple(x.shape)), st.float64, "cpu")
    slopes = _call("_to_copy", to(to(scaled, self.dtype), x.dtype), device=self.device)
    return _call("where.self", _call("le.Scalar", x, 0), slopes, _call("ones_like", x))


def rrelu_with_noise_cpu(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    out = _call("empty_like", self, memory_format=contiguous_format)
    return rrelu_with_noise_out_cpu(self, noise, lower, upper, training, generator, out=out)


def rrelu_with_noise_cpu_(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    return rrelu_with_noise_out_cpu(self, noise, lower, upper, training, generator, out=self)


def rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training, self_is_result):
    """Training: the drawn slopes times the gradient; evaluation: leaky_relu's backward with the
    mean slope."""
    if training:
        return _call("mul.Tensor", noise, grad_output)
    return _call("leaky_relu_backward", grad_output, self, (float(lower) + float(upper)) / 2, self_is_result)
