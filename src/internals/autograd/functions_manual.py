"""Helpers the formulas in derivatives.yaml call (``torch/csrc/autograd/FunctionsManual.cpp``).

Every helper is written with differentiable operators, so that with ``create_graph=True`` the
backward pass records a graph of its own and can be differentiated again. Gradients that must
be *placed* into a larger tensor (select, narrow, diagonal, split, unfold, as_strided) are
written into zeros through a view: an in-place op on a view, which autograd records with
CopySlices when the gradient itself requires grad.
"""
import cmath
import math

import numpy as np

from .._tensor_base import TensorBase
from ..aten import dispatcher
from ..aten.native import grid_sampler
from ..aten.native.batch_linear_algebra import perturbed_lu_inverse
from ..aten.native.matrix_exp import differential_analytic_matrix_function
from ..aten.native.rnn import lstm_layer_backward
from ..aten.native.sparse.sparse_csr_tensor import new_compressed
from ..aten.native.sparse.sparse_tensor import sparse_coo_tensor
from ..aten.native.tensor_factories import arange, from_numpy, zeros
from ..aten.tensor_iterator import broadcast_shapes
from ..c10.dispatch_key import DispatchKey
from ..c10.grad_mode import _state as _grad_mode
from ..c10.local_dispatch_key_set import tls
from ..c10.memory_format import contiguous_format, preserve_format
from ..c10.scalar_type import float64, int64
from ..c10.tensor_impl import COMPRESSED_LAYOUTS, sparse_coo, strided

INT64_MAX = 2 ** 63 - 1       # slice's end when none is given

__all__ = ["_to_copy_backward", "is_expandable_to", "sum_to", "maybe_multiply", "mul_scalar", "div_scalar",
           "mul_tensor_backward", "div_tensor_self_backward", "div_tensor_other_backward",
           "softmax_double_backward", "nll_loss_backward", "nll_loss", "mse_loss_backward",
           "mse_loss_double_backward", "ties_halved", "binary_cross_entropy_backward",
           "binary_cross_entropy_target_backward", "binary_cross_entropy_double_backward",
           "binary_cross_entropy_double_backward_target", "binary_cross_entropy_with_logits_backward",
           "binary_cross_entropy_with_logits_target_backward", "leaky_relu_backward", "not_implemented",
           "view_as_real", "view_as_complex", "where", "zeros_like", "conj", "scalar_div_tensor",
           "addcdiv_tensor2_backward",
           "sigmoid_backward", "tanh_backward", "pow_backward", "pow_backward_self",
           "pow_backward_exponent", "pow_backward_exponent_scalar_base", "sum_backward",
           "mean_backward", "nansum_backward", "prod_backward", "amax_amin_backward", "scale_grad_by_count",
           "evenly_distribute_backward", "value_selecting_reduction_backward", "_softmax_backward_data",
           "_log_softmax_backward_data", "mm_mat1_backward", "mm_mat2_backward", "permute_backwards",
           "unsqueeze_to", "select_backward", "slice_backward_wrapper", "slice_symint", "diagonal_backward",
           "unfold_backward",
           "split_backward", "split_with_sizes_backward", "as_strided_backward", "TensorGeometry", "TypeAndSize",
           "convolution_backward",
           "max_pool2d_with_indices_backward", "native_batch_norm_backward", "native_layer_norm_backward",
           "embedding_dense_backward", "embedding_backward", "threshold_backward"]


# ---------------------------------------------------------------------- broadcasting
def is_expandable_to(shape, desired):
    """Can ``shape`` broadcast to ``desired``? (``at::is_expandable_to``)"""
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


def sum_to(grad, shape):
    """Sum ``grad`` down to ``shape``, undoing a broadcast (``at::sum_to``)."""
    shape = tuple(shape)
    if not shape:
        return grad.sum()
    lead = grad.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1]
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.view(shape) if lead or tuple(grad.shape) != shape else grad


# ---------------------------------------------------------------------- elementwise
def maybe_multiply(t, s):
    return t if s == 1 else mul_scalar(t, s)      # C++'s t * s: mul.Scalar


def conj_scalar(s):
    """``Scalar::conj``: a complex number's conjugate; any other number as it is."""
    return s.conjugate() if isinstance(s, complex) else s


# C++'s ``t * 2`` and ``t / n`` call the Scalar overloads (``mul.Scalar``, ``div.Scalar``); Python's
# ``t * 2`` wraps the number into a tensor (``mul.Tensor``). The formulas write torch's C++.
def mul_scalar(t, s):
    return dispatcher.call("mul.Scalar", t, s)


def div_scalar(t, s):
    return dispatcher.call("div.Scalar", t, s)


def mul_tensor_backward(grad, other, self_st):
    """``grad * other.conj()``: the conjugate Wirtinger derivative; a real ``self`` keeps the real
    part (``handle_r_to_c``). ``other`` is a tensor (mul.Tensor) or a number (mul.Scalar)."""
    out = grad * conj(other) if hasattr(other, "dim") else mul_scalar(grad, conj_scalar(other))
    return handle_r_to_c(self_st, out)


def div_tensor_self_backward(grad, other, self_st):
    out = grad / conj(other) if hasattr(other, "dim") else div_scalar(grad, conj_scalar(other))
    return handle_r_to_c(self_st, out)


def div_tensor_other_backward(grad, self, other):
    """-grad * conj(self / other²), as torch groups it: ``-grad * ((self / other) / other).conj()``,
    the right operand first (the order C++ evaluates it in)."""
    ratio = conj((self / other) / other)
    return handle_r_to_c(other, -grad * ratio)


def conj(t):
    """``Tensor::conj``: a real tensor is its own conjugate, returned before any operator runs."""
    return dispatcher.call("conj", t) if t.dtype.is_complex else t


def scalar_div_tensor(s, t):
    """C++'s ``s / t`` with a number on the left (``TensorOperators.h``):
    ``empty_like(t, preserve_format).fill_(s).div_(t)``."""
    quotient = dispatcher.call("empty_like", t, memory_format=preserve_format)
    dispatcher.call("fill_.Scalar", quotient, s)
    return dispatcher.call("div_.Tensor", quotient, t)


def addcdiv_tensor2_backward(grad, tensor1, tensor2, value):
    """``-grad * (value * tensor1 / (tensor2 * tensor2)).conj()``, evaluated right to left as C++
    evaluates torch's formula: the square first, the negated gradient last."""
    square = tensor2 * tensor2
    ratio = conj(mul_scalar(tensor1, value) / square)
    return -grad * ratio


def where(cond, a, b):
    """``at::where`` with a number for either value picks a Scalar overload, as C++ overloading does."""
    overload = {(True, True): "self", (False, True): "ScalarSelf", (True, False): "ScalarOther",
                (False, False): "Scalar"}
    return dispatcher.call(f"where.{overload[hasattr(a, 'dim'), hasattr(b, 'dim')]}", cond, a, b)


def zeros_like(t):
    return dispatcher.call("zeros_like", t)


def ties_halved(grad, self, other):
    """``at::where(self == other, grad / 2, grad)``, its arguments evaluated right to left as C++
    evaluates torch's formula: the half first."""
    half = div_scalar(grad, 2)
    return where(self == other, half, grad)


def view_as_real(t):
    return dispatcher.call("view_as_real", t)


def view_as_complex(t):
    return dispatcher.call("view_as_complex", t)


def threshold_backward(grad, out, threshold):
    """relu's backward is an operator of its own, with a derivative: called through the dispatcher."""
    return dispatcher.call("threshold_backward", grad, out, threshold)


def sigmoid_backward(grad, out):
    return dispatcher.call("sigmoid_backward", grad, out)


def tanh_backward(grad, out):
    return dispatcher.call("tanh_backward", grad, out)


# The pow formulas as torch writes them; C++ evaluates a call's arguments right to left, so the
# value of ``at::where(cond, zero, value)`` is computed first, then the zero, then the condition.
def _scalar_zero(grad):
    return dispatcher.call("scalar_tensor", 0.0, dtype=grad.dtype, layout=strided, device=grad.device)


def pow_backward_self(grad, self, exponent):
    """d/dx x**y = y * x**(y-1), conjugated for complex x; torch defines it as 0 where y == 0
    (also at x == 0)."""
    value = grad * conj(exponent * self.pow(dispatcher.call("sub.Scalar", exponent, 1)))
    zero = _scalar_zero(grad)
    return handle_r_to_c(self, where(exponent == 0.0, zero, value))


def pow_backward(grad, self, exponent):
    """``pow.Tensor_Scalar``: d/dx x**c = c * x**(c-1), grouped as torch's; 0 for c == 0."""
    if exponent == 0:
        return zeros_like(self)
    if type(exponent) in (int, bool):     # C++ takes a real exponent as a double: pow(x, 1.0), 2.0 * ...
        exponent = float(exponent)
    return handle_r_to_c(self, grad * conj(mul_scalar(self.pow(exponent - 1), exponent)))


def pow_backward_exponent_scalar_base(grad, base, exponent, result):
    """``pow.Scalar``: d/dy c**y = c**y * log(c); for c == 0, 0 where y >= 0 (the limit)."""
    if base == 0:
        value = mul_scalar(result, -math.inf)          # log(0)
        zero = dispatcher.call("zeros", [], dtype=grad.dtype, device=grad.device)
        return handle_r_to_c(exponent, grad * where(exponent >= 0, zero, value))
    log_base = cmath.log(base) if isinstance(base, complex) or base < 0 else math.log(base)
    return handle_r_to_c(exponent, grad * conj(mul_scalar(result, log_base)))


def pow_backward_exponent(grad, self, exponent, result):
    """d/dy x**y = x**y * log(x), conjugated; 0 where x == 0 and y is real and >= 0 (the limit),
    instead of 0 * -inf. ``self`` is promoted to the result's type before its log."""
    if exponent.dtype.is_complex:
        exponent_nonnegative = (dispatcher.call("imag", exponent) == 0).logical_and(
            dispatcher.call("real", exponent) >= 0)
    else:
        exponent_nonnegative = exponent >= 0
    cond = (self == 0).logical_and(exponent_nonnegative)
    self_ = self.to(result.dtype)
    value = conj(result * self_.log())
    zero = _scalar_zero(grad)
    return handle_r_to_c(exponent, grad * where(cond, zero, value))


# ---------------------------------------------------------------------- reductions
def _reduced_dims(dims, ndim):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(ndim))
    dims = [dims] if isinstance(dims, int) else dims
    return sorted(d % max(ndim, 1) for d in dims)


def unsqueeze_multiple(t, dims, keepdim, ndim=None):
    """Put back the size-1 dims a reduction without ``keepdim`` removed, one ``unsqueeze`` each."""
    if keepdim:
        return t
    ndim = t.dim() + len(dims) if ndim is None else ndim
    for d in _reduced_dims(dims, ndim) if ndim else ():
        t = t.unsqueeze(d)
    return t


def restore_reduced_dims(t, dims, keepdim):
    """The same shape as ``unsqueeze_multiple`` gives, in one ``view`` (torch's helper of this name)."""
    if keepdim:
        return t
    ndim = t.dim() + len(dims)
    reduced = set(_reduced_dims(dims, ndim)) if ndim else set()
    sizes = iter(t.shape)
    return t.view([1 if d in reduced else next(sizes) for d in range(ndim)])


def amax_amin_backward(grad, self, result, dims, keepdim):
    """``scale_grad_by_count(restore_reduced_dims(grad, ...), restore_reduced_dims(result, ...) == self,
    dim)``, the arguments evaluated right to left, as C++ evaluates torch's formula."""
    mask = restore_reduced_dims(result, dims, keepdim) == self
    return scale_grad_by_count(restore_reduced_dims(grad, dims, keepdim), mask, dims)


def sum_backward(grad, sizes, dims, keepdim):
    if not keepdim and sizes and isinstance(dims, (list, tuple)) and len(dims) == 1:
        # torch's ``unsqueeze_multiple`` unsqueezes one dim as it was given (``unsqueeze(grad, -1)``)
        return grad.unsqueeze(dims[0]).expand(sizes)
    return unsqueeze_multiple(grad, _reduced_dims(dims, len(sizes)), keepdim, len(sizes)).expand(sizes)


def nansum_backward(grad, self, dims, keepdim):
    """sum's gradient, zero where the input was NaN."""
    return sum_backward(grad, self.shape, dims, keepdim) * self.isnan().logical_not()


def mean_backward(grad, sizes, dims, numel, keepdim):
    count = 1
    for d in _reduced_dims(dims, len(sizes)) if sizes else ():
        count *= sizes[d]
    return div_scalar(sum_backward(grad, sizes, dims, keepdim), max(count, 1) if sizes else numel)


