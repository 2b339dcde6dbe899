"""Adadelta (``torch/optim/adadelta.py``: ``Adadelta.__init__``, ``_init_group`` and
``_single_tensor_adadelta``).

Per parameter, in torch's order and with torch's in-place operators:
    g = grad (−grad if maximizing, + weight_decay·p)
    v = ρ·v + (1 − ρ)·g²                     ``square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)``
    Δ = sqrt(u + eps) / sqrt(v + eps) · g    ``acc_delta.add(eps).sqrt_()``, ``.div_(std).mul_(grad)``
    u = ρ·u + (1 − ρ)·Δ²                     ``acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)``
    p −= lr · Δ
The running average of the updates, ``u``, stands where other optimizers keep a learning rate: the
step's size has the units of the parameter, and ``lr`` (1.0 by default) only scales it.
"""
from .. import _functional as F
from .._functional import view_as_complex, zeros, zeros_like
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
    lists_as_real_if_complex,
    to_scalar,
    use_foreach,
    view_as_real_if_complex,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    _loaded_group_defaults = dict(maximize=False, capturable=False, foreach=None, differentiable=False)
    _state_numbers = ("step",)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        for name, value in (("epsilon value", eps), ("weight_decay value", weight_decay)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _init_group(self, group):
        """The parameters that have a gradient (a sparse one refused at the first that has it),
        and their state, made on first use: the step count a float32 0-dim CPU tensor, the two
        averages zeros like the parameter."""
        params = []
        for p, state in self._params_with_grads(group, "Adadelta"):
            params.append(p)
            if not state:
                state["step"] = zeros(())
                state["square_avg"] = zeros_like(p, memory_format=preserve_format)
                state["acc_delta"] = zeros_like(p, memory_format=preserve_format)
        return params

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = self._init_group(group)
            # torch's multi-tensor step refuses differentiable before it looks at the parameters
            check_foreach_differentiable(group)
            check_capturable(group, params, supports_xla=False)
            step = _multi_tensor_adadelta if use_foreach(group, params) else _single_tensor_adadelta
            step(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_adadelta(params, states, group):
    """One parameter at a time, torch's operators in torch's order; a complex parameter's state
    and gradient through real views after the weight decay, the update viewed back as complex."""
    lr, rho, eps = group["lr"], group["rho"], group["eps"]
    lr = lr.squeeze() if isinstance(lr, Tensor) and lr.dim() else lr        # torch's _to_scalar
    for param, state in zip(params, states):
        state["step"] += 1
        grad = -param.grad if group["maximize"] else param.grad
        if group["weight_decay"] != 0:
            grad = grad.add(param, alpha=group["weight_decay"])
        is_complex = param.dtype.is_complex
        _, grad, square_avg, acc_delta = view_as_real_if_complex(param, grad, state["square_avg"],
                                                                 state["acc_delta"])
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if group["differentiable"]:
            # sqrt_'s backward reads the output it saved: the in-place division must not write it
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        if is_complex:
            delta = view_as_complex(delta)
        param.add_(delta, alpha=-lr)


def _multi_tensor_adadelta(params, states, group):
    """``_multi_tensor_adadelta`` (not capturable): per device and dtype, one ``_foreach_*`` call
    a line; a complex parameter is updated through its real view."""
    if not params:
        return
    lr, rho, eps, weight_decay = to_scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
    lists = [params, [p.grad for p in params], [s["square_avg"] for s in states], [s["acc_delta"] for s in states],
             [s["step"] for s in states]]
    for (device_params, grads, square_avgs, acc_deltas, steps), _ in group_tensors_by_device_and_dtype(lists).values():
        device_params, grads, square_avgs, acc_deltas = lists_as_real_if_complex(device_params, grads, square_avgs,
                                                                                 acc_deltas)
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        grads = foreach_weight_decay(grads, device_params, group, weight_decay)
        F._foreach_mul_(square_avgs, rho)
        F._foreach_addcmul_(square_avgs, grads, grads, value=1 - rho)
        std = F._foreach_add(square_avgs, eps)
        F._foreach_sqrt_(std)
        deltas = F._foreach_add(acc_deltas, eps)
        F._foreach_sqrt_(deltas)
        F._foreach_div_(deltas, std)
        F._foreach_mul_(deltas, grads)
        F._foreach_mul_(acc_deltas, rho)
        F._foreach_addcmul_(acc_deltas, deltas, deltas, value=1 - rho)
        F._foreach_add_(device_params, deltas, alpha=-lr)
