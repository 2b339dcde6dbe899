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

import numpy as np

from ...c10 import scalar_type as st
from ...c10.exception import warn_once
from ...c10.memory_format import channels_last, channels_last_3d, channels_last_strides, suggest_memory_format
from ...c10.sym import is_symbolic
from ...c10.tensor_impl import strided
from ...c10.wrap_dim import wrap_dim
from ..dispatcher import call
from .convolution import keep_channels_last
from .copy import contiguous, to
from .structured import set_output, structured
from .tensor_factories import empty, empty_strided, wrap_scalar


def _check_channels(name, t, C):
    if t is not None and t.numel() != C:
        raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")


def _floating_only(input, kernel):
    """The CPU kernels dispatch over float64, float32, float16 and bfloat16 only."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input.dtype.torch_name}\'')


def _batch_norm_dims(input):
    C = input.shape[wrap_dim(1, input.dim())]     # torch's kernels read ``input.size(1)``: an IndexError below 2 dims
    return [0] + list(range(2, input.dim())), [1, C] + [1] * (input.dim() - 2), C


def _check_mixed_dtype(input, *params):
    """On the CPU a parameter of another dtype than the input is allowed only as float32 beside a
    16-bit input (``mixed_data_type.h``): each defined parameter is checked first, then the input."""
    if input.device.type != "cpu" or all(p is None or p.dtype == input.dtype for p in params):
        return
    if any(p is not None and p.dtype != st.float32 for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in (st.float16, st.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd); the saved statistics are empty in eval mode, as in torch."""
    dims, shape, C = _batch_norm_dims(input)
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):        # ``batch_norm``'s order (Normalization.cpp)
        _check_channels(name, t, C)
    # batch_norm_cpu dispatches on the input's dtype first and checks mixed dtypes inside its
    # loop (layer and group norm check them first)
    _floating_only(input, "batch_norm")
    _check_mixed_dtype(input, weight, bias, running_mean, running_var)
    compute = st.opmath_type(input.dtype)
    x = to(input, compute)
    if input.device.type == "cpu" and compute is not input.dtype:
        return _reduced_batch_norm(input, x, weight, bias, running_mean, running_var, training, momentum, eps)
    if training:
        var, mean = call("var.correction", x, dims, correction=0), call("mean.dim", x, dims, False)
        invstd = _inverse_std(var, eps)
        n = input.numel() // C
        if running_mean is not None:
            _update(running_mean, mean, momentum)
        if running_var is not None:
            _update(running_var, _mul(var, n / (n - 1) if n > 1 else math.inf), momentum)
        save_mean, save_invstd = mean, invstd
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean, invstd = to(running_mean, compute), _inverse_std(to(running_var, compute), eps)
        save_mean = save_invstd = empty((0,), dtype=compute, device=input.device)
    out = _affine(_normalize(x, mean, invstd, shape), weight, bias, shape)
    return _in_suggested_layout(to(out, input.dtype), input), save_mean, save_invstd


def _batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``_batch_norm_legit_cpu`` (Normalization.cpp): ``native_batch_norm``'s kernel, the running
    statistics required (the schema marks them mutated: they are updated while training)."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    """``_batch_norm_legit_no_stats_cpu``: ``native_batch_norm``'s kernel without running statistics."""
    return native_batch_norm(input, weight, bias, None, None, training, momentum, eps)


def _batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    """``_batch_norm_legit_no_training`` (Normalization.cpp, CompositeExplicitAutograd): eval mode,
    through ``_native_batch_norm_legit`` (the statistics are read, never written)."""
    return call("_native_batch_norm_legit", input, weight, bias, running_mean, running_var, False, momentum, eps)


