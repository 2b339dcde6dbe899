"""CPU loops of the CTC loss (``aten/src/ATen/native/LossCTC.cpp``: ``ctc_loss_cpu_template`` and
``ctc_loss_backward_cpu_template``), one task per batch element, as torch's ``parallel_for``.

Both recursions run over the extended target l' = (blank, l1, blank, l2, ..., blank), of length
2·L + 1 for a target of length L: its even positions are blanks, position 2i + 1 is the target's
i-th label. Every sum of probabilities is taken in log space as torch takes it: the largest term
is pulled out first (0 when all are -inf, so that -inf - -inf never appears), in the log-probs'
own precision.

Buffers: ``lp`` is the log-probs' whole storage, read at ``lp_off + t·lp_st + b·lp_sb + c·lp_sc``;
``tg`` the targets' storage, label i of element b at ``tg_offsets[b] + i·tg_stride``; the alpha,
beta and gradient buffers are contiguous, made by the host (``native/loss_ctc.py``), which
checked every length against the sizes first, so every index below is inside its buffer.
"""
import numpy as np
from numba import prange
from numba.extending import register_jitable

from .parallel_for import parallel_loop


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
    return np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m


@parallel_loop()
def ctc_loss_alpha(log_alpha, nll, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets, tg_stride,
                   input_lengths, target_lengths, T, Sp, blank, neginf, zero):
    """The forward variables (Graves et al. 2006, eq. 6-8): log_alpha[b, t, s] is the log of the
    probability of the paths through the first t + 1 frames that end at extended label s;
    nll[b] is minus the log of the sum of the two ends of the last frame. ``log_alpha`` comes
    filled with -inf (the first frame's positions past 1 stay there)."""
    for b in prange(nll.size):
        il, tl = input_lengths[b], target_lengths[b]
        base, lpb, tgb = b * T * Sp, lp_off + b * lp_sb, tg_offsets[b]
        if il == 0:          # no frame: only the empty target is reached, with probability 1
            log_likelihood = zero if tl == 0 else neginf
            nll[b] = -log_likelihood
            continue
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
            nll[b] = -(np.log(np.exp(l1 - m) + np.exp(l2 - m)) + m)


@parallel_loop()
def ctc_loss_backward(grad, log_beta, log_alpha, nll, grad_out, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets,
                      tg_stride, input_lengths, target_lengths, T, Sp, C, blank, zero_infinity, neginf, zero):
    """The backward variables (eq. 10-11) and the gradient (eq. 16). log_beta[b, t, s] is the
    log of the probability of the paths from extended label s at frame t to the end; the sum
    over s of alpha·beta at the positions holding label c, divided by the likelihood and by the
    probability of c (counted in both), is the posterior of c at t, and the gradient with
    respect to log_probs[t, b, c] is exp(log_probs) minus that posterior, times grad_out[b].
    ``grad`` is (T, B, C), contiguous, filled with -inf (the log of an empty sum); frames past
    the input's length, and a whole element whose loss is infinite under ``zero_infinity``, get 0."""
    B = nll.size
    for b in prange(B):
        nll_b = nll[b]
        if zero_infinity and nll_b == -neginf:
            for t in range(T):
                for c in range(C):
                    grad[(t * B + b) * C + c] = zero
            continue
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
                    grad[g_row + current] = np.log(np.exp(collected - m) + np.exp(log_alpha_beta - m)) + m
        gr = grad_out[b]
        for t in range(il):
            for c in range(C):
                i = (t * B + b) * C + c
                lpv = lp[lpb + t * lp_st + lp_sc * c]
                grad[i] = (np.exp(lpv) - np.exp(grad[i] + nll_b - lpv)) * gr
        for t in range(il, T):
            for c in range(C):
                grad[(t * B + b) * C + c] = zero
