"""Training utilities (``torch/nn/utils``): gradient clipping by norm or by value, packed
sequences for the recurrent layers (``nn.utils.rnn``), parameters as one flat vector, and
parametrizations (``nn.utils.parametrize``, ``nn.utils.parametrizations``)."""
from . import parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "parametrizations", "parametrize", "rnn", "vector_to_parameters"]
