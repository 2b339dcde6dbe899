"""``torch.func.functional_call`` (``torch/_functorch/functional_call.py``): run a module on
tensors passed in, given as one dictionary or as several with distinct keys (parameters in one,
buffers in another, as ``dict(m.named_parameters())``, ``dict(m.named_buffers())``)."""
from collections.abc import Sequence

from .._functional import stack
from ..nn.utils import stateless


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the given tensors in place of its parameters and buffers,
    which are put back afterwards (see ``nn.utils.stateless._reparametrize_module``)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        merged = _merge_distinct(parameter_and_buffer_dicts)
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
                         f"but got {type(parameter_and_buffer_dicts)}")
    return stateless._functional_call(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)


def _merge_distinct(dicts):
    """Several dictionaries as one; a key in two of them would make the call ambiguous."""
    if not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    counts = {}
    for d in dicts:
        for key in d:
            counts[key] = counts.get(key, 0) + 1
    repeated = [key for key, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return {k: v for d in dicts for k, v in d.items()}


def stack_module_state(models):
    """The parameters and buffers of several modules of one class, each stacked along a new
    first dim, by name: what ``vmap`` over ``functional_call`` runs an ensemble on. The stacked
    parameters are new leaves (an optimizer can train them), not views of the modules' own."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    named = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in named], k) for k in named[0]}
    named = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in named], k) for k in named[0]}
    return params, buffers


def _stacked_leaf(tensors, name):
    wanted = {t.requires_grad for t in tensors}
    if len(wanted) != 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    return stack(tensors).detach().requires_grad_(wanted.pop())