def prod_safe_zeros_backward(grad, inp, dim):
    """The product of the *other* elements, with no division (so zeros are safe): the exclusive
    cumulative products from the left and from the right, multiplied."""
    if inp.numel() == 0:
        return grad.expand_as(inp)
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    ones = dispatcher.call("ones", ones_size, dtype=grad.dtype, layout=strided, device=grad.device)
    n = inp.shape[dim]
    exclusive_normal = dispatcher.call("cat", [ones, inp.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    narrow_reverse = inp.narrow(dim, 1, n - 1).flip(dim)
    exclusive_reverse = dispatcher.call("cat", [ones, narrow_reverse], dim).cumprod(dim).flip(dim)
    return grad * conj(exclusive_normal * exclusive_reverse)


def prod_backward(grad, self, result, dim=None, keepdim=False):
    """torch's ``prod_backward``: result / self where no element is zero, else (and always under a
    dispatch mode, or with a subclass: composite compliance) ``prod_safe_zeros_backward``."""
    if self.dim() == 0:
        return grad
    if dim is None:
        if _subclass_like(self) or (self == 0).nonzero().numel():
            return prod_safe_zeros_backward(grad, self.contiguous().view(-1), 0).view_as(self)
        return grad * conj(result / self)
    dim = dim % self.dim()
    if not keepdim:
        grad, result = grad.unsqueeze(dim), result.unsqueeze(dim)
    if _subclass_like(self) or (self == 0).sum(dim, True).sum().item():
        return prod_safe_zeros_backward(grad, self, dim)
    return grad * conj(result / self)


def scale_grad_by_count(grad, mask, dims):
    count = mask.sum(list(dims), keepdim=True)
    return (grad / count) * mask


def evenly_distribute_backward(grad, input, value):
    """The gradient shared among the elements equal to the max (NaN matching NaN): torch's branch
    for subclasses, dispatch modes and CUDA; its CPU branch writes it with ``masked_fill_``."""
    if _subclass_like(grad, input, value) or input.is_cuda:
        input_and_value_isnan = input.isnan().logical_and(value.isnan())
        mask = (input == value).logical_or_(input_and_value_isnan)
        return mask * (grad / mask.sum())
    mask = input.isnan() if value.isnan().item() else input == value
    zeros_ = dispatcher.call("new_zeros", grad, list(input.shape), dtype=input.dtype)
    return zeros_.masked_fill_(mask, grad / mask.sum())


def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    """The gradient scattered to the element each index picked."""
    if not keepdim and sizes:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    grad_in = dispatcher.call("new_zeros", grad, list(sizes))
    if _subclass_like(grad, indices):
        return grad_in.scatter(dim, indices, grad)
    return grad_in.scatter_(dim, indices, grad)


def _softmax_backward_data(grad, output, dim, input_dtype):
    return dispatcher.call("_softmax_backward_data", grad, output, dim, input_dtype)


def _log_softmax_backward_data(grad, output, dim, input_dtype):
    return dispatcher.call("_log_softmax_backward_data", grad, output, dim, input_dtype)


def softmax_double_backward(grad, grad_output, dim, output):
    """The derivative of ``_softmax_backward_data`` with respect to the softmax output."""
    return grad_output * grad - (output * grad_output).sum(dim, True) * grad \
        - grad_output * (output * grad).sum(dim, True)


# ---------------------------------------------------------------------- losses (operators of their own)
def nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    return dispatcher.call("nll_loss_backward", grad, self, target, weight, reduction, ignore_index, total_weight)


def nll_loss(self, target, weight, reduction, ignore_index):
    return dispatcher.call("nll_loss_forward", self, target, weight, reduction, ignore_index)[0]


__all__ += ["nll_loss2d", "nll_loss2d_backward"]


def nll_loss2d(self, target, weight, reduction, ignore_index):
    return dispatcher.call("nll_loss2d_forward", self, target, weight, reduction, ignore_index)[0]


def nll_loss2d_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    return dispatcher.call("nll_loss2d_backward", grad, self, target, weight, reduction, ignore_index, total_weight)


def mse_loss_backward(grad, self, target, reduction):
    return dispatcher.call("mse_loss_backward", grad, self, target, reduction)


def binary_cross_entropy_with_logits_backward(grad, input, target, weight, pos_weight, reduction):
    """(sigmoid(x) - y) grad, with pos_weight: ((pw y + 1 - y) sigmoid(x) - pw y) grad; the in-place
    steps are out-of-place where torch's are (grad mode on, a subclass, a dispatch mode)."""
    functional = _subclass_like(input, target) or _grad_mode.grad_enabled
    if pos_weight is not None:
        t = pos_weight.mul(target)
        t_plus_1 = dispatcher.call("add.Scalar", t, 1)
        grad_input = (t_plus_1.sub(target).mul(input.sigmoid()).sub(t) if functional
                      else t_plus_1.sub_(target).mul_(input.sigmoid()).sub_(t))
    else:
        grad_input = input.sigmoid().sub(target) if functional else input.sigmoid().sub_(target)
    for factor in (grad, weight):
        if factor is not None:
            functional = _subclass_like(factor) or _grad_mode.grad_enabled
            grad_input = grad_input.mul(factor) if functional else grad_input.mul_(factor)
    return div_scalar_(grad_input, input.numel()) if reduction == 1 else grad_input


def binary_cross_entropy_with_logits_target_backward(grad, self, target, weight, pos_weight, reduction):
    """-x grad; with pos_weight: (log sigmoid(-x) - pw log sigmoid(x)) grad, in place as torch's
    unless pos_weight or grad is a subclass (or a dispatch mode is on)."""
    if pos_weight is not None:
        log_sigmoid_neg = dispatcher.call("log_sigmoid", self.neg())
        log_sigmoid = dispatcher.call("log_sigmoid", self)
        grad_target = (log_sigmoid_neg - log_sigmoid * pos_weight) * grad if _subclass_like(pos_weight, grad) \
            else log_sigmoid_neg.sub_(log_sigmoid.mul_(pos_weight)).mul_(grad)
    else:
        grad_target = -self * grad
    if weight is not None:
        grad_target = grad_target.mul(weight) if _subclass_like(weight) else grad_target.mul_(weight)
    return div_scalar_(grad_target, target.numel()) if reduction == 1 else grad_target


def div_scalar_(t, s):
    return dispatcher.call("div_.Scalar", t, s)


def mse_loss_double_backward(grad, input, reduction):
    grad_input = mul_scalar(grad, 2)
    return div_scalar(grad_input, input.numel()) if reduction == 1 else grad_input


def _weighted_mean(grad_input, weight, reduction, numel):
    """The tail of the binary cross-entropy gradients: times ``weight``, ÷ numel for 'mean'."""
    if weight is not None:
        grad_input = grad_input * weight
    return div_scalar(grad_input, numel) if reduction == 1 else grad_input


def binary_cross_entropy_backward(grad, self, target, weight, reduction):
    return dispatcher.call("binary_cross_entropy_backward", grad, self, target, weight, reduction)


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction):
    """d/dt of −(t log x + (1 − t) log(1 − x)) = −logit(x)."""
    return _weighted_mean(-dispatcher.call("logit", self) * grad, weight, reduction, target.numel())


def binary_cross_entropy_double_backward(grad_output, grad, self, target, weight, reduction):
    """d/dx of g·(x − t)/(x(1 − x)): (x² − 2xt + t)/(x(1 − x))², ε = 1e-12 added as torch's."""
    eps = 1e-12
    grad_input = (self * self - 2 * self * target + target) / ((self + eps).pow(2) * (1 - self + eps).pow(2))
    return _weighted_mean(grad_input * (grad * grad_output), weight, reduction, self.numel())


def binary_cross_entropy_double_backward_target(grad, grad_output, self, target, weight, reduction):
    """d/dt of g·(x − t)/(x(1 − x)): −g/(x(1 − x)), in torch's order: the weight before the
    division, and x(1 − x) raised to at least 1e-12 (torch clamps it in place without recording
    the clamp: its graph is the product's; adding the clamp's constant change keeps that graph).
    The grad_output formula's (x + eps)(1 − x + eps) is not this one's."""
    res = -grad * grad_output
    if weight is not None:
        res = res * weight
    denom = (1 - self) * self
    denom = denom + (denom.detach().clamp_min(1e-12) - denom.detach())
    res = res / denom
    return div_scalar(res, self.numel()) if reduction == 1 else res


def not_implemented(name, grad):
    """A formula for an operator without a derivative: the node exists, its backward refuses
    (``grad`` is passed so that the generated ``apply`` uses what it unpacks)."""
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


def leaky_relu_backward(grad, self, negative_slope, self_is_result):
    return dispatcher.call("leaky_relu_backward", grad, self, negative_slope, self_is_result)


# ---------------------------------------------------------------------- linear algebra
def _column_major(sizes, strides):
    """torch's test, sizes of 1 and 0 included: a unit first stride and a second equal to the row
    count (a (5, 1) weight.t() of strides (1, 5) is column-major, and gets its gradient so)."""
    return strides[0] == 1 and strides[1] == sizes[0]


def _all_strided(grad, other, layout):
    """Only strided operands have a column-major form to keep (torch's layout branch: a sparse or
    compressed input saved no strides, and gets the general formula)."""
    return grad.layout is strided and other.layout is strided and layout is strided


def mm_mat1_backward(grad, mat2, sizes, strides, layout=strided, alpha=1):
    # Give the gradient the layout of mat1: for a column-major mat1, compute the transpose.
    # Complex operands: grad @ mat2^H (the conjugate Wirtinger derivative), alpha conjugated.
    if _all_strided(grad, mat2, layout) and _column_major(sizes, strides):
        return maybe_multiply(conj(mat2).mm(grad.t()).t(), conj_scalar(alpha))
    return maybe_multiply(grad.mm(conj(mat2.t())), conj_scalar(alpha))


def mm_mat2_backward(grad, mat1, sizes, strides, layout=strided, alpha=1):
    if _all_strided(grad, mat1, layout) and _column_major(sizes, strides):
        return maybe_multiply(grad.t().mm(conj(mat1)).t(), conj_scalar(alpha))
    return maybe_multiply(conj(mat1.t()).mm(grad), conj_scalar(alpha))


# ---------------------------------------------------------------------- views
def permute_backwards(grad, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return grad.permute(inverse)


def unsqueeze_to(grad, dims_or_sizes, sizes=None):
    """Put back the size-1 dims squeeze removed (all of them, or those of ``dims``)."""
    if sizes is None:
        sizes, dims = dims_or_sizes, range(len(dims_or_sizes))
    else:
        dims = [d % max(len(sizes), 1) for d in ([dims_or_sizes] if isinstance(dims_or_sizes, int) else dims_or_sizes)]
    for d in sorted(dims):
        if sizes and sizes[d] == 1:
            grad = grad.unsqueeze(d)
    return grad


def _embed(grad, sizes, place, accumulate=False):
    """A zero tensor of ``sizes`` with ``grad`` written into the view ``place(zeros)``."""
    out = zeros(sizes, dtype=grad.dtype, device=grad.device)
    view = place(out)
    view.add_(grad) if accumulate else view.copy_(grad)
    return out


def _to_copy_backward(grad, self_options):
    """``_to_copy``: the gradient goes back to the input's dtype and device; a real input of a
    complex copy takes the real part first, so the cast does not warn that it drops it."""
    dtype, device = self_options
    if not dtype.is_complex and grad.dtype.is_complex:
        grad = dispatcher.call("real", grad)
    if grad.dtype is dtype and grad.device == device:
        return grad
    # ``grad.to(self.options())``: the options' layout is passed too
    return dispatcher.call("_to_copy", grad, dtype=dtype, layout=strided, device=device)


def select_backward(grad, sizes, dim, index):
    return dispatcher.call("select_backward", grad, list(sizes), dim, index)


def slice_backward_wrapper(grad, sizes, dim, start, end, step):
    """``slice.Tensor``'s formula: ``slice_backward`` with a missing start 0 and end INT64_MAX."""
    return dispatcher.call("slice_backward", grad, list(sizes), dim, 0 if start is None else start,
                           INT64_MAX if end is None else end, step)


def slice_symint(grad, dim, start, end, step):
    return dispatcher.call("slice.Tensor", grad, dim, start, end, step)


def diagonal_backward(grad, sizes, offset, dim1, dim2):
    return dispatcher.call("diagonal_backward", grad, list(sizes), offset, dim1, dim2)


__all__ += ["select_scatter_symint", "slice_scatter_symint", "diagonal_scatter", "as_strided_scatter_backward"]


# The scatters' formulas: ``self``'s gradient is ``grad`` with the overwritten view zeroed (a
# scatter of zeros), ``src``'s is that view of ``grad``.
def select_scatter_symint(grad, src, dim, index):
    return dispatcher.call("select_scatter", grad, src, dim, index)


def slice_scatter_symint(grad, src, dim, start, end, step):
    return dispatcher.call("slice_scatter", grad, src, dim, start, end, step)


def diagonal_scatter(grad, src, offset, dim1, dim2):
    return dispatcher.call("diagonal_scatter", grad, src, offset, dim1, dim2)


def as_strided_scatter_backward(grad, input_geometry, src_geometry, size, stride, storage_offset):
    """torch's formula (``FunctionsManual.cpp``) as it stands: zeros in ``self``'s geometry with
    ``grad``'s strided view copied into the same view -- the elements ``src`` overwrote, not the
    ones it left, get the gradient. Mirrored so gradients equal torch's."""
    grad = grad.contiguous()
    out = dispatcher.call("new_zeros", grad, list(input_geometry.sizes))
    out = out.as_strided(input_geometry.sizes, input_geometry.strides)
    out.as_strided(size, stride, storage_offset).copy_(grad.as_strided(size, stride, storage_offset))
    return out


__all__ += ["trace_backward", "log1p_backward", "matmul", "linalg_det_backward", "slogdet_backward", "svd_backward",
            "linalg_qr_backward", "cholesky_backward", "linalg_solve_backward", "linalg_matrix_exp_differential",
            "householder_product_backward"]


def matmul(a, b):
    return dispatcher.call("matmul", a, b)


def linalg_det_backward(grad, det, A, LU, pivots):
    """The cofactor matrix times grad: ``grad * conj(det) * A^-H`` (``linalg_det_backward``).
    With no higher derivative wanted, torch solves with the forward's LU factors, a zero pivot
    replaced by epsilon: a singular ``A`` (det 0) gets a finite (zero) gradient. Otherwise it is
    solved with ``linalg_solve(A^H, diag(grad * conj(det)))``, so that it differentiates again
    (a column-major result, under a LinalgSolveExBackward0 node); there a singular ``A`` raises
    (torch takes an SVD of it instead)."""
    scale = (grad * det.conj()).unsqueeze(-1).unsqueeze(-1)
    if not _grad_mode.grad_enabled:
        # the forward factored A^T where A is real and contiguous: that inverse is A^-T already
        factored_A_T = A.is_contiguous() and not A.dtype.is_complex
        return scale * perturbed_lu_inverse(LU, pivots, trans=not factored_A_T).conj()
    d_diag = grad * det.conj()
    d = dispatcher.call("diag_embed", d_diag.unsqueeze(-1).expand(list(pivots.shape))).mT
    return dispatcher.call("linalg_solve", A.mH, d)



def _solve(A, B, left=True):
    """X with ``A X = B`` (``X A = B``), without raising for a singular A: torch's backward
    formulas solve with the forward's LU factors or a triangular solver, which do not check."""
    return dispatcher.call("linalg_solve_ex", A, B, left=left)[0]


def slogdet_backward(grad_sign, grad_logabsdet, A, sign, LU, pivots):
    """``slogdet_backward``: the gradient of log|det A| is A^-H, scaled by each matrix's grad
    (``g * A^-H``, solved as torch solves it). A real sign is locally constant; a complex one
    turns with the phase of the determinant, which adds ``-i Im(conj(g_sign) sign)`` to g."""
    if grad_sign is None and grad_logabsdet is None:
        return None
    if not A.dtype.is_complex and grad_logabsdet is None:
        return None
    g = grad_logabsdet
    if A.dtype.is_complex:
        if grad_sign is not None:
            turn = -1j * dispatcher.call("imag", grad_sign.conj() * sign)
            g = turn if g is None else g + turn
        else:
            g = g.to(A.dtype)
    g = g.unsqueeze(-1).expand(list(pivots.shape))
    return _solve(A.mH, dispatcher.call("diag_embed", g))


def svd_backward(gU, gS, gVh, U, S, Vh, full_matrices):
    """``svd_backward``, with U and Vh (and their gradients) first narrowed to S's size where the
    forward gave full matrices, as torch's formula narrows them: the extra columns are not
    unique. Assumes distinct singular values (and full rank if A is not square or complex). A
    complex singular pair is unique only up to a common phase, so a loss that depends on that
    phase is refused, as torch refuses it."""
    if gU is None and gS is None and gVh is None:
        return None
    if full_matrices:
        k = S.shape[-1]
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = None if gU is None else gU.narrow(-1, 0, k)
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:      # singular values only: U diag(gS) Vh
        return U.matmul(gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)).matmul(Vh)
    gA = _svd_core_gradient(gU, gS, gVh, U, S, Vh)
    if m > n and gU is not None:        # U's columns span less than C^m: add the part outside them
        gU_Sinv = gU / S.unsqueeze(-2)
        gA = (U.matmul(gA) + gU_Sinv - U.matmul(U.mH.matmul(gU_Sinv))).matmul(Vh)
    elif m < n and gVh is not None:     # likewise for V's rows in C^n
        Sinv_gVh = gVh / S.unsqueeze(-1)
        gA = U.matmul(gA.matmul(Vh) + Sinv_gVh - Sinv_gVh.matmul(Vh.mH).matmul(Vh))
    else:
        gA = U.matmul(gA.matmul(Vh)) if m >= n else U.matmul(gA).matmul(Vh)
    return gA


def _svd_core_gradient(gU, gS, gVh, U, S, Vh):
    """The k x k middle of ``svd_backward``'s gradient, between U and Vh: the skew-Hermitian
    parts of U^H gU and Vh gVh^H over the gaps between squared singular values, gS on the
    diagonal (and, complex, the imaginary diagonal of U^H gU over 2S)."""
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E.diagonal(0, -2, -1).fill_(1)      # any non-zero: the diagonal's numerators are zero
    UhgU = None if gU is None else U.mH.matmul(gU) - gU.mH.matmul(U)
    VhgV = None if gVh is None else Vh.matmul(gVh.mH) - gVh.matmul(Vh.mH)
    if U.dtype.is_complex:
        _check_phase_invariance(UhgU, VhgV, S)
    if gU is not None and gVh is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif gU is not None:
        gA = UhgU * (S.unsqueeze(-2) / E)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + dispatcher.call("diag_embed", gS)
    if U.dtype.is_complex and gU is not None and gVh is not None:
        gA = gA + dispatcher.call("diag_embed", UhgU.diagonal(0, -2, -1) / (2 * S))
    return gA


def _check_phase_invariance(UhgU, VhgV, S):
    """A loss of complex singular vectors must not change when a pair (u_k, v_k) turns by the
    same phase: Im diag(U^H gU) = -Im diag(V^H gV), within torch's lax tolerance."""
    def imaginary_diagonal(X):
        return dispatcher.call("zeros_like", S) if X is None else dispatcher.call("imag", X.diagonal(0, -2, -1))
    if not dispatcher.call("allclose", imaginary_diagonal(UhgU), -imaginary_diagonal(VhgV), 1e-2, 1e-2):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
                           "making it ill-defined.")


def linalg_qr_backward(gQ, gR, Q, R, mode):
    """``linalg_qr_backward``. With M = gR R^H - Q^H gQ: a tall A's gradient is
    ``[gQ + Q syminvadj(triu(M))] R^-H``; a wide A = [X | Y] is a square QR X = Q R_X with
    Y = Q R_Y beside it, its gradient ``Q gR`` plus, on X's columns,
    ``Q trilImInvAdjSkew(-M) R_X^-H`` (the adjoints of the maps torch's forward derivative uses)."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is None:
        M = gR.matmul(R.mH)
    else:
        M = -Q.mH.matmul(gQ) if gR is None else gR.matmul(R.mH) - Q.mH.matmul(gQ)
    if m >= n:
        gA = Q.matmul(_syminvadj(M.triu()))
        if gQ is not None:
            gA = gA + gQ
        return _trsm(R.mH, gA, upper=False, left=False)
    gA = _trsm(R.narrow(-1, 0, m).mH, Q.matmul(_tril_im_inv_adj_skew(-M)), upper=False, left=False)
    gA = dispatcher.call("cat", [gA, gA.new_zeros([*R.shape[:-1], n - m])], -1)
    return gA if gR is None else gA + Q.matmul(gR)


def _syminvadj(X):
    """``X + X^H`` with the real part of its diagonal halved: the adjoint of the map that takes
    a Hermitian matrix to the upper triangle whose symmetrization it is. Halved in place, as
    torch does, so the graph holds torch's CopySlices node."""
    X = X + X.mH
    dispatcher.call("mul_.Scalar", _real(X.diagonal(0, -2, -1)), 0.5)
    return X


def _tril_im_inv_adj_skew(X):
    """``tril(X - X^H)`` with the imaginary part of a complex diagonal halved in place (a real
    diagonal is zero)."""
    X = (X - X.mH).tril()
    if X.dtype.is_complex:
        dispatcher.call("mul_.Scalar", dispatcher.call("imag", X.diagonal(0, -2, -1)), 0.5)
    return X


def _real(X):
    return dispatcher.call("real", X) if X.dtype.is_complex else X


def linalg_matrix_exp_differential(self, grad, adjoint):
    """``linalg_matrix_exp_differential``: the (adjoint) differential of exp at ``self`` applied
    to ``grad``, read off exp of a 2n x 2n block matrix; written with operators autograd records,
    so the gradient can be differentiated again."""
    return differential_analytic_matrix_function(self, grad, lambda m: dispatcher.call("linalg_matrix_exp", m),
                                                 adjoint)


def householder_product_backward(grad, result, input, tau):
    """``householder_product_backward``: Q = H_1 ... H_k E (E the first n columns of I), H_i =
    I - tau_i v_i v_i^H. With L_i = H_1 ... H_{i-1} and R_i = H_{i+1} ... H_k E, the gradient
    reaching H_i is M_i = L_i^H grad R_i^H, so tau_i gets -v_i^H M_i v_i and v_i (input's column
    i below the diagonal) gets -(conj(tau_i) M_i + tau_i M_i^H) v_i. torch updates the same
    products reflector by reflector; both are written with recorded operators, so the gradient
    can be differentiated again."""
    if grad is None or input.numel() == 0 or tau.numel() == 0:
        return None, None
    m, n, k = input.shape[-2], input.shape[-1], tau.shape[-1]
    eye = dispatcher.call("eye", m, dtype=input.dtype, device=input.device)
    V = input.tril(-1) + dispatcher.call("eye.m", m, n, dtype=input.dtype, device=input.device)
    vs = [V.narrow(-1, i, 1) for i in range(k)]
    taus = [tau.narrow(-1, i, 1).unsqueeze(-1) for i in range(k)]
    H = [eye - t * v.matmul(v.mH) for v, t in zip(vs, taus)]
    right = [None] * k
    R = dispatcher.call("eye.m", m, n, dtype=input.dtype, device=input.device)
    for i in reversed(range(k)):
        right[i] = R
        R = H[i].matmul(R)
    # torch writes each reflector's share into zero tensors, column by column (a CopySlices node
    # per column in the gradients' graphs); columns past k stay zero
    grad_input, grad_tau = input.new_zeros(input.shape), tau.new_zeros(tau.shape)
    left = eye
    for i in range(k):
        M = left.mH.matmul(grad).matmul(right[i].mH)
        v, t = vs[i], taus[i]
        grad_input.select(-1, i).copy_((-(t.conj() * M.matmul(v) + t * M.mH.matmul(v))).squeeze(-1))
        grad_tau.select(-1, i).copy_((-v.mH.matmul(M).matmul(v)).squeeze(-1).squeeze(-1))
        left = left.matmul(H[i])
    return grad_input.tril(-1), grad_tau


def cholesky_backward(gL, upper, L):
    """``cholesky_backward`` (Murray, 2016): ``L^-H Phi(L^H gL) L^-1``, Phi taking the lower
    triangle with its diagonal halved and mirroring it. An upper factor is L^H."""
    if gL is None:
        return None
    if upper:
        L, gL = L.mH, gL.mH
    phi = L.mH.matmul(gL).tril()
    phi = mul_scalar(phi + phi.tril(-1).mH, 0.5)
    return _trsm(L, _trsm(L.mH, phi, upper=True), upper=False, left=False)


def cholesky_solve_backward(grad_x, self, input2, result, upper, grad_input_mask):
    """``cholesky_solve_backward``: with A = L L^H, ``gB = A^-1 gX`` (a Cholesky solve again)
    and, C = gB X^H + (gB X^H)^H, ``gL = -C L`` (``-U C`` for an upper factor)."""
    if grad_x is None:
        return None, None
    grad_self = dispatcher.call("cholesky_solve", grad_x, input2, upper)
    common = grad_self.matmul(result.mH)
    common = common + common.mH
    grad_input2 = -input2.matmul(common) if upper else -common.matmul(input2)
    return grad_self, grad_input2


def cholesky_inverse_backward(grad, L, upper, inverse):
    """``cholesky_inverse_backward``: with X = (L L^H)^-1 and C = X (G + G^H) X, ``gL = -C L``
    (``-U C`` for an upper factor)."""
    if grad is None:
        return None
    common = inverse.matmul((grad + grad.mH).matmul(inverse))
    return -L.matmul(common) if upper else -common.matmul(L)


def linalg_solve_backward(gX, X, A, LU, pivots, left, grad_input_mask):
    """``linalg_solve_backward``: ``gB = A^-H gX`` (``gX A^-H`` on the right), ``gA = -gB X^H``
    (``-X^H gB``). torch solves with the forward's LU factors unless a higher derivative is
    wanted; this solves with A again either way."""
    if gX is None:
        return None, None
    vector = gX.dim() == 1 or (gX.dim() == LU.dim() - 1 and tuple(gX.shape) == tuple(LU.shape[:-1]))
    # a vector right-hand side is solved as a one-column matrix and squeezed back, as torch's
    # (so the gradient's node is SqueezeBackward1, not the solver's)
    gB = _solve(A.mH, gX.unsqueeze(-1), left=left).squeeze(-1) if vector else _solve(A.mH, gX, left=left)
    gA = None
    if grad_input_mask[0]:
        gB_, X_ = (gB.unsqueeze(-1), X.unsqueeze(-1)) if vector else (gB, X)
        gA = -gB_.matmul(X_.mH) if left else -X_.mH.matmul(gB_)
    return gA, gB if grad_input_mask[1] else None

