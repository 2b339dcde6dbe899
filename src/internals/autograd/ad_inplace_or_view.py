"""ADInplaceOrView kernels (torch generates them: ``torch/csrc/autograd/generated/ADInplaceOrViewType.cpp``).

An in-place operator writes into a tensor that autograd may have saved for a backward pass.
Its ADInplaceOrView kernel runs the operator below and then bumps the version counter the
tensor shares with all its views, so that backward can tell the saved value is stale. The key
sits below Autograd and is a fallthrough for every operator that mutates nothing.
"""
from ..aten import dispatcher
from ..c10.dispatch_key import DispatchKey
from ..c10.local_dispatch_key_set import below_ad_inplace_or_view

__all__ = ["register_inplace_kernels", "mutated_positions"]


def mutated_positions(op):
    """Positions of the arguments the schema marks as written (``Tensor(a!)``)."""
    args = op.schema.arguments.flat_positional
    return tuple(i for i, a in enumerate(args) if a.annotation is not None and a.annotation.is_write)


def _inplace_kernel(op, positions):
    def ADInplaceOrView(keys, *args, **kwargs):
        with below_ad_inplace_or_view():
            out = op.redispatch(keys.below(DispatchKey.ADInplaceOrView), *args, **kwargs)
        for i in positions:
            args[i]._impl.version_counter.version += 1      # torch::autograd::increment_version
        return out
    return ADInplaceOrView


def register_inplace_kernels():
    for op in list(dispatcher.operators.values()):
        positions = mutated_positions(op)
        if op.namespace == "aten" and positions:
            dispatcher.impl(op.name, "ADInplaceOrView",
                            dispatcher.KernelFunction(_inplace_kernel(op, positions), with_keyset=True))
