"""NAdam (``torch/optim/nadam.py``: ``NAdam._init_group`` and ``_single_tensor_nadam``, ``capturable=False``).

Adam with Nesterov momentum: each step looks one momentum step ahead. With t the step count,
μ_t = β1·(1 − ½·0.96^(t·momentum_decay)) and Π μ the running product kept in the state:
    g = grad (−grad if maximizing; + weight_decay·p, or p ·= 1 − lr·weight_decay when decoupled)
    m = m + (1 − β1)·(g − m),   v = β2·v + (1 − β2)·g²
    denom = sqrt(v / (1 − β2^t)) + eps
    p = p − lr·(1 − μ_t)/(1 − Π μ) · g/denom − lr·μ_{t+1}/(1 − Π μ·μ_{t+1}) · m/denom
The coefficients are Python floats (float64) as in torch's non-capturable loop; the tensors
go through torch's operators in torch's order, so the parameters are torch's to the bit.
With ``foreach=True`` the step is torch's ``_multi_tensor_nadam``, over the ``_foreach_*``
operators: the square root is taken before the division by the bias correction (sqrt(v)/sqrt(1 − β2^t)),
and a maximized gradient is negated before the weight decay is added into it in place, so its
bits are torch's ``foreach=True`` ones, which may differ from the single-tensor loop's in the last bit.
"""
from .. import _functional as F
from .._functional import ones, zeros, zeros_like
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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    _loaded_group_defaults = dict(decoupled_weight_decay=False, maximize=False, foreach=None, capturable=False,
                                  differentiable=False)
    _state_numbers = ("step", "mu_product")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_adam_hyper_parameters(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _init_group(self, group):
        """The parameters that have a gradient (a sparse one refused when the loop reaches it), and
        their state made on first use: the step count and the product of the momenta float32
        0-dim CPU tensors, the two moments zeros like the parameter."""
        params = []
        for p, state in self._params_with_grads(group, "NAdam"):
            params.append(p)
            if not state:
                state["step"] = zeros(())
                state["mu_product"] = ones(())
                state["exp_avg"] = zeros_like(p, memory_format=preserve_format)
                state["exp_avg_sq"] = zeros_like(p, memory_format=preserve_format)
        return params

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = self._init_group(group)
            check_foreach_differentiable(group, params)
            check_capturable(group, params, supports_xla=not group["foreach"],
                             names="params, mu_products, and state_steps" if group["foreach"]
                             else "params, mu_products and state_steps")
            step = _multi_tensor_nadam if use_foreach(group, params) else _single_tensor_nadam
            step(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_nadam(params, states, group):
    """One parameter at a time, torch's operators in torch's order; a complex parameter through
    real views before the weight decay (NAdam's order, unlike Adam's). A differentiable step
    scales the two terms with tensor operations instead of ``addcdiv``'s number."""
    lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    momentum_decay = group["momentum_decay"]
    for param, state in zip(params, states):
        grad = -param.grad if group["maximize"] else param.grad
        mu_product = state["mu_product"]
        param, grad, exp_avg, exp_avg_sq = view_as_real_if_complex(param, grad, state["exp_avg"],
                                                                   state["exp_avg_sq"])
        state["step"] += 1
        step = state["step"].item()
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        if group["differentiable"]:
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            param.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
            param.addcdiv_(exp_avg * (-lr * mu_next / (1.0 - mu_product_next)), denom)
        else:
            mu_product_next = mu_product.item() * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product.item())))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


def _multi_tensor_nadam(params, states, group):
    """``_multi_tensor_nadam`` (not capturable): per device and dtype, one ``_foreach_*`` call a
    line; μ, the next μ and the step sizes are Python floats, one per parameter."""
    if not params:
        return
    lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    momentum_decay = group["momentum_decay"]
    lists = [params, [p.grad for p in params], [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
             [s["mu_product"] for s in states], [s["step"] for s in states]]
    for (device_params, grads, exp_avgs, exp_avg_sqs, mu_products, steps), _ in \
            group_tensors_by_device_and_dtype(lists).values():
        device_params, grads, exp_avgs, exp_avg_sqs = lists_as_real_if_complex(device_params, grads, exp_avgs,
                                                                               exp_avg_sqs)
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        grads = foreach_weight_decay(grads, device_params, group, weight_decay, lr)
        F._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        F._foreach_mul_(exp_avg_sqs, beta2)
        F._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        exp_avg_sq_sqrt = F._foreach_sqrt(exp_avg_sqs)
        # each list reads the counts again (``.item()``), as torch's comprehensions do
        bias_correction_sqrt = [(1 - beta2 ** step.item()) ** 0.5 for step in steps]
        mus = [beta1 * (1.0 - 0.5 * (0.96 ** (step.item() * momentum_decay))) for step in steps]
        mu_nexts = [beta1 * (1.0 - 0.5 * (0.96 ** ((step.item() + 1) * momentum_decay))) for step in steps]
        F._foreach_mul_(mu_products, mus)
        F._foreach_div_(exp_avg_sq_sqrt, bias_correction_sqrt)
        F._foreach_add_(exp_avg_sq_sqrt, eps)
        step_size_grads = [(lr * (1.0 - mu) / (1.0 - prod.item())) * -1 for prod, mu in zip(mu_products, mus)]
        step_size_exp_avg = [(lr * mu_next / (1.0 - prod.item() * mu_next)) * -1
                             for prod, mu_next in zip(mu_products, mu_nexts)]
        F._foreach_addcdiv_(device_params, grads, exp_avg_sq_sqrt, step_size_grads)
        F._foreach_addcdiv_(device_params, exp_avgs, exp_avg_sq_sqrt, step_size_exp_avg)