__all__ += ["linalg_solve_triangular_backward", "triangular_solve_backward", "cholesky_solve_backward",
            "cholesky_inverse_backward"]


def _triangle(G, upper, unitriangular):
    """The part of a gradient that lies in the triangle the solver read (no diagonal for a
    unit triangle): the other entries of A do not change the result."""
    return G.triu(int(unitriangular)) if upper else G.tril(-int(unitriangular))


def linalg_solve_triangular_backward(grad, A, X, upper, left, unitriangular, grad_input_mask):
    """``linalg_solve_triangular_backward``: ``gB = A^-H gX`` (``gX A^-H`` on the right), a
    solve with the other triangle; ``gA = -gB X^H`` (``-X^H gB``) kept to A's triangle."""
    if grad is None or not any(grad_input_mask):
        return None, None
    gB = dispatcher.call("linalg_solve_triangular", A.mH, grad, upper=not upper, left=left,
                         unitriangular=unitriangular)
    gA = None
    if grad_input_mask[0]:
        gA = _triangle(-gB.matmul(X.mH) if left else -X.mH.matmul(gB), upper, unitriangular)
    return gA, gB if grad_input_mask[1] else None


def triangular_solve_backward(grad_x, grad_m, b, a, x, upper, transpose, unitriangular, grad_input_mask):
    """``triangular_solve_backward``: ``gb`` the solve with op(A)^H, ``gA`` ``-gb X^H`` (its
    transpose when A was transposed) kept to the triangle, plus the gradient of the copy of A,
    which is A's own."""
    if grad_x is None and grad_m is None:
        return None, None
    grad_b = grad_a = None
    if grad_x is not None:
        grad_b = dispatcher.call("triangular_solve", grad_x, a.conj(), upper, not transpose, unitriangular)[0]
        if grad_input_mask[1]:
            grad_a = -x.conj().matmul(grad_b.mT) if transpose else -grad_b.matmul(x.mH)
            grad_a = _triangle(grad_a, upper, unitriangular)
    if grad_a is None:
        grad_a = dispatcher.call("expand", zeros([1], dtype=a.dtype, device=a.device), list(a.shape))
    if grad_b is None:
        grad_b = dispatcher.call("expand", zeros([1], dtype=b.dtype, device=b.device), list(b.shape))
    if grad_input_mask[1] and grad_m is not None:
        grad_a = grad_a + grad_m
    return grad_b, grad_a


__all__ += ["linalg_lu_backward", "lu_unpack_backward", "lu_factor_ex_backward"]


def _cat(tensors, dim):
    return dispatcher.call("cat", list(tensors), dim)


def _trsm(A, B, upper, left=True, unitriangular=False):
    return dispatcher.call("linalg_solve_triangular", A, B, upper=upper, left=left, unitriangular=unitriangular)


def linalg_lu_backward(gL, gU, P, L, U, pivot):
    """``linalg_lu_backward``: with ``A = P L U``, the gradient ``P L^-H (L^H gL o 1_L + gU
    U^H o 1_U) U^-H`` of a square A (1_L the strict lower triangle, 1_U the upper one); a wide
    A's first k columns and a tall A's first k rows take the square formula's place, the rest
    of A its own block of gU (gL)."""
    if gL is None and gU is None:
        return None
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = L.mH.matmul(gL).tril(-1) if gL is not None else None
        if gU is not None:
            term = gU.matmul(U.mH).triu()
            gA = term if gA is None else gA + term
        gA = _trsm(L.mH, _trsm(U.mH, gA, upper=False, left=False), upper=True, unitriangular=True)
    elif m < n:
        U1 = U.narrow(-1, 0, k)
        gA = L.mH.matmul(gL) if gL is not None else None
        if gU is not None:
            term = gU.triu().matmul(U.mH)
            gA = -term if gA is None else gA - term
        gA = _trsm(U1.mH, gA.tril(-1), upper=False, left=False)
        if gU is not None:
            gA = _cat((gA + gU.narrow(-1, 0, k).triu(), gU.narrow(-1, k, n - k)), -1)
        gA = _trsm(L.mH, gA, upper=True, unitriangular=True)
        if gU is None:
            gA = _cat((gA, zeros_like(U.narrow(-1, k, n - k))), -1)
    else:
        L1 = L.narrow(-2, 0, k)
        gA = gU.matmul(U.mH) if gU is not None else None
        if gL is not None:
            term = L.mH.matmul(gL.tril(-1))
            gA = -term if gA is None else gA - term
        gA = _trsm(L1.mH, gA.triu(), upper=True, unitriangular=True)
        if gL is not None:
            gA = _cat((gA + gL.narrow(-2, 0, k).tril(-1), gL.narrow(-2, k, m - k)), -2)
        gA = _trsm(U.mH, gA, upper=False, left=False)
        if gL is None:
            gA = _cat((gA, zeros_like(L.narrow(-2, k, m - k))), -2)
    return P.matmul(gA) if pivot else gA


def lu_unpack_backward(gL, gU, sizes):
    """``lu_unpack_backward``: L and U are LU's strict lower and upper parts, so each gradient
    lands on its own part of LU (a wide LU's last columns U's alone, a tall LU's last rows L's
    alone). torch passes LU's last two sizes; ``sizes`` is LU's whole shape."""
    if gL is None and gU is None:
        return None
    m, n = sizes[-2], sizes[-1]
    k = min(m, n)
    if m <= n:
        part = gL.tril(-1) if gL is not None else None
        if gU is not None:
            part = gU.narrow(-1, 0, k).triu() if part is None else part + gU.narrow(-1, 0, k).triu()
        if m == n:
            return part
        rest = gU.narrow(-1, k, n - k) if gU is not None else gL.new_zeros([*gL.shape[:-1], n - k])
        return _cat((part, rest), -1)
    part = gU.triu() if gU is not None else None
    if gL is not None:
        part = gL.narrow(-2, 0, k).tril(-1) if part is None else part + gL.narrow(-2, 0, k).tril(-1)
    rest = gL.narrow(-2, k, m - k) if gL is not None else gU.new_zeros([*gU.shape[:-2], m - k, n])
    return _cat((part, rest), -2)


def lu_factor_ex_backward(grad, LU, pivots, pivot):
    """``lu_factor_ex_backward``: LU packs L and U, so its gradient is theirs, through
    ``linalg_lu_backward``."""
    P, L, U = dispatcher.call("lu_unpack", LU, pivots, True, pivot)
    m, n = LU.shape[-2:]
    k = min(m, n)
    return linalg_lu_backward(grad.narrow(-1, 0, k), grad.narrow(-2, 0, k), P, L, U, pivot)


__all__ += ["linalg_lu_solve_LU", "linalg_lu_solve"]


def linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    return dispatcher.call("linalg_lu_solve", LU, pivots, B, left=left, adjoint=adjoint)


def linalg_lu_solve_LU(gX, LU, pivots, X, left, adjoint):
    """``linalg_lu_solve_LU``: the gradient of the packed factors, through an upper triangular
    gR. Where the solve meets U first (``left != adjoint``), ``gR = U^-H op(-gX) op(X)^H``,
    gU its upper part and gL ``(L^-H gR U^H)``'s strict lower one; else ``gR = -P^T op(X)
    op(gX)^H P L^-H``, gL its strict lower part and gU ``(L^H gR U^-H)``'s upper one."""
    P, L, U = dispatcher.call("lu_unpack", LU, pivots, True, left == adjoint)
    if left != adjoint:
        gR = _trsm(U.mH, -(gX if left else gX.mH).matmul(X.mH if left else X), upper=False)
        gL = _trsm(L.mH, gR.matmul(U.mH), upper=True, unitriangular=True).tril(-1)
        return gL + gR.triu()
    gR = -P.mT.matmul(X if left else X.mH).matmul(gX.mH if left else gX).matmul(P)
    gR = _trsm(L.mH, gR, upper=True, left=False, unitriangular=True)
    gU = _trsm(U.mH, L.mH.matmul(gR), upper=False, left=False).triu()
    return gR.tril(-1) + gU


__all__ += ["linalg_eig_backward", "handle_r_to_c", "pinv_backward"]


def handle_r_to_c(self, gA):
    """A real input's gradient is the real part of the complex formula's (``handle_r_to_c``).
    ``self`` is the input or its dtype (``self.scalar_type()`` in a formula)."""
    dtype = getattr(self, "dtype", self)
    if gA is None or dtype.is_complex or not gA.dtype.is_complex:
        return gA
    return dispatcher.call("real", gA)


def linalg_eig_backward(gL, gV, L, V, is_hermitian):
    """``linalg_eig_backward`` for ``eig`` and ``eigh`` (Giles 2008, with unit eigenvectors):
    ``V^-H (diag(gL) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)) V^H``, E the gaps between
    eigenvalues; a Hermitian A has V^-1 = V^H and keeps only the skew-Hermitian part of V^H gV.
    Assumes distinct eigenvalues. A complex eigenvector is unique only up to its phase, so a
    loss that depends on it is refused, as torch refuses it."""
    if gL is None and gV is None:
        return None
    if gV is None:      # eigenvalues only
        if is_hermitian:
            return (V * gL.unsqueeze(-2)).matmul(V.mH)
        return _solve(V.mH, gL.unsqueeze(-1) * V.mH)
    VhgV = V.mH.matmul(gV)
    diag_VhgV = VhgV.diagonal(0, -2, -1)
    if V.dtype.is_complex:
        imaginary = dispatcher.call("imag", diag_VhgV)
        if not dispatcher.call("allclose", imaginary, dispatcher.call("zeros_like", imaginary), 1e-2, 1e-2):
            name = "linalg_eigh_backward" if is_hermitian else "linalg_eig_backward"
            raise RuntimeError(f"{name}: The eigenvectors in the complex case are specified up to multiplication by "
                               "e^{i phi}. The specified loss function depends on this quantity, so it is "
                               "ill-defined.")
    if is_hermitian:
        VhgV = 0.5 * (VhgV - VhgV.mH)
    else:
        VhgV = VhgV - V.mH.matmul(V * _real(diag_VhgV).unsqueeze(-2))
    Lconj = L.conj()
    E = Lconj.unsqueeze(-2) - Lconj.unsqueeze(-1)
    E.diagonal(0, -2, -1).fill_(1)      # any non-zero: the diagonal is overwritten below
    gA = VhgV / E
    if gL is not None:
        gA = dispatcher.call("diagonal_scatter", gA, gL.to(gA.dtype), 0, -2, -1)
    if is_hermitian:
        return V.matmul(gA.matmul(V.mH))
    return _solve(V.mH, gA.matmul(V.mH))