# ---- 16-bit inputs on the CPU (``cpu/batch_norm_kernel.cpp``'s reduced-float kernels and
# ``batch_norm_cpu_update_stats_template``): the statistics live in the parameters' dtype (the
# input's, or float32 beside float32 parameters), each step rounded there, and the output is
# ``x * alpha + beta`` in float32 with alpha and beta per channel. Each rounding is torch's, so
# the 16-bit results agree bit for bit, not within an ulp.
def _reduced_batch_norm(input, x, weight, bias, running_mean, running_var, training, momentum, eps):
    dims, shape, C = _batch_norm_dims(input)
    params = [t for t in (weight, bias, running_mean, running_var) if t is not None]
    kept = st.float32 if any(t.dtype is st.float32 for t in params) else input.dtype
    if training:
        mean, invstd = _reduced_statistics(input, x, dims, shape, kept, running_mean, running_var, momentum, eps)
        alpha = to(invstd, st.float32)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean = to(running_mean, st.float32)     # 1 / sqrt(var + eps) in float (opmath), eps as float
        std = call("sqrt", call("add.Tensor", to(running_var, st.float32), wrap_scalar(float(np.float32(eps)))))
        alpha = call("reciprocal", std)
    alpha = alpha if weight is None else call("mul.Tensor", alpha, to(weight, st.float32))
    beta = call("mul.Tensor", to(mean, st.float32), alpha)
    beta = call("neg", beta) if bias is None else call("sub.Tensor", to(bias, st.float32), beta)
    alpha, beta = call("view", alpha, shape), call("view", beta, shape)
    if training:
        out = call("add.Tensor", call("mul.Tensor", x, alpha), beta)
    else:       # the inference kernel fuses x * alpha + beta (one rounding): the product of two
        # floats is exact in double, so only the sum rounds there before the float rounding
        out = to(call("add.Tensor", call("mul.Tensor", to(x, st.float64), to(alpha, st.float64)),
                      to(beta, st.float64)), st.float32)
        mean = invstd = empty((0,), dtype=kept, device=input.device)
    return _in_suggested_layout(to(out, input.dtype), input), mean, invstd


def _reduced_statistics(input, x, dims, shape, kept, running_mean, running_var, momentum, eps):
    """The saved mean and 1/std in ``kept``, the running statistics moved: the sums accumulate in
    float32, mean and sum of squares are stored in ``kept``, and the divisions by n and n - 1,
    the momentum and 1 - momentum are ``kept`` numbers (c10's 16-bit arithmetic rounds each
    step); 1/std is computed in double from the rounded variance (``InvStd``)."""
    n = input.numel() // input.shape[1]
    mean_f = call("mean.dim", x, dims, False)
    centred = call("sub.Tensor", x, call("view", mean_f, shape))
    var_sum_f = call("sum.dim_IntList", call("mul.Tensor", centred, centred), dims, False)
    var_sum = to(var_sum_f, kept)
    mean = to(mean_f, kept)
    # bfloat16 divides its rounded sum by n in bfloat16; float16 and float32 keep the float sum
    var = call("div.Tensor", var_sum, _number(n, kept, input)) if kept is st.bfloat16 else \
        call("div.Tensor", var_sum_f, wrap_scalar(float(n)))
    invstd = to(to(_inverse_std(to(var, st.float64), eps), st.float32), kept)
    if kept is st.float16:      # float16 moves its running statistics in double, from the float sums
        _move_in_double(running_mean, running_var, mean_f, var_sum_f, n, momentum)
        return mean, invstd
    m = _number(momentum, kept, input)
    rest = call("rsub.Scalar", m, 1)
    if running_mean is not None:
        moved = call("add.Tensor", call("mul.Tensor", m, mean), call("mul.Tensor", rest, to(running_mean, kept)))
        call("copy_", running_mean, moved)
    if running_var is not None:
        unbiased = to(call("div.Tensor", var_sum, _number(n - 1, kept, input)), st.float32)
        moved = call("add.Tensor", call("mul.Tensor", to(m, st.float32), unbiased),
                     to(call("mul.Tensor", rest, to(running_var, kept)), st.float32))
        call("copy_", running_var, moved)
    return mean, invstd


def _move_in_double(running_mean, running_var, mean, var_sum, n, momentum):
    """momentum · statistic + (1 − momentum) · running in double, rounded through float to the
    running statistic's float16; the unbiased variance is the float sum over n − 1 in float."""
    unbiased = call("div.Tensor", var_sum, wrap_scalar(float(n - 1)))
    for running, stat in ((running_mean, mean), (running_var, unbiased)):
        if running is not None:
            moved = call("add.Tensor", _mul(to(stat, st.float64), momentum),
                         _mul(to(running, st.float64), 1 - momentum))
            call("copy_", running, to(moved, st.float32))


