"""Grad-mode context managers (``torch/autograd/grad_mode.py``).

``no_grad`` only flips GradMode: autograd kernels still run and see it off, so they record
nothing. ``inference_mode`` goes further, as ``c10::InferenceMode`` does: the Autograd keys are
excluded from every call and ADInplaceOrView is no longer included, so those layers are not
even visited, and tensors created inside are *inference tensors* without those keys.
"""
import contextlib
import functools

from ..c10.dispatch_key import AUTOGRAD_KEYS, DispatchKey, DispatchKeySet
from ..c10.grad_mode import GradMode, InferenceMode
from ..c10.local_dispatch_key_set import tls

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


def is_grad_enabled():
    return GradMode.is_enabled()


def is_inference_mode_enabled():
    return InferenceMode.is_enabled()


class _DecoratorContextManager:
    """Usable as ``with no_grad():`` and as ``@no_grad()``."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapped

    def clone(self):
        return self.__class__()


class set_grad_enabled(_DecoratorContextManager):
    def __init__(self, mode):
        if not isinstance(mode, bool):      # torch._C._set_grad_enabled parses a bool, nothing else
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.prev = GradMode.is_enabled()
        self.mode = mode
        GradMode.set_enabled(self.mode)    # torch applies it at once: usable as a plain function

    def __enter__(self):
        GradMode.set_enabled(self.mode)

    def __exit__(self, *exc):
        GradMode.set_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class _SetGradMode(_DecoratorContextManager):
    """Sets GradMode to ``enabled`` for a block, then restores it."""
    enabled = None

    def __enter__(self):
        self.prev = GradMode.is_enabled()
        GradMode.set_enabled(self.enabled)

    def __exit__(self, *exc):
        GradMode.set_enabled(self.prev)


class no_grad(_SetGradMode):
    enabled = False


class enable_grad(_SetGradMode):
    enabled = True


class inference_mode(_DecoratorContextManager):
    def __init__(self, mode=True):
        self.mode = mode
        self._stack = None

    def __enter__(self):
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(_inference_mode(self.mode))

    def __exit__(self, *exc):
        self._stack.close()

    def clone(self):
        return self.__class__(self.mode)


@contextlib.contextmanager
def _inference_mode(enabled):
    saved = (GradMode.is_enabled(), InferenceMode.is_enabled(), tls.included, tls.excluded)
    ad = DispatchKeySet(DispatchKey.ADInplaceOrView)
    GradMode.set_enabled(not enabled)
    InferenceMode._set_enabled(enabled)
    tls.included = saved[2] - ad if enabled else saved[2] | ad
    tls.excluded = saved[3] | AUTOGRAD_KEYS if enabled else saved[3] - AUTOGRAD_KEYS
    try:
        yield
    finally:
        GradMode.set_enabled(saved[0])
        InferenceMode._set_enabled(saved[1])
        tls.included, tls.excluded = saved[2], saved[3]
