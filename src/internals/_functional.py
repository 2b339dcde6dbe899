"""The namespace functions (``torch.add(a, b)``, ``torch.exp(x)``, ...).

The operators' functions are generated from ``aten/native_functions.yaml`` into
``_generated/python_torch_functions.py``. Written here in Python, as torch writes some in
``torch/functional.py``: what is not an operator in internals, and ``where`` with Python numbers.
"""
from ._generated.python_torch_functions import *  # noqa: F401,F403
from ._generated.python_torch_functions import __all__ as _generated
from ._tensor import Tensor, wrap_scalar

__all__ = _generated + ["broadcast_to", "broadcast_shapes", "is_tensor"]


def where(condition, input, other):
    """``where.self``, with a Python number for ``input`` or ``other`` taken as a wrapped number
    (torch has where.ScalarSelf/ScalarOther/Scalar overloads for that; internals does not)."""
    from .aten import dispatcher
    return dispatcher.call("where.self", condition, wrap_scalar(input), wrap_scalar(other))


def broadcast_to(input, size):
    return input.broadcast_to(size)


def broadcast_shapes(*shapes):
    from .aten.tensor_iterator import broadcast_shapes as infer
    from ._tensor import Size
    return Size(infer(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes]))


def is_tensor(obj):
    return isinstance(obj, Tensor)


def einsum(equation, *operands):
    """As torch/functional.py's: the operands as separate arguments, or one list of them."""
    from .aten import dispatcher
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return dispatcher.call("einsum", equation, list(operands))
