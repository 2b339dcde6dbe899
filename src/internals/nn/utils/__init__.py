"""Training utilities (``torch/nn/utils``): gradient clipping by norm or by value, batch norm
folded into the layer before it (``fusion``), convolution weights in a memory format, packed
sequences for the recurrent layers (``nn.utils.rnn``), parameters as one flat vector, and
parametrizations (``nn.utils.parametrize``, ``nn.utils.parametrizations``, and the older
hook-based ``weight_norm`` and ``spectral_norm``), and ``stateless.functional_call``, the
deprecated spelling of ``torch.func.functional_call``."""
import importlib

from . import rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "get_total_norm",
           "parameters_to_vector", "parametrizations", "parametrize", "remove_spectral_norm",
           "remove_weight_norm", "rnn", "skip_init", "spectral_norm", "stateless", "vector_to_parameters",
           "weight_norm"]

# Imported on first use rather than here: nn.modules.rnn imports nn.utils.rnn while nn.modules is
# still being imported, and these need nn.modules' classes (Module, ModuleDict, the
# transposed convolutions) at their own import, so importing them here would close a cycle.
_LAZY = ("parametrize", "parametrizations", "stateless")


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