def pinv_backward(grad, pinvA, A):
    """``pinv_backward``: the gradient of the pseudo-inverse, grouped so that the products are
    of the smaller of A's two dimensions."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gradh = pinvA.mH, grad.mH
    if m <= n:
        K = gradh.matmul(pinvA)
        KpinvAh = K.matmul(pinvAh)
        return (-(pinvA.matmul(K)).mH + KpinvAh - (A.matmul(pinvA)).matmul(KpinvAh)
                + (pinvAh.matmul(pinvA)).matmul(gradh - K.matmul(A)))
    K = pinvA.matmul(gradh)
    pinvAhK = pinvAh.matmul(K)
    return (-(K.matmul(pinvA)).mH + (gradh - A.matmul(K)).matmul(pinvA).matmul(pinvAh) + pinvAhK
            - pinvAhK.matmul(pinvA).matmul(A))



__all__ += ["linalg_lstsq_backward"]


def linalg_lstsq_backward(gX, gL, A, B, X, grad_input_mask):
    """``linalg_lstsq_backward``: the solution is ``pinv(A) B`` whatever the driver, so its
    gradient goes through the pseudo-inverse's (``pinv_backward``) for A and is ``pinv(A)^H gX``
    for B. The residuals L = |A X - B|^2 add ``2 (A X - B) gL X^H`` for A and ``-2 (A X - B) gL``
    for B (X is a minimum of L, so X's own change adds nothing). Empty residuals give none."""
    has_gL = gL is not None and gL.numel() > 0
    if (gX is None and not has_gL) or not any(grad_input_mask):
        return None, None
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    as_matrix = (lambda t: t.unsqueeze(-1)) if vector else (lambda t: t)
    as_vector = (lambda t: t.squeeze(-1)) if vector else (lambda t: t)
    B_ = as_matrix(B)
    gA = gB = None
    if gX is not None:
        gX_ = as_matrix(gX)
        pinvA = dispatcher.call("linalg_pinv.atol_rtol_tensor", A)
        if grad_input_mask[0]:
            gA = pinv_backward(gX_.matmul(B_.mH), pinvA, A)
        if grad_input_mask[1]:
            gB = as_vector(pinvA.mH.matmul(gX_))
    if has_gL:
        r = A.matmul(as_matrix(X)) - B_
        gL_ = gL.unsqueeze(-2)
        if grad_input_mask[0]:
            gA_L = 2 * (gL_ * r).matmul(as_matrix(X).mH)
            gA = gA_L if gA is None else gA + gA_L
        if grad_input_mask[1]:
            gB_L = as_vector(-2 * gL_ * r)
            gB = gB_L if gB is None else gB + gB_L
    return gA, gB

def polar_backward(grad, result):
    """``polar_backward``: with r = abs e^(i angle), the real parts of conj(grad) sgn(r) (for
    abs) and of conj(grad) i r (for angle)."""
    if grad is None:
        return None, None
    grad_conj = grad.conj()
    grad_abs = dispatcher.call("real", grad_conj * dispatcher.call("sgn", result))
    grad_angle = dispatcher.call("real", grad_conj * (result * 1j))
    return grad_abs, grad_angle


__all__ += ["polar_backward"]


def rsqrt_backward(grad, result):
    """``-0.5 * grad * result.pow(3).conj()`` (derivatives.yaml's rsqrt) in the order torch's C++
    runs it: the power first (GCC evaluates the right operand of ``*`` first), then the double
    times the gradient, ``mul.Scalar``, then their product."""
    cube = result.pow(3).conj()
    return mul_scalar(grad, -0.5) * cube


__all__ += ["rsqrt_backward"]


def log1p_backward(grad, self):
    """grad / (self + 1) (``log1p_backward``)."""
    return grad / (self + 1).conj()


def trace_backward(grad, sizes):
    """The gradient along the main diagonal, zeros elsewhere (``trace_backward_symint``): filled
    into the flat zeros every cols + 1 elements, then viewed as the matrix (its node ViewBackward0,
    as torch's)."""
    rows, cols = sizes
    flat = zeros((rows * cols,), dtype=grad.dtype, device=grad.device)
    # min(rows, cols) steps: past them, a tall matrix's steps would land off the diagonal
    diagonal = arange(0, min(rows, cols) * (cols + 1), cols + 1, dtype=int64, device=grad.device)
    return flat.index_fill_(0, diagonal, grad).view(tuple(sizes))


def unfold_backward(grad, sizes, dimension, size, step):
    return dispatcher.call("unfold_backward", grad, list(sizes), dimension, size, step)


def split_with_sizes_backward(grads, split_sizes, dim, sizes, options):
    """The pieces' gradients side by side; a piece no one used has a gradient of zeros."""
    dtype, device = options
    dim = dim % max(len(sizes), 1)
    pieces = []
    for g, length in zip(grads, split_sizes):
        size = list(sizes)
        size[dim] = length
        pieces.append(g if g is not None else dispatcher.call("zeros", size, dtype=dtype, device=device))
    return dispatcher.call("cat", pieces, dim)


def split_backward(grads, split_size, dim, sizes, options):
    """``split``'s pieces are ``split_size`` long, the last one what is left: counted without
    a comparison (as ``FunctionsManual.cpp``), which a traced size would answer with a guard."""
    d = dim % max(len(sizes), 1)
    lengths = [split_size] * (len(grads) - 1) + [sizes[d] - split_size * (len(grads) - 1)]
    return split_with_sizes_backward(grads, lengths, dim, sizes, options)


def _overlaps(sizes, strides):
    """Can two indices of the view reach the same element? (dims by stride, each must clear the last)"""
    reach = 0
    for stride, size in sorted((st, n) for st, n in zip(strides, sizes) if n > 1):
        if stride <= reach:
            return True
        reach += stride * (size - 1)
    return False


class TensorGeometry:
    """Sizes, strides and offset of a tensor, without its data (``ATen/TensorGeometry.h``)."""
    __slots__ = ("sizes", "strides", "storage_offset", "storage_numel")

    def __init__(self, t):
        self.sizes, self.strides, self.storage_offset = t._impl.sizes, t._impl.strides, t._impl.storage_offset
        self.storage_numel = t._impl.storage.nbytes() // t._impl.dtype.itemsize


class TypeAndSize:
    """Sizes, dtype, device and layout of a tensor, without its data (torch's ``TypeAndSize`` in
    ``autograd/FunctionsManual.h``): what a formula's ``zeros_like(self)`` keeps, since it needs
    no values. Its zeros are contiguous, whatever the layout of the tensor it was taken from."""
    __slots__ = ("sizes", "dtype", "device", "is_sparse")

    def __init__(self, t):
        self.sizes, self.dtype, self.device = t._impl.sizes, t._impl.dtype, t._impl.device
        self.is_sparse = t.is_sparse

    def zeros(self):
        out = zeros(self.sizes, dtype=self.dtype, device=self.device)
        return out.to_sparse() if self.is_sparse else out


def _storage_indices(sizes, strides, offset):
    """The storage index of every element of a view, as a NumPy array of the view's shape."""
    idx = np.full(tuple(sizes), offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        idx += np.arange(n, dtype=np.int64).reshape(shape) * st
    return idx


def as_strided_backward(grad, geometry, size, stride, storage_offset):
    """Scatter ``grad`` into a zero copy of the whole storage, then read the input's elements.

    Without overlap this is a copy into a view of zeros (differentiable again). Where output
    elements overlap, their gradients add up (a scatter-add); where input elements overlap,
    torch divides each storage element's gradient by how many input elements share it. Those
    cases are computed on the host with NumPy, first-order only.
    """
    size, stride = tuple(size), tuple(stride)
    offset = geometry.storage_offset if storage_offset is None else storage_offset
    if not (_overlaps(size, stride) or _overlaps(geometry.sizes, geometry.strides)):
        flat = _embed(grad, (geometry.storage_numel,), lambda z: z.as_strided(size, stride, offset))
        return flat.as_strided(geometry.sizes, geometry.strides, geometry.storage_offset)

    if grad.requires_grad:
        raise NotImplementedError("double backward through an as_strided whose elements overlap is not "
                                  "implemented in internals")
    out_idx = _storage_indices(size, stride, offset)
    in_idx = _storage_indices(geometry.sizes, geometry.strides, geometry.storage_offset)
    buf = np.zeros(geometry.storage_numel, dtype=np.float64)
    np.add.at(buf, out_idx.ravel(), grad.to(dtype=_float64(), device="cpu")._numpy().ravel())
    counts = np.bincount(in_idx.ravel(), minlength=geometry.storage_numel)
    result = np.ascontiguousarray(buf[in_idx] / np.maximum(counts[in_idx], 1))
    return from_numpy(result).to(dtype=grad.dtype, device=grad.device)


def _float64():
    return float64


# ---------------------------------------------------------------------- joining and indexing
def cat_tensors_backward(grad, sizes, dtypes, dim):
    """Each input's slice of the gradient, in its own dtype (a skipped 1-d empty input gets zeros)."""
    first = next((s for s in sizes if tuple(s) != (0,)), None)
    if first is None:
        return [zeros(s, dtype=t, device=grad.device) for s, t in zip(sizes, dtypes)]
    dim = dim % len(first)
    out, start = [], 0
    for s, t in zip(sizes, dtypes):
        if tuple(s) == (0,) and len(first) != 1:
            out.append(zeros(s, dtype=t, device=grad.device))
            continue
        out.append(handle_r_to_c(t, grad.narrow(dim, start, s[dim])).to(t))     # a real input: a view of real parts
        start += s[dim]
    return out


def stack_tensors_backward(grad, dim, dtypes):
    """One ``select`` per input, a real input's the view of its real parts (the engine casts each
    to its input's dtype)."""
    return [handle_r_to_c(t, grad.select(dim, i)) for i, t in enumerate(dtypes)]


def unbind_backward(grads, dim):
    """The pieces stacked back; a missing one (unused) counts as zeros."""
    known = next(g for g in grads if g is not None)
    return dispatcher.call("stack", [g if g is not None else zeros_like(known) for g in grads], dim)


def roll_backward(grad, shifts, dims):
    return grad.roll([-s for s in shifts], dims)


def repeat_backward(grad, repeats, sizes):
    """Sum the copies: the leading new dims summed away, then the gradient reshaped to
    (r0, s0, r1, s1, ...) (a dim repeated once keeps only s) and the r dims summed."""
    if 0 in repeats:
        return zeros(sizes, dtype=grad.dtype, device=grad.device)
    for _ in range(grad.dim() - len(sizes)):
        grad = grad.sum(0, False)
    grad_size, sum_dims = [], []
    for repeat, size in zip(repeats[len(repeats) - len(sizes):], sizes):
        if repeat != 1:
            grad_size.append(repeat)
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(size)
    return grad.reshape(grad_size).sum(sum_dims) if sum_dims else grad


def _subclass_like(*tensors):
    """``areAnyTensorSubclassLike``: a tensor subclass, or any tensor while a dispatch mode is on.
    torch's formulas then call the out-of-place variant of an operator, which a mode can trace."""
    return DispatchKey.Python in tls.included or any(DispatchKey.Python in t._impl.key_set for t in tensors)


__all__ += ["index"]


def index(self, indices):
    """C++'s ``self.index(indices)`` (``at::Tensor::index``: ``self[indices]`` with tensors), which
    index_put's formula for ``values`` calls; Python binds no such method, as torch's does not."""
    return dispatcher.call("index.Tensor", self, indices)


def index_backward(sizes, options, indices, grad):
    """The gradient summed into ``new_zeros`` where the index put it (Nones stand for whole dims:
    the operator takes them, as C++ does; the Python binding does not)."""
    dtype, device = options
    zeros_like_self = dispatcher.call("new_zeros", grad, list(sizes), dtype=dtype, layout=strided, device=device)
    # torch's out-of-place index_put where a subclass or a mode sees the call; else _index_put_impl_
    # (unsafe: the forward checked the indices), so a second derivative meets IndexPutImplBackward0
    if _subclass_like(zeros_like_self, grad):
        return dispatcher.call("index_put", zeros_like_self, indices, grad, True)
    return dispatcher.call("_index_put_impl_", zeros_like_self, indices, grad, True, True)


def index_select_backward(grad, sizes, dim, index):
    # with the gradient's options given, as torch's ``grad.new_zeros_symint(sizes, grad.options())``
    zeros_ = dispatcher.call("new_zeros", grad, list(sizes), dtype=grad.dtype, layout=grad.layout,
                             device=grad.device)
    if _subclass_like(zeros_, grad, index):
        return zeros_.index_add(dim, index, grad)
    return zeros_.index_add_(dim, index, grad)


def gather_backward(grad, sizes, dim, index):
    result = dispatcher.call("new_zeros", grad, list(sizes))
    return dispatcher.call("scatter_add" if _subclass_like(index, grad) else "scatter_add_", result, dim, index, grad)


def cummaxmin_backward(grad, self, indices, dim):
    """Each running extreme's gradient goes back to the element it was (``cummaxmin_backward``):
    a scatter_add of ``grad`` at ``indices`` into zeros; an empty input is its own gradient."""
    if self.numel() == 0:
        return self
    result = zeros(self.shape, dtype=self.dtype, device=self.device)
    if _subclass_like(indices, grad):      # a batched grad (vmap) cannot be added into plain zeros in place
        return dispatcher.call("scatter_add", result, dim, indices, grad)
    return result.scatter_add_(dim, indices, grad)


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    """(grad_self, grad_src) of ``scatter_reduce.two`` (``scatter_reduce_backward`` in
    FunctionsManual.cpp): "prod" divides the product by each factor, with a lone zero factor
    given the product of the others; "amax"/"amin" share the gradient evenly among the
    elements equal to the result; ``include_self=False`` gives the replaced elements of
    ``self`` no gradient."""
    call = dispatcher.call
    if reduce == "sum":
        grad_self, grad_src = grad, call("gather", grad, dim, index)
    elif reduce == "prod":
        grad_self, grad_src = _scatter_prod_backward(grad, self, dim, index, src, include_self, result)
    elif reduce == "mean":
        n = call("ones_like" if include_self else "zeros_like", grad)
        n = call("scatter_add", n, dim, index, call("ones_like", src))
        n = call("masked_fill.Scalar", n, call("eq.Scalar", n, 0), 1)
        grad_self = call("div.Tensor", grad, n)
        grad_src = call("div.Tensor", call("gather", grad, dim, index), call("gather", n, dim, index))
    elif reduce in ("amax", "amin"):
        value = call("gather", result, dim, index)
        self_is_result = call("eq.Tensor", self, result)
        src_is_result = call("eq.Tensor", src, value)
        n = call("scatter_add", call("_to_copy", self_is_result, dtype=self.dtype), dim, index,
                 call("_to_copy", src_is_result, dtype=self.dtype))
        shared = call("div.Tensor", grad, n)
        grad_self = call("mul.Tensor", self_is_result, shared)
        grad_src = call("mul.Tensor", src_is_result, call("gather", shared, dim, index))
    else:
        raise RuntimeError("Expected 'reduce' argument to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got "
                           f"{reduce}.")
    if not include_self:
        grad_self = call("scatter.value", grad_self, dim, index, 0)
    return grad_self, grad_src


def _scatter_prod_backward(grad, self, dim, index, src, include_self, result):
    call = dispatcher.call
    masked_self = call("masked_fill.Scalar", self, call("eq.Scalar", self, 0), 1)
    masked_self_result = call("scatter_reduce.two", masked_self, dim, index, src, "prod", include_self=include_self)
    grad_self = call("div.Tensor", call("mul.Tensor", grad, masked_self_result), masked_self)
    src_zero = call("eq.Scalar", src, 0)
    zeros = call("scatter_add", call("zeros_like", self), dim, index, call("_to_copy", src_zero, dtype=self.dtype))
    src_single_zero = call("bitwise_and.Tensor", src_zero, call("eq.Scalar", call("gather", zeros, dim, index), 1))
    masked_src = call("masked_fill.Scalar", src, src_single_zero, 1)
    masked_src_result = call("scatter_reduce.two", self, dim, index, masked_src, "prod", include_self=include_self)
    grad_src = call("where.self", src_single_zero,
                    call("gather", call("mul.Tensor", grad, masked_src_result), dim, index),
                    call("div.Tensor", call("gather", call("mul.Tensor", grad, result), dim, index),
                         call("masked_fill.Scalar", src, src_zero, 1)))
    return grad_self, grad_src


def masked_fill_backward(grad, mask):
    return where(mask, grad, 0).sum()


def masked_scatter_backward(grad, mask, sizes):
    """The source's gradient, the operator (differentiable: its own node, as torch's)."""
    return dispatcher.call("masked_scatter_backward", grad, mask, list(sizes))


def index_fill_value_backward(grad, dim, index):
    """``grad.index_select(dim, std::get<0>(at::_unique(index, /*sorted=*/false))).sum()``: each
    filled slice once, however often its index repeats."""
    unique = dispatcher.call("_unique2", index, False)[0]
    return grad.index_select(dim, unique).sum()


def block_diag_backward(grad, sizes, dtypes):
    """Each input's block of the gradient: a vector's block is a row (1, n), a scalar's (1, 1);
    an empty vector gets an empty gradient (``block_diag_backward``)."""
    grads, row, col = [], 0, 0
    for shape in sizes:
        if list(shape) == [0]:
            grads.append(zeros((0,), dtype=grad.dtype, device=grad.device))
            continue
        h, w = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0] if shape else 1)
        block = grad[row:row + h, col:col + w]
        if len(shape) == 1:
            block = block.squeeze(-1)
        elif not shape:
            block = block.squeeze(-1).squeeze(-1)
        grads.append(block)
        row, col = row + h, col + w
    return grads


def aminmax_backward(self, dim, keepdim, grad_min, grad_max, min, max):
    """amin's and amax's gradients (each spread evenly over the elements equal to the extreme),
    added where both outputs were used."""
    dims = [] if dim is None else [dim]
    parts = [amax_amin_backward(g, self, r, dims, keepdim) for g, r in ((grad_min, min), (grad_max, max))
             if g is not None]
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def logcumsumexp_backward(grad, self, result, dim):
    """``logcumsumexp_backward``: the positive and negative parts of ``grad`` in log space, each
    through a reversed logcumsumexp, so that nothing overflows."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    lowest = dispatcher.call("full", [], float(np.finfo(grad.dtype.numpy_type).min), dtype=grad.dtype,
                             device=grad.device)

    def reverse_logcumsumexp(x):
        return x.flip([dim]).logcumsumexp(dim).flip([dim])

    # log|grad| where grad is 0 is masked out below, but its derivative 1/grad is not: a
    # differentiating pass (``jacfwd`` of ``jacrev``, whose double vjp runs this formula's
    # graph backward) multiplies the mask's 0 by it and gets NaN. 1 in those places keeps
    # the values and makes that derivative 0, as torch's forward AD finds it
    log_abs_grad = where(grad != 0, grad, 1.0).abs().log()
    log_grad_positive = where(grad > 0, log_abs_grad, lowest)
    log_grad_negative = where(grad < 0, log_abs_grad, lowest)
    output_pos = (reverse_logcumsumexp(log_grad_positive - result) + self).exp()
    output_neg = (reverse_logcumsumexp(log_grad_negative - result) + self).exp()
    return output_pos - output_neg


def linalg_cross(x, y, dim):
    return dispatcher.call("linalg_cross", x, y, dim=dim)


def _euclidean_dist_backward(grad, x1, x2, res):
    """A zero subgradient where a distance is 0; else grad / dist times the difference, as two
    matrix products."""
    ratio = grad / res
    ratio.masked_fill_(res == 0, 0)
    return (x1 * ratio.sum(-1, True) - ratio.matmul(x2),
            x2 * ratio.sum(-2, False).unsqueeze(-1) - ratio.mT.matmul(x1))


def _cdist_backward(grad, x1, x2, p, cdist):
    return dispatcher.call("_cdist_backward", grad, x1, x2, p, cdist)


__all__ += ["masked_scatter_backward", "index_fill_value_backward", "block_diag_backward", "aminmax_backward",
            "logcumsumexp_backward", "linalg_cross", "_euclidean_dist_backward", "_cdist_backward"]


def masked_select_backward(grad, sizes, mask):
    """Zeros of the broadcast shape with ``grad`` scattered where the mask holds (the engine sums
    them down): ``masked_scatter_``, as torch's, so a second derivative meets MaskedScatterBackward0."""
    shape = broadcast_shapes(tuple(sizes), tuple(mask.shape))
    return zeros(shape, dtype=grad.dtype, device=grad.device).masked_scatter_(mask, grad)


def take_backward(grad, sizes, index):
    """``grad`` accumulated into zeros at the flat positions ``index`` names (``put_``, as torch's:
    a second derivative meets PutBackward0; out of place for a batched grad, which a plain zeros
    tensor cannot take in place: index_put there)."""
    if _subclass_like(grad, index):
        flat = zeros((math.prod(sizes),), dtype=grad.dtype, device=grad.device)
        return dispatcher.call("index_put", flat, [index.reshape(-1)], grad.reshape(-1), True).view(tuple(sizes))
    return zeros(tuple(sizes), dtype=grad.dtype, device=grad.device).put_(index, grad, True)


__all__ += ["cat_tensors_backward", "stack_tensors_backward", "unbind_backward", "roll_backward", "repeat_backward",
            "index_backward", "index_select_backward", "gather_backward", "masked_fill_backward",
            "masked_select_backward", "take_backward", "scatter_reduce_backward", "cummaxmin_backward"]
# ---------------------------------------------------------------------- math
__all__ += ["gelu_backward", "silu_backward", "softplus_backward", "gelu_double_backward",
            "infinitely_differentiable_silu_backward", "grad_mode_is_enabled",
            "softplus_double_backward", "clamp_backward", "clamp_backward_min_max"]


def gelu_backward(grad, self, approximate):
    return dispatcher.call("gelu_backward", grad, self, approximate=approximate)


def silu_backward(grad, self):
    return dispatcher.call("silu_backward", grad, self)


def softplus_backward(grad, self, beta, threshold):
    return dispatcher.call("softplus_backward", grad, self, beta, threshold)


def gelu_double_backward(ggI, gO, input, approximate):
    """The derivative of gelu_backward in ``self``: gelu''(x), times both incoming gradients."""
    if approximate == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        t = (k * (input + c * input.pow(3))).tanh()
        d_inner = k * (1 + 3 * c * input * input)
        d2_inner = 6 * k * c * input
        return ggI * gO * ((1 - t * t) * (d_inner + 0.5 * input * (d2_inner - 2 * t * d_inner * d_inner)))
    input_sq = input * input
    pdf = (1 / math.sqrt(2 * math.pi)) * (-0.5 * input_sq).exp()
    return ggI * gO * (2 * pdf - input_sq * pdf)


def infinitely_differentiable_silu_backward(grad_output, input):
    """silu's gradient written with differentiable operators, for a backward that records a graph
    (torch's formula picks it when grad mode is on, so silu_backward needs no formula of its own)."""
    sigmoid = input.sigmoid()
    one_minus_sigmoid = dispatcher.call("empty_like", sigmoid).fill_(1.0).sub_(sigmoid)    # C++'s 1.0 - t
    return grad_output * sigmoid * dispatcher.call("add.Scalar", input * one_minus_sigmoid, 1.0)


def grad_mode_is_enabled():
    return _grad_mode.grad_enabled


def softplus_double_backward(grad, input, beta, threshold):
    x = input * beta
    return mul_scalar(sigmoid_backward(grad, x.sigmoid()) * (x < threshold), beta)


def clamp_backward(grad, self, min, max):
    """The gradient passes where ``min <= self <= max`` (torch's ``clamp_backward``, for number
    bounds and for tensor bounds)."""
    if min is None and max is None:
        return grad
    zero = dispatcher.call("scalar_tensor", 0.0, dtype=grad.dtype, layout=strided, device=grad.device)
    if min is not None and max is not None:
        self_ge_min, self_le_max = self >= min, self <= max
        tensors = [t for t in (self, min, max) if hasattr(t, "_impl")]
        both = self_ge_min.logical_and if len(tensors) > 1 and _subclass_like(*tensors) else self_ge_min.logical_and_
        return where(both(self_le_max), grad, zero)
    return where(self >= min if min is not None else self <= max, grad, zero)


def clamp_backward_min_max(grad, self, min, max, grad_input_mask):
    """The gradients of tensor bounds (torch's ``clamp_backward_min_max``): ``min`` gets it where it
    lifted ``self``; ``max`` where it lowered ``self``, or everywhere it lies below ``min`` (clamp
    then returns ``max``). The engine sums each back to its bound's shape."""
    grad_min = grad_max = None
    if min is not None and max is not None:
        if grad_input_mask[0]:
            grad_min = where((self < min).bitwise_and(min < max), grad, 0)
        if grad_input_mask[1]:
            grad_max = where((self > max).bitwise_or(max < min), grad, 0)
    elif min is not None and grad_input_mask[0]:
        grad_min = where(self < min, grad, 0)
    elif max is not None and grad_input_mask[1]:
        grad_max = where(self > max, grad, 0)
    return grad_min, grad_max


__all__ += ["var_backward", "std_backward", "var_mean_backward", "std_mean_backward", "logsumexp_backward",
            "linalg_vector_norm_backward"]


def _all_dims(dims, ndim):
    return list(range(ndim)) if dims is None or (not isinstance(dims, int) and len(dims) == 0) else dims


def var_backward(grad, self, dims, correction, keepdim):
    """d var / dx = 2 (x - mean) / (N - correction); C++'s 2 / 0 is inf, and a full reduction
    with no degrees of freedom left is NaN where x is its mean, inf elsewhere (as torch's)."""
    full = _all_dims(dims, self.dim()) is not dims or not self.dim()
    dims = _all_dims(dims, self.dim())
    dims = [dims] if isinstance(dims, int) else dims
    n = 1
    for d in dims:
        n *= self.shape[d] if self.dim() else 1
    dof = n - (1 if correction is None else correction)
    if full and dof <= 0:
        return grad * where(self == self.mean(), math.nan, math.inf)
    if not full and not keepdim:
        grad = unsqueeze_multiple(grad, dims, keepdim, self.dim())
    centered = self - (self.mean() if full else self.mean(dims, keepdim=True))   # C++: the right operand first
    return mul_scalar(grad, 2.0 / dof if dof else math.inf) * centered


def std_backward(result, grad, self, dims, correction, keepdim):
    """std = sqrt(var): the var gradient scaled by 1 / (2 std); 0 where std is 0, as torch."""
    grad_var = dispatcher.call("masked_fill_.Scalar", grad / mul_scalar(result, 2), result == 0, 0)
    return var_backward(grad_var, self, dims, correction, keepdim)


def var_mean_backward(grad_var, grad_mean, self, dims, correction, keepdim):
    """var_mean's one node (torch's ``var_mean_backward``): the sum of the two outputs' gradients."""
    grad_self = None if grad_var is None else var_backward(grad_var, self, dims, correction, keepdim)
    return _stat_mean_backward(grad_self, grad_mean, self, dims, keepdim)


def std_mean_backward(grad_std, grad_mean, self, std, dims, correction, keepdim):
    """std_mean's one node (torch's ``std_mean_backward``)."""
    grad_self = None if grad_std is None else std_backward(std, grad_std, self, dims, correction, keepdim)
    return _stat_mean_backward(grad_self, grad_mean, self, dims, keepdim)


def _stat_mean_backward(grad_self, grad_mean, self, dims, keepdim):
    if grad_mean is None:
        return grad_self
    grad = mean_backward(grad_mean, self.shape, dims, self.numel(), keepdim)
    return grad if grad_self is None else grad_self + grad


def logsumexp_backward(grad, self, result, dims, keepdim):
    """d/dx log sum exp(x) = softmax(x) = exp(x - result)."""
    grad = unsqueeze_multiple(grad, dims, keepdim, self.dim())
    result = unsqueeze_multiple(result, dims, keepdim, self.dim())
    return grad * (self - result).exp()


