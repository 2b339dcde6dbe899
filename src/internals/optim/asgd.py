"""ASGD, averaged SGD (``torch/optim/asgd.py``: ``ASGD._init_group`` and ``_single_tensor_asgd``, ``capturable=False``).

SGD with a decaying step size η and a running average ``ax`` of the iterates (Polyak averaging),
which starts once t passes t0. Per parameter, t the step count:
    g = grad (−grad if maximizing, + weight_decay·p)
    p = p·(1 − λ·η) − η·g                      ``param.mul_(1 - lambd * eta)``, ``param.add_(grad, alpha=-eta)``
    ax = ax + μ·(p − ax)   (ax = p while μ = 1)
    η = lr / (1 + λ·lr·t)^α,   μ = 1 / max(1, t − t0)   kept as float32 0-dim tensors in the state
torch's operators in torch's order, its coefficients Python floats: torch's bits.
``foreach=True`` runs torch's multi-tensor loop (``_multi_tensor_asgd``), whose numbers differ:
the parameter moves as p − η·(g + λ·p), the average moves even while μ = 1, and the next η is
computed from the float32 step count in float32 tensor arithmetic, not in Python's float64.
"""
from .. import _functional as F
from .._functional import as_tensor, ones, zeros, zeros_like
from ..aten.native.tensor_factories import tensor
from ..c10.memory_format import preserve_format
from ..c10.scalar_type import float32
from .optimizer import (
    Optimizer,
    _use_grad_for_differentiable,
    check_capturable,
    check_foreach_differentiable,
    check_lr,
    group_tensors_by_device_and_dtype,
    to_scalar,
    use_foreach,
    view_as_real_if_complex,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    _loaded_group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _state_numbers = ("step", "eta", "mu")

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
            step = _multi_tensor_asgd if use_foreach(group, params) else _single_tensor_asgd
            step(params, [self.state[p] for p in params], group)
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


def _multi_tensor_asgd(params, states, group):
    """``_multi_tensor_asgd`` (not capturable): per device and dtype, one ``_foreach_*`` call a
    line. η·(g + λ·p) is taken off the parameter in one ``addcmul`` with the η tensor; the new η
    comes from the step tensor, so ``1 + λ·lr·t``, its power and the quotient round in float32."""
    if not params:
        return
    lr, lambd, alpha, t0 = to_scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
    weight_decay = group["weight_decay"]
    lists = [params, [p.grad for p in params], [s["ax"] for s in states], [s["mu"] for s in states],
             [s["eta"] for s in states], [s["step"] for s in states]]
    for (device_params, grads, axs, mus, etas, steps), _ in group_tensors_by_device_and_dtype(lists).values():
        if device_params[0].dtype.is_complex:
            views = [view_as_real_if_complex(*ts) for ts in zip(device_params, grads, axs)]
            device_params, grads, axs = (list(v) for v in zip(*views))
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        if weight_decay != 0:
            if group["maximize"]:         # the negated gradients are already copies: added to in place
                F._foreach_add_(grads, device_params, alpha=weight_decay)
                intermediate = grads
            else:
                intermediate = F._foreach_add(grads, device_params, alpha=weight_decay)
            F._foreach_add_(intermediate, device_params, alpha=lambd)
        else:
            intermediate = F._foreach_add(grads, device_params, alpha=lambd)
        F._foreach_addcmul_(device_params, intermediate, etas, value=-1)
        F._foreach_addcmul_(axs, F._foreach_sub(device_params, axs), mus)
        device = device_params[0].device
        new_etas = [as_tensor(lr / ((1 + lambd * lr * t) ** alpha), device=device) for t in steps]
        new_mus = [as_tensor(1 / max(1, t.item() - t0), device=device) for t in steps]
        F._foreach_copy_(etas, new_etas)
        F._foreach_copy_(mus, new_mus)
