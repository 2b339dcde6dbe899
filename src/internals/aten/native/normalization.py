"""Batch and layer normalization (``aten/src/ATen/native/Normalization.cpp``, ``layer_norm.cpp``).

Both compute ``(x − mean) · invstd · weight + bias``; they differ in which elements share a mean.
Batch norm takes one per channel (dim 1), over the batch and every spatial position, and while
training also updates the module's running statistics in place (the unbiased variance, as torch
does). Layer norm takes one per sample, over the trailing ``normalized_shape`` dims.

Written with internals' operators (sums, products: each runs its own kernel) rather than a
fused loop like torch's; the results agree to float rounding. The backward passes use the
closed forms torch's kernels use: with x̂ the normalized input and g = grad_out · weight,
grad_input = invstd · (g − mean(g) − x̂ · mean(g · x̂)), the means taken over the normalized group.
"""
import math

from ...c10 import scalar_type as st
from ..dispatcher import call
from .convolution import keep_channels_last
from .tensor_factories import empty


def _check_channels(name, t, C):
    if t is not None and t.numel() != C:
        raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")


def _batch_norm_dims(input):
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm(): expected input with at least 2 dims, but got {input.dim()}")
    C = input.shape[1]
    return [0] + list(range(2, input.dim())), [1, C] + [1] * (input.dim() - 2), C


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd); the saved statistics are empty in eval mode, as in torch."""
    dims, shape, C = _batch_norm_dims(input)
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        _check_channels(name, t, C)
    compute = st.opmath_type(input.dtype)
    x = input.to(compute)
    if training:
        var, mean = x.var(dims, correction=0), x.mean(dims)
        invstd = var.add(eps).sqrt().pow(-1)
        n = input.numel() // C
        if running_mean is not None:
            running_mean.copy_(running_mean.mul(1 - momentum).add(mean, alpha=momentum))
        if running_var is not None:
            unbiased = var.mul(n / (n - 1)) if n > 1 else var.mul(math.inf)
            running_var.copy_(running_var.mul(1 - momentum).add(unbiased, alpha=momentum))
        save_mean, save_invstd = mean, invstd
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean, invstd = running_mean.to(compute), running_var.to(compute).add(eps).sqrt().pow(-1)
        save_mean = save_invstd = empty((0,), dtype=compute, device=input.device)
    out = _affine(x.sub(mean.view(shape)).mul(invstd.view(shape)), weight, bias, shape)
    return keep_channels_last(out.to(input.dtype), input), save_mean, save_invstd


def _affine(xhat, weight, bias, shape):
    out = xhat if weight is None else xhat.mul(weight.view(shape))
    return out if bias is None else out.add(bias.view(shape))


def _normalized_backward(grad_out, xhat, invstd, weight_view, dims, need_input):
    """grad_input from the closed form, or None; grad_out and xhat already in the compute dtype."""
    if not need_input:
        return None
    g = grad_out if weight_view is None else grad_out.mul(weight_view)
    return invstd.mul(g.sub(g.mean(dims, keepdim=True)).sub(xhat.mul(g.mul(xhat).mean(dims, keepdim=True))))


def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
                               train, eps, output_mask):
    dims, shape, _ = _batch_norm_dims(input)
    compute = st.opmath_type(input.dtype)
    if train:
        mean, invstd = save_mean, save_invstd
    else:
        mean, invstd = running_mean.to(compute), running_var.to(compute).add(eps).sqrt().pow(-1)
    go, x = grad_out.to(compute), input.to(compute)
    xhat = x.sub(mean.view(shape)).mul(invstd.view(shape))
    w = None if weight is None else weight.to(compute).view(shape)
    if train:
        grad_input = _normalized_backward(go, xhat, invstd.view(shape), w, dims, output_mask[0])
    else:           # the statistics are constants: only the scaling is differentiated
        grad_input = go.mul(invstd.view(shape) if w is None else invstd.view(shape).mul(w)) if output_mask[0] else None
    grad_weight = go.mul(xhat).sum(dims).to(input.dtype) if output_mask[1] else None
    grad_bias = go.sum(dims).to(input.dtype) if output_mask[2] else None
    return None if grad_input is None else grad_input.to(input.dtype), grad_weight, grad_bias


def _layer_norm_dims(input, normalized_shape, weight, bias):
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(normalized_shape)}")
    if input.dim() < k or tuple(input.shape[-k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    return list(range(input.dim() - k, input.dim())), list(range(input.dim() - k))


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd); mean and rstd keep the normalized dims with size 1, as torch's do."""
    dims, _ = _layer_norm_dims(input, normalized_shape, weight, bias)
    compute = st.opmath_type(input.dtype)
    x = input.to(compute)
    var, mean = x.var(dims, correction=0, keepdim=True), x.mean(dims, keepdim=True)
    rstd = var.add(eps).sqrt().pow(-1)
    out = x.sub(mean).mul(rstd)
    out = out if weight is None else out.mul(weight.to(compute))
    out = out if bias is None else out.add(bias.to(compute))
    return out.to(input.dtype), mean, rstd


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    dims, batch_dims = _layer_norm_dims(input, normalized_shape, weight, bias)
    compute = st.opmath_type(input.dtype)
    go = grad_out.to(compute)
    xhat = input.to(compute).sub(mean).mul(rstd)
    w = None if weight is None else weight.to(compute)
    grad_input = _normalized_backward(go, xhat, rstd, w, dims, output_mask[0])
    grad_weight = grad_bias = None
    if output_mask[1] and weight is not None:
        grad_weight = _sum_over(go.mul(xhat), batch_dims).to(weight.dtype)
    if output_mask[2] and bias is not None:
        grad_bias = _sum_over(go, batch_dims).to(bias.dtype)
    return None if grad_input is None else grad_input.to(input.dtype), grad_weight, grad_bias


def _sum_over(t, dims):
    """Sum over ``dims``; none is no sum (``sum(dim=[])`` would sum everything)."""
    return t.sum(dims) if dims else t


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``batch_norm``, CompositeImplicitAutograd: the output of ``native_batch_norm``. An empty
    input comes back as a copy (a new tensor, still in the graph), the running statistics untouched."""
    if input.numel() == 0:
        return input.clone()
    return call("native_batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return call("native_layer_norm", input, normalized_shape, weight, bias, eps)[0]