def linalg_vector_norm_backward(grad, self, ord, result, dims, keepdim):
    """torch's ``norm_backward``: sign(x) |x|^(p-1) / ||x||^(p-1); for inf, shared among the
    elements that reach the max; 0 where the norm is 0; none at all for p = 0 (None, torch's
    undefined tensor). ``dim=None`` reduced every dim but restores none: the 0-d norm broadcasts."""
    dims = [] if dims is None else [dims] if isinstance(dims, int) else dims
    if not keepdim and self.dim() != 0:
        grad = unsqueeze_multiple(grad, dims, False, self.dim()) if dims else grad
        result = unsqueeze_multiple(result, dims, False, self.dim()) if dims else result
    if ord == 0:
        return None          # torch returns an undefined tensor: no gradient reaches the input
    if ord == 1:
        return self.sgn() * grad
    if ord == 2:
        return grad * (self / result).masked_fill_(result == 0, 0)
    if math.isinf(ord):
        self_abs = self.abs()
        mask = self_abs.eq(result).logical_or(self_abs.isnan())
        return self.sgn() * ((grad / mask.sum(dims, True)) * mask)
    if ord < 1:
        self_scaled = self.sgn() * self.abs().pow_(ord - 1).masked_fill_(self == 0, 0)
        return self_scaled * grad * result.pow(1 - ord)
    self_scaled = self.sgn() * self.abs().pow_(ord - 1) if ord < 2 else self * self.abs().pow_(ord - 2)
    scale_v = grad / result.pow(ord - 1)
    scale_v.masked_fill_(result == 0, 0)
    return self_scaled * scale_v


__all__ += ["renorm_backward"]


def renorm_backward(grad, self, p, dim, maxnorm):
    """``renorm_backward``: where a slice's norm exceeded maxnorm its output was self times
    ``maxnorm / (norm + 1e-7)``, so the gradient is that factor times grad less the factor's
    derivative (through the norm's) times the slice's ``<self, grad>``; elsewhere grad itself."""
    dim = dim % self.dim()
    reduce_dims = [d for d in range(self.dim()) if d != dim]
    norm = dispatcher.call("linalg_vector_norm", self, p, reduce_dims, True)
    inner = self.conj() * grad
    inner = (inner.real if inner.dtype.is_complex else inner).sum(reduce_dims, keepdim=True)
    norm_grad = linalg_vector_norm_backward(inner, self, p, norm, reduce_dims, True)
    invnorm = (norm + 1e-7).reciprocal()
    factor = invnorm * maxnorm
    return dispatcher.call("where.self", norm > maxnorm, factor * grad - (maxnorm * invnorm * invnorm) * norm_grad,
                           grad)


__all__ += ["sort_backward"]


def sort_backward(grad, dim, indices, sizes):
    """sort/topk: output j along ``dim`` came from input ``indices[j]``; each input element
    sums the gradients of the outputs taken from it (a scatter, written as a one-hot product)."""
    if not sizes:
        return grad.reshape(())
    dim = dim % len(sizes)
    g, i = grad.movedim(dim, -1), indices.movedim(dim, -1)
    positions = arange(sizes[dim], device=grad.device).unsqueeze(-1)
    hits = i.unsqueeze(-2) == positions                     # (..., n, k)
    return (g.unsqueeze(-2) * hits).sum(-1).movedim(-1, dim)


__all__ += ["cumsum_backward", "cumprod_backward"]


def cumsum_backward(grad, dim):
    """Input i feeds outputs i.. n-1: the cumulative sum taken from the end (``reversed_cumsum``)."""
    if grad.numel() <= 1 or grad.shape[dim] == 1:
        return grad
    return grad.flip(dim).cumsum(dim).flip(dim)


def cumprod_backward(grad, self, dim, result):
    """d result_j / d x_k = prod_{i <= j, i != k} x_i for j >= k (torch's ``cumprod_backward`` in
    FunctionsManual.cpp, its three paths kept). Without zeros that is result_j / x_k, summed from
    the end. With a zero and no graph to record, masks split each slice at its first two zeros:
    inputs before the first keep that form, the first zero gets the products that skip it, the rest
    0. With a graph to record (a second derivative), the O(n^2) form below differentiates again.
    Complex inputs are conjugated: cumprod is holomorphic."""
    if self.numel() <= 1:
        return grad
    dim = dim % self.dim()
    size = self.shape[dim]
    if size == 1:
        return grad
    self_conj, result_conj = self.conj(), result.conj()
    w = result_conj * grad
    is_zero = self == 0
    # a tensor subclass (a batched value under vmap) cannot be asked whether it holds a zero:
    # torch's formula takes the quadratic path, which needs no such question
    subclass = _subclass_like(self, grad, result)
    if not subclass and not is_zero.any().item():
        return w.flip(dim).cumsum(dim).flip(dim).div(self_conj)
    if not subclass and not _grad_mode.grad_enabled:
        grad_input = dispatcher.call("zeros", list(self.shape), dtype=grad.dtype, device=grad.device)
        zeros_so_far = is_zero.cumsum(dim)
        mask = zeros_so_far == 0                                  # before the first zero
        before = w.masked_fill(~mask, 0.).flip(dim).cumsum(dim).flip(dim).div_(self_conj)
        grad_input.masked_scatter_(mask, before.masked_select(mask))
        mask = zeros_so_far == 1                                  # from the first zero to the second
        first_zero_index = mask.max(dim, keepdim=True)[1]
        first_zero = zeros_like(mask).scatter_(dim, first_zero_index, 1).logical_and_(mask)
        mask &= ~first_zero
        # the product before the first zero (1 where it opens the slice) times the sum of the
        # gradients weighted by the products after it
        before_zero = result_conj.gather(dim, (first_zero_index - 1).relu_()).masked_fill_(first_zero_index == 0, 1.)
        at_zero = (self_conj.masked_fill(~mask, 1.).cumprod(dim).mul_(grad.masked_fill(zeros_so_far != 1, 0.))
                   .sum(dim, keepdim=True).mul_(before_zero))
        grad_input.masked_scatter_(first_zero, at_zero.masked_select(first_zero))
        return grad_input
    grad_input = dispatcher.call("zeros", list(self.shape), dtype=grad.dtype, device=grad.device)
    ones_size = list(self.shape)
    ones_size[dim] = 1
    ones = dispatcher.call("ones", [1], dtype=grad.dtype, layout=strided, device=grad.device).expand(ones_size)
    columns = []
    for k in range(size):
        # the products of x_0..x_j that leave x_k out, for j = k..size-1
        if k == 0:
            omitted = dispatcher.call("cat", [ones, self_conj.narrow(dim, 1, size - 1).cumprod(dim)], dim)
        elif k == size - 1:
            omitted = self_conj.narrow(dim, 0, k).prod(dim, keepdim=True)
        else:
            until_k = self_conj.narrow(dim, 0, k).prod(dim, keepdim=True)
            from_k_plus_1 = self_conj.narrow(dim, k + 1, size - k - 1).cumprod(dim)
            omitted = dispatcher.call("cat", [until_k, until_k.expand_as(from_k_plus_1) * from_k_plus_1], dim)
        columns.append((grad.narrow(dim, k, size - k) * omitted).sum(dim))
        if not subclass:
            grad_input.select(dim, k).copy_(columns[-1])
    # a batched column is not copied into plain zeros: the columns are stacked instead
    return dispatcher.call("stack", columns, dim) if subclass else grad_input


# ---------------------------------------------------------------------- layers
# The layers' backward passes are operators of their own, as in torch (convolution_backward, ...):
# a formula calls them through the dispatcher, so a dispatch mode sees the op torch's would. Their
# own derivatives (the double backward) follow below.
def convolution_backward(*args):
    return dispatcher.call("convolution_backward", *args)


def max_pool2d_with_indices_backward(*args):
    return dispatcher.call("max_pool2d_with_indices_backward", *args)


# The average poolings' backward operators have derivatives (pooling is linear in its input).
__all__ += ["avg_pool2d", "avg_pool2d_backward", "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward"]


def avg_pool2d(*args):
    return dispatcher.call("avg_pool2d", *args)


def avg_pool2d_backward(*args):
    return dispatcher.call("avg_pool2d_backward", *args)


__all__ += ["avg_pool3d", "avg_pool3d_backward"]


def avg_pool3d(*args):
    return dispatcher.call("avg_pool3d", *args)


def avg_pool3d_backward(*args):
    return dispatcher.call("avg_pool3d_backward", *args)


__all__ += ["_adaptive_avg_pool3d", "_adaptive_avg_pool3d_backward"]


def _adaptive_avg_pool3d(grad, output_size):
    return dispatcher.call("_adaptive_avg_pool3d", grad, list(output_size))


def _adaptive_avg_pool3d_backward(*args):
    return dispatcher.call("_adaptive_avg_pool3d_backward", *args)


__all__ += ["max_pool3d_with_indices_backward", "adaptive_max_pool3d_backward"]


def max_pool3d_with_indices_backward(*args):
    return dispatcher.call("max_pool3d_with_indices_backward", *args)


def adaptive_max_pool3d_backward(grad, self, indices):
    return dispatcher.call("adaptive_max_pool3d_backward", grad, self, indices)


def _adaptive_avg_pool2d(grad, output_size):
    return dispatcher.call("_adaptive_avg_pool2d", grad, list(output_size))


def _adaptive_avg_pool2d_backward(*args):
    return dispatcher.call("_adaptive_avg_pool2d_backward", *args)


__all__ += ["constant_pad_nd_backward"]


def constant_pad_nd_backward(grad, pad):
    """The padding undone: the same pads, negated (they crop)."""
    return dispatcher.call("constant_pad_nd", grad, [-p for p in pad], 0)


def _call_as(name):
    """A formula's helper that only calls the operator ``name`` through the dispatcher."""
    def helper(*args):
        return dispatcher.call(name, *args)
    helper.__name__ = helper.__qualname__ = name
    return helper


# The reflection and replication paddings and their backward operators (both linear): each
# formula calls the other operator.
__all__ += ["reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d", "replication_pad2d",
            "replication_pad3d", "reflection_pad1d_backward", "reflection_pad2d_backward", "reflection_pad3d_backward",
            "replication_pad1d_backward", "replication_pad2d_backward", "replication_pad3d_backward"]
reflection_pad1d, reflection_pad1d_backward = _call_as("reflection_pad1d"), _call_as("reflection_pad1d_backward")
reflection_pad2d, reflection_pad2d_backward = _call_as("reflection_pad2d"), _call_as("reflection_pad2d_backward")
reflection_pad3d, reflection_pad3d_backward = _call_as("reflection_pad3d"), _call_as("reflection_pad3d_backward")
replication_pad1d, replication_pad1d_backward = _call_as("replication_pad1d"), _call_as("replication_pad1d_backward")
replication_pad2d, replication_pad2d_backward = _call_as("replication_pad2d"), _call_as("replication_pad2d_backward")
replication_pad3d, replication_pad3d_backward = _call_as("replication_pad3d"), _call_as("replication_pad3d_backward")


# The fused attention's backward operator: the formula lists its arguments in order, but the
# mask and the scale are keyword-only in the schema.
__all__ += ["_scaled_dot_product_flash_attention_for_cpu_backward"]


def _scaled_dot_product_flash_attention_for_cpu_backward(grad, query, key, value, output, logsumexp, dropout_p,
                                                         is_causal, attn_mask, scale):
    return dispatcher.call("_scaled_dot_product_flash_attention_for_cpu_backward", grad, query, key, value, output,
                           logsumexp, dropout_p, is_causal, attn_mask=attn_mask, scale=scale)


def native_batch_norm_backward(*args):
    return dispatcher.call("native_batch_norm_backward", *args)


def native_layer_norm_backward(*args):
    return dispatcher.call("native_layer_norm_backward", *args)


def embedding_dense_backward(*args):
    return dispatcher.call("embedding_dense_backward", *args)


def embedding_backward(*args):
    return dispatcher.call("embedding_backward", *args)


# ---- the layers' double backward (FunctionsManual.cpp's _convolution_double_backward,
# layer_norm_double_backward, batchnorm_double_backward, and the pooling and embedding ones).
# Each backward operator is linear in its incoming gradient, so its derivative in that gradient is
# the forward operator again; the normalizations' also depend on the input through the statistics.
__all__ += ["undefined_gradient", "_convolution_double_backward", "max_pool_double_backward",
            "embedding_dense_double_backward", "layer_norm_double_backward", "batchnorm_double_backward"]


def undefined_gradient():
    """torch's ``Tensor()`` formula: an input the function does not depend on gets no gradient."""
    return None


def _add(a, b):
    """a + b where either gradient may be missing (None)."""
    return b if a is None else a if b is None else a + b


def _convolution_double_backward(ggI, ggW, ggb, gO, weight, input, stride, padding, dilation, transposed,
                                 output_padding, groups, grad_input_mask):
    """convolution_backward is bilinear: grad_input in (gO, weight), grad_weight in (gO, input).
    So its gradient in gO is the convolution of ggI and of ggW (plus ggb broadcast as a bias),
    in input the grad_input of a convolution by ggW, in weight the grad_weight of ggI's."""
    conv = (stride, padding, dilation, transposed, output_padding, groups)
    ggO = gI = gW = None
    if grad_input_mask[0]:
        if ggI is not None:
            ggO = dispatcher.call("convolution", ggI, weight, None, *conv)
        if ggW is not None:
            ggO = _add(ggO, dispatcher.call("convolution", input, ggW, None, *conv))
        if ggb is not None:
            bias_shape = [1, ggb.shape[0]] + [1] * (gO.dim() - 2)
            ggO = _add(ggO, ggb.reshape(bias_shape).expand(gO.shape))
    # an empty input (torch's empty backend) gets neither: no gradient at all, not zeros
    if grad_input_mask[1] and ggW is not None and input.numel() != 0:
        gI = _input_double_backward(gO, ggW, input, stride, padding, dilation, transposed, groups)
    if grad_input_mask[2] and ggI is not None and input.numel() != 0:
        gW = dispatcher.call("convolution_backward", gO, ggI, weight, None, *conv, [False, True, False])[1]
        gW = _in_double_backward_layout(gW, gO, ggI, stride, padding, dilation, transposed)
    return _zeros_if_missing(ggO, gO, grad_input_mask[0]), gI, gW


def _input_double_backward(gO, ggW, input, stride, padding, dilation, transposed, groups):
    """The input's gradient, as torch writes it: the convolution of gO by ggW in the other
    direction (a transposed convolution undoes a convolution, and the reverse), whose weight
    layout is the same tensor; a transposed one gets the output padding that gives back the
    input's size. A convolution node (ConvolutionBackward0), as in torch's graph."""
    output_padding = [0] * len(stride)
    if not transposed:
        k = ggW.shape[2:]
        output_padding = [input.shape[i + 2] - ((gO.shape[i + 2] - 1) * stride[i] - 2 * padding[i]
                                                 + dilation[i] * (k[i] - 1) + 1) for i in range(len(stride))]
    gI = dispatcher.call("convolution", gO, ggW, None, stride, padding, dilation, not transposed, output_padding,
                         groups)
    # a transposed convolution's output padding adds rows no input reaches: the plain convolution
    # back over them is longer than the input, and those rows are dropped
    for dim in range(2, gI.dim()):
        if gI.shape[dim] != input.shape[dim]:
            gI = gI.narrow(dim, 0, input.shape[dim])
    return gI


def _in_double_backward_layout(gW, gO, ggI, stride, padding, dilation, transposed):
    """``gW`` laid out as torch's double backward leaves it: torch convolves the batch-transposed
    ggI with gO (stride and dilation swapped), which gives the weight's two channel dims swapped
    and each kernel dim possibly longer, then transposes and narrows that result."""
    source, kernel = (gO, ggI) if transposed else (ggI, gO)
    spatial = [(source.shape[i + 2] + 2 * padding[i] - stride[i] * (kernel.shape[i + 2] - 1) - 1) // dilation[i] + 1
               for i in range(gW.dim() - 2)]
    if any(k < w for k, w in zip(spatial, gW.shape[2:])):
        return gW
    if list(spatial) == list(gW.shape[2:]):     # no narrowing: a transpose of a contiguous tensor, as torch's
        swapped = dispatcher.call("clone", dispatcher.call("transpose.int", gW, 0, 1), memory_format=contiguous_format)
        return dispatcher.call("transpose.int", swapped, 0, 1)
    # the longer result: gW's channel dims swapped, zero-padded at the end of each kernel dim (a
    # contiguous tensor), transposed back and narrowed; the graph ends with torch's SliceBackward0
    pad = []
    for extent, size in zip(reversed(spatial), reversed(gW.shape[2:])):
        pad += [0, extent - size]
    longer = dispatcher.call("constant_pad_nd", dispatcher.call("transpose.int", gW, 0, 1), pad, 0)
    laid_out = dispatcher.call("transpose.int", longer, 0, 1)
    for i, size in enumerate(gW.shape[2:]):
        laid_out = dispatcher.call("narrow", laid_out, i + 2, 0, size)
    return laid_out


def _zeros_if_missing(ggO, gO, needed):
    """A needed gradient that no incoming gradient reached is zero, as torch's is."""
    return zeros_like(gO) if needed and ggO is None else ggO


def max_pool_double_backward(grad, indices, dim):
    """max pooling's backward scatters each output gradient to its argmax; its derivative
    gathers from the same places. ``indices`` index the last ``dim`` dimensions flattened."""
    flat = grad.flatten(-dim)
    return flat.gather(-1, indices.flatten(-dim)).view(indices.shape)


def embedding_dense_double_backward(grad, indices, padding_idx):
    """embedding's backward sums rows into the weight's; its derivative picks the rows out again
    (the padding row gets none). As torch's, scale_grad_by_freq is not applied here."""
    rows = grad.index_select(0, indices.reshape(-1)).view(list(indices.shape) + [grad.shape[-1]])
    if padding_idx >= 0:
        rows = rows.masked_fill((indices == padding_idx).unsqueeze(-1), 0)
    return rows


def _projected(t, xhat, dims):
    """t − mean(t) − x̂·mean(t·x̂) over ``dims``: what a normalization's backward does to g."""
    return t - t.mean(dims, keepdim=True) - xhat * (t * xhat).mean(dims, keepdim=True)


def _normalized_input_double_backward(xhat, rstd, g, ggI, ggW_term, dims):
    """The input's gradient of L = <ggI, rstd·P(g)> + <ggW_term, x̂>, where x̂ = (x − μ)·rstd and
    P is ``_projected``. Through x̂ (r held): a = ∂L/∂x̂, mapped back as rstd·P(a); through rstd:
    ∂rstd/∂x = −rstd²·x̂/n, times ∂L/∂rstd = <ggI, P(g)>."""
    a = ggW_term
    if ggI is not None:
        a_ggI = -rstd * (ggI * (g * xhat).mean(dims, keepdim=True) + g * (ggI * xhat).mean(dims, keepdim=True))
        a = _add(a, a_ggI)
    if a is None:
        return None
    grad_input = rstd * _projected(a, xhat, dims)
    if ggI is not None:
        # the rstd term first, a product of x̂ (the input's layout, which torch's result keeps
        # when ggI is given), and the sum last (torch's node: AddBackward0)
        through_rstd = -(rstd * rstd * (ggI * _projected(g, xhat, dims)).mean(dims, keepdim=True))
        grad_input = xhat * through_rstd + grad_input
    return grad_input