def _number(value, dtype, like):
    """A number as a 0-dim tensor of ``dtype``: c10's 16-bit arithmetic converts an int or
    double operand to the 16-bit type first."""
    return call("full", [], value, dtype=dtype, device=like.device)


def _in_suggested_layout(out, input):
    """torch allocates the output in the input's suggested memory format: channels-last for a
    channels-last input (4-d or 5-d), contiguous for any other layout (a transposed input
    included)."""
    fmt = suggest_memory_format(input.shape, input.stride())
    if input.dim() == 4 and fmt is channels_last:
        return keep_channels_last(out, input)
    if input.dim() == 5 and fmt is channels_last_3d:
        return _keep_channels_last_3d(out, input)
    return contiguous(out)


def _keep_channels_last_3d(out, input):
    """``keep_channels_last`` for volumes: a channels-last-3d input gets a channels-last-3d result
    (exactly its strides, where sizes of 1 would let contiguous strides pass too)."""
    if input.dim() != 5 or suggest_memory_format(input.shape, input.stride()) is not channels_last_3d:
        return out
    strides = channels_last_strides(tuple(out.shape), channels_last_3d)
    if tuple(out.stride()) == strides:
        return out
    return call("copy_", empty_strided(tuple(out.shape), strides, dtype=out.dtype, device=out.device), out, False)


def _inverse_std(var, eps):
    """1 / sqrt(var + eps), as ``var.add(eps).sqrt().pow(-1)``."""
    std = call("sqrt", call("add.Tensor", var, wrap_scalar(eps)))
    return call("pow.Tensor_Scalar", std, -1)


def _mul(a, b):
    """``a * b``; a number ``b`` is wrapped, as the frontend wraps it."""
    return call("mul.Tensor", a, wrap_scalar(b))


def _update(running, stat, momentum):
    """running = (1 - momentum) · running + momentum · stat, in place."""
    call("copy_", running, call("add.Tensor", _mul(running, 1 - momentum), stat, alpha=momentum))


def _normalize(x, mean, invstd, shape=None):
    """(x − mean) · invstd, the statistics viewed as ``shape`` when one is given."""
    centred = call("sub.Tensor", x, mean if shape is None else call("view", mean, shape))
    return _mul(centred, invstd if shape is None else call("view", invstd, shape))


def _affine(xhat, weight, bias, shape):
    out = xhat if weight is None else _mul(xhat, call("view", weight, shape))
    return out if bias is None else call("add.Tensor", out, call("view", bias, shape))


def _normalized_backward(grad_out, xhat, invstd, weight_view, dims, need_input):
    """grad_input from the closed form, or None; grad_out and xhat already in the compute dtype."""
    if not need_input:
        return None
    g = grad_out if weight_view is None else _mul(grad_out, weight_view)
    centred = call("sub.Tensor", g, call("mean.dim", g, dims, True))
    projection = _mul(xhat, call("mean.dim", _mul(g, xhat), dims, True))
    return _mul(invstd, call("sub.Tensor", centred, projection))


def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
                               train, eps, output_mask):
    dims, shape, _ = _batch_norm_dims(input)
    compute = st.opmath_type(input.dtype)
    if train:
        mean, invstd = save_mean, save_invstd
    else:
        mean, invstd = to(running_mean, compute), _inverse_std(to(running_var, compute), eps)
    go, x = to(grad_out, compute), to(input, compute)
    xhat = _normalize(x, mean, invstd, shape)
    w = None if weight is None else call("view", to(weight, compute), shape)
    if train:
        grad_input = _normalized_backward(go, xhat, call("view", invstd, shape), w, dims, output_mask[0])
    elif output_mask[0]:        # the statistics are constants: only the scaling is differentiated
        scale = call("view", invstd, shape)
        grad_input = _mul(go, scale if w is None else _mul(scale, w))
    else:
        grad_input = None
    grad_weight = to(_sum_over(_mul(go, xhat), dims), input.dtype) if output_mask[1] else None
    grad_bias = to(_sum_over(go, dims), input.dtype) if output_mask[2] else None
    # batch_norm_backward_cpu allocates grad_input in the input's suggested memory format
    if grad_input is not None:
        grad_input = _keep_channels_last_3d(keep_channels_last(to(grad_input, input.dtype), input), input)
    return grad_input, grad_weight, grad_bias


