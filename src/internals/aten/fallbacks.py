"""Backend fallbacks: one kernel per key that serves every operator.

Most layers have nothing to do for most operators, and say so with a *fallthrough*: the
dispatcher then skips the key entirely (``BackendSelectFallbackKernel.cpp``,
``VariableFallbackKernel.cpp``, ``autocast_mode.cpp``). The Autograd keys get a real fallback
for operators with no autograd kernel: it runs the operator below autograd and makes sure the
kernel's own inner calls do not come back up (``autograd_fallback`` in VariableFallbackKernel.cpp).
"""
from ..c10.dispatch_key import DispatchKey
from ..c10.grad_mode import _state as _grad_mode
from ..c10.local_dispatch_key_set import below_ad_inplace_or_view
from .dispatcher import KernelFunction, register_fallback

__all__ = ["register_core_fallbacks", "autograd_fallback", "check_out_no_requires_grad"]


def check_out_no_requires_grad(name, *tensors):
    """An out= operator records no graph: none of its tensors, inputs or outputs, may require grad
    while grad mode is on (``throw_error_out_requires_grad`` in VariableTypeUtils.h). A list
    argument (cat's tensors) counts each of its tensors; a missing optional tensor, none."""
    if not _grad_mode.grad_enabled:
        return
    for t in tensors:
        for x in (t if isinstance(t, (tuple, list)) else (t,)):
            if x is not None and x._requires_grad:
                raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                                   "differentiation, but one of the arguments requires grad.")


# Operators whose outputs are never differentiable (``output_differentiability: [False]`` in
# torch's derivatives.yaml, or its codegen's ``DONT_REQUIRE_DERIVATIVE``): torch generates no
# grad check for their out= overloads, so an ``out`` that requires grad is simply written.
_NOT_DIFFERENTIABLE = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin", "argsort", "all", "any",
                                 "count_nonzero", "nonzero", "isnan", "isinf", "isposinf", "isneginf", "signbit",
                                 "searchsorted", "bucketize", "logical_and", "logical_or", "logical_xor",
                                 "logical_not"})


def autograd_fallback(op, keys, *args, **kwargs):
    """Run ``op`` below autograd: no graph is recorded for an operator without a derivative.
    An out= operator (``zeros.out``) refuses an ``out`` that requires grad, naming the operator
    as torch's fallback does (``aten::zeros()``), unless its outputs are never differentiable."""
    if op.schema.arguments.out and op.schema.name.name.base not in _NOT_DIFFERENTIABLE:
        outs = (kwargs.get(a.name) for a in op.schema.arguments.out)
        check_out_no_requires_grad(f"aten::{op.schema.name.name}", *outs)
    with below_ad_inplace_or_view():
        return op.redispatch(keys.below(DispatchKey.AutogradOther), *args, **kwargs)


def register_core_fallbacks():
    fallthrough = KernelFunction(None, "fallthrough registered at internals/aten/fallbacks.py", fallthrough=True)
    for key in ("BackendSelect", "ADInplaceOrView", "AutocastCPU", "AutocastCUDA"):
        register_fallback(key, fallthrough)
    for key in ("AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradMeta"):
        register_fallback(key, KernelFunction(autograd_fallback, boxed=True))
