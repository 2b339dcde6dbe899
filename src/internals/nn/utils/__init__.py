"""Training utilities (``torch/nn/utils``): gradient clipping."""
from .clip_grad import clip_grad_norm_, clip_grads_with_norm_, get_total_norm

__all__ = ["clip_grad_norm_", "clip_grads_with_norm_", "get_total_norm"]
