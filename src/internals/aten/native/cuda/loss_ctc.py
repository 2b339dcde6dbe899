"""CUDA kernels of the CTC loss (``aten/src/ATen/native/cuda/LossCTC.cu`` spreads each sequence's
positions over a block; here one thread runs one sequence, the CPU loops' task, through the same
``ctc_alpha_sequence`` and ``ctc_backward_sequence`` of ``native/loss_ctc.py``)."""
import numpy as np
from numba import cuda

from ..loss_ctc import ctc_alpha_sequence, ctc_backward_sequence
from .loops import launch_config


@cuda.jit
def _ctc_loss_alpha(log_alpha, nll, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets, tg_stride,
                    input_lengths, target_lengths, T, Sp, blank, neginf, zero):
    b = cuda.grid(1)
    while b < nll.size:
        ctc_alpha_sequence(b, log_alpha, nll, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets, tg_stride,
                           input_lengths, target_lengths, T, Sp, blank, neginf, zero)
        b += cuda.gridsize(1)


@cuda.jit
def _ctc_loss_backward(grad, log_beta, log_alpha, nll, grad_out, lp, lp_off, lp_st, lp_sb, lp_sc, tg, tg_offsets,
                       tg_stride, input_lengths, target_lengths, T, Sp, C, blank, zero_infinity, neginf, zero):
    b = cuda.grid(1)
    while b < nll.size:
        ctc_backward_sequence(b, grad, log_beta, log_alpha, nll, grad_out, lp, lp_off, lp_st, lp_sb, lp_sc, tg,
                              tg_offsets, tg_stride, input_lengths, target_lengths, T, Sp, C, blank, zero_infinity,
                              neginf, zero)
        b += cuda.gridsize(1)


def ctc_loss_alpha(log_alpha, nll, *args):
    with np.errstate(all="ignore"):
        _ctc_loss_alpha[launch_config(nll.size)](log_alpha, nll, *args)


def ctc_loss_backward(grad, log_beta, log_alpha, nll, *args):
    with np.errstate(all="ignore"):
        _ctc_loss_backward[launch_config(nll.size)](grad, log_beta, log_alpha, nll, *args)
