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

The gradients are the same. With ``preserve_rng_state`` (the default) the CPU generator's state
is kept at the forward and put back for the recomputation, then the generator's current state is
restored (torch's ``fork_rng``): a dropout inside ``fn`` draws the same mask again, and the draws
after the backward are those torch's would be.
"""
import contextlib
import warnings

from .._tensor import Tensor
from ..autograd import backward as _backward
from ..autograd.engine import is_checkpoint_valid
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import saved_tensors_hooks
from ..random import get_rng_state, set_rng_state


@contextlib.contextmanager
def _forward_rng(state):
    """Run the recomputation from the forward's generator state (None: as it is), then put the
    generator back where it was."""
    if state is None:
        yield
        return
    current = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(current)

__all__ = ["checkpoint", "checkpoint_sequential"]


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.fwd_cpu_state = get_rng_state() if preserve_rng_state else None
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        ctx.args = args
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                               "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
                               "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        saved = iter(ctx.saved_tensors)
        inputs = [next(saved).detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in ctx.args]
        with _forward_rng(ctx.fwd_cpu_state), enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in inputs)


class _Recomputation:
    """The pack and unpack hooks of one non-reentrant checkpoint (torch's ``_checkpoint_hook``)."""

    def __init__(self, function, args, kwargs, preserve_rng_state):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.fwd_cpu_state = get_rng_state() if preserve_rng_state else None
        self.count, self.saved = 0, None

    def pack(self, tensor):
        self.count += 1
        return self.count - 1       # its place in the order of saving: all that is kept

    def unpack(self, index):
        if self.saved is None:      # the first tensor backward needs: recompute them all
            self.saved = []
            with _forward_rng(self.fwd_cpu_state), saved_tensors_hooks(self._keep, lambda t: t), enable_grad():
                self.function(*self.args, **self.kwargs)
        return self.saved[index]

    def _keep(self, tensor):
        self.saved.append(tensor.detach())
        return None


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    if use_reentrant is None:
        warnings.warn("internals.utils.checkpoint: the use_reentrant parameter should be passed explicitly "
                      "(torch warns the same). use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:      # the reentrant Function takes positional tensors only
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    hooks = _Recomputation(function, args, kwargs, preserve_rng_state)
    with saved_tensors_hooks(hooks.pack, hooks.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Split a chain of modules (a Sequential or a list) into ``segments`` runs of equal length
    ``len // segments`` and checkpoint every run but the last, which runs plainly (its
    activations are needed at once by the backward); the leftover modules join the last run."""
    if use_reentrant is None:
        warnings.warn("internals.utils.checkpoint: the use_reentrant parameter should be passed explicitly "
                      "(torch warns the same). use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children"):
        functions = list(functions.children())
    size = len(functions) // segments
    last = -1
    for first in range(0, size * (segments - 1), size):
        last = first + size - 1
        input = checkpoint(_run_chain(functions[first:last + 1]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve_rng_state)
    return _run_chain(functions[last + 1:])(input)


def _run_chain(functions):
    def forward(x):
        for f in functions:
            x = f(x)
        return x
    return forward
