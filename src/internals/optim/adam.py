"""Adam (``torch/optim/adam.py``: ``Adam._init_group`` and ``_single_tensor_adam``, ``capturable=False``).

Per parameter, in torch's order and with torch's in-place operators, t being the step count:
    g = grad (+ weight_decay·p)                       ``grad.add(param, alpha=weight_decay)``
    m = m + (1 − β1)·(g − m)                          ``exp_avg.lerp_(grad, 1 - beta1)``
    v = β2·v + (1 − β2)·g²                            ``exp_avg_sq.mul_(beta2).addcmul_(grad, grad, ...)``
    v̂ = max(v̂, v) with amsgrad                        ``torch.maximum(v̂, v, out=v̂)``
    denom = sqrt(v or v̂) / sqrt(1 − β2^t) + eps
    p = p − lr/(1 − β1^t) · m / denom                 ``param.addcdiv_(exp_avg, denom, value=-step_size)``
The same operators, rounded the same way, so the parameters are torch's to the bit. With
``foreach=True`` the step is torch's ``_multi_tensor_adam``: the same lines as ``_foreach_*`` calls
over all parameters of a device and dtype, which on the CPU loop over the same per-tensor
operators, so that trajectory is bit for bit torch's ``foreach=True`` one (and its single-tensor one).

``AdamW`` (``torch/optim/adamw.py``) is Adam with ``decoupled_weight_decay=True``.
"""
from .. import _functional as F
from .._functional import maximum, square, zeros_like
from .._tensor import Tensor
from ..aten.native.tensor_factories import tensor
from ..c10.memory_format import preserve_format
from .optimizer import (
    Optimizer,
    _use_grad_for_differentiable,
    check_capturable,
    check_foreach_differentiable,
    check_lr,
    foreach_weight_decay,
    group_tensors_by_device_and_dtype,
    use_foreach,
    view_as_real_if_complex,
)

__all__ = ["Adam", "AdamW"]


