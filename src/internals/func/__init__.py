"""``torch.func``: of its function transforms only ``functional_call`` is here, the piece a
training script uses to run a module on tensors it holds itself. ``grad``, ``vjp``, ``jvp``,
``jacrev``, ``hessian``, ``vmap`` and ``stack_module_state`` (which exists to feed ``vmap``) are
not: the package has no functorch transform layer (no batching or functional-grad interpreters)."""
from .._functorch.functional_call import functional_call

__all__ = ["functional_call"]
