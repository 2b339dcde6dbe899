"""Activation checkpointing (``torch/utils/checkpoint.py``).

``checkpoint(fn, *args)`` runs ``fn`` without recording a graph, so none of its intermediate
activations are kept; the backward pass runs ``fn`` again, this time recording, and
backpropagates through that fresh graph. Memory for compute: one extra forward per backward.

torch's default (``use_reentrant=False``) records the real graph and swaps its saved tensors
for recomputed ones through saved-tensor hooks; internals implements both settings the way
torch's reentrant variant does (a Function, ``CheckpointFunctionBackward``). The gradients are
the same; RNG state is not saved and restored (``preserve_rng_state`` is not supported).
"""
from ..autograd import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from .._tensor import Tensor

__all__ = ["checkpoint"]


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, *args):
        ctx.run_function = run_function
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        ctx.args = args
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        saved = iter(ctx.saved_tensors)
        inputs = [next(saved).detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in ctx.args]
        with enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None,) + tuple(x.grad if isinstance(x, Tensor) else None for x in inputs)


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return CheckpointFunction.apply(function, *args)
