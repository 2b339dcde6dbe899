"""``torch.func``: composable function transforms (``torch/func/__init__.py``).

``vmap`` batches a function written for one example; ``grad``, ``vjp``, ``jvp``, ``linearize``,
``jacrev``, ``jacfwd`` and ``hessian`` differentiate functions; they compose (``vmap(grad(f))`` gives
per-example gradients). ``functional_call`` and ``stack_module_state`` run modules on tensors
held outside them (an ensemble under ``vmap``); ``functionalize`` removes in-place writes.
The machinery is in ``internals._functorch``.
"""
from .._functorch.eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .._functorch.functional_call import functional_call, stack_module_state
from .._functorch.functionalize import functionalize
from .._functorch.vmap import vmap

__all__ = ["functional_call", "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "stack_module_state", "vjp", "vmap"]
