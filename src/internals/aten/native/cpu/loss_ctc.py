"""CPU loops of the CTC loss (``aten/src/ATen/native/LossCTC.cpp``: ``ctc_loss_cpu_template`` and
``ctc_loss_backward_cpu_template``): one task per sequence, as torch's ``parallel_for`` over the
batch. The recursions themselves are ``ctc_alpha_sequence`` and ``ctc_backward_sequence`` in
``native/loss_ctc.py``, shared with the CUDA kernels."""
from numba import prange

from ..loss_ctc import ctc_alpha_sequence, ctc_backward_sequence
from .parallel_for import parallel_loop


@parallel_loop()
def ctc_loss_alpha(log_alpha, nll, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets, tg_stride,
                   input_lengths, target_lengths, T, Sp, blank, neginf, zero):
    for b in prange(nll.size):
        ctc_alpha_sequence(b, log_alpha, nll, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets, tg_stride,
                           input_lengths, target_lengths, T, Sp, blank, neginf, zero)


@parallel_loop()
def ctc_loss_backward(grad, log_beta, log_alpha, nll, grad_out, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets,
                      tg_stride, input_lengths, target_lengths, T, Sp, C, blank, zero_infinity, neginf, zero):
    # each task writes its own sequence's column of grad and its own rows of beta: no races
    for b in prange(nll.size):
        ctc_backward_sequence(b, grad, log_beta, log_alpha, nll, grad_out, lp, lp_off, lp_st, lp_sb, lp_sc, tg,
                              tg_offsets, tg_stride, input_lengths, target_lengths, T, Sp, C, blank, zero_infinity,
                              neginf, zero)
