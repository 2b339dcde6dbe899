"""Gradient clipping by total norm or by value (``torch/nn/utils/clip_grad.py``).

All gradients are treated as one long vector: its norm is the norm of the per-tensor norms
(true for every p-norm and for inf), and when it exceeds ``max_norm`` every gradient is scaled
by the same factor, so the update keeps its direction. The factor stays a tensor
(``clamp(max_norm / (total + 1e-6), max=1)``): no ``.item()``, no host synchronisation, as in
torch. torch's ``foreach`` path computes the same numbers with batched kernels; internals has
only the per-tensor loop, which ``foreach`` therefore does not change.
"""
import types
import warnings

from ..._functional import stack
from ..._tensor import Tensor
from ...aten.native.tensor_factories import tensor
from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together, on the first tensor's device."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    first_device = tensors[0].device
    norms = [vector_norm(t, norm_type).to(first_device) for t in tensors]
    total_norm = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and (total_norm.isnan() | total_norm.isinf()).item():
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                           "so it cannot be clipped. To disable this error and scale the gradients by the "
                           "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale every ``p.grad`` in place by ``min(1, max_norm / (total_norm + 1e-6))``; the 1e-6 keeps
    the factor finite for all-zero gradients."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    clip_coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(clip_coef.to(g.device))


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the gradients of ``parameters`` to total norm ``max_norm``; returns the norm before clipping."""
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)
    if is_generator and not parameters:      # most likely model.parameters() consumed twice
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The old name of :func:`clip_grad_norm_`: torch keeps it, deprecated (a FutureWarning
    pointing at the caller), and clips in place all the same."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every ``p.grad`` in place into ``[-clip_value, clip_value]``. torch's foreach path
    clamps from below, then from above: the same numbers as one ``clamp_`` (a negative
    ``clip_value`` leaves every element at ``clip_value``)."""
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:       # torch groups the gradients by device and dtype first, which refuses none
        raise RuntimeError("Expected !nested_tensorlist[0].empty() to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    for grad in grads:
        grad.clamp_(min=-clip_value, max=clip_value)
