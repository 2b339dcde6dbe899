"""Converting the weights of a model's 2-d and 3-d convolutions to a memory format
(``torch/nn/utils/memory_format.py``), so that a channels-last input meets channels-last weights."""

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    """Each module of ``kinds`` in the tree gets its weight's data copied into ``memory_format``
    (the Parameter stays the same object); returns ``module``."""
    if isinstance(module, kinds):
        data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = data.resize_(data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """The weights of every Conv2d and ConvTranspose2d in ``module`` in ``memory_format``."""
    from ..modules.conv import Conv2d, ConvTranspose2d  # a real cycle: nn.modules imports nn.utils first
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """The weights of every Conv3d and ConvTranspose3d in ``module`` in ``memory_format``."""
    from ..modules.conv import Conv3d, ConvTranspose3d  # a real cycle, as above
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
