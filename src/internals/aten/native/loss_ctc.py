"""The CTC loss, Connectionist Temporal Classification (``aten/src/ATen/native/LossCTC.cpp``).

``log_probs`` is (T, N, C): for each of T frames of N sequences, the log-probabilities of C
labels, one of them the ``blank``. Sequence b's target is a list of ``target_lengths[b]`` labels,
given either as row b of a padded (N, S) tensor or as a slice of one 1-d tensor holding all
targets end to end; only its first ``input_lengths[b]`` frames count. The loss of b is minus the
log of the total probability of the frame-by-frame label paths that collapse to its target
(merge repeats, drop blanks), summed by the forward (alpha) recursion in log space; the backward
runs the beta recursion from the other end. Both recursions are written once, for one sequence,
at the end of this file, and run by ``cpu/loss_ctc.py`` (one task per sequence) and
``cuda/loss_ctc.py`` (one thread per sequence).

The operators, as torch declares them (none structured: torch's are not):
    ``_ctc_loss``            (neg_log_likelihood (N,), log_alpha (N, T, 2·max_target + 1)), the kernel
    ``_ctc_loss_backward``   the gradient with respect to log_probs, from the saved alphas
    ``*.Tensor``             the same with the lengths as tensors, read on the host
    ``ctc_loss``             the composite users call: reduction (``mean`` divides each loss by its
                             target length, clamped to 1, before the mean) and ``zero_infinity``
Fake tensors refuse ``_ctc_loss`` (log_alpha is as wide as the longest target, a value), as
torch's do; the backward has a meta function (``_meta_registrations.py``).
"""
import math

import numpy as np
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from ..dispatcher import call
from .copy import buffer, contiguous, to, to_device
from .dispatch_stub import loops
from .tensor_factories import full, full_like, tensor, zeros

