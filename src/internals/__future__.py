"""Behaviours that will become the default (``torch/__future__.py``): for now one switch, whether
``nn.Module``'s conversions (``to``, ``float()``, ``to_empty``...) swap each parameter's whole
content with ``utils.swap_tensors`` instead of setting its ``.data``."""

_swap_module_params_on_conversion = False


def set_swap_module_params_on_conversion(value):
    """With ``True``, a module's conversions keep each Parameter object and swap a converted
    tensor into it, so the object's class, attributes and autograd state follow the conversion
    too, where ``.data`` would change only the values."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion():
    return _swap_module_params_on_conversion