def _layer_norm_dims(input, normalized_shape, weight, bias):
    # (a traced size stays a symbol: ``int()`` of it would pin it to its example)
    normalized_shape = tuple(s if is_symbolic(s) else int(s) for s in normalized_shape)
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
    _check_mixed_dtype(input, weight, bias)
    _floating_only(input, "LayerNormKernelImpl")
    compute = st.opmath_type(input.dtype)
    x = to(contiguous(input), compute)     # torch's kernel reads a contiguous copy: the output is contiguous
    var, mean = call("var.correction", x, dims, correction=0, keepdim=True), call("mean.dim", x, dims, True)
    rstd = _inverse_std(var, eps)
    out = _normalize(x, mean, rstd)
    out = out if weight is None else _mul(out, to(weight, compute))
    out = out if bias is None else call("add.Tensor", out, to(bias, compute))
    if input.numel() == 0:      # an empty input counts as contiguous in any layout; torch's output is laid out afresh
        out = call("empty.memory_format", list(input.shape), dtype=compute, device=input.device)
    return to(out, input.dtype), mean, rstd


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    dims, batch_dims = _layer_norm_dims(input, normalized_shape, weight, bias)
    compute = st.opmath_type(input.dtype)
    go = to(contiguous(grad_out), compute)
    xhat = _normalize(to(contiguous(input), compute), mean, rstd)
    w = None if weight is None else to(weight, compute)
    grad_input = _normalized_backward(go, xhat, rstd, w, dims, output_mask[0])
    grad_weight = grad_bias = None
    if output_mask[1] and weight is not None:
        grad_weight = to(_sum_over(_mul(go, xhat), batch_dims), weight.dtype)
    if output_mask[2] and bias is not None:
        grad_bias = to(_sum_over(go, batch_dims), bias.dtype)
    return None if grad_input is None else to(grad_input, input.dtype), grad_weight, grad_bias