def _normalization_double_backward(x, w, ggI, ggW, ggb, gO, xhat, rstd, dims, batch_dims, grad_input_mask):
    """(input, weight, grad_out) gradients of a normalization's backward, with w and ggW already
    viewed to broadcast against x, and the statistics reduced over ``dims``."""
    g = gO if w is None else gO * w
    ggW_term = None if ggW is None else ggW * gO
    gI = _normalized_input_double_backward(xhat, rstd, g, ggI, ggW_term, dims) if grad_input_mask[0] else None
    P_ggI = None if ggI is None else rstd * _projected(ggI, xhat, dims)
    gW = None
    if grad_input_mask[1] and w is not None and P_ggI is not None:
        gW = (gO * P_ggI).sum(batch_dims) if batch_dims else gO * P_ggI    # sum over [] would sum all
    ggO = None
    if grad_input_mask[2]:
        ggO = None if P_ggI is None else (P_ggI if w is None else P_ggI * w)
        ggO = _add(ggO, None if ggW is None else ggW * xhat)
        ggO = _add(ggO, ggb)
    ggO = None if ggO is None else ggO.expand(gO.shape)
    return _zeros_if_missing(gI, x, grad_input_mask[0]), gW, _zeros_if_missing(ggO, gO, grad_input_mask[2])


def layer_norm_double_backward(input, weight, ggI, ggW, ggb, gO, mean, rstd, normalized_shape, grad_input_mask):
    """The statistics are per row of the input seen as (M, N), N the normalized dims' size. As
    torch's formula, this works on that (M, N) reshape (a copy where no view can show it: the
    results are then contiguous) and reshapes the results back (their node: ViewBackward0)."""
    k = len(normalized_shape)
    M, N = math.prod(input.shape[:input.dim() - k]), math.prod(input.shape[input.dim() - k:])

    def rows(t, width=N):
        return None if t is None else t.reshape(M, width)

    def row(t):
        return None if t is None else t.reshape(1, N)

    x, mean, rstd = rows(input), rows(mean, 1), rows(rstd, 1)
    xhat = (x - mean) * rstd
    gI, gW, ggO = _normalization_double_backward(x, row(weight), rows(ggI), row(ggW), row(ggb), rows(gO), xhat, rstd,
                                                 [1], [0], grad_input_mask)
    # the weight's gradient summed over the rows, viewed as normalized_shape
    return (None if gI is None else gI.reshape(input.shape), None if gW is None else gW.view(list(normalized_shape)),
            None if ggO is None else ggO.reshape(gO.shape))


def batchnorm_double_backward(input, weight, ggI, ggW, ggb, gO, running_mean, running_var, train, eps,
                              save_mean, save_invstd, grad_input_mask):
    """The statistics are per channel (dimension 1), over every other dimension. In evaluation
    the running statistics are constants: x̂ is linear in x and grad_input does not involve it."""
    dims = [d for d in range(input.dim()) if d != 1]
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    w = None if weight is None else weight.view(shape)
    ggW_v = None if ggW is None else ggW.view(shape)
    ggb_v = None if ggb is None else ggb.view(shape)
    if train:
        mean, rstd = save_mean.view(shape), save_invstd.view(shape)
        xhat = (input - mean) * rstd
        # with ggI and no ggW torch's grad_input is γ (ones when there is no weight) times the
        # ggI terms, so its node is MulBackward0; with ggW it ends in an in-place add
        scaled = grad_input_mask[0] and ggI is not None and ggW_v is None
        mask = [False, *grad_input_mask[1:]] if scaled else grad_input_mask
        gI, gW, ggO = _normalization_double_backward(input, w, ggI, ggW_v, ggb_v, gO, xhat, rstd, dims, dims, mask)
        if scaled:
            gamma = w if w is not None else dispatcher.call("ones", [], dtype=input.dtype, device=input.device)
            gI = gamma * _normalized_input_double_backward(xhat, rstd, gO, ggI, None, dims)
        return gI, gW, ggO
    rstd = (running_var.view(shape) + eps).rsqrt()
    xhat = (input - running_mean.view(shape)) * rstd
    # ggW expanded to the input's shape first, as torch's formula does (expand_as_dim1): the
    # product then follows the expanded operand's (contiguous) layout, not gO's channels-last one
    gI = (ggW_v.expand(input.shape) * rstd) * gO if grad_input_mask[0] and ggW_v is not None else None
    gW = (ggI * gO * rstd).sum(dims) if grad_input_mask[1] and w is not None and ggI is not None else None
    ggO = None
    if grad_input_mask[2]:
        ggO = None if ggI is None else ggI * rstd * (1 if w is None else w)
        ggO = _add(_add(ggO, None if ggW_v is None else ggW_v * xhat), ggb_v)
        ggO = None if ggO is None else ggO.expand(gO.shape)
    # gI stays undefined without ggW: in evaluation the first backward does not read the input,
    # so torch's formula gives no gradient there, and autograd.grad(..., allow_unused=True)
    # returns None for it, not zeros.
    return gI, gW, _zeros_if_missing(ggO, gO, grad_input_mask[2])


# ---- the everyday pointwise operators' helpers, as FunctionsManual.cpp's
__all__ += ["atan2_backward", "copysign_tensor_self_backward", "deg2rad_backward", "rad2deg_backward",
            "logit_backward", "infinitely_differentiable_logit_backward", "log_sigmoid_backward",
            "log_sigmoid_double_backward", "clamp_bound_backward"]
_M_PI_180, _M_180_PI = 0.017453292519943295, 57.29577951308232


def atan2_backward(grad, self, other, grad_input_mask):
    """d atan2(y, x) = (x dy - y dx) / (x^2 + y^2), and 0 where x^2 + y^2 is 0 (at the origin, or
    where the squares underflow), as torch's: 0 times the infinite reciprocal would be NaN."""
    denominator = self * self + other * other
    recip = denominator.reciprocal().masked_fill(denominator == 0, 0)
    return (grad * other * recip if grad_input_mask[0] else None,
            grad * -self * recip if grad_input_mask[1] else None)


def copysign_tensor_self_backward(grad, self, result):
    """+-grad by whether the sign changed; 0 where self is 0."""
    ratio = result / self
    ratio.masked_fill_(self == 0, 0)
    return grad * ratio


def deg2rad_backward(grad):
    return mul_scalar(grad, _M_PI_180)        # C++'s grad * M_PI_180: mul.Scalar (MulBackward1)


def rad2deg_backward(grad):
    return mul_scalar(grad, _M_180_PI)


def logit_backward(grad, self, eps):
    return dispatcher.call("logit_backward", grad, self, eps)


def infinitely_differentiable_logit_backward(grad, self, eps):
    """grad / (x (1 - x)) where x lies in [eps, 1 - eps] (in [0, 1] with no eps), else 0 (NaN)."""
    lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    outside = math.nan if eps is None else 0.0
    fill = dispatcher.call("scalar_tensor", outside, dtype=self.dtype, layout=strided, device=self.device)
    return where((self >= lo).logical_and(self <= hi), grad / (self * (1.0 - self)), fill)


def log_sigmoid_backward(grad, self, buffer):
    return dispatcher.call("log_sigmoid_backward", grad, self, buffer)


def log_sigmoid_double_backward(grad, input):
    z = input.sigmoid()
    return grad * (z - 1) * z


def clamp_bound_backward(grad, self, bound, is_min):
    """A tensor bound's gradient: grad where the bound won (self below min, above max), else 0."""
    return where(self < bound if is_min else self > bound, grad, _scalar_zero(grad))


# ---- sinc's gradient (FunctionsManual.cpp's sinc_backward)
__all__ += ["sinc_backward"]


def sinc_backward(grad, self):
    """(pi x cos(pi x) - sin(pi x)) / (pi x^2), and 0 where pi x^2 is 0 (sinc's flat top)."""
    # As torch's compiled C++ evaluates it, node for node: ``self * M_PI`` is mul.Scalar; grad
    # multiplies the whole quotient; and GCC evaluates the operands of ``a - b`` right to left, so
    # sin's node is made before the product's. The order matters to a second derivative: nodes
    # made later run first in backward, and near 0 the three terms reaching ``self_pi`` cancel
    # (+1/den, a term of about pi, -1/den) to 0 in that order only (-pi^2 in the other).
    self_pi = mul_scalar(self, math.pi)
    self_squared_pi = mul_scalar(self * self, math.pi)
    sin = self_pi.sin()
    out = grad * conj(((self_pi * self_pi.cos()) - sin) / self_squared_pi)
    return where(self_squared_pi == 0.0, dispatcher.call("zeros", [], dtype=grad.dtype, device=grad.device), out)


# ---- the modified Bessel functions' gradients (FunctionsManual.cpp's i1_backward, i1e_backward)
__all__ += ["special_i1", "special_i1e", "i1_backward", "i1e_backward"]


def special_i1(x):
    return dispatcher.call("special_i1", x)


def special_i1e(x):
    return dispatcher.call("special_i1e", x)


def _bessel_safe_input(self, name):
    """x where |x| exceeds the dtype's epsilon, epsilon elsewhere (so the 1 / x below stays
    finite), and the mask; float32 and float64 only, as torch's ``AT_DISPATCH_FLOATING_TYPES``."""
    if self.dtype.torch_name not in ("Float", "Double"):
        raise NotImplementedError(f'"{name}" not implemented for \'{self.dtype.torch_name}\'')
    eps = float(np.finfo(self.dtype.numpy_type).eps)
    not_tiny = self.abs() > eps
    safe = where(not_tiny, self, dispatcher.call("full", [], eps, dtype=self.dtype, device=self.device))
    return safe, not_tiny


def _bessel_limit_at_zero(grad, self, not_tiny, gradx):
    """I1'(0) = I1e'(0) = 1/2, which the formulas would compute as 0/0 near zero."""
    half = dispatcher.call("full", [], 0.5, dtype=self.dtype, device=self.device)
    return grad * where(not_tiny, gradx, half)


def i1_backward(grad, self, result):
    """I1'(x) = I0(x) - I1(x) / x."""
    safe, not_tiny = _bessel_safe_input(self, "i1_backward")
    return _bessel_limit_at_zero(grad, self, not_tiny, safe.i0() - result * safe.reciprocal())


def i1e_backward(grad, self, result):
    """(e^-|x| I1(x))' = I0e(x) - I1e(x) (sgn(x) + 1 / x)."""
    safe, not_tiny = _bessel_safe_input(self, "i1e_backward")
    gradx = dispatcher.call("special_i0e", safe) - result * (safe.sgn() + safe.reciprocal())
    return _bessel_limit_at_zero(grad, self, not_tiny, gradx)


# ---- polygamma's and mvlgamma's gradients (FunctionsManual.cpp's mvlgamma_backward)
__all__ += ["polygamma", "mvlgamma_backward"]


def polygamma(n, x):
    return dispatcher.call("polygamma", n, x)


def mvlgamma_backward(grad, self, p):
    """grad times the sum over i < p of digamma(x - i / 2), the arange in x's dtype."""
    args = dispatcher.call("arange.start_step", -p / 2.0 + 0.5, 0.5, 0.5, dtype=self.dtype, device=self.device)
    args = dispatcher.call("add.Tensor", args, dispatcher.call("unsqueeze", self, -1))
    return grad * dispatcher.call("sum.dim_IntList", dispatcher.call("digamma_", args), [-1])


# ---- torch.special's binary functions, as the formulas call them (at::special_xlog1py, at::special_zeta):
# a number operand wrapped by the Scalar overloads
__all__ += ["special_xlog1py", "special_zeta"]


def _special_binary(name, a, b):
    if not isinstance(a, TensorBase):
        return dispatcher.call(f"{name}.self_scalar", a, b)
    if not isinstance(b, TensorBase):
        return dispatcher.call(f"{name}.other_scalar", a, b)
    return dispatcher.call(name, a, b)


def special_xlog1py(a, b):
    return _special_binary("special_xlog1py", a, b)


def special_zeta(a, b):
    return _special_binary("special_zeta", a, b)


# ---- activations of a reader's own training script: hardtanh, elu, celu
__all__ += ["hardtanh_backward", "elu_backward", "elu_double_backward", "celu_input_scale"]


def hardtanh_backward(grad, self, min_val, max_val):
    return dispatcher.call("hardtanh_backward", grad, self, min_val, max_val)


def elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result):
    return dispatcher.call("elu_backward", grad, alpha, scale, input_scale, is_result, self_or_result)


def elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """The derivative of elu_backward in ``self_or_result``: zero where it is positive; where it is
    negative, the first derivative scaled once more by ``input_scale`` (from the result: (r + α·s)'
    = 1, so only grad · grad_output · input_scale remains)."""
    negative = self_or_result < 0       # a bool mask: multiplying by it keeps grad's dtype
    if is_result:
        return grad * grad_output * input_scale * negative
    return elu_backward(grad * grad_output * input_scale, alpha, scale, input_scale, is_result,
                        self_or_result) * negative


def celu_input_scale(alpha):
    """celu is elu with input_scale 1 / alpha, where torch divides by alpha rounded to float32."""
    return 1.0 / float(np.float32(alpha))


# ---- hardswish, mish, prelu and glu: their backward operators and second derivatives
# (FunctionsManual.cpp's infinitely_differentiable_mish_backward, glu_double_backward and
# glu_double_backward_grad_output; hardswish's and prelu's formulas in derivatives.yaml)
__all__ += ["derivative_not_implemented", "hardsigmoid_backward", "hardswish_backward",
            "hardswish_double_backward", "hardshrink_backward",
            "softshrink_backward", "mish_backward", "infinitely_differentiable_mish_backward",
            "prelu_kernel_backward", "prelu_kernel_double_backward", "glu_backward",
            "glu_double_backward", "glu_double_backward_grad_output"]


def derivative_not_implemented(name, grad):
    """An operator torch gives no derivative entry: its autograd kernel refuses with a
    RuntimeError (``not_implemented`` is for entries that exist and refuse)."""
    raise RuntimeError(f"derivative for aten::{name} is not implemented")


def hardsigmoid_backward(grad, self):
    return dispatcher.call("hardsigmoid_backward", grad, self)


def hardswish_backward(grad, self):
    return dispatcher.call("hardswish_backward", grad, self)


def hardswish_double_backward(grad, grad_output, self):
    """d/dx of grad · (x/3 + 1/2) inside (-3, 3): grad · grad_output / 3 there, 0 elsewhere."""
    inside = dispatcher.call("logical_and", self > -3.0, self < 3.0)
    return where(inside, grad * grad_output / 3.0, dispatcher.call("scalar_tensor", 0, dtype=self.dtype,
                                                                    device=self.device))


def hardshrink_backward(grad, self, lambd):
    return dispatcher.call("hardshrink_backward", grad, self, lambd)


def softshrink_backward(grad, self, lambd):
    return dispatcher.call("softshrink_backward", grad, self, lambd)


def mish_backward(grad, self):
    return dispatcher.call("mish_backward", grad, self)


def infinitely_differentiable_mish_backward(grad_output, input):
    """mish's gradient with differentiable operators, for a backward that records a graph."""
    sigmoid = input.sigmoid()
    tanh_softplus = input.exp().log1p().tanh()
    return grad_output * (tanh_softplus + input * sigmoid * (1 - tanh_softplus * tanh_softplus))


def prelu_kernel_backward(grad, self, weight):
    return dispatcher.call("_prelu_kernel_backward", grad, self, weight)


def prelu_kernel_double_backward(grads, grad_output, self, weight):
    """The three gradients of (g·[x>0] + w·g·[x≤0], x·g·[x≤0]) from the incoming pair
    (ggI, ggW), either of which may be missing; ``>= 0`` picks the positive side, as torch's."""
    ggI, ggW = grads
    positive = self >= 0
    zero = dispatcher.call("scalar_tensor", 0, dtype=grad_output.dtype, layout=strided, device=grad_output.device)
    if ggI is None:
        g_out = where(positive, zero, ggW * self)
    else:
        negative_side = ggI * weight if ggW is None else ggI * weight + ggW * self
        g_out = where(positive, ggI, negative_side)
    g_self = zeros_like(self) if ggW is None else where(positive, zero, grad_output * ggW)
    g_weight = zeros_like(self) if ggI is None else where(positive, zero, grad_output * ggI)
    return g_out, g_self, g_weight


def glu_backward(grad, self, dim):
    return dispatcher.call("glu_backward", grad, self, dim)


def _glu_parts(t, dim, n):
    return dispatcher.call("narrow", t, dim, 0, n), dispatcher.call("narrow", t, dim, n, n)


def glu_double_backward(grad, grad_output, input, dim):
    """With s = σ(b) and s' = s(1 - s): the input gradient of (s·gO, s'·a·gO) along the
    incoming (gga, ggb): for a, ggb·gO·s'; for b, ggb·a·gO·s'' + gga·gO·s', where s'' = s'(1 - 2s)."""
    n = input.shape[dim] // 2
    a, b = _glu_parts(input, dim, n)
    gga, ggb = _glu_parts(grad, dim, n)
    s = b.sigmoid()
    one_minus_s = 1 - s
    s1 = s * one_minus_s
    s2 = s1 * one_minus_s - s * s1
    grad_a = ggb * grad_output * s1
    grad_b = ggb * a * grad_output * s2 + gga * grad_output * s1
    return dispatcher.call("cat", [grad_a, grad_b], dim)


def glu_double_backward_grad_output(grad, input, dim):
    """glu_backward is linear in grad_output: its gradient there is glu_backward of ones,
    times ``grad``, the two halves summed."""
    dim = dim + input.dim() if dim < 0 else dim
    sizes = list(input.shape)
    sizes[dim] //= 2
    ones = dispatcher.call("ones", sizes, dtype=input.dtype, layout=strided, device=input.device)
    both = grad * glu_backward(ones, input, dim)
    first, second = _glu_parts(both, dim, sizes[dim])
    return first + second


# ---- group norm's gradients (FunctionsManual.cpp's infinitely_differentiable_native_group_norm_backward)
__all__ += ["native_group_norm_backward", "infinitely_differentiable_native_group_norm_backward"]


def native_group_norm_backward(*args):
    return dispatcher.call("native_group_norm_backward", *args)


def infinitely_differentiable_native_group_norm_backward(dY, dmean, drstd, input, mean, rstd, weight, N, C,
                                                         HxW, group, eps, mask):
    """torch's composite gradient (FunctionsManual.cpp), written with differentiable operators over
    the saved mean and rstd, so a second backward reaches them and comes back here with their
    gradients. Those count only together: torch adds var_mean's gradient when both are defined."""
    D = C // group
    x = input.reshape(N, group, D, HxW)
    mean, rstd = mean.reshape(N, group, 1, 1), rstd.reshape(N, group, 1, 1)
    grad_input = None
    if mask[0]:
        both = dmean is not None and drstd is not None
        stats = _group_norm_statistics_grad(dmean, drstd, x, rstd, N, group) if both else None
        if dY is not None:
            grad_input = _group_norm_output_grad(dY.reshape(N, group, D, HxW), x, mean, rstd, weight, group, D, HxW)
            grad_input = grad_input if stats is None else grad_input + stats
        else:
            grad_input = stats
    grad_weight = grad_bias = None
    if dY is not None:
        grad_weight, grad_bias = _group_norm_affine_grads(dY, input, mean, rstd, N, C, HxW, group, mask, weight)
    return None if grad_input is None else grad_input.reshape_as(input), grad_weight, grad_bias


def _group_norm_output_grad(dy, x, mean, rstd, weight, group, D, HxW):
    """dX from dY: a·dY + b·X + c per group, a = rstd·γ and b, c from the sums of dY·γ and dY·X·γ."""
    s = 1.0 / (D * HxW)
    ds, db = (dy * x).sum(3).unsqueeze(-1), dy.sum(3).unsqueeze(-1)
    gamma = None if weight is None else weight.reshape(1, group, D, 1)
    a = rstd if gamma is None else rstd * gamma
    b = (ds.sum(2) if gamma is None else (ds * gamma).sum(2)).unsqueeze(-2)
    c = (db.sum(2) if gamma is None else (db * gamma).sum(2)).unsqueeze(-2)
    rstd_cube = rstd * rstd * rstd
    b = (c * mean - b) * rstd_cube * s
    c = -b * mean - c * rstd * s
    return a * dy + b * x + c


