"""The CTC loss, Connectionist Temporal Classification (``aten/src/ATen/native/LossCTC.cpp``).

``log_probs`` is (T, N, C): for each of T frames of N sequences, the log-probabilities of C
labels, one of them the ``blank``. Sequence b's target is a list of ``target_lengths[b]`` labels,
given either as row b of a padded (N, S) tensor or as a slice of one 1-d tensor holding all
targets end to end; only its first ``input_lengths[b]`` frames count. The loss of b is minus the
log of the total probability of the frame-by-frame label paths that collapse to its target
(merge repeats, drop blanks), summed by the forward (alpha) recursion in log space
(``cpu/loss_ctc.py``); the backward runs the beta recursion from the other end.

The operators, as torch declares them (none structured: torch's are not):
    ``_ctc_loss``            (neg_log_likelihood (N,), log_alpha (N, T, 2·max_target + 1)), the kernel
    ``_ctc_loss_backward``   the gradient with respect to log_probs, from the saved alphas
    ``*.Tensor``             the same with the lengths as tensors, read on the host
    ``ctc_loss``             the composite users call: reduction (``mean`` divides each loss by its
                             target length, clamped to 1, before the mean) and ``zero_infinity``
A meta function (``_meta_registrations.py``) runs the same checks and lays out the outputs.
"""
import numpy as np

from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from ..dispatcher import call
from .copy import buffer, contiguous, to
from .dispatch_stub import loops
from .tensor_factories import full, full_like, tensor, zeros

__all__ = ["ctc_loss_allocate_outputs", "ctc_loss_cpu", "ctc_loss_tensor", "ctc_loss_backward_cpu",
           "ctc_loss_backward_tensor", "ctc_loss_intlist", "ctc_loss_lengths_tensor"]

NONE, MEAN, SUM = 0, 1, 2
_WHILE = " (while checking arguments for ctc_loss_allocate_outputs)"


def _check_floating(log_probs, kernel):
    """``AT_DISPATCH_FLOATING_TYPES``: float32 and float64 only."""
    if log_probs.dtype not in (st.float32, st.float64):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{log_probs.dtype.torch_name}\'')


def ctc_loss_allocate_outputs(log_probs, targets, input_lengths, target_lengths, blank):
    """torch's checks in its order, then the geometry: (max_target_length, the targets' stride
    along a target, each sequence's first target position). Raises torch's RuntimeErrors."""
    expected = st.int64 if targets.dtype is st.int64 else st.int32     # the kernel is built for both
    if targets.dtype is not expected:
        raise RuntimeError(f"Expected tensor for argument #2 'targets' to have scalar type {expected.torch_name}; "
                           f"but got {targets._type_name()} instead{_WHILE}")
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional tensor for "
                           f"argument #1 'log_probs'{_WHILE}")
    if not 1 <= targets.dim() < 3:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for "
                           f"argument #2 'targets'{_WHILE}")
    batch_size, num_labels = log_probs.shape[1], log_probs.shape[2]
    if not 0 <= blank < num_labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch_size:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch_size:
        raise RuntimeError("target_lengths must be of size batch_size")
    offsets, pos, max_target_length = [], 0, 0
    for i, length in enumerate(target_lengths):
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {length}{_WHILE}")
        # concatenated: each target starts where the one before ended; padded: at its row
        offsets.append(pos if targets.dim() == 1 else i * targets.stride(0))
        pos += length
        max_target_length = max(max_target_length, length)
    if targets.dim() == 1:
        _check_size(targets, 0, pos)
    else:
        _check_size(targets, 0, batch_size)
        if targets.shape[1] < max_target_length:
            raise RuntimeError(f"Expected tensor to have size at least {max_target_length} at dimension 1, but got "
                               f"size {targets.shape[1]} for argument #2 'targets'{_WHILE}")
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {length}{_WHILE}")
        if length > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got value "
                               f"{length}{_WHILE}")
    stride = targets.stride(0) if targets.dim() == 1 else targets.stride(1)
    return max_target_length, stride, offsets


def _check_size(targets, dim, size):
    if targets.shape[dim] != size:
        raise RuntimeError(f"Expected tensor to have size {size} at dimension {dim}, but got size "
                           f"{targets.shape[dim]} for argument #2 'targets'{_WHILE}")


def _lengths(values):
    return np.array([int(v) for v in values], dtype=np.int64)


def _typed(value, dtype):
    """A constant in the loop's precision (so float32 loops stay float32 throughout)."""
    return dtype.numpy_type.type(value)


