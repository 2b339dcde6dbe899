"""Autograd (``torch/autograd``, ``torch/csrc/autograd``): grad modes and the layers autograd adds
to the dispatcher."""
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,  # noqa: F401
                        is_inference_mode_enabled)