def _group_norm_statistics_grad(dmean, drstd, x, rstd, N, group):
    """The mean and rstd outputs' gradients: rstd = (var + eps)^-1/2, so dvar = -rstd³/2 · drstd."""
    dvar = -0.5 * (rstd * rstd * rstd) * drstd.view(N, group, 1, 1)
    return var_mean_backward(dvar, dmean.view(N, group, 1, 1), x, [2, 3], 0, True)


def _group_norm_affine_grads(dY, input, mean, rstd, N, C, HxW, group, mask, weight):
    """Weight and bias gradients from per-group sums of dY and dY·x, as torch's formula builds
    them (each ends in a reshape to (C,), so its node is a ViewBackward0 as in torch)."""
    dy = dY.reshape(N, group, C // group, HxW)
    db = dy.sum(3).unsqueeze(-1)
    grad_weight = grad_bias = None
    if mask[1] and weight is not None:
        ds = (dy * input.reshape(N, group, C // group, HxW)).sum(3).unsqueeze(-1)
        grad_weight = ((ds - db * mean.reshape(N, group, 1, 1)) * rstd.reshape(N, group, 1, 1)).sum(0).reshape(C)
    if mask[2]:
        grad_bias = db.sum(0).reshape(C)
    return grad_weight, grad_bias


# ---- smooth L1 and Huber losses (FunctionsManual.cpp's smooth_l1_loss_double_backward,
# huber_loss_double_backward, huber_loss_double_backward_grad_output)
__all__ += ["smooth_l1_loss_backward", "smooth_l1_loss_double_backward", "huber_loss_backward",
            "huber_loss_double_backward", "huber_loss_double_backward_grad_output"]


def smooth_l1_loss_backward(grad, self, target, reduction, beta):
    return dispatcher.call("smooth_l1_loss_backward", grad, self, target, reduction, beta)


def huber_loss_backward(grad, self, target, reduction, delta):
    return dispatcher.call("huber_loss_backward", grad, self, target, reduction, delta)


def _loss_curvature(grad, input, target, reduction, bound, scale):
    """grad·[|d| < bound]·scale, ÷ numel for 'mean': the second derivative of both losses."""
    inside = ((input - target).abs() < bound).to(grad.dtype)
    grad_input = grad * inside if scale == 1 else grad * inside / scale
    return grad_input / input.numel() if reduction == 1 else grad_input


def smooth_l1_loss_double_backward(grad, input, target, reduction, beta):
    if beta == 0:           # the gradient is a step: zero almost everywhere
        return dispatcher.call("zeros", list(grad.shape), dtype=grad.dtype, device=grad.device)
    return _loss_curvature(grad, input, target, reduction, beta, beta)


def huber_loss_double_backward(grad, input, target, reduction, delta):
    return _loss_curvature(grad, input, target, reduction, delta, 1)


def huber_loss_double_backward_grad_output(grad, grad_output, input, target, reduction, delta):
    """huber_loss_backward is linear in grad_output: with a reduction, the one number it scales
    gets the sum of grad times the gradient at grad_output = 1."""
    if reduction == 0:
        return huber_loss_backward(grad, input, target, reduction, delta)
    ones = dispatcher.call("ones_like", grad_output)
    return (huber_loss_backward(ones, input, target, reduction, delta) * grad).sum()


# ---- upsampling, bags of embeddings, packed sequences: formulas that call one operator
__all__ += ["upsample_nearest1d", "upsample_nearest1d_backward", "upsample_nearest2d", "upsample_nearest2d_backward",
            "upsample_linear1d", "upsample_linear1d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
            "upsample_nearest3d", "upsample_nearest3d_backward", "_upsample_nearest_exact1d",
            "_upsample_nearest_exact1d_backward", "_upsample_nearest_exact2d", "_upsample_nearest_exact2d_backward",
            "_upsample_nearest_exact3d", "_upsample_nearest_exact3d_backward", "upsample_trilinear3d",
            "upsample_trilinear3d_backward", "upsample_bicubic2d", "upsample_bicubic2d_backward",
            "affine_grid_generator_backward", "grid_sampler_2d_backward", "grid_sampler_3d_backward",
            "_upsample_bilinear2d_aa", "_upsample_bilinear2d_aa_backward", "_upsample_bicubic2d_aa",
            "_upsample_bicubic2d_aa_backward", "_upsample_lanczos2d_aa", "_upsample_lanczos2d_aa_backward",
            "grid_sampler_double_backward",
            "_embedding_bag_backward", "_embedding_bag_per_sample_weights_backward",
            "_pack_padded_sequence_backward"]
upsample_nearest1d = _call_as("upsample_nearest1d")
upsample_nearest1d_backward = _call_as("upsample_nearest1d_backward")
upsample_nearest2d = _call_as("upsample_nearest2d")
upsample_nearest2d_backward = _call_as("upsample_nearest2d_backward")
upsample_linear1d, upsample_linear1d_backward = _call_as("upsample_linear1d"), _call_as("upsample_linear1d_backward")
upsample_bilinear2d = _call_as("upsample_bilinear2d")
upsample_bilinear2d_backward = _call_as("upsample_bilinear2d_backward")
upsample_nearest3d = _call_as("upsample_nearest3d")
upsample_nearest3d_backward = _call_as("upsample_nearest3d_backward")
_upsample_nearest_exact1d = _call_as("_upsample_nearest_exact1d")
_upsample_nearest_exact1d_backward = _call_as("_upsample_nearest_exact1d_backward")
_upsample_nearest_exact2d = _call_as("_upsample_nearest_exact2d")
_upsample_nearest_exact2d_backward = _call_as("_upsample_nearest_exact2d_backward")
_upsample_nearest_exact3d = _call_as("_upsample_nearest_exact3d")
_upsample_nearest_exact3d_backward = _call_as("_upsample_nearest_exact3d_backward")
upsample_trilinear3d = _call_as("upsample_trilinear3d")
upsample_trilinear3d_backward = _call_as("upsample_trilinear3d_backward")
upsample_bicubic2d = _call_as("upsample_bicubic2d")
upsample_bicubic2d_backward = _call_as("upsample_bicubic2d_backward")
affine_grid_generator_backward = _call_as("affine_grid_generator_backward")
grid_sampler_2d_backward = _call_as("grid_sampler_2d_backward")
grid_sampler_3d_backward = _call_as("grid_sampler_3d_backward")
_upsample_bilinear2d_aa = _call_as("_upsample_bilinear2d_aa")
_upsample_bilinear2d_aa_backward = _call_as("_upsample_bilinear2d_aa_backward")
_upsample_bicubic2d_aa = _call_as("_upsample_bicubic2d_aa")
_upsample_bicubic2d_aa_backward = _call_as("_upsample_bicubic2d_aa_backward")
_upsample_lanczos2d_aa = _call_as("_upsample_lanczos2d_aa")
_upsample_lanczos2d_aa_backward = _call_as("_upsample_lanczos2d_aa_backward")


def grid_sampler_double_backward(gg_input, gg_grid, grad_output, input, grid, interpolation_mode, padding_mode,
                                 align_corners, output_mask):
    """The gradient of grid_sampler_{2,3}d_backward's two results, written with the operators
    the sampler itself is made of (aten/native/grid_sampler.py), so it differentiates again."""
    return grid_sampler.grid_sampler_double_backward(gg_input, gg_grid, grad_output, input, grid, interpolation_mode,
                                                     padding_mode, align_corners, output_mask)
_embedding_bag_backward = _call_as("_embedding_bag_backward")
_embedding_bag_per_sample_weights_backward = _call_as("_embedding_bag_per_sample_weights_backward")
_pack_padded_sequence_backward = _call_as("_pack_padded_sequence_backward")


__all__ += ["sgn_backward", "angle_backward", "conj_scalar"]


def sgn_backward(self, grad, result):
    """sgn is flat for real numbers (torch gives an efficient zero tensor of ``self``'s sizes;
    internals, contiguous zeros: a fresh tensor's strides, not ``grad``'s); for complex z,
    sgn = z/|z| is not holomorphic: (g - sgn² conj(g)) / (2|z|), 0 at z == 0."""
    if not self.dtype.is_complex:
        return zeros(list(self.shape), dtype=self.dtype, device=self.device)
    absolute = self.abs()
    out = (grad - (result * result) * conj(grad)) / mul_scalar(absolute, 2.0)
    return out.masked_fill_(absolute == 0.0, 0.0)


def angle_backward(grad, self):
    """angle(z) = atan2(imag, real): its gradient is ``grad * z / |z|² * i``, 0 at z == 0 (where
    torch picks zero); a real input's angle is piecewise constant, its gradient zero."""
    if not self.dtype.is_complex:
        return dispatcher.call("zeros_like", self, memory_format=preserve_format)
    value = mul_scalar((grad * self) / self.abs().pow(2), 1j)
    zero = dispatcher.call("zeros", [], dtype=self.dtype, device=self.device)
    return where(self == 0.0, zero, value)


# ---- adaptive max pooling, unfold/fold, pixel shuffle: backward operators called through the
# dispatcher (each of the linear ones is its partner's gradient)
__all__ += ["adaptive_max_pool2d_backward", "im2col", "col2im", "pixel_shuffle", "pixel_unshuffle"]


def adaptive_max_pool2d_backward(grad, self, indices):
    return dispatcher.call("adaptive_max_pool2d_backward", grad, self, indices)


def im2col(grad, kernel_size, dilation, padding, stride):
    return dispatcher.call("im2col", grad, list(kernel_size), list(dilation), list(padding), list(stride))


def col2im(grad, output_size, kernel_size, dilation, padding, stride):
    return dispatcher.call("col2im", grad, list(output_size), list(kernel_size), list(dilation), list(padding),
                           list(stride))


def pixel_shuffle(grad, upscale_factor):
    return dispatcher.call("pixel_shuffle", grad, upscale_factor)


def pixel_unshuffle(grad, downscale_factor):
    return dispatcher.call("pixel_unshuffle", grad, downscale_factor)


# ---- the soft margin loss (FunctionsManual.cpp's soft_margin_loss_double_backward and
# soft_margin_loss_double_backward_grad_output); multi_margin_loss_backward's wrapper
__all__ += ["soft_margin_loss_backward", "soft_margin_loss_double_backward",
            "soft_margin_loss_double_backward_grad_output", "multi_margin_loss_backward"]


def soft_margin_loss_backward(grad, self, target, reduction):
    return dispatcher.call("soft_margin_loss_backward", grad, self, target, reduction)


def soft_margin_loss_double_backward(grad, input, target, reduction):
    """The loss's second derivative, grad·t²·z/(1 + z)² with z = exp(-t·x), ÷ numel for 'mean'."""
    z = (input * -target).exp()
    zplus1 = z + 1
    grad_input = grad * target * target * z / (zplus1 * zplus1)
    return div_scalar_(grad_input, input.numel()) if reduction == 1 else grad_input


def soft_margin_loss_double_backward_grad_output(grad, grad_output, input, target, reduction):
    """Linear in grad_output: with a reduction, the one number it scales gets the sum of grad
    times the gradient at grad_output = 1."""
    if reduction == 0:
        return soft_margin_loss_backward(grad, input, target, reduction)
    ones = dispatcher.call("ones_like", grad_output)
    return (soft_margin_loss_backward(ones, input, target, reduction) * grad).sum()


def multi_margin_loss_backward(grad, self, target, p, margin, weight, reduction):
    return dispatcher.call("multi_margin_loss_backward", grad, self, target, p, margin, weight, reduction)


__all__ += ["_weight_norm_interface_backward", "_weight_norm_differentiable_backward"]


def _weight_norm_interface_backward(*args):
    """The fused weight norm's backward kernel, as the operator (below autograd: grad mode is off)."""
    return dispatcher.call("_weight_norm_interface_backward", *args)


def _weight_norm_differentiable_backward(*args):
    """The same gradients in differentiable operators, recorded through the composite operator."""
    return dispatcher.call("_weight_norm_differentiable_backward", *args)


__all__ += ["to_sparse_backward", "to_dense_backward", "sparse_mask_backward", "values_backward"]


def to_sparse_backward(grad, self_layout, self_blocksize=None):
    """A strided input gets the gradient back dense; a sparse one gets it in its own layout (and
    block size, for BSR and BSC)."""
    if self_layout is strided:
        return grad.to_dense()
    if grad.layout is self_layout and self_layout is sparse_coo:
        return grad
    return grad.to_sparse(layout=self_layout, blocksize=self_blocksize)


def to_dense_backward(grad, input, masked_grad):
    """The gradient of a sparse tensor made dense: by default (``masked_grad`` unset or true) only
    its entries get a gradient, the dense gradient read at the input's coalesced coordinates; with
    ``masked_grad=False`` every element does, as a sparse tensor of the same sparse dims. A
    compressed input's gradient goes through COO and back to its layout, as torch's does."""
    layout = input.layout
    if layout is strided:
        return grad.to_dense(input.dtype, masked_grad=masked_grad)
    masked = masked_grad is None or masked_grad
    if layout is sparse_coo:
        if masked:
            return grad.sparse_mask(input.coalesce())
        return grad.to_sparse(input.sparse_dim())
    blocksize = input._impl.blocksize
    if masked:
        return grad.sparse_mask(input.to_sparse(input.sparse_dim())).to_sparse(
            layout=layout, blocksize=blocksize, dense_dim=None if blocksize is None else input.dense_dim())
    return grad.to_sparse(layout=layout, blocksize=blocksize, dense_dim=input.dense_dim())


def values_backward(grad, self):
    """``values()``'s gradient (``values_backward`` in ``FunctionsManual.cpp``): a sparse tensor with
    ``self``'s indices (and sizes, coalesced flag) whose values are the incoming gradient."""
    if self.layout is sparse_coo:
        return sparse_coo_tensor(dispatcher.call("_indices", self), grad, tuple(self.shape),
                                 is_coalesced=dispatcher.call("is_coalesced", self) or None)
    if self.layout in COMPRESSED_LAYOUTS:
        impl = self._impl
        return new_compressed(impl.sizes, impl.compressed_indices, impl.plain_indices, grad, self.layout)
    raise NotImplementedError(f"values backward with respect to self with layout {self.layout}")


def sparse_mask_backward(grad, mask, self_layout):
    """``sparse_mask`` reads ``self`` at the mask's entries, so the gradient is the incoming one at
    those entries only (projected onto the mask), made dense again for a strided ``self``."""
    dense = grad.to_dense() if grad.layout is sparse_coo else grad
    projected = dense.sparse_mask(mask.coalesce())
    return projected.to_dense() if self_layout is strided else projected


__all__ += ["multilabel_margin_loss_backward"]


def multilabel_margin_loss_backward(grad, self, target, reduction, is_target):
    return dispatcher.call("multilabel_margin_loss_backward", grad, self, target, reduction, is_target)


__all__ += ["_ctc_loss_backward"]


def _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha,
                       blank, zero_infinity):
    """The CTC loss's backward operator, the overload of the forward's: lengths as lists or as tensors."""
    name = "_ctc_loss_backward.Tensor" if hasattr(input_lengths, "_impl") else "_ctc_loss_backward"
    return dispatcher.call(name, grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                           log_alpha, blank, zero_infinity)


__all__ += ["_trilinear_backward"]


def _trilinear_backward(grad, i1, i2, i3, expand1, expand2, expand3, sumdim, grad_input_mask):
    """Each operand's gradient is a ``_trilinear`` of the gradient and the other two, the roles of
    ``sumdim`` and that operand's ``expand`` swapped (``FunctionsManual.cpp``), so it is itself
    differentiable."""
    def tri(a, b, c, ea, eb, ec, s):
        return dispatcher.call("_trilinear", a, b, c, list(ea), list(eb), list(ec), list(s), 1)
    return (tri(grad, i2, i3, sumdim, expand2, expand3, expand1) if grad_input_mask[0] else None,
            tri(i1, grad, i3, expand1, sumdim, expand3, expand2) if grad_input_mask[1] else None,
            tri(i1, i2, grad, expand1, expand2, sumdim, expand3) if grad_input_mask[2] else None)


# ---- fractional max pooling, rrelu, pdist and channel_shuffle: their backward operators
__all__ += ["fractional_max_pool2d_backward", "fractional_max_pool3d_backward", "rrelu_with_noise_backward",
            "_pdist_backward", "channel_shuffle"]


def fractional_max_pool2d_backward(*args):
    return dispatcher.call("fractional_max_pool2d_backward", *args)


def fractional_max_pool3d_backward(*args):
    return dispatcher.call("fractional_max_pool3d_backward", *args)


def rrelu_with_noise_backward(*args):
    return dispatcher.call("rrelu_with_noise_backward", *args)


def _pdist_backward(grad, self, p, pdist):
    return dispatcher.call("_pdist_backward", grad, self, p, pdist)


def channel_shuffle(grad, groups):
    """The inverse shuffle: ``groups`` groups of C / groups become C / groups groups of ``groups``."""
    return dispatcher.call("channel_shuffle", grad, groups)


__all__ += ["conv_tbc_backward"]


def conv_tbc_backward(grad, self, weight, bias, pad):
    """(dInput, dWeight, dBias) from the composite backward operator, as torch's formula."""
    return dispatcher.call("conv_tbc_backward", grad, self, weight, bias, pad)


# ---------------------------------------------------------------------- forward derivatives
# The helpers of the forward formulas (``result:`` in derivatives.yaml): each takes values (``_p``)
# and tangents (``_t``) and gives the output's tangent (FunctionsManual.cpp's ``*_jvp``).
__all__ += ["gather_with_keepdimed_indices", "evenly_read_jvp", "amaxamin_jvp", "prod_jvp", "logsumexp_jvp",
            "var_jvp", "layer_norm_jvp", "batch_norm_jvp", "convolution_jvp", "group_norm_jvp", "clamp_jvp",
            "logcumsumexp_jvp"]


def _dim_list(dims, ndim):
    """A reduction's ``int[1]?`` dims as a list: every dim for None or (), one for an int."""
    dims = _all_dims(dims, ndim)
    return [dims] if isinstance(dims, int) else list(dims)


def gather_with_keepdimed_indices(input, dim, indices, keepdim):
    """The values at ``indices`` along ``dim`` (max.dim's tangent: the tangent where the max was)."""
    if not keepdim and input.dim():
        indices = indices.unsqueeze(dim)
    picked = input.gather(dim, indices)
    return picked.squeeze(dim) if not keepdim and input.dim() else picked


def evenly_read_jvp(fw_grad, input, value):
    """max()'s tangent: the mean of the tangent over the places that hold the max (the backward
    spreads the gradient evenly among them; the forward reads them evenly)."""
    mask = input == value
    return where(mask, fw_grad, 0.0).sum() / mask.sum()


def amaxamin_jvp(x, dx, result, dims, keepdim):
    """amax's tangent: the mean of the tangent over each slice's maximal places."""
    dims = _dim_list(dims, x.dim())
    mask = x == restore_reduced_dims(result, dims, keepdim)
    return where(mask, dx, 0.0).sum(dims, keepdim) / mask.sum(dims, keepdim)


def prod_jvp(self_p, self_t, result, dim=None, keepdim=False):
    """prod's tangent: the backward's d prod / dx (ones as the gradient) times the tangent, summed."""
    ones = dispatcher.call("ones", [], dtype=result.dtype, device=result.device).expand_as(result)
    if dim is None:
        return (prod_backward(ones, self_p.to(result.dtype), result) * self_t.conj()).sum().conj()
    return (prod_backward(ones, self_p.to(result.dtype), result, dim, keepdim) * self_t.conj()).sum(dim, keepdim).conj()


def logsumexp_jvp(self_p, self_t, dim, keepdim):
    """sum(exp(x) t) / sum(exp(x)), with exp(x - max) for range (also softmax's and log_softmax's)."""
    shifted = (self_p - self_p.amax(dim, True)).exp() if self_p.numel() else self_p.exp()
    return (shifted * self_t).sum(dim, keepdim) / shifted.sum(dim, keepdim)


def var_jvp(self_p, self_t, dim, correction, keepdim):
    """var's tangent: the backward applied to the tangent, summed over the reduced dims."""
    dims = _dim_list(dim, self_p.dim())
    jvp = var_backward(self_t.conj(), self_p, dim, correction, True).sum(dims, keepdim)
    return jvp.real if jvp.is_complex() else jvp


def layer_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, saved_mean, saved_invstd,
                   normalized_shape):
    """Layer norm's tangent from the saved mean and 1/std of each row (the trailing dims)."""
    axis = input_t.dim() - len(normalized_shape)
    dims = list(range(axis, input_t.dim()))
    stat_shape = list(input_t.shape[:axis]) + [1] * len(normalized_shape)
    affine_shape = [1] * axis + list(input_t.shape[axis:])
    return _normalized_jvp(input_p, input_t, saved_mean.reshape(stat_shape), saved_invstd.reshape(stat_shape), dims,
                           weight_p, weight_t, bias_t, affine_shape)


def batch_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, running_mean, running_var, saved_mean,
                   saved_invstd, train, eps):
    """Batch norm's tangent: over every dim but the channels', from the batch's statistics in
    training, from the running ones (constants) otherwise."""
    dims = [d for d in range(input_t.dim()) if d != 1]
    shape = [1] * input_t.dim()
    shape[1] = input_t.shape[1]
    if train:
        mean_p, invstd_p = saved_mean.reshape(shape), saved_invstd.reshape(shape)
    else:
        mean_p, invstd_p = running_mean.reshape(shape), (running_var + eps).rsqrt().reshape(shape)
    return _normalized_jvp(input_p, input_t, mean_p, invstd_p, dims if train else None, weight_p, weight_t, bias_t,
                           shape)


