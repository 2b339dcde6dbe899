"""Activation checkpointing (``torch/utils/checkpoint.py``).

``checkpoint(fn, *args)`` keeps none of ``fn``'s intermediate activations; the backward pass runs
``fn`` again to get them back. Memory for compute: one extra forward per backward. Two ways, as
in torch:

* ``use_reentrant=True`` (torch's default, with a warning, when not given): ``fn`` runs without
  recording a graph, inside a Function (``CheckpointFunction``) whose backward runs ``fn`` again,
  recording, and backpropagates through that fresh graph: a backward inside the backward.
* ``use_reentrant=False`` (what torch recommends): ``fn`` runs and records its real graph, but under
  ``saved_tensors_hooks`` that pack every tensor it saves into a number. The first unpack in
  backward runs ``fn`` again and hands back what that run saved, in the same order.

The gradients are the same. RNG state is not saved and restored (``preserve_rng_state`` is
accepted and ignored).
"""
import warnings

from .._tensor import Tensor
from ..autograd import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import saved_tensors_hooks

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


class _Recomputation:
    """The pack and unpack hooks of one non-reentrant checkpoint (torch's ``_checkpoint_hook``)."""

    def __init__(self, function, args):
        self.function, self.args = function, args
        self.count, self.saved = 0, None

    def pack(self, tensor):
        self.count += 1
        return self.count - 1       # its place in the order of saving: all that is kept

    def unpack(self, index):
        if self.saved is None:      # the first tensor backward needs: recompute them all
            self.saved = []
            with saved_tensors_hooks(self._keep, lambda t: t), enable_grad():
                self.function(*self.args)
        return self.saved[index]

    def _keep(self, tensor):
        self.saved.append(tensor.detach())
        return None


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant is None:
        warnings.warn("internals.utils.checkpoint: the use_reentrant parameter should be passed explicitly "
                      "(torch warns the same). use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        return CheckpointFunction.apply(function, *args)
    hooks = _Recomputation(function, args)
    with saved_tensors_hooks(hooks.pack, hooks.unpack):
        return function(*args)
