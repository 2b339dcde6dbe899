"""Adamax (``torch/optim/adamax.py``: ``Adamax._init_group`` and ``_single_tensor_adamax``, ``capturable=False``).

Adam with the second moment replaced by an exponentially weighted infinity norm, t the step count:
    g = grad (−grad if maximizing, + weight_decay·p)
    m = m + (1 − β1)·(g − m)                  ``exp_avg.lerp_(grad, 1 - beta1)``
    u = max(β2·u, |g| + eps)                  ``torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)``
    p = p − lr/(1 − β1^t) · m / u             ``param.addcdiv_(exp_avg, exp_inf, value=-clr)``
The same operators in the same order as torch's, so the parameters are torch's to the bit.
"""
from .. import _functional as F
from .._functional import amax, cat, maximum, zeros, zeros_like
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
    lists_as_real_if_complex,
    to_scalar,
    use_foreach,
    view_as_real_if_complex,
)

__all__ = ["Adamax"]


def check_adam_hyper_parameters(lr, eps, betas, weight_decay):
    """The checks (and messages) torch's Adam-like constructors share, in their order."""
    check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adamax(Optimizer):
    _loaded_group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _state_numbers = ("step",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_adam_hyper_parameters(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _init_group(self, group):
        """The parameters that have a gradient (a sparse one refused when the loop reaches it), and
        their state made on first use: the step count a float32 0-dim CPU tensor, the first moment
        and the infinity norm zeros like the parameter."""
        params = []
        for p, state in self._params_with_grads(group, "Adamax"):
            params.append(p)
            if not state:
                state["step"] = zeros(())
                state["exp_avg"] = zeros_like(p, memory_format=preserve_format)
                state["exp_inf"] = zeros_like(p, memory_format=preserve_format)
        return params

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = self._init_group(group)
            # Adamax's multi-tensor step refuses differentiable before it looks at the parameters
            check_foreach_differentiable(group)
            check_capturable(group, params, supports_xla=not group["foreach"])
            step = _multi_tensor_adamax if use_foreach(group, params) else _single_tensor_adamax
            step(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_adamax(params, states, group):
    """One parameter at a time, torch's operators in torch's order; a complex parameter through
    real views after the weight decay. A differentiable step takes the maximum through ``amax``
    of the two stacked candidates (``maximum(..., out=)`` records no graph)."""
    lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    for param, state in zip(params, states):
        grad = -param.grad if group["maximize"] else param.grad
        state["step"] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        param, grad, exp_avg, exp_inf = view_as_real_if_complex(param, grad, state["exp_avg"], state["exp_inf"])
        exp_avg.lerp_(grad, 1 - beta1)
        if not group["differentiable"]:
            maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        else:
            norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(amax(norm_buf, 0, keepdim=False))
        clr = lr / (1 - beta1 ** state["step"].item())
        param.addcdiv_(exp_avg, exp_inf, value=-clr)


def _multi_tensor_adamax(params, states, group):
    """``_multi_tensor_adamax`` (not capturable): per device and dtype, one ``_foreach_*`` call a
    line; the step sizes are Python floats, one per parameter."""
    if not params:
        return
    lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    lists = [params, [p.grad for p in params], [s["exp_avg"] for s in states], [s["exp_inf"] for s in states],
             [s["step"] for s in states]]
    for (device_params, grads, exp_avgs, exp_infs, steps), _ in group_tensors_by_device_and_dtype(lists).values():
        device_params, grads, exp_avgs, exp_infs = lists_as_real_if_complex(device_params, grads, exp_avgs, exp_infs)
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        grads = foreach_weight_decay(grads, device_params, group, weight_decay)
        F._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        F._foreach_mul_(exp_infs, beta2)
        if not group["maximize"] and weight_decay == 0:
            grads = F._foreach_abs(grads)     # the parameters' own gradients: not written
        else:
            F._foreach_abs_(grads)
        F._foreach_add_(grads, eps)
        F._foreach_maximum_(exp_infs, grads)
        step_size = [(lr / (1 - beta1 ** step.item())) * -1 for step in steps]
        F._foreach_addcdiv_(device_params, exp_avgs, exp_infs, step_size)
