"""The dispatcher: every operator call goes through here (``aten/src/ATen/core/dispatch``).

An operator has a name in torch's ``name.overload`` form and a kernel per dispatch key. A call
computes its key set from its tensor arguments and runs the kernel of the highest-priority key.
"""
import contextlib
import threading

from ..c10.dispatch_key import DispatchKey, DispatchKeySet

__all__ = ["register", "call", "operators", "below_inplace_or_view", "is_outermost_call"]

operators = {}   # name -> {DispatchKey: kernel}


class _Depth(threading.local):
    value = 0   # how many kernels (or guarded blocks) are running on this thread


_depth = _Depth()


@contextlib.contextmanager
def below_inplace_or_view():
    """Run a block below the layer that counts writes (``at::AutoDispatchBelowADInplaceOrView``).

    torch bumps a tensor's version only for the in-place call the user made, not for the writes
    a kernel or a factory does internally (filling a fresh tensor, writing into its own output).
    Every kernel runs inside this guard, and so do the factories.
    """
    _depth.value += 1
    try:
        yield
    finally:
        _depth.value -= 1


def is_outermost_call():
    """True inside the kernel of a call made from user code, where an in-place op counts as a write."""
    return _depth.value == 1


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
            with below_inplace_or_view():
                return table[key](*args, **kwargs)
    raise NotImplementedError(
        f"Could not run '{name}' with arguments from the '{keys.highest().name if keys else 'Undefined'}' "
        f"backend. '{name}' is only available for these backends: [{', '.join(k.name for k in table)}].")
