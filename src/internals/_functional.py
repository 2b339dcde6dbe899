"""The namespace functions (``torch.add(a, b)``, ``torch.exp(x)``, ...) over the Tensor methods."""
from ._tensor import Tensor, wrap_scalar

__all__ = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
           "neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid", "tanh", "where", "sum", "mean", "prod",
           "amax", "amin", "max", "min", "argmax", "argmin", "mm", "bmm", "matmul", "softmax", "log_softmax",
           "reshape", "transpose", "t", "permute", "movedim", "narrow", "select", "squeeze", "unsqueeze",
           "flatten", "unflatten", "diagonal", "split", "chunk", "as_strided", "broadcast_to", "clone",
           "broadcast_shapes", "is_tensor"]


def _method(name):
    def fn(input, *args, **kwargs):
        return getattr(wrap_scalar(input), name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"``internals.{name}(input, ...)`` is ``input.{name}(...)``."
    return fn


for _name in __all__:
    if _name not in ("where", "broadcast_shapes", "is_tensor"):
        globals()[_name] = _method(_name)


def where(condition, input, other):
    from .aten import dispatcher
    return dispatcher.call("where.self", condition, wrap_scalar(input), wrap_scalar(other))


def broadcast_shapes(*shapes):
    from .aten.tensor_iterator import broadcast_shapes as infer
    from ._tensor import Size
    return Size(infer(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes]))


def is_tensor(obj):
    return isinstance(obj, Tensor)
