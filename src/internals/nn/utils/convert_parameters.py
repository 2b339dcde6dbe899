"""One flat vector from a model's parameters and back (``torch/nn/utils/convert_parameters.py``),
as second-order optimizers and model-averaging code use them."""
from ..._functional import cat
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param, device):
    """The device every parameter so far lives on; torch refuses a mix with TypeError, since
    one ``cat`` (or one slice of ``vec``) cannot serve two devices."""
    if device is not None and param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return param.device


def _typename(obj):
    """A type's name as ``torch.typename`` writes it: builtins bare, others with their module."""
    module = type(obj).__module__
    return type(obj).__qualname__ if module == "builtins" else f"{module}.{type(obj).__qualname__}"


def parameters_to_vector(parameters):
    """The parameters flattened (each in its row-major order) and joined in iteration order;
    a new tensor that still carries gradients back to them."""
    device, flat = None, []
    for param in parameters:
        device = _check_same_device(param, device)
        flat.append(param.view(-1))
    return cat(flat)


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of ``vec`` into the parameters by rebinding their ``.data``
    (torch's way: views of ``vec``, not copies, and no autograd record)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device, pointer = None, 0
    for param in parameters:
        device = _check_same_device(param, device)
        count = param.numel()
        param.data = vec[pointer:pointer + count].view_as(param).data
        pointer += count
