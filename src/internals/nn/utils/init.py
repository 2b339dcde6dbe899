"""``skip_init``: a module built with no initialization of its weights (``torch/nn/utils/init.py``)."""
import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialized: it is
    built on the meta device, where its initializers compute nothing, then given empty memory on
    ``device`` (the CPU unless asked) by ``to_empty``. The class must take a ``device`` argument."""
    from ..modules.module import Module  # nn.modules imports nn.utils while it loads: a cycle at import
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    return module_cls(*args, **dict(kwargs, device="meta")).to_empty(device=device)
