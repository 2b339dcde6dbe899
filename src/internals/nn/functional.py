"""Functional forms of the layers and losses (``torch/nn/functional.py``).

The losses and ``linear`` are compositions of internals' operators (matmul, add, log_softmax,
where, sum, ...): autograd differentiates them through those operators' backward formulas, and
they run on any device the operators run on. torch has fused kernels for some (``addmm``,
``nll_loss``); the results agree to float rounding, which the tests measure. The layers
(``conv2d``, ``max_pool2d``, ``batch_norm``, ``layer_norm``, ``embedding``) call the operators
torch's call, each with its own kernel and its own backward operator (``aten/native/convolution.py``,
``pooling.py``, ``normalization.py``, ``embedding.py``).
"""
import functools
import inspect
import math
import warnings

from .._functional import baddbmm, bmm, cat, matmul, ones, rand, scalar_tensor, where, zeros, zeros_like
from .._functional import batch_norm as _batch_norm
from .._functional import bilinear as _bilinear
from .._functional import broadcast_shapes as _broadcast_shapes
from .._functional import clamp_min as _clamp_min
from .._functional import conv1d as _conv1d
from .._functional import conv2d as _conv2d
from .._functional import conv3d as _conv3d
from .._functional import conv_transpose1d as _conv_transpose1d
from .._functional import conv_transpose2d as _conv_transpose2d
from .._functional import conv_transpose3d as _conv_transpose3d
from .._functional import ctc_loss as _ctc_loss
from .._functional import embedding as _embedding
from .._functional import layer_norm as _layer_norm
from .._functional import minimum as _minimum
from .._functional import pairwise_distance as _pairwise_distance
from .._python_arg_parser import PythonArgParser
from .._tensor import Tensor
from .._tensor_base import torch_size_text
from ..amp.autocast_mode import is_autocast_enabled, lower_precision_call
from ..aten import dispatcher
from ..aten.native.attention import SDPBackend, _fused_sdp_choice_cpp
from ..aten.tensor_iterator import broadcast_shapes
from ..autograd.grad_mode import no_grad
from ..c10 import scalar_type as st
from ..c10.memory_format import contiguous_format
from ..c10.sym import sym_float
from ..overrides import handle_torch_function, has_torch_function
from . import _reduction

__all__ = ["linear", "relu", "dropout", "log_softmax", "softmax", "mse_loss", "l1_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits"]

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    """The legacy flags, where either is given, override ``reduction`` (with a warning)."""
    if size_average is None and reduce is None:
        return reduction
    return _reduction.legacy_get_string(size_average, reduce)


def _reduce(loss, reduction):
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def _takes_a_tensor(name):
    """torch's argument parser refusing a non-tensor first argument: these functions are bindings
    of aten operators there (``torch._C._nn.elu``, ``torch.relu``), so a list or a number given
    as ``input`` is a TypeError naming the binding, before any kernel is looked for."""
    def wrap(fn):
        @functools.wraps(fn)
        def checked(input, *args, **kwargs):
            if not isinstance(input, Tensor):
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
            return fn(input, *args, **kwargs)
        return checked
    return wrap


_linear_parser = PythonArgParser(["linear(Tensor input, Tensor weight, Tensor? bias=None)"])


def linear(input, weight, bias=None):
    """x Wᵀ + b; the weight is (out_features, in_features), as stored by ``nn.Linear``.
    The operator ``aten::linear`` (``torch._C._nn.linear``): mostly one ``addmm``."""
    _linear_parser.parse((input, weight, bias), {})     # a list or a number is a TypeError, as torch's
    return dispatcher.call("linear", input, weight, bias)


@_takes_a_tensor("relu")
def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


