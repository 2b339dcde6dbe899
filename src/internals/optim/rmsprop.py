"""RMSprop (``torch/optim/rmsprop.py``, the single-tensor loop ``_single_tensor_rmsprop``).

Per parameter, in torch's order:  g = grad (−grad if maximizing, + weight_decay·p);
v = α·v + (1 − α)·g²;  centered: a = a + (1 − α)·(g − a) and avg = sqrt(v − a²), else
avg = sqrt(v);  avg += eps;  with momentum, buf = momentum·buf + g / avg and p −= lr·buf,
else p −= lr · g / avg.

torch writes ``addcmul_`` and ``addcdiv_``; internals has no such kernels, so each is written as
the same products in the same order (``(value·t1)·t2``, ``(value·t1)/t2``), which rounds as
torch's CPU kernels do.
"""
from .._functional import zeros_like
from ..aten.native.tensor_factories import tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps), ("momentum value", momentum),
                            ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _init_state(self, p, group):
        # torch keeps the step count as a float32 0-dim CPU tensor and the averages like p.
        state = self.state[p]
        state["step"] = tensor(0.0)
        state["square_avg"] = zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)
        return state

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
            self._refuse_sparse_grads(group, "RMSprop does not support sparse gradients")
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p] or self._init_state(p, group)
                state["step"].add_(1)
                grad = p.grad.neg() if group["maximize"] else p.grad
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).add_(grad.mul(1 - alpha).mul(grad))          # addcmul_
                if group["centered"]:
                    grad_avg = state["grad_avg"]
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.add(grad_avg.mul(-1).mul(grad_avg)).sqrt_()    # addcmul(value=-1)
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).add_(grad.div(avg))                          # addcdiv_
                    p.add_(buf, alpha=-lr)
                else:
                    p.add_(grad.mul(-lr).div(avg))                                  # addcdiv_(value=-lr)
        return loss
