"""Stochastic gradient descent with momentum (``torch/optim/sgd.py``, the single-tensor loop).

Per parameter, in torch's order:  g = grad (+ weight_decay·p);  with momentum,
buf = g on the first step, else buf = momentum·buf + (1 − dampening)·g; then g = buf, or
g + momentum·buf with Nesterov;  finally p −= lr·g.
"""
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, check_lr

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            for p in group["params"]:
                if p.grad is None:        # no gradient this step (set to None by zero_grad): no update
                    continue
                grad = p.grad.neg() if group["maximize"] else p.grad
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = grad.detach().clone()
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
                p.add_(grad, alpha=-lr)
        return loss