@_takes_a_tensor("dropout")
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1 / (1 - p) while training
    (``aten::dropout``: the mask comes from ``bernoulli_``, so the same seed gives torch's mask)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return dispatcher.call("dropout_" if inplace else "dropout", input, p, training)


def _implicit_dim(ndim):
    warnings.warn("Implicit dimension choice for log_softmax has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return input.softmax(_implicit_dim(input.dim()) if dim is None else dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return input.log_softmax(_implicit_dim(input.dim()) if dim is None else dim, dtype)


__all__ += ["gumbel_softmax"]


@_takes_a_tensor("empty_like")
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A softmax of the logits plus Gumbel noise, sharpened by ``tau`` (torch/nn/functional.py).
    The noise is ``-log(E)`` with E drawn by ``exponential_`` (torch's stream, so one seed gives
    torch's sample). With ``hard`` the forward is the one-hot of the argmax and the gradient the
    soft sample's: ``y_hard - y_soft.detach() + y_soft`` (the straight-through estimator)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = dispatcher.call("empty_like", logits, memory_format=contiguous_format)
    gumbels = -noise.exponential_().log()
    gumbels = (logits + gumbels) / tau        # torch's two steps: the graph's nodes are its (Add, Div)
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits, memory_format=contiguous_format).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _check_target_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({torch_size_text(target.shape)}) that is different to the input size "
                      f"({torch_size_text(input.shape)}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)² per element, then mean/sum/none: the operator ``mse_loss``."""
    if weight is not None:
        raise NotImplementedError("internals' mse_loss takes no weight")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_target_size(input, target)
    shape = broadcast_shapes(input.shape, target.shape)      # torch.broadcast_tensors
    input, target = (t if t.shape == shape else t.expand(shape) for t in (input, target))
    return dispatcher.call("mse_loss", input, target, _REDUCTIONS.index(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target| per element, then mean/sum/none: torch's ``l1_loss`` is a composite of
    ``sub``, ``abs`` and the reduction (``Loss.cpp``), so autograd records those nodes."""
    if weight is not None:
        raise NotImplementedError("internals' l1_loss takes no weight")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_target_size(input, target)
    return _reduce(input.sub(target).abs(), reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class-index targets, given log-probabilities (N, C) or (C,):
    the operator ``nll_loss_forward`` (``aten/native/loss.py``), whose backward is the operator
    ``nll_loss_backward``. With ``reduction='mean'`` the sum is divided by the total weight of
    the counted targets (their number when there are no weights), as torch does."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    # as nll_loss_nd compares them: self's size read first, and C++'s SymInt != is a negated
    # sym_eq, so a traced program records torch's reads and its ``eq``
    if input.dim() != 1 and target.dim() > 0 and not input.shape[0] == target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) "
                         f"to match target batch_size ({target.shape[0]}).")
    if target.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.torch_name}")
    if input.dim() == 1 and target.dim() == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
    if input.dim() == 1 and target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    enum = _REDUCTIONS.index(reduction)
    if input.dim() <= 2:
        return dispatcher.call("nll_loss_forward", input, target, weight, enum, ignore_index)[0]
    if input.dim() == 4:
        return dispatcher.call("nll_loss2d_forward", input, target, weight, enum, ignore_index)[0]
    return _nll_loss_nd(input, target, weight, enum, ignore_index)


def _nll_loss_nd(input, target, weight, enum, ignore_index):
    """(N, C, d1, ...) other than 4 dims: viewed as (N, C, 1, d1·...) for ``nll_loss2d``, the
    unreduced loss viewed back as (N, d1, ...) (``nll_loss_nd`` in LossNLL.cpp)."""
    n, c = input.shape[0], input.shape[1]
    out_size = [n, *input.shape[2:]]
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
    input_, target_ = input.contiguous(), target.contiguous()
    input_ = input_.view(n, c, 1, -1) if input_.numel() > 0 else input_.view(n, c, 0, 0)
    target_ = target_.view(n, 1, -1) if target_.numel() > 0 else target_.view(n, 0, 0)
    out = dispatcher.call("nll_loss2d_forward", input_, target_, weight, enum, ignore_index)[0]
    return out.view(out_size) if enum == 0 else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Softmax cross-entropy of logits (N, C) or (C,) against class indices or class probabilities.

    As ``cross_entropy_loss`` in torch's ``aten/src/ATen/native/LossNLL.cpp``: a float target of
    the input's shape is a distribution over classes; otherwise the targets are class indices,
    and ``label_smoothing`` ε mixes the one-hot target with the uniform distribution.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    class_dim = 1 if input.dim() >= 2 else 0
    # C++ compares self's sizes first, as ArrayRef::equals does: the lengths, then the sizes (a
    # tuple's == compares the sizes it can pair first, each a guard when they are symbols)
    if isinstance(target, Tensor) and input.dim() == target.dim() and input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError("Expected floating point type for target with class probabilities, "
                               f"got {target.dtype.torch_name.capitalize()}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim)
    if isinstance(target, Tensor) and target.is_floating_point():
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.torch_name}")
    log_probs = log_softmax(input, class_dim)
    nll = nll_loss(log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0.0:         # torch ignores a negative smoothing for class-index targets
        return nll
    _check_label_smoothing(label_smoothing)
    smooth = _smooth_loss(log_probs, target, weight, ignore_index, reduction, class_dim)
    # C++ divides a double by the class count: a traced count is made a SymFloat first (sym_float)
    smoothed = dispatcher.call("mul.Scalar", smooth, label_smoothing / sym_float(input.shape[class_dim]))
    return dispatcher.call("mul.Scalar", nll, 1 - label_smoothing).add(smoothed)     # C++: the right operand first


def _check_label_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")


def _class_weight(weight, ndim, class_dim):
    """The (C,) weight viewed so that it broadcasts along ``class_dim`` of an ``ndim``-dim input."""
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _smooth_loss(log_probs, target, weight, ignore_index, reduction, class_dim):
    """-sum_c w_c log p_c per sample, the loss against the uniform target, 0 where the target is
    ignored; 'mean' divides by the total weight of the counted targets, as the nll term does
    (``cross_entropy_loss_label_smoothing``; the weights are gathered the way torch's branch for
    subclasses and dispatch modes does, masked rather than selected)."""
    if weight is not None:
        smooth = log_probs.mul(_class_weight(weight, log_probs.dim(), class_dim)).sum(class_dim).neg()
    else:
        smooth = log_probs.sum(class_dim).neg()
    ignore_mask = target.eq(ignore_index)
    smooth.masked_fill_(ignore_mask, 0.0)
    if reduction == "mean":
        if weight is None:
            true_count = ignore_mask.bitwise_not().sum()     # C++: the divisor first
            return smooth.sum().div(true_count)
        filtered_target = target.masked_fill(ignore_mask, 0)
        weight_sum = weight.gather(0, filtered_target.flatten()).masked_fill_(ignore_mask.flatten(), 0).sum()
        return smooth.sum().div(weight_sum)      # C++: the divisor first
    return _reduce(smooth, reduction)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim):
    """−Σ_c w_c·target_c·log p_c per sample (``cross_entropy_loss_prob_target``); 'mean' divides by
    the number of samples, whatever the weights."""
    num_classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != num_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {num_classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    log_probs = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        target = dispatcher.call("add.Scalar", dispatcher.call("mul.Scalar", target, 1 - label_smoothing),
                                 label_smoothing / sym_float(num_classes))
    # the samples are counted from log_softmax's output, before the product (C++ evaluates the
    # divisor of ``-(input * target).sum() / (input.sym_numel() / n_classes)`` first)
    empty = reduction == "mean" and log_probs.numel() == 0
    samples = log_probs.numel() // num_classes if reduction == "mean" and not empty else None
    if weight is not None:
        weight_ = _class_weight(weight, input.dim(), class_dim)
        terms = log_probs.mul(target).mul(weight_)
    else:
        terms = log_probs.mul(target)
    if reduction == "none":
        return terms.sum(class_dim).neg()
    if empty:      # an empty batch: NaN, as torch fills it
        return terms.sum().fill_(math.nan).neg()
    total = terms.sum().neg()
    return total if reduction == "sum" else dispatcher.call("div.Scalar", total, samples)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy of probabilities: the operator ``binary_cross_entropy``
    (``aten/native/loss.py``), whose backward is the operator ``binary_cross_entropy_backward``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({torch_size_text(target.shape)}) that is different to the input size "
                         f"({torch_size_text(input.shape)}) "
                         "is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(_broadcast_shapes(target.shape, weight.shape))   # torch.broadcast_shapes' message
    return dispatcher.call("binary_cross_entropy", input, target, weight, _REDUCTIONS.index(reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross-entropy in one stable formula: the operator
    ``binary_cross_entropy_with_logits`` (``aten/native/loss.py``), so autograd records
    ``BinaryCrossEntropyWithLogitsBackward0``. ``pos_weight`` scales the positive term only,
    ``weight`` the whole per-element loss."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({torch_size_text(target.shape)}) must be the same as input size "
                         f"({torch_size_text(input.shape)})")
    return dispatcher.call("binary_cross_entropy_with_logits", input, target, weight, pos_weight,
                           _REDUCTIONS.index(reduction))


# ---- math: the activations torch binds in torch._C._nn
__all__ += ["gelu", "silu", "softplus", "leaky_relu", "logsigmoid"]


@_takes_a_tensor("leaky_relu")
def leaky_relu(input, negative_slope=0.01, inplace=False):
    return dispatcher.call("leaky_relu_" if inplace else "leaky_relu", input, negative_slope)


# torch binds these three in ``torch._C._nn`` (``python_module: nn``), not in ``torch``: their
# arguments go through the parser there (a keyword-only ``approximate``, a Number ``beta``)
_gelu_parser = PythonArgParser(['gelu(Tensor input, *, c10::string_view approximate="none")'])
_softplus_parser = PythonArgParser(["softplus(Tensor input, Scalar beta=1, Scalar threshold=20)"])


def gelu(input, *, approximate="none"):
    r = _gelu_parser.parse((input,), {"approximate": approximate})
    return dispatcher.call("gelu", r.tensor(0), approximate=r.value(1))


@_takes_a_tensor("silu")
def silu(input, inplace=False):
    return dispatcher.call("silu_" if inplace else "silu", input)


def softplus(input, beta=1.0, threshold=20.0):
    r = _softplus_parser.parse((input, beta, threshold), {})
    return dispatcher.call("softplus", r.tensor(0), r.scalar(1), r.scalar(2))


@_takes_a_tensor("log_sigmoid")
def logsigmoid(input):
    """``torch._C._nn.log_sigmoid``: the output of ``log_sigmoid_forward``."""
    return dispatcher.call("log_sigmoid", input)


# ---- layers: each calls the operator torch's does, so a dispatch mode logs the same ops
__all__ += ["conv2d", "max_pool2d", "batch_norm", "layer_norm", "embedding", "sigmoid", "tanh", "conv1d",
            "group_norm"]


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv2d``: ``convolution`` (im2col + matrix product), for 3-d or 4-d input;
    ``padding`` may be "valid" or "same"."""
    return _conv2d(input, weight, bias, stride, padding, dilation, groups)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Maxima of (dilated) windows; ``stride`` defaults to the kernel size. With ``return_indices``
    also each maximum's position ``h·W + w`` in its input plane."""
    out, indices = dispatcher.call("max_pool2d_with_indices", input, kernel_size, [] if stride is None else stride,
                                   padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


__all__ += ["avg_pool2d", "adaptive_avg_pool2d", "pad", "one_hot", "normalize"]


# torch's F.pad is the C++ binding ``torch._C._nn.pad``: its arguments go through the parser, which
# refuses a pad with a float in it (local_response_norm with a float size reaches it so)
_pad_parser = PythonArgParser(['pad(Tensor input, SymIntArrayRef pad, c10::string_view mode="constant", '
                               'double? value=None)'])


def pad(input, pad, mode="constant", value=None):
    """Pads in (left, right) pairs from the last dim backwards; negative ones crop."""
    r = _pad_parser.parse((input, pad, mode, value), {})
    return dispatcher.call("pad", input, r.intlist(1), mode, value)


@_takes_a_tensor("one_hot")
def one_hot(tensor, num_classes=-1):
    return dispatcher.call("one_hot", tensor, num_classes)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input`` divided by its ``p``-norm along ``dim``, at least ``eps`` (``clamp_min``, the
    operator torch's graphs record)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom if out is None else dispatcher.call("div.out", input, denom, out=out)




def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Means of windows; ``stride`` defaults to the kernel size."""
    return dispatcher.call("avg_pool2d", input, kernel_size, [] if stride is None else stride, padding, ceil_mode,
                           count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Means of windows of frames × rows × columns (``torch._C._nn.avg_pool3d``); ``stride`` defaults
    to the kernel size."""
    return dispatcher.call("avg_pool3d", input, kernel_size, [] if stride is None else stride, padding, ceil_mode,
                           count_include_pad, divisor_override)


__all__ += ["avg_pool3d"]


def adaptive_avg_pool3d(input, output_size):
    """Means over ``output_size`` windows that tile the last three dims; a None size keeps the input's."""
    if not isinstance(output_size, int):
        output_size = [input.shape[-3 + i] if v is None else v for i, v in enumerate(output_size)] \
            if len(output_size) == 3 else list(output_size)
    return dispatcher.call("adaptive_avg_pool3d", input, output_size)


__all__ += ["adaptive_avg_pool3d"]


__all__ += ["max_pool3d", "max_pool3d_with_indices", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices"]


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return dispatcher.call("max_pool3d_with_indices", input, kernel_size, [] if stride is None else stride, padding,
                           dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Maxima of (dilated) windows of frames × rows × columns; ``stride`` defaults to the kernel size.
    With ``return_indices`` also each maximum's position ``(t·H + h)·W + w`` in its input volume
    (torch's ``boolean_dispatch``: ``max_pool3d_with_indices``, else the ``max_pool3d`` operator)."""
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return dispatcher.call("max_pool3d", input, kernel_size, [] if stride is None else stride, padding, dilation,
                           ceil_mode)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return dispatcher.call("adaptive_max_pool3d", input, _list_with_default(output_size, input.size()))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The maximum of each of ``output_size`` windows that tile the last three dims (None keeps a
    size); with ``return_indices`` also each maximum's position in its input volume."""
    out, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_avg_pool2d(input, output_size):
    """Means over ``output_size`` windows that tile the input; a None size keeps the input's."""
    if not isinstance(output_size, int):
        output_size = [input.shape[-2 + i] if v is None else v for i, v in enumerate(output_size)] \
            if len(output_size) == 2 else list(output_size)
    return dispatcher.call("adaptive_avg_pool2d", input, output_size)


def _verify_batch_size(size):
    if size[0] * math.prod(size[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         f"{torch_size_text(size)}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel by the batch's statistics (training: and update the running ones in
    place) or by the running statistics (eval)."""
    if training:
        _verify_batch_size(input.shape)
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each sample's channels in ``num_groups`` groups (``aten::group_norm``)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:]))
    return dispatcher.call("group_norm", input, num_groups, weight, bias, eps, False)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv1d``: ``convolution`` of a 2-d or 3-d input (a 2-d convolution of height 1 inside);
    ``padding`` may be "valid" or "same"."""
    return _conv1d(input, weight, bias, stride, padding, dilation, groups)


__all__ += ["conv_transpose1d", "conv_transpose2d"]


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose2d``: the adjoint of ``conv2d`` with the same weight (C_in, C_out / groups,
    kh, kw), so each side grows to ``(n − 1)·stride − 2·padding + dilation·(k − 1) + output_padding + 1``."""
    return _conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def bilinear(input1, input2, weight, bias=None):
    """``torch.bilinear``: ``y = x1ᵀ A x2 + b`` per output feature, through ``_trilinear``."""
    return _bilinear(input1, input2, weight, bias)


__all__ += ["bilinear"]


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv3d``: ``convolution`` of a 4-d or 5-d input (vol2col + matrix product inside);
    ``padding`` may be "valid" or "same"."""
    return _conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose3d``: the adjoint of ``conv3d`` with the same weight (C_in, C_out / groups,
    kt, kh, kw)."""
    return _conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


__all__ += ["conv3d", "conv_transpose3d"]


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose1d``: :func:`conv_transpose2d` over a height of 1."""
    return _conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize each sample over its trailing ``normalized_shape`` dims."""
    return _layer_norm(input, list(normalized_shape), weight, bias, eps)


__all__ += ["rms_norm"]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Each sample divided by the root mean square of its trailing ``normalized_shape`` dims (eps
    added under the root), times ``weight``; ``aten::rms_norm``, a composite on the CPU."""
    return dispatcher.call("rms_norm", input, list(normalized_shape), weight, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` at the indices in ``input``; the row ``padding_idx`` gets no gradient."""
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return _embedding(weight, input, -1 if padding_idx is None else padding_idx, scale_grad_by_freq, sparse)


def _no_grad_embedding_renorm_(weight, input, max_norm, norm_type):
    """``embedding_renorm_`` (``aten/src/ATen/native/Embedding.cpp``), under no_grad on
    ``weight.detach()`` as torch/nn/functional.py calls it: each row ``input`` names, once and in
    sorted order, is scaled in place down to a ``norm_type``-norm of ``max_norm`` (plus 1e-7)."""
    if weight.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.dim()}-dimensional tensor for "
                           "argument #1 'self' (while checking arguments for embedding_renorm_)")
    if input.dtype not in (st.int64, st.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input._type_name()} instead (while checking arguments for "
                           "embedding_renorm_)")
    with no_grad():
        rows = weight.clone()     # scaled here, then written back once: one in-place op, one version
        for i in sorted(set(input.reshape(-1).tolist())):
            row = rows.select(0, i)
            norm = row.norm(norm_type).item()
            if norm > max_norm:
                row.mul_(max_norm / (norm + 1e-7))
        weight.detach().copy_(rows)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


# ---- activations of a reader's own training script (``torch/nn/functional.py``)
__all__ += ["hardtanh", "hardtanh_", "relu6", "elu", "elu_", "selu", "celu", "softsign", "tanhshrink", "softmin"]


@_takes_a_tensor("hardtanh")
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val] (``aten::hardtanh``)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return dispatcher.call("hardtanh_" if inplace else "hardtanh", input, min_val, max_val)


@_takes_a_tensor("hardtanh_")
def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return dispatcher.call("hardtanh_", input, min_val, max_val)


@_takes_a_tensor("relu6")
def relu6(input, inplace=False):
    """min(max(x, 0), 6): ``aten::relu6``, a hardtanh."""
    return dispatcher.call("relu6_" if inplace else "relu6", input)


@_takes_a_tensor("elu")
def elu(input, alpha=1.0, inplace=False):
    return dispatcher.call("elu_" if inplace else "elu", input, alpha)


@_takes_a_tensor("elu_")
def elu_(input, alpha=1.0):
    return dispatcher.call("elu_", input, alpha)


@_takes_a_tensor("selu")
def selu(input, inplace=False):
    """scale·elu(x, alpha) with torch's fixed self-normalising constants."""
    return dispatcher.call("selu_" if inplace else "selu", input)


@_takes_a_tensor("celu")
def celu(input, alpha=1.0, inplace=False):
    return dispatcher.call("celu_" if inplace else "celu", input, alpha)


def softsign(input):
    """x / (1 + |x|), written with operators as torch's is."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax of -x along ``dim``; without one, the legacy choice of dim, with torch's warning."""
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. "
                      "Change the call to include dim=X as an argument.", stacklevel=_stacklevel)
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


# ---- more activations (``torch/nn/functional.py``): each calls the aten operator torch's calls
__all__ += ["hardsigmoid", "hardswish", "mish", "softshrink", "hardshrink", "threshold", "threshold_", "prelu",
            "glu"]


def _activation(name, input, inplace):
    return dispatcher.call(name + "_" if inplace else name, input)


@_takes_a_tensor("hardsigmoid")
def hardsigmoid(input, inplace=False):
    """min(max(x + 3, 0), 6) / 6."""
    return _activation("hardsigmoid", input, inplace)


@_takes_a_tensor("hardswish")
def hardswish(input, inplace=False):
    """x · hardsigmoid(x)."""
    return _activation("hardswish", input, inplace)


@_takes_a_tensor("mish")
def mish(input, inplace=False):
    """x · tanh(softplus(x))."""
    return _activation("mish", input, inplace)


@_takes_a_tensor("softshrink")
def softshrink(input, lambd=0.5):
    return dispatcher.call("softshrink", input, lambd)


@_takes_a_tensor("hardshrink")
def hardshrink(input, lambd=0.5):
    return dispatcher.call("hardshrink", input, lambd)


def threshold(input, threshold, value, inplace=False):
    """``value`` where x <= ``threshold``, else x."""
    return dispatcher.call("threshold_" if inplace else "threshold", input, threshold, value)


def threshold_(input, threshold, value):
    return dispatcher.call("threshold_", input, threshold, value)


def prelu(input, weight):
    """x where x > 0, else weight · x, one weight per channel (dim 1) or one for all."""
    return dispatcher.call("prelu", input, weight)


def glu(input, dim=-1):
    """The first half of ``input`` along ``dim`` times the sigmoid of the second half."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return dispatcher.call("glu", input, dim)


# ---- channel dropout (``torch/nn/functional.py``): whole channels zeroed, through ``feature_dropout``
__all__ += ["dropout1d", "dropout2d", "dropout3d"]


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p, training, inplace):
    return dispatcher.call("feature_dropout_" if inplace else "feature_dropout", input, p, training)


def _unbatched_feature_dropout(input, p, training, inplace, batched):
    """An unbatched input gets a batch of one for the call, taken off again after."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, L) or (C, L) input with probability ``p``."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that dropout1d exists "
            "to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
            "optional batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched_feature_dropout(input, p, training, inplace, input.dim() == 3)


def _warn_dims(name, ndim, spatial):
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in an error in a "
        f"future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
        f"{name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
        f"dimension, and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, H, W) input; a 3-d input is taken as (N, C, L), as torch does."""
    _check_p(p)
    if input.dim() not in (3, 4):
        _warn_dims("dropout2d", input.dim(), 2)
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    if input.dim() not in (4, 5):
        _warn_dims("dropout3d", input.dim(), 3)
    return _unbatched_feature_dropout(input, p, training, inplace, input.dim() == 5)


# ---- more losses and similarities (``torch/nn/functional.py``)
__all__ += ["smooth_l1_loss", "huber_loss", "kl_div", "cosine_similarity", "pairwise_distance"]


def _broadcast_pair(input, target):
    """``torch.broadcast_tensors`` of the two."""
    shape = broadcast_shapes(input.shape, target.shape)
    return (t if t.shape == shape else t.expand(shape) for t in (input, target))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below ``beta``, linear above (beta 0 is the L1 loss): ``aten::smooth_l1_loss``."""
    _check_target_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return _reduce(input.sub(target).abs(), reduction)
    return dispatcher.call("smooth_l1_loss", input, target, _REDUCTIONS.index(reduction), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic below ``delta``, delta-scaled linear above: ``aten::huber_loss``; with ``weight``,
    the unreduced loss times the weight, then reduced."""
    _check_target_size(input, target)
    _check_reduction(reduction)
    input, target = _broadcast_pair(input, target)
    if weight is None:
        return dispatcher.call("huber_loss", input, target, _REDUCTIONS.index(reduction), delta)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    return _reduce(dispatcher.call("huber_loss", input, target, 0, delta) * weight, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Σ target·(log target - input), ``input`` being log-probabilities; 'batchmean' divides the
    sum by the batch size (the mathematical KL divergence), 'mean' by every element, with torch's warning."""
    if size_average is not None or reduce is not None:
        enum = _REDUCTIONS.index(_reduction.legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        if reduction != "batchmean":
            _check_reduction(reduction)
        enum = _REDUCTIONS.index("sum" if reduction == "batchmean" else reduction)
    reduced = dispatcher.call("kl_div", input, target, enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.shape[0]
    return reduced


__all__ += ["margin_ranking_loss", "hinge_embedding_loss", "poisson_nll_loss", "cosine_embedding_loss",
            "triplet_margin_loss", "gaussian_nll_loss", "multilabel_soft_margin_loss"]


def _reduction_enum(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _REDUCTIONS.index(_reduction.legacy_get_string(size_average, reduce))
    _check_reduction(reduction)
    return _REDUCTIONS.index(reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target·(input1 - input2) + margin) (``aten::margin_ranking_loss``); the three
    inputs must have one number of dims (torch checks it here, before the operator)."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_torch_size(input1)}, input2: {_torch_size(input2)}, "
                           f"target: {_torch_size(target)} ")
    return dispatcher.call("margin_ranking_loss", input1, input2, target, margin, enum)


def _torch_size(t):
    """A tensor's size as torch's message prints it."""
    return torch_size_text(t.shape)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``aten::hinge_embedding_loss``: input where target is 1, max(0, margin - input) where it is -1."""
    return dispatcher.call("hinge_embedding_loss", input, target, margin,
                           _reduction_enum(size_average, reduce, reduction))


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """``aten::poisson_nll_loss``; an unknown reduction is a ValueError here, as in torch."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return dispatcher.call("poisson_nll_loss", input, target, log_input, full, eps, _REDUCTIONS.index(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``aten::cosine_embedding_loss``: 1 - cos(input1, input2) for target 1, max(0, cos - margin) for -1."""
    return dispatcher.call("cosine_embedding_loss", input1, input2, target, margin,
                           _reduction_enum(size_average, reduce, reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``aten::triplet_margin_loss``; torch refuses a margin that is not positive before the operator."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    # ``float p`` in the schema: torch's binding hands the operator a double (``norm(x, 2.0)``)
    p = float(p) if type(p) is int else p
    return dispatcher.call("triplet_margin_loss", anchor, positive, negative, margin, p, eps, swap, enum)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5·(log var + (input - target)²/var), var clamped to ``eps`` without recording it; written
    in Python in torch too (torch/nn/functional.py), so the graph is these operators'."""
    var = _gaussian_var(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _gaussian_var(input, var):
    """A float var broadcast to input; a var with input's shape less its last dim, or differing
    from it in one dim (one variance shared along it), accepted as torch accepts them."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        return var * dispatcher.call("ones_like", input)
    if (var < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.size() == input.size():
        return var
    if input.size()[:-1] == var.size():
        return var.unsqueeze(-1)
    if input.dim() == var.dim() and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
        return var
    raise ValueError("var is of incorrect size")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(target·logsigmoid(input) + (1 - target)·logsigmoid(-input)), averaged over the classes
    (the last dim), then reduced; Python in torch too."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (``aten::cosine_similarity``)."""
    return dispatcher.call("cosine_similarity", x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """‖x1 - x2 + eps‖_p along the last dim (``aten::pairwise_distance``)."""
    return dispatcher.call("pairwise_distance", x1, x2, p, eps, keepdim)


# ---- attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.
# ``scaled_dot_product_attention`` follows torch's ``aten/src/ATen/native/transformers/attention.cpp``:
# the inputs validated, an empty input answered with zeros, then the backend the CPU would pick
# (``_fused_sdp_choice_cpp`` in ``aten/native/attention.py``). The fused flash kernel is one
# operator, ``_scaled_dot_product_flash_attention_for_cpu``, with its own backward (4-d inputs of
# one floating dtype, no dropout, ...). Everything else runs the *math* backend
# (``_scaled_dot_product_attention_math``), written with internals' operators so autograd records
# it: float16 and bfloat16 computed in float32, the scale's square root multiplying both q and k
# before their product (which keeps the product's range small), a boolean mask as 0 / -inf added
# to the scores, the softmax leaving a fully masked row at zero where a plain softmax would give
# NaN, and dropout drawn from torch's random stream. The two backends sum in different orders,
# so they agree to rounding, not bit for bit.
__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _convert_boolean_attn_mask(mask, dtype):
    """True keeps a position (adds 0), False removes it (adds -inf); a float mask is added as is."""
    if mask is None or mask.dtype != st.bool_:
        return mask
    return where(mask.logical_not(), -math.inf, scalar_tensor(0.0, dtype=dtype, device=mask.device))


def _safe_softmax(attn, dim):
    """softmax, except that a row whose every entry is -inf gives zeros (``at::_safe_softmax``).

    Its gradient is zero on such a row, as torch's (``_softmax_backward_data`` of the zeroed
    result): the row's scores are replaced by zeros before the softmax, so that its backward never
    multiplies by the NaNs a plain softmax of -infs would give."""
    fully_masked = attn.eq(-math.inf).all(dim, keepdim=True)
    out = where(fully_masked, zeros_like(attn), attn).softmax(dim)
    return where(fully_masked, zeros_like(out), out)


def _cpp_type_name(dtype):
    """The C++ element type's name, which torch's message prints ("float", "c10::Half")."""
    name = dtype.torch_name
    return f"c10::{name}" if name in ("Half", "BFloat16") else name.lower()


# The element types as torch's TypeMeta names them in messages (typeid names of the C++ types).
_TYPE_META_NAMES = {"Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char",
                    "Byte": "unsigned char", "Bool": "bool", "Double": "double", "Float": "float",
                    "Half": "c10::Half", "BFloat16": "c10::BFloat16"}


def _check_sdpa_inputs(query, key, value, attn_mask=None):
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_type_name(query.dtype)} key.dtype: {_cpp_type_name(key.dtype)} and value.dtype: "
                           f"{_cpp_type_name(value.dtype)} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    # validate_sdpa_input: an integer mask is refused, not added as numbers
    if attn_mask is not None and attn_mask.dtype not in (st.bool_, st.float32, query.dtype):
        def name(dtype):
            return _TYPE_META_NAMES.get(dtype.torch_name, dtype.torch_name)
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {name(attn_mask.dtype)} and  query.dtype: {name(query.dtype)} instead.")


def _empty_attention(query, key, value):
    """An empty query, key or value: zeros of the output's shape, joined to the graph through the
    inputs' sums times 0 (torch's early return, so the gradients are zeros, not missing)."""
    out = zeros((*query.shape[:-1], value.size(-1)), dtype=query.dtype, device=query.device)
    total = dispatcher.call("add.Tensor", dispatcher.call("add.Tensor", query.sum(), key.sum()), value.sum())
    return out.add(dispatcher.call("mul.Scalar", total, 0))


def _group_query_key_value(query, key, value, enable_gqa):
    """``pre_process_group_query_attention_input``: with ``enable_gqa``, key and value heads
    repeated (``repeat_interleave``) up to the query's, when they divide it."""
    if not enable_gqa:
        return key, value
    heads, key_heads, value_heads = query.size(-3), key.size(-3), value.size(-3)
    if heads == key_heads == value_heads:
        return key, value
    if heads % key_heads or heads % value_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return key.repeat_interleave(heads // key_heads, -3), value.repeat_interleave(heads // value_heads, -3)


def _scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    origin = query.dtype
    # float16 and bfloat16 are computed in float32 and the output cast back
    query, key, value = (t.to(st.float32) if t.dtype in (st.float16, st.bfloat16) else t for t in (query, key, value))
    negative = scale is not None and scale < 0.0
    base = abs(scale) if negative else scale if scale is not None else 1.0 / math.sqrt(query.size(-1))
    factor = math.sqrt(base)      # computed in double, as torch's SymFloat is
    # torch's math kernel multiplies by a C++ Scalar: mul.Scalar (MulBackward1), not a wrapped number
    query = dispatcher.call("mul.Scalar", query, 0.0 - factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        causal = ones((query.size(-2), key.size(-2)), dtype=st.bool_, device=query.device).tril()
        attn_mask = _convert_boolean_attn_mask(causal, query.dtype)
    key, value = _group_query_key_value(query, key, value, enable_gqa)
    attn = matmul(query, dispatcher.call("mul.Scalar", key.transpose(-2, -1), factor))
    if attn_mask is not None:
        attn = attn.add(attn_mask)
    attn = _safe_softmax(attn, -1)
    if dropout_p > 0.0:     # aten::dropout itself: its check of p raises RuntimeError, not F.dropout's ValueError
        attn = dispatcher.call("dropout", attn, dropout_p, True)
    return matmul(attn, value).to(origin)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q kᵀ · scale + mask) v over the last two dims, with dropout on the weights;
    ``scale`` defaults to 1/√E, E = ``query.size(-1)``. With ``enable_gqa`` the key and value
    may have fewer heads (dim -3) than the query, each serving a group of query heads.

    Under autocast the call is lower_precision_fp, as torch's operator is on the CPU and CUDA:
    query, key, value and a floating mask cast to the region's dtype (float64 ones stay)."""
    device_type = query.device.type if isinstance(query, Tensor) else None
    if device_type in ("cpu", "cuda") and is_autocast_enabled(device_type):
        return lower_precision_call(_attention, device_type, query, key, value, attn_mask, dropout_p, is_causal,
                                    scale, enable_gqa)
    return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    _check_sdpa_inputs(query, key, value, attn_mask)
    if query.numel() == 0 or key.numel() == 0 or value.numel() == 0:
        return _empty_attention(query, key, value)
    backend = SDPBackend.MATH
    if query.device.type == "cpu":
        backend = _fused_sdp_choice_cpp(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    attn_mask = _convert_boolean_attn_mask(attn_mask, query.dtype)
    if backend == SDPBackend.FLASH_ATTENTION:
        # a mask and is_causal together are allowed here (the kernel applies both), not in math
        return dispatcher.call("_scaled_dot_product_flash_attention_for_cpu", query, key, value, dropout_p, is_causal,
                               attn_mask=attn_mask, scale=scale)[0]
    return _scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


# ---- multi-head attention (``multi_head_attention_forward`` and its helpers in torch/nn/functional.py)
def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask as a float one of ``target_type`` (True → -inf); a float mask unchanged."""
    if mask is None:
        return None
    if mask.dtype != st.bool_ and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    if mask.dtype == st.bool_:
        mask = zeros_like(mask, dtype=target_type).masked_fill_(mask, -math.inf)
    return mask


def _none_or_dtype(input):
    return None if input is None else input.dtype


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the call is batched ((L, N, E) query) or not ((L, E)); the other arguments' ranks
    must agree with it (torch raises AssertionError for these)."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                             "query tensor")
    batched = query.dim() == 3
    want, kind = (3, "batched (3-D)") if batched else (2, "unbatched (2-D)")
    if key.dim() != want or value.dim() != want:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {want}-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != want - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {want - 1}-D "
                             f"but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{torch_size_text(attn_mask.shape)}")
    return batched


def _split_heads(proj, count, embed_dim):
    """(…, count·E) → ``count`` contiguous (…, E) tensors, through torch's one reshaping copy."""
    proj = proj.unflatten(-1, (count, embed_dim)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
    return [proj[i] for i in range(count)]


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v through the packed (3E, E) weight: one product when q, k and v are one tensor
    (self-attention), two when only k and v are, three otherwise."""
    embed_dim = q.size(-1)
    if k is v:
        if q is k:
            return tuple(_split_heads(linear(q, w, b), 3, embed_dim))
        w_q, w_kv = w.split([embed_dim, embed_dim * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed_dim, embed_dim * 2])
        return (linear(q, w_q, b_q), *_split_heads(linear(k, w_kv, b_kv), 2, embed_dim))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _check_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    """The float mask as (1 or N·heads, L, S)."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {torch_size_text(attn_mask.shape)}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {torch_size_text(attn_mask.shape)}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _masks(query, key_padding_mask, attn_mask, is_causal, need_weights):
    """Both masks as float; a causal hint without padding and without weights drops the mask
    (the attention applies causality itself)."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        return key_padding_mask, None, is_causal
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
    return key_padding_mask, attn_mask, is_causal and key_padding_mask is None


def _append_key_position(k, v, extra_k, extra_v, attn_mask, key_padding_mask, dim):
    """One more key/value position along ``dim`` (``bias_k``/``bias_v`` or zeros); the masks
    gain a column."""
    k, v = cat([k, extra_k], dim), cat([v, extra_v], dim)
    attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
    key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    return k, v, attn_mask, key_padding_mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Query (L, N, E), key and value (S, N, E) (or unbatched without N): project, split into
    heads, attend, merge the heads and project out. Returns (output, weights): the weights
    (N, L, S) averaged over heads, or per head, or None when ``need_weights`` is false (then
    the attention is ``scaled_dot_product_attention``)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _masks(query, key_padding_mask, attn_mask, is_causal, need_weights)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    q, k, v = _project_in(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                          q_proj_weight, k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        attn_mask = _check_attn_mask(attn_mask, tgt_len, key.shape[0], bsz, num_heads)
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")
    if bias_k is not None:
        k, v, attn_mask, key_padding_mask = _append_key_position(
            k, v, bias_k.repeat(1, bsz, 1), bias_v.repeat(1, bsz, 1), attn_mask, key_padding_mask, 0)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads_or_static(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads_or_static(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        zero = zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v, attn_mask, key_padding_mask = _append_key_position(k, v, zero, zero, attn_mask, key_padding_mask, 1)
    src_len = k.size(1)
    if key_padding_mask is not None:
        attn_mask = _merge_padding(key_padding_mask, attn_mask, bsz, num_heads, src_len)
    dropout_p = dropout_p if training else 0.0
    attend = _attend_with_weights if need_weights else _attend_fused
    out, weights = attend(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads, tgt_len, src_len)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if weights is not None and average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def _heads_or_static(projected, static, name, batch_heads, head_dim):
    """The projected keys (or values) split into heads as (N·heads, S, E/heads), or in their place
    a given ``static_k`` (``static_v``) of that layout, checked as torch checks it (the
    projection is still computed, as in torch, and then unused)."""
    if static is None:
        return projected.view(projected.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


def _project_in(query, key, value, in_proj_weight, in_proj_bias, separate, w_q, w_k, w_v):
    if separate:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        if w_q is None or w_k is None or w_v is None:
            missing = "q" if w_q is None else "k" if w_k is None else "v"
            raise AssertionError(f"use_separate_proj_weight is True but {missing}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    if key.shape != value.shape:
        raise AssertionError(f"key shape {torch_size_text(key.shape)} does not match value shape "
                             f"{torch_size_text(value.shape)}")
    if in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)


def _merge_padding(key_padding_mask, attn_mask, bsz, num_heads, src_len):
    """The (N, S) padding mask repeated per head as (N·heads, 1, S) and added to the attn mask."""
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    padding = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
        bsz * num_heads, 1, src_len)
    return padding if attn_mask is None else attn_mask.add(padding)


def _attend_with_weights(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads, tgt_len, src_len):
    """bmm, softmax, dropout, bmm, keeping the weights (N, heads, L, S); the scale 1/√E goes on q."""
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    q_scaled = q.mul(math.sqrt(1.0 / float(q.shape[2])))
    if attn_mask is not None:
        weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        weights = bmm(q_scaled, k.transpose(-2, -1))
    weights = softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    out = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, q.shape[2] * num_heads)
    return out, weights.view(bsz, num_heads, tgt_len, src_len)


def _attend_fused(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads, tgt_len, src_len):
    """The heads as (N, heads, L, E/heads) through ``scaled_dot_product_attention``; no weights."""
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    head_dim = q.shape[2]
    q, k, v = (t.view(bsz, num_heads, -1, head_dim) for t in (q, k, v))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, head_dim * num_heads), None


# ---- resizing (``interpolate`` in torch/nn/functional.py and the ``.vec`` overloads of the
# upsample operators, ``upsample::compute_output_size`` in aten/src/ATen/native/UpSample.cpp)
__all__ += ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "embedding_bag"]

_INTERPOLATE_OPS = {(3, "nearest"): "upsample_nearest1d", (4, "nearest"): "upsample_nearest2d",
                    (5, "nearest"): "upsample_nearest3d", (3, "nearest-exact"): "_upsample_nearest_exact1d",
                    (4, "nearest-exact"): "_upsample_nearest_exact2d",
                    (5, "nearest-exact"): "_upsample_nearest_exact3d",
                    (3, "linear"): "upsample_linear1d", (4, "bilinear"): "upsample_bilinear2d",
                    (5, "trilinear"): "upsample_trilinear3d", (4, "bicubic"): "upsample_bicubic2d"}
_WANTS_DIM = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _interpolate_sizes(input, size, scale_factor, recompute_scale_factor):
    """(output_size, scale_factors): exactly one given, each a list over the spatial dims."""
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if scale_factor is None and recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            return list(size), None
        return [size] * dim, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "scale_factor in (s1, s2, ...,sK) format.")
        scales = list(scale_factor)
    else:
        scales = [scale_factor] * dim
    # the operator's own sizes: floor(in · scale) in double; recomputed scales are then dropped
    output_size = [int(float(input.shape[i + 2]) * float(scales[i])) for i in range(dim)]
    return output_size, None if recompute_scale_factor else [float(s) for s in scales]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims: ``nearest`` and ``nearest-exact`` (3-D to 5-D input), ``linear``
    (3-D), ``bilinear`` and ``bicubic`` (4-D), ``trilinear`` (5-D), ``area`` (adaptive average
    pooling), and with ``antialias`` the filtered ``bilinear``, ``bicubic`` and ``lanczos`` (4-D);
    each a call of torch's upsample operator with the output size and the scales the kernel
    divides by."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scales = _interpolate_sizes(input, size, scale_factor, recompute_scale_factor)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if input.dim() == 4 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:        # the anti-aliased operators, filters stretched over the shrinking scale
        return dispatcher.call(f"_upsample_{mode}2d_aa", input, output_size, align_corners,
                               *(scales or [None, None]))
    if mode == "area":
        pool = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}.get(input.dim())
        if pool is not None:
            return pool(input, output_size)
    op = _INTERPOLATE_OPS.get((input.dim(), mode))
    if op is None:
        _refuse_interpolate(input, mode)
    scales = scales or [None] * len(output_size)
    if mode in ("nearest", "nearest-exact"):
        return dispatcher.call(op, input, output_size, *scales)
    return dispatcher.call(op, input, output_size, align_corners, *scales)


def _refuse_interpolate(input, mode):
    want = _WANTS_DIM.get(mode)
    if want is not None and input.dim() in (3, 4, 5) and want != input.dim():
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
        f"linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated in torch in favour of ``interpolate``, which it calls."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- sampling at grid points (``grid_sample`` and ``affine_grid`` in torch/nn/functional.py)
__all__ += ["grid_sample", "affine_grid"]

_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_DEFAULT_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                          "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                          "documentation of grid_sample for details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Read ``input`` at the normalised (x, y) points of ``grid``: torch's ``grid_sampler``
    operator with the mode and padding as the numbers the operator takes."""
    if mode not in _GRID_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_DEFAULT_WARNING, stacklevel=2)
        align_corners = False
    return dispatcher.call("grid_sampler", input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode],
                           align_corners)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps (N×2×3 for images, N×3×4 for volumes): each
    output pixel's normalised position, mapped by theta; ``affine_grid_generator`` underneath."""
    if align_corners is None:
        warnings.warn(_ALIGN_DEFAULT_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got torch.{theta.dtype.name}")
    size = list(size)
    rows, kind = {4: (2, "2D"), 5: (3, "3D")}.get(len(size), (None, None))
    if rows is None:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if theta.dim() != 3 or theta.shape[-2] != rows or theta.shape[-1] != rows + 1:
        raise ValueError(f"Expected a batch of {kind} affine matrices of shape Nx{rows}x{rows + 1} for size "
                         f"{size}. Got torch.Size({list(theta.shape)}).")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the "
                      "documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return dispatcher.call("affine_grid_generator", theta, size, align_corners)


# ---- bags of embeddings (``embedding_bag`` in torch/nn/functional.py)
_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Each bag's rows of ``weight`` reduced to one (sum, mean or max): bags are the rows of a
    2-D ``input``, or the runs of a 1-D one starting at ``offsets``."""
    if weight.dtype == st.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({torch_size_text(per_sample_weights.shape)}) is not "
                         f"None, then it must have the same shape as the input ({torch_size_text(input.shape)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    input, offsets, per_sample_weights, include_last_offset = _bags_of(input, offsets, per_sample_weights,
                                                                       include_last_offset)
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    return dispatcher.call("embedding_bag.padding_idx", weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode],
                           sparse, per_sample_weights, include_last_offset, padding_idx)[0]


def _bags_of(input, offsets, per_sample_weights, include_last_offset):
    """A 2-D input becomes one flat run with an offset every row; a 1-D one needs its offsets."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        # pin_memory given, as torch.arange's Python binding passes every factory option it has
        offsets = dispatcher.call("arange.start_step", 0, input.numel(), input.shape[1], dtype=input.dtype,
                                  device=input.device, pin_memory=False)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input.reshape(-1), offsets, per_sample_weights, False
    if input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, offsets, per_sample_weights, include_last_offset
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")


# ---- sliding blocks, pixel shuffling, instance norm, adaptive max pooling, margin losses
# (torch/nn/functional.py: thin fronts over the aten operators of the same names)
__all__ += ["unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "instance_norm", "adaptive_max_pool1d",
            "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
            "soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss"]


def _pair(value):
    """torch's ``_pair``: an int (or any non-iterable) repeated twice, an iterable as a tuple."""
    try:
        return tuple(value)
    except TypeError:
        return (value, value)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of a (N, C, H, W) or (C, H, W) input as columns (N, C·kh·kw, L)
    (``aten::im2col``)."""
    return dispatcher.call("im2col", input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns (N, C·kh·kw, L) summed back into an image of ``output_size`` (``aten::col2im``),
    the adjoint of :func:`unfold`."""
    return dispatcher.call("col2im", input, _pair(output_size), _pair(kernel_size), _pair(dilation),
                           _pair(padding), _pair(stride))


def pixel_shuffle(input, upscale_factor):
    """(*, C·r², H, W) -> (*, C, H·r, W·r) (``aten::pixel_shuffle``)."""
    return dispatcher.call("pixel_shuffle", input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H·r, W·r) -> (*, C·r², H, W) (``aten::pixel_unshuffle``)."""
    return dispatcher.call("pixel_unshuffle", input, downscale_factor)


def _verify_spatial_size(size):
    """Instance norm needs more than one spatial element to take statistics over."""
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"torch.Size({list(size)})")      # torch's message names its own Size


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample over its spatial positions (``aten::instance_norm``,
    batch norm over a batch of one with N·C channels)."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return dispatcher.call("instance_norm", input, weight, bias, running_mean, running_var, use_input_stats,
                           momentum, eps, False)


def _list_with_default(out_size, defaults):
    """An output size whose None entries take the input's sizes (torch's ``_list_with_default``)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [d if v is None else v for v, d in zip(out_size, list(defaults)[-len(out_size):])]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return dispatcher.call("adaptive_max_pool2d", input, _list_with_default(output_size, input.size()))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The maximum of each of ``output_size`` windows that tile the input (None keeps a size);
    with ``return_indices`` also each maximum's position ``h·W + w`` in its plane."""
    out, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return dispatcher.call("adaptive_max_pool1d", input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` over the last dim of a (N, C, L) or (C, L) input."""
    out, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


__all__ += ["max_pool1d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d"]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return dispatcher.call("max_pool1d_with_indices", input, kernel_size, [] if stride is None else stride,
                           padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Maxima of (dilated) windows along the last dim of a (N, C, L) or (C, L) input; with
    ``return_indices`` also each maximum's position along L (torch's ``boolean_dispatch`` picks the
    operator with indices or ``max_pool1d``, which has a no-grad CPU loop of its own)."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return dispatcher.call("max_pool1d", input, kernel_size, [] if stride is None else stride, padding, dilation,
                           ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Means of windows along the last dim; ``stride`` defaults to the kernel size."""
    return dispatcher.call("avg_pool1d", input, kernel_size, [] if stride is None else stride, padding, ceil_mode,
                           count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """Means over ``output_size`` windows that tile the last dim."""
    return dispatcher.call("adaptive_avg_pool1d", input, output_size)


__all__ += ["lp_pool1d", "lp_pool2d", "lp_pool3d", "local_response_norm"]


def _lp_finish(out, norm_type, window):
    # torch's line: the sign times the ReLU of the magnitude keeps a negative mean (an odd power
    # of negative inputs) at zero, so the root below sees no negative base
    return (out.sign() * relu(out.abs())).mul(window).pow(1.0 / norm_type)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, max_pool, avg_pool, window):
    """The ``norm_type``-norm of each window (``torch/nn/functional.py``'s ``lp_pool1d/2d/3d``):
    the mean of the powers (``avg_pool``) times the window's ``window`` elements, to the power
    1/p; p = ±inf is the largest or smallest magnitude (``max_pool``), as torch's."""
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, window)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The ``norm_type``-norm of each window along the last dim (:func:`_lp_pool`)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, max_pool1d, avg_pool1d, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """:func:`lp_pool1d` over windows of the last two dims (``avg_pool2d``, times kh·kw)."""
    kw, kh = _pair(kernel_size)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, max_pool2d, avg_pool2d, kw * kh)


def _single(value):
    """torch's ``_single``: an int as a 1-tuple, an iterable as a tuple."""
    try:
        return tuple(value)
    except TypeError:
        return (value,)


def _triple(value):
    """torch's ``_triple``: an int repeated three times, an iterable as a tuple."""
    try:
        return tuple(value)
    except TypeError:
        return (value, value, value)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """:func:`lp_pool1d` over windows of the last three dims (``avg_pool3d``, times kd·kh·kw;
    ``max_pool3d`` for p = ±inf), as torch's."""
    kd, kw, kh = _triple(kernel_size)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, max_pool3d, avg_pool3d, kd * kw * kh)


__all__ += ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch's ``_unpool_output_size``: the size max pooling came from, (n − 1)·stride + k − 2·pad
    per dim, or ``output_size`` (its spatial dims, or all of them) when it is within a stride of it."""
    input_size = input.size()
    n = len(kernel_size)
    default_size = [(input_size[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default_size
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(n):
        min_size, max_size = default_size[d] - stride[d], default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and '
                             f'{max_size})')
    for d in range(n):
        if output_size[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={output_size[d]}")
    return output_size


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool1d`: each value written back at its index along the
    last dim, zeros elsewhere. As torch's: ``max_unpool2d`` over a trailing dim of one."""
    kernel_size = _single(kernel_size)
    stride = _single(stride) if stride is not None else kernel_size
    padding = _single(padding)
    output_size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    output_size = list(output_size) + [1] if isinstance(output_size, list) else tuple(output_size) + (1,)
    return dispatcher.call("max_unpool2d", input.unsqueeze(-1), indices.unsqueeze(-1), output_size).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool2d` (``aten::max_unpool2d``): each value written back at
    its index ``h·W + w`` in a zeroed plane of the size pooling came from (or ``output_size``)."""
    kernel_size = _pair(kernel_size)
    stride = _pair(stride) if stride is not None else kernel_size
    padding = _pair(padding)
    output_size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return dispatcher.call("max_unpool2d", input, indices, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool3d` (``aten::max_unpool3d``, which also takes the
    stride and padding, as torch's does)."""
    kernel_size = _triple(kernel_size)
    stride = _triple(stride) if stride is not None else kernel_size
    padding = _triple(padding)
    output_size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return dispatcher.call("max_unpool3d", input, indices, output_size, stride, padding)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each value divided by (k + alpha · mean of the squares over ``size`` neighbouring channels)
    to the power beta (``torch/nn/functional.py``): the squares, padded by size//2 channels before and
    (size-1)//2 after, averaged by a pooling one channel wide: ``avg_pool2d`` over (N, 1, C, L) for a
    3-d input, ``avg_pool3d`` over (N, 1, C, H, rest) for a wider one, as torch builds it (so the
    graph holds torch's ``AvgPool3DBackward0``)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target·input)), the two-class logistic loss (``aten::soft_margin_loss``)."""
    return dispatcher.call("soft_margin_loss", input, target, _reduction_enum(size_average, reduce, reduction))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """The multi-class hinge loss: per sample, the mean over the other classes of
    max(0, margin - x[y] + x[j])^p (``aten::multi_margin_loss``)."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return dispatcher.call("multi_margin_loss", input, target, p, margin, weight, enum)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: per sample, the sum over its target classes j (the target row
    up to its first -1) and the other classes d of max(0, 1 - x[j] + x[d]), over C
    (``aten::multilabel_margin_loss``)."""
    return dispatcher.call("multilabel_margin_loss", input, target, _reduction_enum(size_average, reduce, reduction))


__all__ += ["ctc_loss"]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The Connectionist Temporal Classification loss (``torch.ctc_loss``, ``aten/native/LossCTC.cpp``):
    minus the log of the summed probability of every frame-by-frame labelling of ``log_probs``
    (T, N, C) that collapses to the target; lengths as tensors or as sequences of ints."""
    _check_reduction(reduction)
    return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _REDUCTIONS.index(reduction),
                     zero_infinity)


# ---- in-place activations, random activations and dropouts, and the rest of torch's functional
# names (``torch/nn/functional.py``): most are torch's own functions under another name
__all__ += ["relu_", "leaky_relu_", "selu_", "celu_", "rrelu", "rrelu_", "alpha_dropout", "feature_alpha_dropout",
            "pdist", "channel_shuffle", "native_channel_shuffle", "max_pool2d_with_indices",
            "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
            "fractional_max_pool3d_with_indices", "triplet_margin_with_distance_loss"]


@_takes_a_tensor("relu_")
def relu_(input):
    """``torch.relu_``."""
    return dispatcher.call("relu_", input)


@_takes_a_tensor("leaky_relu_")
def leaky_relu_(input, negative_slope=0.01):
    """``torch._C._nn.leaky_relu_``."""
    return dispatcher.call("leaky_relu_", input, negative_slope)


@_takes_a_tensor("selu_")
def selu_(input):
    return dispatcher.call("selu_", input)


@_takes_a_tensor("celu_")
def celu_(input, alpha=1.0):
    return dispatcher.call("celu_", input, alpha)


@_takes_a_tensor("rrelu")
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """x where x >= 0, else a·x, with a drawn from U(lower, upper) per element while training (from
    the CPU generator, one draw per non-positive element, so a seed gives torch's slopes), and
    a = (lower + upper) / 2 otherwise (``aten::rrelu``, over ``rrelu_with_noise``)."""
    return dispatcher.call("rrelu_" if inplace else "rrelu", input, lower, upper, training)


@_takes_a_tensor("rrelu_")
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return dispatcher.call("rrelu_", input, lower, upper, training)


@_takes_a_tensor("alpha_dropout")
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value and the
    result is scaled and shifted to keep zero mean and unit variance (``aten::alpha_dropout``)."""
    _check_p(p)
    return dispatcher.call("alpha_dropout_" if inplace else "alpha_dropout", input, p, training)


@_takes_a_tensor("feature_alpha_dropout")
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``alpha_dropout`` of whole channels (one draw per (sample, channel))."""
    _check_p(p)
    return dispatcher.call("feature_alpha_dropout_" if inplace else "feature_alpha_dropout", input, p, training)


@_takes_a_tensor("pdist")
def pdist(input, p=2):
    """The p-norm distances between the rows of an (N, M) input, the pairs i < j in row-major
    order: N·(N - 1)/2 of them (``torch.pdist``)."""
    return dispatcher.call("pdist", input, p)


def channel_shuffle(input, groups):
    """(N, C, *) with its C channels, taken as ``groups`` groups, interleaved (``torch.channel_shuffle``)."""
    return dispatcher.call("channel_shuffle", input, groups)


def native_channel_shuffle(input, groups):
    """``torch.native_channel_shuffle``: the shuffle without ``channel_shuffle``'s argument checks."""
    return dispatcher.call("native_channel_shuffle", input, groups)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool2d`` with its indices, whatever ``return_indices`` says (torch's boolean dispatch
    picks this function for ``max_pool2d(..., return_indices=True)``)."""
    return dispatcher.call("max_pool2d_with_indices", input, kernel_size, [] if stride is None else stride,
                           padding, dilation, ceil_mode)


def _fractional_output_size(input, dims, output_size, output_ratio):
    """The output size given, or the ratio's share of each spatial size, rounded down."""
    name = f"fractional_max_pool{dims}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        return output_size
    if dims == 2:
        if len(output_ratio) > 2:       # (a single float has no len: torch's TypeError)
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _pair(output_ratio)
    else:
        ratio = _triple(output_ratio)
    return [int(input.size(d - dims) * ratio[d]) for d in range(dims)]


def _fractional_max_pool(input, dims, kernel_size, output_size, output_ratio, _random_samples):
    output_size = _fractional_output_size(input, dims, output_size, output_ratio)
    if _random_samples is None:
        # one sample per spatial dim for each (sample, channel), drawn as torch draws them
        n_batch = 1 if input.dim() == dims + 1 else input.size(0)
        _random_samples = rand(n_batch, input.size(-dims - 1), dims, dtype=input.dtype, device=input.device)
    return dispatcher.call(f"fractional_max_pool{dims}d", input, kernel_size, output_size, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Max pooling over kh×kw windows at pseudo-random starts (Graham's fractional max pooling),
    to ``output_size`` or ``output_ratio`` times the input's size; the maxima and their indices."""
    return _fractional_max_pool(input, 2, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    result = _fractional_max_pool(input, 2, kernel_size, output_size, output_ratio, _random_samples)
    return result if return_indices else result[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """The 3-d form of :func:`fractional_max_pool2d_with_indices`, over kt×kh×kw windows."""
    return _fractional_max_pool(input, 3, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    result = _fractional_max_pool(input, 3, kernel_size, output_size, output_ratio, _random_samples)
    return result if return_indices else result[0]


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with any distance function (``pairwise_distance`` by
    default); with ``swap``, d(a, n) is replaced by d(p, n) where that is smaller. A composite of
    operators, as torch's Python function is."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = _pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _minimum(dist_neg, distance_function(positive, negative))
    loss = _clamp_min(margin + dist_pos - dist_neg, 0)
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------- __torch_function__
def _checks_torch_function(fn):
    """``fn`` asking for ``__torch_function__`` first, as torch's functions here do
    (``has_torch_function_variadic(input, weight, ...)``, then ``handle_torch_function``): a mode
    or an overriding argument receives the public function, with the arguments as given."""
    @functools.wraps(fn)
    def public(*args, **kwargs):
        relevant = (*args, *kwargs.values()) if kwargs else args
        if has_torch_function(relevant):
            return handle_torch_function(public, relevant, *args, **kwargs)
        return fn(*args, **kwargs)
    return public


for _name in __all__:
    if inspect.isfunction(globals()[_name]) and globals()[_name].__module__ == __name__:
        globals()[_name] = _checks_torch_function(globals()[_name])
