"""The ``bias=`` field of the norm layers' reprs (``torch/nn/modules/batchnorm.py``,
``normalization.py``): torch 2.13 added it to BatchNorm, LayerNorm and GroupNorm, and earlier
releases (Colab's 2.11) leave it out. The package prints what the torch beside it prints, so a
chapter or test that compares the two reprs holds on either version."""
import functools

# The smallest arguments that build each torch layer; the layer is built from ones and zeros, so
# asking draws nothing from torch's random stream.
_SMALLEST = {"BatchNorm1d": (1,), "LayerNorm": (1,), "GroupNorm": (1, 1)}


@functools.cache
def torch_prints_bias(layer):
    """Whether the installed torch's ``layer`` (a key of ``_SMALLEST``) writes ``bias=`` in its
    repr; asked once per layer, at its first repr. Without torch, torch 2.13's form."""
    try:
        import torch.nn  # torch is heavy and optional: only a repr needs it, once
    except ImportError:
        return True
    return "bias=" in getattr(torch.nn, layer)(*_SMALLEST[layer]).extra_repr()


def bias_field(module, layer):
    """``", bias=True"`` or ``", bias=False"`` where torch's ``layer`` prints the field, else ``""``."""
    return f", bias={module.bias is not None}" if torch_prints_bias(layer) else ""