def _normalized_jvp(input_p, input_t, mean_p, invstd_p, dims, weight_p, weight_t, bias_t, affine_shape):
    """The tangent of (x - mean) / std over ``dims`` (None: mean and std are constants), then
    scaled and shifted by the affine parameters, whose tangents add their own terms."""
    centred = input_p - mean_p
    if dims is None:
        result_t = input_t * invstd_p
    else:
        numel = 1
        for d in dims:
            numel *= input_t.shape[d]
        mean_t = input_t.sum(dims, True) / numel
        invstd_t = -invstd_p.pow(3) * (centred * (input_t - mean_t)).sum(dims, True) / numel
        result_t = (input_t - mean_t) * invstd_p + centred * invstd_t
    return _affine_jvp(result_t, centred * invstd_p, weight_p, weight_t, bias_t, affine_shape)


def _affine_jvp(normalized_t, normalized, weight_p, weight_t, bias_t, affine_shape):
    """The tangent of ``normalized * weight + bias`` from that of ``normalized``."""
    if weight_p is not None:
        normalized_t = normalized_t * weight_p.reshape(affine_shape)
        if weight_t is not None:
            normalized_t = normalized_t + normalized * weight_t.reshape(affine_shape)
    if bias_t is not None:
        normalized_t = normalized_t + bias_t.reshape(affine_shape)
    return normalized_t


def group_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, saved_mean, saved_invstd, group):
    """Group norm's tangent: each (sample, group) row normalized as layer norm's, then the affine
    parameters per channel."""
    n = input_p.shape[0]
    per_row = input_p.numel() // (n * group) if n else 1
    rows, stats = [n, group, per_row], [n, group, 1]
    mean_p, invstd_p = saved_mean.reshape(stats), saved_invstd.reshape(stats)
    normalized_t = _normalized_jvp(input_p.reshape(rows), input_t.reshape(rows), mean_p, invstd_p, [2], None, None,
                                   None, None).reshape(input_p.shape)
    normalized = ((input_p.reshape(rows) - mean_p) * invstd_p).reshape(input_p.shape)
    affine_shape = [1, input_p.shape[1]] + [1] * (input_p.dim() - 2)
    return _affine_jvp(normalized_t, normalized, weight_p, weight_t, bias_t, affine_shape)


def clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t):
    """clamp by tensors: the tangent of whichever bound or input each element took."""
    if min_p is not None and max_p is not None:
        return where(min_p > max_p, max_t, where(self_p < min_p, min_t, where(self_p > max_p, max_t, self_t)))
    if min_p is not None:
        return where(self_p > min_p, self_t, min_t)
    if max_p is not None:
        return where(self_p < max_p, self_t, max_t)
    return self_t


def logcumsumexp_jvp(self_p, self_t, dim):
    """cumsum(exp(x) t) / cumsum(exp(x)), with exp(x - max) for range (as logsumexp_jvp; a complex
    input is not shifted, as torch's max has no complex kernel). The denominator gets 1e-13, as
    torch's does: a prefix of very negative values (the backward formula's lowest-float fill for a
    zero gradient) has all its exponentials underflow to zero, and its tangent is then 0, not
    0/0 -- what keeps ``hessian`` of a logcumsumexp finite."""
    real = not self_p.dtype.is_complex and self_p.numel()
    shifted = (self_p - self_p.amax(dim, True)).exp() if real else self_p.exp()
    return (shifted * self_t).cumsum(dim) / (shifted.cumsum(dim) + 1e-13)


def convolution_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, stride, padding, dilation, transposed,
                    output_padding, groups):
    """A convolution is bilinear in input and weight, linear in bias: conv(dx, w) + conv(x, dw) + db."""
    def conv(x, w, b):
        return dispatcher.call("convolution", x, w, b, stride, padding, dilation, transposed, output_padding, groups)
    return conv(input_t, weight_p, None) + conv(input_p, weight_t, bias_t)


__all__ += ["apply_loss_reduction", "linalg_vector_norm_jvp"]


def apply_loss_reduction(unreduced, reduction):
    """A loss's elementwise values reduced as ``reduction`` says (0 none, 1 mean, 2 sum)."""
    if reduction == 1:
        return unreduced.mean()
    return unreduced.sum() if reduction == 2 else unreduced


def linalg_vector_norm_jvp(self_p, self_t, ord, norm, dim, keepdim):
    """The vector norm's tangent, by the order: 0 has none; 1 sums sgn(x) t; 2 is x.t / norm
    (0 where the norm is); inf averages sgn(x) t over the entries of largest |x|; any other p
    is sum(|x|^(p-1) sgn(x) t) norm^(1-p)."""
    p = float(ord)
    dims = _dim_list(dim, self_p.dim())
    if p == 0.0:
        return zeros_like(norm)
    signed = self_p.sgn() * self_t.conj()
    signed = signed.real if signed.is_complex() else signed
    if p == 1.0:
        return signed.sum(dims, keepdim)
    if p == 2.0:
        dotted = self_p * self_t.conj()
        dotted = dotted.real if dotted.is_complex() else dotted
        return (dotted.sum(dims, keepdim) / norm).masked_fill_(norm == 0, 0)
    if math.isinf(p):
        full = restore_reduced_dims(norm, dims, keepdim) if self_p.dim() else norm
        at_max = ((self_p.abs() == full) | (self_p.isnan() & full.isnan())).to(norm.dtype)
        return (signed * at_max).sum(dims, keepdim) / at_max.sum(dims, keepdim)
    powered = self_p.abs().pow(p - 1)
    if p < 1.0:
        powered = powered.masked_fill(self_p == 0, 0)
    return (powered * signed).sum(dims, keepdim) * norm.pow(1 - p)


# ---- oneDNN's LSTM layer (FunctionsManual.cpp's mkldnn_rnn_layer_differentiable_backward)
__all__ += ["mkldnn_rnn_layer_backward", "mkldnn_rnn_layer_differentiable_backward"]


def mkldnn_rnn_layer_backward(*args):
    """The fused layer's backward kernel, as the operator (below autograd: grad mode is off)."""
    return dispatcher.call("mkldnn_rnn_layer_backward", *args)


def mkldnn_rnn_layer_differentiable_backward(input, weight0, weight1, weight2, weight3, hx_, cx_, output, hy_, cy_,
                                             grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, num_layers,
                                             has_biases, train, bidirectional, batch_sizes, batch_first, workspace):
    """The same gradients in differentiable operators, the gates recomputed from the inputs, so a
    second backward reaches the input, the weights and the initial state through them."""
    return lstm_layer_backward(input, weight0, weight1, weight2, weight3, hx_, cx_, grad_output, grad_hy, grad_cy,
                               reverse, batch_first)


__all__ += ["cumprod_jvp", "linalg_det_jvp", "slogdet_jvp"]


def cumprod_jvp(self_t, self_p, result, dim):
    """The product rule along ``dim``: out_k = prod_{i<=k} x_i, so dout_k = dout_{k-1} x_k +
    out_{k-1} t_k, a recurrence with no division, which stays exact where some x_i is zero."""
    if self_p.dim() == 0:
        return self_t.clone()
    d = dim % self_p.dim()
    steps = []
    for k in range(self_p.shape[d]):
        t_k = self_t.select(d, k)
        steps.append(t_k if k == 0 else steps[-1] * self_p.select(d, k) + result.select(d, k - 1) * t_k)
    return dispatcher.call("stack", steps, d) if steps else self_t.clone()


def _trace_of_solve(dA, LU, pivots, use_A_T):
    """tr(A^-1 dA) with the forward's LU factors (of A^T where ``use_A_T``: then the solve is
    the adjoint one)."""
    return linalg_lu_solve(LU, pivots, dA, adjoint=use_A_T).diagonal(0, -2, -1).sum(-1)


def linalg_det_jvp(dA, det, LU, pivots, use_A_T):
    """Jacobi's formula: d det(A) = det(A) tr(A^-1 dA)."""
    return det * _trace_of_solve(dA, LU, pivots, use_A_T)


def slogdet_jvp(LU, pivots, dA, sign, use_A_T):
    """(sign's tangent, logabsdet's): log|det| moves by Re tr(A^-1 dA); a complex sign turns by
    i Im tr(A^-1 dA), a real one does not move (its tangent is zeros)."""
    trace = _trace_of_solve(dA, LU, pivots, use_A_T)
    if not dA.dtype.is_complex:
        return dispatcher.call("zeros_like", sign), trace
    return sign * (1j * dispatcher.call("imag", trace)), dispatcher.call("real", trace)


__all__ += ["complex_jvp", "polar_jvp"]


def complex_jvp(real_t, imag_t):
    """``complex`` is linear in its two parts: the tangent is the complex of theirs."""
    return dispatcher.call("complex", real_t, imag_t)


def polar_jvp(abs_p, abs_t, angle_p, angle_t):
    """r e^{i theta} moves by dr e^{i theta} + i r dtheta e^{i theta}, written in its two parts."""
    cos, sin = angle_p.cos(), angle_p.sin()
    return complex_jvp(abs_t * cos - angle_t * abs_p * sin, abs_t * sin + angle_t * abs_p * cos)


# ---- forward derivatives of glu, renorm, the norms and the matrix functions (FunctionsManual.cpp)
__all__ += ["glu_jvp", "renorm_jvp", "norm_jvp", "mean_jvp", "pinv_jvp", "linalg_svd_jvp", "linalg_qr_jvp",
            "cholesky_jvp", "linalg_solve_jvp"]


def glu_jvp(glu, x, dx, dim):
    """glu = a σ(b) moves by σ(b) da + glu (1 - σ(b)) db (``glu_jvp``, which reuses the output)."""
    n = x.shape[dim] // 2
    sig_b = x.narrow(dim, n, n).sigmoid()
    da, db = dx.narrow(dim, 0, n), dx.narrow(dim, n, n)
    return (glu - glu * sig_b) * db + sig_b * da


def norm_jvp(self_p, self_t, p, norm, dim=None, keepdim=False):
    """``at::norm``'s tangent: the vector norm's, a missing p meaning 2."""
    return linalg_vector_norm_jvp(self_p, self_t, 2 if p is None else p, norm, dim, keepdim)


def mean_jvp(self_t, dim, keepdim):
    """``mean(self_t, dim.value_or({}), keepdim)``: var_mean's and std_mean's mean is linear."""
    return self_t.mean(_dim_list(dim, self_t.dim()), keepdim)


def renorm_jvp(self_p, self_t, p, dim, maxnorm):
    """Where a slice's norm exceeds maxnorm the output is x maxnorm / (norm + 1e-7): its tangent
    is that factor times ``t - x d(norm) / (norm + 1e-7)``; elsewhere the tangent itself."""
    dim = dim % self_p.dim()
    reduce_dims = [d for d in range(self_p.dim()) if d != dim]
    norm = dispatcher.call("linalg_vector_norm", self_p, p, reduce_dims, True)
    invnorm = (norm + 1e-7).reciprocal()
    factor = invnorm * maxnorm
    scaled = factor * (self_t - self_p * invnorm * norm_jvp(self_p, self_t, p, norm, reduce_dims, True))
    return where(norm > maxnorm, scaled, self_t)


def pinv_jvp(A, pinvA, dA):
    """The pseudo-inverse's tangent (Golub and Pereyra), grouped so that the products are of the
    smaller of A's two dimensions."""
    m, n = A.shape[-2], A.shape[-1]
    dAh, pinvAh = dA.mH, pinvA.mH
    if m <= n:
        K = pinvAh.matmul(dAh)
        return (pinvA.matmul(K - K.mH - K.matmul(A.matmul(pinvA)))
                + (dAh - pinvA.matmul(A.matmul(dAh))).matmul(pinvAh.matmul(pinvA)))
    K = pinvA.matmul(dA)
    Kh = K.mH
    return ((Kh - K - pinvA.matmul(A).matmul(Kh)).matmul(pinvA)
            + pinvA.matmul(pinvAh).matmul(dAh - dAh.matmul(A).matmul(pinvA)))


def linalg_svd_jvp(dA, U_, S, Vh_, full_matrices):
    """(dU, dS, dVh) from dP = U^H dA V: dS its real diagonal, dU = U sym(dP S) / E and
    dVh = -sym(S dP) / E Vh with E the gaps between squared singular values (plus, complex,
    i Im diag(dP) / 2S), and the parts outside U's columns (V's rows) of a tall (wide) A; the
    extra columns of full matrices get zero tangents."""
    m, n, k = dA.shape[-2], dA.shape[-1], S.shape[-1]
    U = U_.narrow(-1, 0, k) if full_matrices else U_
    Vh = Vh_.narrow(-2, 0, k) if full_matrices else Vh_
    V = Vh.mH
    dP = U.mH.matmul(dA.matmul(V)) if m >= n else U.mH.matmul(dA).matmul(V)
    dS = dispatcher.call("real", dP.diagonal(0, -2, -1)) if dA.is_complex() else dP.diagonal(0, -2, -1)
    dP = dP - dispatcher.call("diag_embed", dS)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E.diagonal(0, -2, -1).fill_(1)      # any non-zero: the diagonal's numerators are zero
    diag_dP_2S = dispatcher.call("diag_embed", dP.diagonal(0, -2, -1) / (2 * S)) if dA.is_complex() else None
    dU_inner = _sym(dP * S.unsqueeze(-2)) / E
    dVh_inner = _sym(dP * (-S).unsqueeze(-1)) / E
    if diag_dP_2S is not None:
        dU_inner, dVh_inner = dU_inner + diag_dP_2S, dVh_inner + diag_dP_2S
    dU, dVh = U.matmul(dU_inner), dVh_inner.matmul(Vh)
    if m > n:
        dAVSinv = dA.matmul(V / S.unsqueeze(-2))
        dU = dU + dAVSinv - U.matmul(U.mH.matmul(dAVSinv))
        if full_matrices:
            dU = dispatcher.call("cat", [dU, dU.new_zeros([*dU.shape[:-1], m - n])], -1)
    if m < n:
        UhdASinv = (U.mH / S.unsqueeze(-1)).matmul(dA)
        dVh = dVh + UhdASinv - UhdASinv.matmul(V).matmul(Vh)
        if full_matrices:
            dVh = dispatcher.call("cat", [dVh, dVh.new_zeros([*dVh.shape[:-2], n - m, n])], -2)
    return dU, dS, dVh


def _sym(X):
    return X + X.mH


def linalg_qr_jvp(dA, Q, R, mode):
    """(dQ, dR). A tall A: with C = Q^H dA R^-1, dR = syminv(sym(C)) R and dQ = dA R^-1 - Q
    syminv(sym(C)) (Q^H dQ is skew-Hermitian, dR R^-1 upper triangular). A wide A = [X | Y]:
    Q^H dQ is the skew-Hermitian matrix whose strict lower triangle is that of C = Q^H dX R_X^-1
    and whose diagonal is C's imaginary one, and dR = Q^H dA - Q^H dQ R."""
    m, n = dA.shape[-2], dA.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        dARinv = _trsm(R, dA, upper=True, left=False)
        dR = _sym(Q.mH.matmul(dARinv)).triu()
        dR.diagonal(0, -2, -1).mul_(0.5)
        dQ = dARinv - Q.matmul(dR)
        return dQ, dR.matmul(R)
    QhdA = Q.mH.matmul(dA)
    C = _trsm(R.narrow(-1, 0, m), QhdA.narrow(-1, 0, m), upper=True, left=False)
    QhdQ = C.tril(-1)
    QhdQ = QhdQ - QhdQ.mH
    if C.is_complex():      # R's diagonal stays real: Q^H dQ keeps C's imaginary diagonal
        QhdQ = QhdQ + dispatcher.call("diag_embed", 1j * dispatcher.call("imag", C.diagonal(0, -2, -1)))
    return Q.matmul(QhdQ), QhdA - QhdQ.matmul(R)


def cholesky_jvp(dA, L, upper):
    """A = L L^H moves by dA = 2 Re(dL L^H): dL = L Phi(L^-1 dA L^-H), Phi keeping the lower
    triangle with its diagonal halved. An upper factor is L^H."""
    L_ = L.mH if upper else L
    dL = _trsm(L_, dA, upper=False, left=True)
    dL = _trsm(L_.mH, dL, upper=True, left=False)
    dL = dL.tril() - dispatcher.call("diag_embed", mul_scalar(dL.diagonal(0, -2, -1), 0.5))
    dL = L_.matmul(dL)
    return dL.mH if upper else dL


def linalg_solve_jvp(dA, dB, X, LU, pivots, left):
    """A X = B moves by dX = A^-1 (dB - dA X) (``(dB - X dA) A^-1`` on the right), solved with
    the forward's LU factors; a vector B is solved as a one-column matrix."""
    vector = X.dim() == 1 or (X.dim() == LU.dim() - 1 and tuple(X.shape) == tuple(LU.shape[:-1]))
    X_, dB_ = (X.unsqueeze(-1), dB.unsqueeze(-1)) if vector else (X, dB)
    R_ = dA.matmul(X_) if left else X_.matmul(dA)
    dX = linalg_lu_solve(LU, pivots, dB_ - R_, left=left)
    return dX.squeeze(-1) if vector else dX