def _sum_over(t, dims):
    """Sum over ``dims``; none is no sum (``sum(dim=[])`` would sum everything)."""
    return call("sum.dim_IntList", t, dims, False) if dims else t


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``batch_norm``, CompositeImplicitAutograd (``_batch_norm_impl_index``): an empty byte
    ``reserve`` (cudnn's workspace, unused on this path), then the output of ``native_batch_norm``.
    An empty input comes back as a copy scaled by the first weight and bias (a new tensor, still in
    the graph) beside empty statistics in the accumulate type, the running statistics untouched."""
    call("empty.memory_format", [0], dtype=st.uint8, layout=strided, device=input.device)
    if input.numel() == 0:
        acc = st.float64 if input.device.type == "cpu" and input.dtype is st.float32 else st.opmath_type(input.dtype)
        features = input.shape[1] if input.dim() > 1 else 0   # torch reads sizes()[1] unchecked: 0 here
        for _ in range(2):
            call("empty.memory_format", [features], dtype=acc, layout=strided, device=input.device)
        out = call("clone", input)
        out = out if weight is None else call("mul.Tensor", out, call("select.int", weight, 0, 0))
        return out if bias is None else call("add.Tensor", out, call("select.int", bias, 0, 0))
    return call("native_batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return call("native_layer_norm", input, normalized_shape, weight, bias, eps)[0]


# ---- group normalization (``group_norm.cpp``, ``cpu/group_norm_kernel.cpp``): the channels of
# each sample split into ``group`` groups, one mean and one rstd per (sample, group).
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """CompositeImplicitAutograd: checks, then the output of ``native_group_norm`` on a contiguous input
    (channels-last stays so)."""
    N, C = input.shape[0], input.shape[1]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    HxW = math.prod(input.shape[2:])
    # on the CPU torch makes the input contiguous in its suggested memory format, so a
    # channels-last input keeps its layout through native_group_norm
    x = contiguous(input)
    if input.dim() == 4 and suggest_memory_format(input.shape, input.stride()) is channels_last:
        x = keep_channels_last(input, input)
    out = call("native_group_norm", x, weight, bias, N, C, HxW, num_groups, eps)
    return out[0]


def _grouped(t, N, C, HxW, group):
    """(N, C, *) as (N, group, C / group · HxW): each group's elements in one row."""
    return call("reshape", t, [N, group, C // group * HxW])


def native_group_norm(X, gamma, beta, N, C, HxW, group, eps):
    """(output, mean, rstd), the statistics of shape (N, group) in the input's dtype."""
    if X.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.")
    _check_mixed_dtype(X, gamma, beta)
    _floating_only(X, "GroupNormKernelImpl")
    compute = st.opmath_type(X.dtype)
    x = _grouped(to(contiguous(X), compute), N, C, HxW, group)
    var, mean = call("var.correction", x, [2], correction=0, keepdim=True), call("mean.dim", x, [2], True)
    rstd = _inverse_std(var, eps)
    out = call("reshape", _normalize(x, mean, rstd), [N, C, HxW])
    out = _affine(out, None if gamma is None else to(gamma, compute), None if beta is None else to(beta, compute),
                  [1, C, 1])
    stats = [to(call("reshape", t, [N, group]), X.dtype) for t in (mean, rstd)]
    return (keep_channels_last(to(call("reshape", out, list(X.shape)), X.dtype), X), *stats)


def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    """The closed forms of batch and layer norm, the means taken over each group's elements."""
    compute = st.opmath_type(input.dtype)
    go = call("reshape", to(contiguous(grad_out), compute), [N, C, HxW])
    stats_shape = [N, group, 1]
    r = call("reshape", to(rstd, compute), stats_shape)
    xhat_grouped = _normalize(_grouped(to(contiguous(input), compute), N, C, HxW, group),
                              call("reshape", to(mean, compute), stats_shape), r)
    xhat = call("reshape", xhat_grouped, [N, C, HxW])
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        g = go if weight is None else _mul(go, call("reshape", to(weight, compute), [1, C, 1]))
        grouped = _normalized_backward(_grouped(g, N, C, HxW, group), xhat_grouped, r, None, [2], True)
        # torch's CPU kernel writes dX in the input's suggested memory format
        grad_input = keep_channels_last(to(call("reshape", grouped, list(input.shape)), input.dtype), input)
    if output_mask[1] and weight is not None:
        grad_weight = to(_sum_over(_mul(go, xhat), [0, 2]), weight.dtype)
    if output_mask[2]:
        grad_bias = to(_sum_over(go, [0, 2]), input.dtype if weight is None else weight.dtype)
    return grad_input, grad_weight, grad_bias


# ---- instance normalization (``Normalization.cpp``'s ``instance_norm``): CompositeImplicitAutograd
# over ``batch_norm``. Each (sample, channel) pair is one channel of a batch of one, so the
# statistics are per instance; the affine parameters and running statistics are repeated per
# sample, and the running statistics averaged back over the samples afterwards.
def _repeated(t, b):
    return None if t is None else call("repeat", t, [b])


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """(N, C, *) normalized over * per (n, c); with ``use_input_stats`` the running statistics
    (when given) move towards the mean of the samples' statistics."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    weight_, bias_ = _repeated(weight, b), _repeated(bias, b)
    # torch 2.13 casts the running statistics to the input's dtype first (not the weight and
    # bias), so float64 statistics serve a float32 input, and the update is cast back on the copy
    mean_, var_ = (None if t is None else _repeated(to(t, input.dtype), b) for t in (running_mean, running_var))
    shape = [1, b * c, *input.shape[2:]]
    out = call("batch_norm", call("view", contiguous(input), shape), weight_, bias_, mean_, var_, use_input_stats,
               momentum, eps, cudnn_enabled)
    if use_input_stats:
        # the running statistics are inputs of the graph, so they are written through aliases (as torch does)
        for running, repeated in ((running_mean, mean_), (running_var, var_)):
            if running is not None:
                target = call("alias", running)
                call("copy_", target, to(call("mean.dim", call("view", repeated, [b, c]), [0], False), running.dtype))
    return call("view", out, list(input.shape))


# ---- RMS normalization (``layer_norm.cpp``'s ``rms_norm_symint`` and ``rms_norm_composite``). On
# the CPU torch has no fused kernel: ``_fused_rms_norm`` falls back to the composite, so autograd
# records the pow, mean, add, rsqrt and mul it is made of, and their nodes.
def _check_rms_norm_inputs(input, normalized_shape, weight):
    """layer_norm's checks, but torch's rms_norm prints the expected shape as ``[*3, 4]``."""
    k = len(normalized_shape)
    if input.dim() < k:      # torch's TORCH_CHECK_VALUE, before the sizes are compared
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.dim()}")
    if k and list(input.shape[-k:]) != list(normalized_shape):
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*{', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    _layer_norm_dims(input, normalized_shape, weight, None)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """CompositeImplicitAutograd: the checks, then ``_fused_rms_norm``'s output (the composite on the
    CPU). A weight of another dtype than the input's cannot take a fused kernel: torch warns once."""
    _check_rms_norm_inputs(input, normalized_shape, weight)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):    # its kernel's dispatch macro
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{input.dtype.torch_name}'")
    if weight is not None and weight.dtype is not input.dtype:
        _warn_mismatch(input, weight)
    return call("_fused_rms_norm", input, normalized_shape, weight, eps)[0]


def _warn_mismatch(input, weight):
    warn_once("rms_norm dtype mismatch", f"Mismatch dtype between input and weight: input dtype = "
              f"{_cpp_name(input.dtype)}, weight dtype = {_cpp_name(weight.dtype)}, Cannot dispatch to fused "
              f"implementation.", UserWarning, stacklevel=4)


def _cpp_name(dtype):
    """The C++ type name torch's message prints (``caffe2::TypeMeta``)."""
    return {st.float32: "float", st.float64: "double", st.float16: "c10::Half",
            st.bfloat16: "c10::BFloat16"}.get(dtype, dtype.torch_name)


def rms_norm_composite(input, normalized_shape, weight=None, eps=None):
    """x · rsqrt(mean of x² over the normalized dims + eps) (· weight), in the input's op-math dtype
    (float for half and bfloat16) and cast back; ``eps`` defaults to that dtype's machine epsilon.
    The result is made contiguous unless the input is channels-last. Returns it and the rsqrt."""
    dims = [input.dim() - i - 1 for i in range(len(normalized_shape))]
    opmath = st.opmath_type(input.dtype)
    x = to(input, opmath)
    single = opmath in (st.float32, st.complex64)
    eps = float(np.finfo(np.float32 if single else np.float64).eps) if eps is None else eps
    if single:
        eps = float(np.float32(eps))      # torch keeps it in a C float for float math
    mean_square = call("mean.dim", call("pow.Tensor_Scalar", x, 2), dims, True)
    # torch adds eps in place (``add_.Scalar``): a trace records add_, the graph's AddBackward1
    rstd = call("rsqrt", call("add_.Scalar", mean_square, eps))
    out = call("mul.Tensor", x, rstd)
    if weight is not None:
        out = call("mul.Tensor", out, weight)
    if suggest_memory_format(input.shape, input.stride()) not in (channels_last, channels_last_3d):
        out, rstd = contiguous(out), contiguous(rstd)
    return to(out, input.dtype), rstd


# ---- renorm (``Normalization.cpp``): each slice along ``dim`` scaled down to a p-norm of maxnorm
def meta_renorm(out, self, p, dim, maxnorm):
    """``TORCH_META_FUNC(renorm)``: a real positive p, a real maxnorm of at least 0, an input of
    two dims or more; the output of self's sizes and dtype."""
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if self.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.dim()} dimensions")
    return set_output(out, tuple(self.shape), self.dtype, self.device, self=self)


def impl_renorm(out, self, p, dim, maxnorm):
    """``TORCH_IMPL_FUNC(renorm_out)``: the p-norm of each slice over every other dim (in float
    for a half input, as torch accumulates), the factor ``maxnorm / (norm + 1e-7)`` where the
    norm exceeds maxnorm and 1 elsewhere (``renorm_scale_factor``), then self times it."""
    dim = wrap_dim(dim, self.dim())
    reduce_dims = [d for d in range(self.dim()) if d != dim]
    half = self.dtype in (st.float16, st.bfloat16) or self.dtype is st.complex32
    norm = call("linalg_vector_norm", self, p, reduce_dims, True, dtype=st.float32 if half else None)
    limit = call("full_like", norm, maxnorm)        # maxnorm in the norm's dtype, as the kernel casts it
    scaled = call("div.Tensor", limit, call("add.Scalar", norm, 1e-7))
    factor = call("where.self", call("gt.Tensor", norm, limit), scaled, call("ones_like", norm))
    return call("mul.out", self, factor, out=out)


renorm_out = structured(meta_renorm, impl_renorm)