def _check_betas(betas, foreach, capturable):
    """torch takes the two betas both as Python floats or both as tensors (an int among them is
    refused); a tensor beta holds one number, is refused by the multi-tensor step as a tensor lr
    is, and is kept as a 0-dim tensor (``torch/optim/optimizer.py``'s ``_to_scalar``)."""
    if not (all(isinstance(b, float) for b in betas) or all(isinstance(b, Tensor) for b in betas)):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, beta in enumerate(betas):
        if isinstance(beta, Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
            if beta.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(b.reshape(()) if isinstance(b, Tensor) and b.dim() else b for b in betas)


class Adam(Optimizer):
    _loaded_group_defaults = dict(amsgrad=False, maximize=False, foreach=None, capturable=False,
                                  differentiable=False, fused=None, decoupled_weight_decay=False)
    _state_numbers = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            # torch's multi-tensor step reads lr as a Python number; a tensor one is refused first
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        betas = _check_betas(betas, foreach, capturable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_group(self, group):
        """The parameters that have a gradient, and their state: made on first use (the step count a
        float32 0-dim CPU tensor, the moments like the parameter), for all of them before any update."""
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if not state:
                state["step"] = tensor(0.0)
                state["exp_avg"] = zeros_like(p, memory_format=preserve_format)
                state["exp_avg_sq"] = zeros_like(p, memory_format=preserve_format)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(p, memory_format=preserve_format)
            if group["differentiable"] and state["step"].requires_grad:
                raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")
        return params

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            self._refuse_sparse_grads(group, "Adam does not support sparse gradients, please consider SparseAdam "
                                             "instead")
            params = self._init_group(group)
            check_capturable(group, params)
            check_foreach_differentiable(group, params)
            step = _multi_tensor_adam if use_foreach(group, params) else _single_tensor_adam
            step(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_adam(params, states, group):
    """One parameter at a time, torch's operators in torch's order (not capturable); a complex
    parameter is updated through real views after the weight decay, as torch's. A differentiable
    step takes torch's other branch (``_differentiable_adam_update``)."""
    lr, eps, weight_decay, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
    beta1, beta2 = group["betas"]
    differentiable = group["differentiable"]
    for param, state in zip(params, states):
        grad = -param.grad if group["maximize"] else param.grad
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        state["step"] += 1
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:      # AdamW: shrink the weights, not the gradient
                param.mul_(1 - lr * weight_decay)
            elif differentiable and isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq = view_as_real_if_complex(
            param, grad, exp_avg, exp_avg_sq, state.get("max_exp_avg_sq"))
        # A tensor beta1 is first cast to the parameter's dtype (torch's ``beta1_dict``), so that
        # 1 - beta1 is rounded in that dtype, not in the beta's own float32.
        device_beta1 = beta1.to(device=param.device, dtype=param.dtype) if isinstance(beta1, Tensor) else beta1
        exp_avg.lerp_(grad, 1 - device_beta1)
        if differentiable and isinstance(beta2, Tensor) and beta2.requires_grad:
            # addcmul's value is a number: v + (g² − v)(1 − β2) is the same average, and reaches β2
            exp_avg_sq.lerp_(square(grad), weight=1 - beta2)
        else:
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if differentiable:
            _differentiable_adam_update(param, state, exp_avg, exp_avg_sq, max_exp_avg_sq, group)
            continue
        # The bias corrections are Python floats (float64), as in torch's non-capturable path.
        step = state["step"].item()
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        if amsgrad:
            second = maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        else:
            second = exp_avg_sq
        denom = (second.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)


def _multi_tensor_adam(params, states, group):
    """``_multi_tensor_adam`` (not capturable, so every number is a Python float): per device and
    dtype, the step counts moved on, then the moments, the denominators and the parameters, each
    line one ``_foreach_*`` call; complex parameters go through real views, as in torch."""
    if not params:
        return
    lr, eps, weight_decay, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
    beta1, beta2 = group["betas"]
    lists = [params, [p.grad for p in params], [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
             [s.get("max_exp_avg_sq") for s in states], [s["step"] for s in states]]
    for (device_params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps), _ in \
            group_tensors_by_device_and_dtype(lists).values():
        if device_params[0].dtype.is_complex:
            views = [view_as_real_if_complex(*ts) for ts in zip(device_params, grads, exp_avgs, exp_avg_sqs,
                                                                 max_exp_avg_sqs)]
            device_params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs = (list(v) for v in zip(*views))
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        grads = foreach_weight_decay(grads, device_params, group, weight_decay, lr)
        F._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        F._foreach_mul_(exp_avg_sqs, beta2)
        F._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        # the bias corrections are Python floats (float64), one per parameter
        bias_correction1 = [1 - beta1 ** step.item() for step in steps]
        bias_correction2 = [1 - beta2 ** step.item() for step in steps]
        step_size = [(lr / bc) * -1 for bc in bias_correction1]
        bias_correction2_sqrt = [bc ** 0.5 for bc in bias_correction2]
        if amsgrad:
            F._foreach_maximum_(max_exp_avg_sqs, exp_avg_sqs)
            exp_avg_sq_sqrt = F._foreach_sqrt(max_exp_avg_sqs)
        else:
            exp_avg_sq_sqrt = F._foreach_sqrt(exp_avg_sqs)
        F._foreach_div_(exp_avg_sq_sqrt, bias_correction2_sqrt)
        F._foreach_add_(exp_avg_sq_sqrt, eps)
        F._foreach_addcdiv_(device_params, exp_avgs, exp_avg_sq_sqrt, step_size)


def _differentiable_adam_update(param, state, exp_avg, exp_avg_sq, max_exp_avg_sq, group):
    """torch's ``capturable or differentiable`` branch: the bias corrections are tensors computed
    from the float32 step count (so rounded in float32, not in Python's float64), the step size
    is folded into the denominator, and the tensors the graph saves are copies (the running
    maximum, the first moment), so that the next step's in-place updates leave them intact."""
    lr, eps = group["lr"], group["eps"]
    beta1, beta2 = group["betas"]
    step = state["step"]
    grad_through_beta1 = isinstance(beta1, Tensor) and beta1.requires_grad
    grad_through_beta2 = isinstance(beta2, Tensor) and beta2.requires_grad
    bias_correction1 = 1 - beta1 ** (step.clone() if grad_through_beta1 else step)
    bias_correction2 = 1 - beta2 ** (step.clone() if grad_through_beta2 else step)
    step_size_neg = (lr / bias_correction1).neg()
    bias_correction2_sqrt = bias_correction2.sqrt()
    second = exp_avg_sq
    if group["amsgrad"]:
        max_exp_avg_sq.copy_(maximum(max_exp_avg_sq.clone(), exp_avg_sq))
        second = max_exp_avg_sq
    denom = (second.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
    param.addcdiv_(exp_avg.clone(), denom)


class AdamW(Adam):
    """Adam whose weight decay shrinks the weights (p *= 1 − lr·wd) instead of adding wd·p to the
    gradient. torch 2.x defines it exactly so, as a subclass fixing the flag (and a larger default decay)."""

    _loaded_group_defaults = dict(Adam._loaded_group_defaults, decoupled_weight_decay=True)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
