"""Adam (``torch/optim/adam.py``, the single-tensor loop, ``capturable=False``).

Per parameter, in torch's order, with t the step count:
    g = grad (+ weight_decay·p)
    m = m + (1 − β1)·(g − m)                 (torch: ``exp_avg.lerp_(g, 1 − β1)``)
    v = β2·v + (1 − β2)·g²                   (torch: ``mul_(β2).addcmul_(g, g, value=1 − β2)``)
    v̂ = max(v̂, v) with amsgrad
    denom = sqrt(v or v̂) / sqrt(1 − β2^t) + eps
    p = p − lr/(1 − β1^t) · m / denom       (torch: ``addcdiv_``)
internals has no lerp_/addcmul_/addcdiv_ kernels, so each is written with mul/add/div;
the results agree with torch's fused kernels to float rounding.

``AdamW`` (``torch/optim/adamw.py``) is Adam with ``decoupled_weight_decay=True``.
"""
from .._functional import zeros_like
from ..aten.native.tensor_factories import tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_state(self, p, amsgrad):
        # torch keeps the step count as a float32 0-dim CPU tensor and the moments like p.
        state = self.state[p]
        state["step"] = tensor(0.0)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)
        if amsgrad:
            state["max_exp_avg_sq"] = zeros_like(p)
        return state

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, eps, weight_decay, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
            self._refuse_sparse_grads(group, "Adam does not support sparse gradients, please consider SparseAdam "
                                             "instead")
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.neg() if group["maximize"] else p.grad
                state = self.state[p] or self._init_state(p, amsgrad)
                state["step"].add_(1)
                step = state["step"].item()
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:      # AdamW: shrink the weights, not the gradient
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.add_(grad.sub(exp_avg).mul(1 - beta1))
                exp_avg_sq.mul_(beta2).add_(grad.mul(grad), alpha=1 - beta2)
                # The bias corrections are Python floats (float64), as in torch's non-capturable path.
                step_size = lr / (1 - beta1 ** step)
                bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
                if amsgrad:
                    state["max_exp_avg_sq"].copy_(state["max_exp_avg_sq"].maximum(exp_avg_sq))
                    second = state["max_exp_avg_sq"]
                else:
                    second = exp_avg_sq
                denom = second.sqrt().div(bias_correction2_sqrt).add_(eps)
                p.add_(exp_avg.div(denom), alpha=-step_size)
        return loss


class AdamW(Adam):
    """Adam whose weight decay shrinks the weights (p *= 1 − lr·wd) instead of adding wd·p to the
    gradient. torch 2.x defines it exactly so, as a subclass fixing the flag (and a larger default decay)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
