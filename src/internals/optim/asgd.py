"""ASGD, averaged SGD (``torch/optim/asgd.py``: ``ASGD._init_group`` and ``_single_tensor_asgd``, ``capturable=False``).

SGD with a decaying step size η and a running average ``ax`` of the iterates (Polyak averaging),
which starts once t passes t0. Per parameter, t the step count:
    g = grad (−grad if maximizing, + weight_decay·p)
    p = p·(1 − λ·η) − η·g                      ``param.mul_(1 - lambd * eta)``, ``param.add_(grad, alpha=-eta)``
    ax = ax + μ·(p − ax)   (ax = p while μ = 1)
    η = lr / (1 + λ·lr·t)^α,   μ = 1 / max(1, t − t0)   kept as float32 0-dim tensors in the state
torch's operators in torch's order, its coefficients Python floats: torch's bits.
``foreach=True`` is accepted and runs this same loop: torch's multi-tensor loop orders a few
operations differently, so its parameters may differ from these in the last bit.
"""
from .._functional import as_tensor, ones, zeros, zeros_like
from ..c10.memory_format import preserve_format
from ..c10.scalar_type import float32
from .optimizer import (
    Optimizer,
    _use_grad_for_differentiable,
    check_capturable,
    check_foreach_differentiable,
    check_lr,
    to_scalar,
    view_as_real_if_complex,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_group(self, group):
        """The parameters that have a gradient (a sparse one refused when the loop reaches it), and
        their state made on first use: the step count, η (the group's lr) and μ (1) float32 0-dim
        tensors on the parameter's device, the average zeros like the parameter."""
        params = []
        for p, state in self._params_with_grads(group, "ASGD"):
            params.append(p)
            if not state:
                state["step"] = zeros((), device=p.device)
                state["eta"] = as_tensor(to_scalar(group["lr"]), device=p.device, dtype=float32).clone().detach()
                state["mu"] = ones((), device=p.device)
                state["ax"] = zeros_like(p, memory_format=preserve_format)
        return params

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = self._init_group(group)
            check_foreach_differentiable(group, params)
            check_capturable(group, params, supports_xla=not group["foreach"],
                             names="params, mus, etas, and state_steps")
            _single_tensor_asgd(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_asgd(params, states, group):
    """One parameter at a time, torch's operators in torch's order; a complex parameter through
    real views before the weight decay, as torch's. η and μ are written into their state tensors
    (``copy_``), from Python floats: the float64 result rounded once to float32."""
    lr, lambd, alpha, t0 = to_scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
    for param, state in zip(params, states):
        grad = -param.grad if group["maximize"] else param.grad
        mu, eta = state["mu"], state["eta"]
        param, grad, ax = view_as_real_if_complex(param, grad, state["ax"])
        state["step"] += 1
        if group["weight_decay"] != 0:
            grad = grad.add(param, alpha=group["weight_decay"])
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        step = state["step"].item()
        eta.copy_(as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.copy_(as_tensor(1 / max(1, step - t0)))
