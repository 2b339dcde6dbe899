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
from .._functional import view_as_complex, zeros, zeros_like
from .._tensor import Tensor
from ..c10.memory_format import preserve_format
from .optimizer import (
    Optimizer,
    _use_grad_for_differentiable,
    check_capturable,
    check_foreach_differentiable,
    check_lr,
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
            _single_tensor_adadelta(params, [self.state[p] for p in params], group)
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
