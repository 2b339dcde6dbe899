"""Backend fallbacks: one kernel per key that serves every operator.

Most layers have nothing to do for most operators, and say so with a *fallthrough*: the
dispatcher then skips the key entirely (``BackendSelectFallbackKernel.cpp``,
``VariableFallbackKernel.cpp``, ``autocast_mode.cpp``). The Autograd keys get a real fallback
for operators with no autograd kernel: it runs the operator below autograd and makes sure the
kernel's own inner calls do not come back up (``autograd_fallback`` in VariableFallbackKernel.cpp).
"""
from ..c10.dispatch_key import DispatchKey
from ..c10.local_dispatch_key_set import below_ad_inplace_or_view
from .dispatcher import KernelFunction, register_fallback

__all__ = ["register_core_fallbacks", "autograd_fallback"]


def autograd_fallback(op, keys, *args, **kwargs):
    """Run ``op`` below autograd: no graph is recorded for an operator without a derivative."""
    with below_ad_inplace_or_view():
        return op.redispatch(keys.below(DispatchKey.AutogradOther), *args, **kwargs)


def register_core_fallbacks():
    fallthrough = KernelFunction(None, "fallthrough registered at internals/aten/fallbacks.py", fallthrough=True)
    for key in ("BackendSelect", "ADInplaceOrView", "AutocastCPU", "AutocastCUDA"):
        register_fallback(key, fallthrough)
    for key in ("AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradMeta"):
        register_fallback(key, KernelFunction(autograd_fallback, boxed=True))
