"""Neural-network building blocks (``torch/nn``): Parameter, Module, layers, containers and
losses, and ``nn.utils`` (gradient clipping).

The layers run on internals' operators (convolution, max_pool2d_with_indices, native_batch_norm,
... each with its backward operator), so autograd records them and the same code runs on the
CPU and on cuda. The recurrent layers (RNN, LSTM, GRU), attention (``scaled_dot_product_attention``,
MultiheadAttention) and the Transformer's modules are compositions of those operators, with
torch's parameter names and initialisation order.
"""
from . import functional, init, parallel, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           *_modules, "functional", "init", "parallel", "utils"]
