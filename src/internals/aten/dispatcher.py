"""The dispatcher: every operator call goes through here (``aten/src/ATen/core/dispatch``).

An operator has a name in torch's ``name.overload`` form and a kernel per dispatch key. A call
computes its key set from its tensor arguments and runs the kernel of the highest-priority key.
"""
from ..c10.dispatch_key import DispatchKey, DispatchKeySet

__all__ = ["register", "call", "operators"]

operators = {}   # name -> {DispatchKey: kernel}


def register(name, *keys):
    """Decorator: ``fn`` is ``name``'s kernel for each of ``keys``."""
    def wrap(fn):
        table = operators.setdefault(name, {})
        for key in keys:
            table[DispatchKey[key] if isinstance(key, str) else key] = fn
        return fn
    return wrap


def _key_set(args):
    from .._tensor import Tensor
    keys = DispatchKeySet()
    for a in args:
        if isinstance(a, Tensor):
            keys = keys | a._impl.key_set
        elif isinstance(a, (list, tuple)):
            keys = keys | _key_set(a)
    return keys


def call(name, *args, **kwargs):
    table = operators[name]
    keys = _key_set(args)
    for key in keys.descending():
        if key in table:
            return table[key](*args, **kwargs)
    raise NotImplementedError(
        f"Could not run '{name}' with arguments from the '{keys.highest().name if keys else 'Undefined'}' "
        f"backend. '{name}' is only available for these backends: [{', '.join(k.name for k in table)}].")