__all__ = ["ctc_loss_allocate_outputs", "ctc_loss_cpu", "ctc_loss_gpu", "ctc_loss_tensor", "ctc_loss_backward_cpu",
           "ctc_loss_backward_gpu", "ctc_loss_backward_tensor", "ctc_loss_intlist", "ctc_loss_lengths_tensor",
           "ctc_alpha_sequence", "ctc_backward_sequence"]

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
    return tuple([int(v) for v in contiguous(to_device(lengths, st.int64, "cpu"))._flat_buffer()]
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


# The host code is the same on both devices; the loops come from ``cpu/`` or ``cuda/loss_ctc.py``.
ctc_loss_gpu = ctc_loss_cpu
ctc_loss_backward_gpu = ctc_loss_backward_cpu


def _ctc_loss_impl(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity,
                   clamped_target_lengths):
    """``ctc_loss_impl``: an unbatched (T, C) input as a batch of one; the targets as int64;
    infinite losses zeroed with ``zero_infinity``; then the reduction."""
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = call("unsqueeze", log_probs, 1)
    # targets on the CPU beside CUDA log-probs are moved over, "as a service for the user" (torch)
    res = call("_ctc_loss", log_probs, to_device(targets, st.int64, log_probs.device), input_lengths,
               target_lengths, blank, zero_infinity)[0]
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


# ---- the two recursions for one sequence b, compiled into the CPU loops (one task per sequence)
# and the CUDA kernels (one thread per sequence) alike.
#
# Both run over the extended target l' = (blank, l1, blank, l2, ..., blank), of length 2·L + 1
# for a target of length L: its even positions are blanks, position 2i + 1 is the target's i-th
# label. Every sum of probabilities is taken in log space as torch takes it: the largest term is
# pulled out first (0 when all are -inf, so that -inf - -inf never appears), in the log-probs' own
# precision (``neginf`` and ``zero`` are constants of that dtype).
#
# Buffers: ``lp`` is the log-probs' whole storage, read at ``lp_off + t·lp_st + b·lp_sb + c·lp_sc``;
# ``tg`` the targets' storage, label i of sequence b at ``tg_offsets[b] + i·tg_stride``; the alpha,
# beta and gradient buffers are contiguous, made by the host above, which checked every length
# against the sizes first, so every index below is inside its buffer.
@register_jitable
def _log(x, neginf):
    """C's log: -inf at 0 and NaN through, where Python's ``math.log`` (what the CUDA simulator
    runs) raises."""
    if x > 0:
        return math.log(x)
    return neginf if x == 0 else x


@register_jitable
def _exp(x, neginf):
    """C's exp: +inf past the largest float64 power, where Python's ``math.exp`` raises."""
    return -neginf if x > 709.0 else math.exp(x)


@register_jitable
def _prime(tg, tg_base, tg_stride, s, blank):
    """Label s of the extended target: a blank at even s, else the target's label s // 2."""
    if s % 2 == 0:
        return blank
    return np.int64(tg[tg_base + tg_stride * (s // 2)])


@register_jitable
def _log_add3(a, b, c, neginf, zero):
    """log(exp(a) + exp(b) + exp(c)), the largest pulled out, in torch's order of operations."""
    m = a
    if b > m:
        m = b
    if c > m:
        m = c
    if m == neginf:
        m = zero
    return _log(_exp(a - m, neginf) + _exp(b - m, neginf) + _exp(c - m, neginf), neginf) + m


@register_jitable
def ctc_alpha_sequence(b, log_alpha, nll, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets, tg_stride,
                       input_lengths, target_lengths, T, Sp, blank, neginf, zero):
    """The forward variables (Graves et al. 2006, eq. 6-8): log_alpha[b, t, s] is the log of the
    probability of the paths through the first t + 1 frames that end at extended label s;
    nll[b] is minus the log of the sum of the two ends of the last frame. ``log_alpha`` comes
    filled with -inf (the first frame's positions past 1 stay there)."""
    il, tl = input_lengths[b], target_lengths[b]
    base, lpb, tgb = b * T * Sp, lp_off + b * lp_sb, tg_offsets[b]
    if il == 0:          # no frame: only the empty target is reached, with probability 1
        log_likelihood = zero if tl == 0 else neginf
        nll[b] = -log_likelihood
        return
    log_alpha[base] = lp[lpb + lp_sc * blank]
    if tl > 0:
        log_alpha[base + 1] = lp[lpb + lp_sc * _prime(tg, tgb, tg_stride, 1, blank)]
    for t in range(1, il):
        prev, row = base + (t - 1) * Sp, base + t * Sp
        for s in range(2 * tl + 1):
            current = _prime(tg, tgb, tg_stride, s, blank)
            la1 = log_alpha[prev + s]
            la2 = log_alpha[prev + s - 1] if s > 0 else neginf
            # a label may be reached from two back unless it repeats the one there (or is a blank)
            skip = s > 1 and _prime(tg, tgb, tg_stride, s - 2, blank) != current
            la3 = log_alpha[prev + s - 2] if skip else neginf
            log_alpha[row + s] = _log_add3(la1, la2, la3, neginf, zero) + lp[lpb + t * lp_st + lp_sc * current]
    last = base + (il - 1) * Sp
    if tl == 0:          # the extended target is one blank: a single end
        nll[b] = -log_alpha[last]
    else:
        l1, l2 = log_alpha[last + 2 * tl], log_alpha[last + 2 * tl - 1]
        m = l2 if l1 < l2 else l1          # std::max
        if m == neginf:
            m = zero
        nll[b] = -(_log(_exp(l1 - m, neginf) + _exp(l2 - m, neginf), neginf) + m)


@register_jitable
def ctc_backward_sequence(b, grad, log_beta, log_alpha, nll, grad_out, lp, lp_off, lp_st, lp_sb, lp_sc, tg,
                          tg_offsets, tg_stride, input_lengths, target_lengths, T, Sp, C, blank, zero_infinity,
                          neginf, zero):
    """The backward variables (eq. 10-11) and the gradient (eq. 16). log_beta[b, t, s] is the
    log of the probability of the paths from extended label s at frame t to the end; the sum
    over s of alpha·beta at the positions holding label c, divided by the likelihood and by the
    probability of c (counted in both), is the posterior of c at t, and the gradient with
    respect to log_probs[t, b, c] is exp(log_probs) minus that posterior, times grad_out[b].
    ``grad`` is (T, B, C), contiguous, filled with -inf (the log of an empty sum); frames past
    the input's length, and a whole element whose loss is infinite under ``zero_infinity``, get 0."""
    B = nll.size
    nll_b = nll[b]
    if zero_infinity and nll_b == -neginf:
        for t in range(T):
            for c in range(C):
                grad[(t * B + b) * C + c] = zero
        return
    il, tl = input_lengths[b], target_lengths[b]
    base, lpb, tgb = b * T * Sp, lp_off + b * lp_sb, tg_offsets[b]
    if il > 0:
        last = base + (il - 1) * Sp
        for s in range(Sp):
            log_beta[last + s] = neginf
        g_last = ((il - 1) * B + b) * C
        lp_last = lpb + (il - 1) * lp_st
        log_beta[last + 2 * tl] = lp[lp_last + lp_sc * blank]
        grad[g_last + blank] = log_alpha[last + 2 * tl] + log_beta[last + 2 * tl]
        if tl > 0:
            current = _prime(tg, tgb, tg_stride, 2 * tl - 1, blank)
            log_beta[last + 2 * tl - 1] = lp[lp_last + lp_sc * current]
            # a blank and a label: two different entries, no log-sum needed
            grad[g_last + current] = log_alpha[last + 2 * tl - 1] + log_beta[last + 2 * tl - 1]
    for t in range(il - 2, -1, -1):
        row, nxt, g_row = base + t * Sp, base + (t + 1) * Sp, (t * B + b) * C
        for s in range(2 * tl, -1, -1):
            current = _prime(tg, tgb, tg_stride, s, blank)
            lb1 = log_beta[nxt + s]
            lb2 = log_beta[nxt + s + 1] if s < 2 * tl else neginf
            skip = s < 2 * tl - 1 and _prime(tg, tgb, tg_stride, s + 2, blank) != current
            lb3 = log_beta[nxt + s + 2] if skip else neginf
            log_beta[row + s] = _log_add3(lb1, lb2, lb3, neginf, zero) + lp[lpb + t * lp_st + lp_sc * current]
            log_alpha_beta = log_alpha[row + s] + log_beta[row + s]
            collected = grad[g_row + current]
            if collected == neginf:
                grad[g_row + current] = log_alpha_beta
            else:
                m = log_alpha_beta if collected < log_alpha_beta else collected
                grad[g_row + current] = _log(_exp(collected - m, neginf) + _exp(log_alpha_beta - m, neginf),
                                             neginf) + m
    gr = grad_out[b]
    for t in range(il):
        for c in range(C):
            i = (t * B + b) * C + c
            lpv = lp[lpb + t * lp_st + lp_sc * c]
            grad[i] = (_exp(lpv, neginf) - _exp(grad[i] + nll_b - lpv, neginf)) * gr
    for t in range(il, T):
        for c in range(C):
            grad[(t * B + b) * C + c] = zero
