"""SparseAdam (``torch/optim/sparse_adam.py``, its update in ``torch/optim/_functional.py``:
``sparse_adam``): Adam for dense parameters whose gradients are sparse COO tensors, as
``nn.Embedding(sparse=True)`` makes them.

Only the rows a step's gradient lists move, and only their moments: the other rows keep their
moments as they were, not decayed. Per parameter, with the gradient coalesced (g: its values at
its rows; m, v: the moments read at those rows with ``sparse_mask``), in torch's order:
    Δm = (g − m)·(1 − β1)                  m += Δm at the rows        (a sparse addition)
    Δv = (g² − v)·(1 − β2)                 v += Δv at the rows
    numer = Δm + m,  denom = sqrt(Δv + v) + eps          (dense arithmetic on the row values)
    p += −(lr·sqrt(1 − β2^t)/(1 − β1^t)) · numer/denom at the rows
The step count t is a Python int, counted whenever the parameter has a gradient, even an empty one.
"""
import math

from ..aten.native.sparse.sparse_tensor import sparse_coo_tensor
from ..aten.native.tensor_factories import zeros_like
from ..autograd.grad_mode import no_grad
from ..c10.memory_format import preserve_format
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        # Positions [group, index] of the parameters torch refuses, all listed in one message.
        where = [(g, i, p) for g, group in enumerate(self.param_groups) for i, p in enumerate(group["params"])]
        sparse = [[g, i] for g, i, p in where if p.is_sparse]
        complex_ = [[g, i] for g, i, p in where if p.is_complex()]
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not support complex parameters")

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p, memory_format=preserve_format)
                    state["exp_avg_sq"] = zeros_like(p, memory_format=preserve_format)
                state["step"] += 1
                params.append(p)
            for p in params:
                _sparse_adam_update(p, self.state[p], group)
        return loss


def _sparse_adam_update(param, state, group):
    """One parameter's update, torch's operators in torch's order."""
    beta1, beta2 = group["betas"]
    grad = -param.grad if group.get("maximize", False) else param.grad
    grad = grad.coalesce()
    indices, values = grad._indices(), grad._values()
    if values.numel() == 0:
        return
    size = grad.size()
    exp_avg, exp_avg_sq, step = state["exp_avg"], state["exp_avg_sq"], state["step"]

    old_exp_avg = exp_avg.sparse_mask(grad)._values()
    exp_avg_update = values.sub(old_exp_avg).mul_(1 - beta1)
    exp_avg.add_(sparse_coo_tensor(indices, exp_avg_update, size))
    old_exp_avg_sq = exp_avg_sq.sparse_mask(grad)._values()
    exp_avg_sq_update = values.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2)
    exp_avg_sq.add_(sparse_coo_tensor(indices, exp_avg_sq_update, size))

    # The new moments at the rows, rebuilt from the updates by dense additions (torch's shortcut).
    numer = exp_avg_update.add_(old_exp_avg)
    denom = exp_avg_sq_update.add_(old_exp_avg_sq).sqrt_().add_(group["eps"])
    step_size = group["lr"] * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    param.add_(sparse_coo_tensor(indices, -step_size * numer.div_(denom), size))