def ctc_loss_cpu(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    """``_ctc_loss``: (neg_log_likelihood, log_alpha). ``zero_infinity`` is for the backward only.
    torch leaves log_alpha's entries the recursion never reaches uninitialised; here they are -inf."""
    _check_floating(log_probs, "ctc_loss_cpu")
    max_target_length, tg_stride, offsets = ctc_loss_allocate_outputs(log_probs, targets, input_lengths,
                                                                      target_lengths, blank)
    T, batch_size, _ = log_probs.shape
    sp = 2 * max_target_length + 1
    dtype = log_probs.dtype
    log_alpha = full((batch_size, T, sp), float("-inf"), dtype=dtype, device=log_probs.device)
    nll = full((batch_size,), 0.0, dtype=dtype, device=log_probs.device)
    if batch_size:
        loops(log_probs.device, "loss_ctc").ctc_loss_alpha(
            buffer(log_alpha), buffer(nll), buffer(log_probs), log_probs.storage_offset(), *log_probs.stride(),
            buffer(targets), _lengths(np.array(offsets) + targets.storage_offset()), tg_stride,
            _lengths(input_lengths), _lengths(target_lengths), T, sp, int(blank),
            _typed(-np.inf, dtype), _typed(0.0, dtype))
    return nll, log_alpha


def _integral_lengths(input_lengths, target_lengths):
    """The ``.Tensor`` overloads' lengths, read on the host as int64 (``input_lengths.to(kCPU, kLong)``)."""
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if lengths.dtype.category != st.INTEGRAL:          # isIntegralType(includeBool=false)
            raise RuntimeError(f"{name} must be integral")
    return tuple([int(v) for v in contiguous(to(lengths, st.int64))._flat_buffer()]
                 for lengths in (input_lengths, target_lengths))


def ctc_loss_tensor(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    """``_ctc_loss.Tensor``: the lengths read on the host, then ``_ctc_loss``."""
    il, tl = _integral_lengths(input_lengths, target_lengths)
    return call("_ctc_loss", log_probs, targets, il, tl, blank, zero_infinity)


def ctc_loss_backward_cpu(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha,
                          blank, zero_infinity=False):
    """``_ctc_loss_backward``: the gradient with respect to log_probs, (T, N, C) contiguous. As
    torch's, it trusts the forward's checks; it repeats them here (cheap, host-side), so that
    a hand-made call cannot send the loop outside its buffers."""
    _check_floating(log_probs, "ctc_loss_backward_cpu")
    max_target_length, tg_stride, offsets = ctc_loss_allocate_outputs(log_probs, targets, input_lengths,
                                                                      target_lengths, blank)
    T, batch_size, num_labels = log_probs.shape
    dtype = log_probs.dtype
    log_alpha, nll = (contiguous(to(t, dtype)) for t in (log_alpha, neg_log_likelihood))
    grad = contiguous(to(grad, dtype))
    sp = log_alpha.shape[-1] if log_alpha.dim() == 3 else 0     # beta is laid out as alpha (empty_like)
    if (log_alpha.dim() != 3 or tuple(log_alpha.shape[:2]) != (batch_size, T) or sp < 2 * max_target_length + 1
            or nll.numel() != batch_size or grad.numel() != batch_size):
        raise RuntimeError("_ctc_loss_backward: grad, neg_log_likelihood and log_alpha must be shaped as _ctc_loss's "
                           f"outputs for these arguments (log_alpha: [{batch_size}, {T}, {2 * max_target_length + 1}])")
    result = full_like(log_probs, float("-inf"), memory_format=contiguous_format)
    if batch_size:
        log_beta = full((batch_size, T, sp), float("-inf"), dtype=dtype, device=log_probs.device)
        loops(log_probs.device, "loss_ctc").ctc_loss_backward(
            buffer(result), buffer(log_beta), log_alpha._flat_buffer(), nll._flat_buffer(), grad._flat_buffer(),
            buffer(log_probs), log_probs.storage_offset(), *log_probs.stride(),
            buffer(targets), _lengths(np.array(offsets, dtype=np.int64) + targets.storage_offset()), tg_stride,
            _lengths(input_lengths), _lengths(target_lengths), T, sp, num_labels, int(blank), bool(zero_infinity),
            _typed(-np.inf, dtype), _typed(0.0, dtype))
    return result


def ctc_loss_backward_tensor(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                             log_alpha, blank, zero_infinity=False):
    """``_ctc_loss_backward.Tensor``: the lengths read on the host, then ``_ctc_loss_backward``."""
    il, tl = _integral_lengths(input_lengths, target_lengths)
    return call("_ctc_loss_backward", grad, log_probs, targets, il, tl, neg_log_likelihood, log_alpha, blank,
                zero_infinity)


def _ctc_loss_impl(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity,
                   clamped_target_lengths):
    """``ctc_loss_impl``: an unbatched (T, C) input as a batch of one; the targets as int64;
    infinite losses zeroed with ``zero_infinity``; then the reduction."""
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = call("unsqueeze", log_probs, 1)
    res = call("_ctc_loss", log_probs, to(targets, st.int64), input_lengths, target_lengths, blank,
               zero_infinity)[0]
    if zero_infinity:
        res = call("where.self", call("eq.Scalar", res, float("inf")), zeros((), dtype=res.dtype, device=res.device),
                   res)
    if reduction == MEAN:
        return call("mean", call("div.Tensor", res, clamped_target_lengths(res)))
    if reduction == SUM:
        return call("sum", res)
    return res if batched else call("squeeze.dim", res, 0)


def ctc_loss_intlist(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN,
                     zero_infinity=False):
    """``ctc_loss.IntList`` (CompositeImplicitAutograd): lengths as lists of ints."""
    return _ctc_loss_impl(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity,
                          lambda res: call("clamp_min", tensor(list(target_lengths), dtype=res.dtype,
                                                               device=res.device), 1))


def ctc_loss_lengths_tensor(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN,
                            zero_infinity=False):
    """``ctc_loss.Tensor`` (CompositeImplicitAutograd): torch reads the lengths on the host and
    runs the list form's body directly (the ``_ctc_loss`` it records is the list overload)."""
    il, tl = _integral_lengths(input_lengths, target_lengths)
    return ctc_loss_intlist(log_probs, targets, il, tl, blank, reduction, zero_infinity)
