"""ADInplaceOrView kernels (torch generates them: ``torch/csrc/autograd/generated/ADInplaceOrViewType.cpp``).

An in-place operator writes into a tensor that autograd may have saved for a backward pass.
Its ADInplaceOrView kernel runs the operator below and then bumps the version counter the
tensor shares with all its views, so that backward can tell the saved value is stale. The key
sits below Autograd and is a fallthrough for every operator that mutates nothing.
"""
from ..aten import dispatcher
from ..c10.dispatch_key import DispatchKey, DispatchKeySet
from ..c10.grad_mode import _state as _grad_state
from ..c10.local_dispatch_key_set import below_ad_inplace_or_view, enter_below_ad_inplace_or_view, tls
from ..utils._python_dispatch import _get_current_dispatch_mode, mode_detach

__all__ = ["register_inplace_kernels", "mutated_positions", "increment_version"]

ERR_INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")


def mutated_positions(op):
    """Positions of the arguments the schema marks as written (``Tensor(a!)``) and returns: torch's
    generated kernel bumps the versions of the tensors it returns, so a written argument that is
    not returned (``rrelu_with_noise``'s ``noise``) keeps its version, and autograd may save it."""
    args = op.schema.arguments.flat_positional
    returned = {str(r.annotation) for r in op.schema.returns if r.annotation is not None}
    return tuple(i for i, a in enumerate(args) if a.annotation is not None and a.annotation.is_write
                 and str(a.annotation) in returned)


def mutated_keywords(op):
    """Names of the keyword-only arguments the schema marks as written: an out= operator's outputs."""
    args = op.schema.arguments
    return tuple(a.name for a in (*args.flat_kwarg_only, *args.out) if a.annotation is not None
                 and a.annotation.is_write)


_BELOW_AD_INPLACE_OR_VIEW = (1 << int(DispatchKey.ADInplaceOrView)) - 1


def _inplace_kernel(op, positions, keywords=()):
    def ADInplaceOrView(keys, *args, **kwargs):
        # ``below_ad_inplace_or_view()``, entered as the generated autograd kernels enter it:
        # one call, where a ``with`` block makes three (every in-place call passes here)
        excluded = enter_below_ad_inplace_or_view()
        try:
            # ``keys.below(DispatchKey.ADInplaceOrView)``, without its frame
            below = DispatchKeySet._from_bits(keys.bits & _BELOW_AD_INPLACE_OR_VIEW)
            out = op.redispatch(below, *args, **kwargs) if kwargs else op.redispatch(below, *args)
        finally:
            tls.excluded = excluded
        for i in positions:
            increment_version(args[i])
        for name in keywords:
            written = kwargs[name]
            # a Tensor(a!)[] out (the foreach out= forms) is a list: each of its tensors was written
            for t in written if isinstance(written, (list, tuple)) else (written,):
                increment_version(t)
        return out
    return ADInplaceOrView


def increment_version(t):
    """``torch::autograd::increment_version``. An inference tensor has no version counter in torch,
    so it may be written in place only inside inference mode (where this kernel is skipped); the
    write has happened by the time the error is raised, as in torch."""
    if t._impl.is_inference() and not _grad_state.inference:
        raise RuntimeError(ERR_INFERENCE_INPLACE)
    t._impl.version_counter.version += 1


def _resize_kernel(op):
    """``resize_`` is written by hand in torch (``VariableTypeManual.cpp``): the version moves only
    when the sizes did."""
    def resize_(keys, self, size, *, memory_format=None):
        sizes = self._impl.sizes
        with below_ad_inplace_or_view():
            out = op.redispatch(keys.below(DispatchKey.ADInplaceOrView), self, size, memory_format=memory_format)
        if sizes != self._impl.sizes:
            increment_version(self)
        return out
    return resize_


def _non_differentiable_view_kernel(op):
    """A view autograd does not record (``view.dtype``): torch's ``as_view`` hands back
    ``make_variable_non_differentiable_view``, a ``shallow_copy_and_detach`` of the result, which a
    dispatch mode on the stack makes through ``aten.detach`` (same storage, same version counter)."""
    def ADInplaceOrView(keys, *args, **kwargs):
        with below_ad_inplace_or_view():
            out = op.redispatch(keys.below(DispatchKey.ADInplaceOrView), *args, **kwargs)
        return out if _get_current_dispatch_mode() is None else mode_detach(out)
    return ADInplaceOrView


NON_DIFFERENTIABLE_VIEWS = ("aten::view.dtype",)


def register_inplace_kernels():
    for op in list(dispatcher.operators.values()):
        positions, keywords = mutated_positions(op), mutated_keywords(op)
        if op.namespace == "aten" and (positions or keywords):
            fn = _resize_kernel(op) if op.name == "aten::resize_" else _inplace_kernel(op, positions, keywords)
            dispatcher.impl(op.name, "ADInplaceOrView", dispatcher.KernelFunction(fn, with_keyset=True))
    for name in NON_DIFFERENTIABLE_VIEWS:
        fn = _non_differentiable_view_kernel(dispatcher.operators[name])
        dispatcher.impl(name, "ADInplaceOrView", dispatcher.KernelFunction(fn, with_keyset=True))
