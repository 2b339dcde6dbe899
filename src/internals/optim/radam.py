"""RAdam (``torch/optim/radam.py``: ``RAdam._init_group`` and ``_single_tensor_radam``, ``capturable=False``).

Adam whose adaptive step is switched on only once the variance of its second moment is
tractable. With t the step count, ρ∞ = 2/(1 − β2) − 1 and ρ_t = ρ∞ − 2t·β2^t/(1 − β2^t):
    g = grad (−grad if maximizing; + weight_decay·p, or p ·= 1 − lr·weight_decay when decoupled)
    m = m + (1 − β1)·(g − m),   v = β2·v + (1 − β2)·g²,   m̂ = m / (1 − β1^t)
    ρ_t > 5:  p = p − m̂·lr·sqrt(1 − β2^t)/(sqrt(v) + eps)·r_t,  r_t the rectification
              sqrt((ρ_t − 4)(ρ_t − 2)ρ∞ / ((ρ∞ − 4)(ρ∞ − 2)ρ_t))
    else:     p = p − m̂·lr                   (plain momentum SGD for the first steps)
torch's operators in torch's order, its coefficients Python floats: torch's bits.
With ``foreach=True`` the step is torch's ``_multi_tensor_radam``, over the ``_foreach_*``
operators: it folds lr, the bias corrections and the rectification into one factor per
parameter, p += m · (1 / ((sqrt(v) + eps) / f) + s) with s the unrectified step, so its bits are
torch's ``foreach=True`` ones, which may differ from the single-tensor loop's in the last bit.
"""
from .. import _functional as F
from .._functional import zeros, zeros_like
from ..aten.native.tensor_factories import tensor
from ..c10.memory_format import preserve_format
from .adamax import check_adam_hyper_parameters
from .optimizer import (
    Optimizer,
    _use_grad_for_differentiable,
    check_capturable,
    check_foreach_differentiable,
    foreach_weight_decay,
    group_tensors_by_device_and_dtype,
    lists_as_real_if_complex,
    to_scalar,
    use_foreach,
    view_as_real_if_complex,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    _loaded_group_defaults = dict(maximize=False, foreach=None, capturable=False, decoupled_weight_decay=False,
                                  differentiable=False)
    _state_numbers = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_adam_hyper_parameters(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _init_group(self, group):
        """The parameters that have a gradient (a sparse one refused when the loop reaches it), and
        their state made on first use: the step count a float32 0-dim CPU tensor, the moments
        zeros like the parameter."""
        params = []
        for p, state in self._params_with_grads(group, "RAdam"):
            params.append(p)
            if not state:
                state["step"] = zeros(())
                state["exp_avg"] = zeros_like(p, memory_format=preserve_format)
                state["exp_avg_sq"] = zeros_like(p, memory_format=preserve_format)
        return params

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = self._init_group(group)
            check_foreach_differentiable(group, params)
            check_capturable(group, params, supports_xla=not group["foreach"])
            step = _multi_tensor_radam if use_foreach(group, params) else _single_tensor_radam
            step(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_radam(params, states, group):
    """One parameter at a time, torch's operators in torch's order; a complex parameter through
    real views before the weight decay, as torch's."""
    lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    for param, state in zip(params, states):
        grad = -param.grad if group["maximize"] else param.grad
        param, grad, exp_avg, exp_avg_sq = view_as_real_if_complex(param, grad, state["exp_avg"],
                                                                   state["exp_avg_sq"])
        state["step"] += 1
        step = state["step"].item()
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            # differentiable: a new tensor, since sqrt's backward reads the output it saved
            root = exp_avg_sq.sqrt()
            root = root.add(eps) if group["differentiable"] else root.add_(eps)
            adaptive_lr = (bias_correction2 ** 0.5) / root
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def _multi_tensor_radam(params, states, group):
    """``_multi_tensor_radam`` (not capturable): per device and dtype, one ``_foreach_*`` call a
    line; the rectification and the step sizes are Python floats, one per parameter (a step not
    yet rectified divides by a zero factor: the reciprocal of the infinity is 0)."""
    if not params:
        return
    lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    lists = [params, [p.grad for p in params], [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
             [s["step"] for s in states]]
    for (device_params, grads, exp_avgs, exp_avg_sqs, steps), _ in group_tensors_by_device_and_dtype(lists).values():
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        device_params, grads, exp_avgs, exp_avg_sqs = lists_as_real_if_complex(device_params, grads, exp_avgs,
                                                                               exp_avg_sqs)
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        rho_inf = 2 / (1 - beta2) - 1
        # the count read (``.item()``) at each use, as torch's comprehensions read it
        rho_ts = [rho_inf - 2 * step.item() * (beta2 ** step.item()) / (1 - beta2 ** step.item()) for step in steps]
        grads = foreach_weight_decay(grads, device_params, group, weight_decay, lr)
        F._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        F._foreach_mul_(exp_avg_sqs, beta2)
        F._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        rects = [((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                 if rho_t > 5 else 0 for rho_t in rho_ts]
        unrectified = [0 if rect > 0 else 1.0 for rect in rects]
        bias_correction1 = [1 - beta1 ** step.item() for step in steps]
        unrect_step_size = [(lr * u / bc) * -1 for u, bc in zip(unrectified, bias_correction1)]
        factors = [((1 - beta2 ** step.item()) ** 0.5) * (lr * rect / bc) * -1
                   for step, rect, bc in zip(steps, rects, bias_correction1)]
        buffer = F._foreach_sqrt(exp_avg_sqs)
        F._foreach_add_(buffer, eps)
        F._foreach_div_(buffer, factors)
        F._foreach_reciprocal_(buffer)
        F._foreach_add_(buffer, unrect_step_size)
        F._foreach_addcmul_(device_params, exp_avgs, buffer)
