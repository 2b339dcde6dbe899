"""Training utilities (``torch/nn/utils``): gradient clipping by norm or by value, and packed
sequences for the recurrent layers (``nn.utils.rnn``)."""
from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm", "rnn"]
