"""Muon (``torch/optim/_muon.py``: ``Muon._init_group`` and ``_single_tensor_muon``): momentum SGD
for matrices whose update is orthogonalised.

Per 2-D parameter: the momentum buffer B = lerp(B, g, 1 − μ) (with Nesterov the update looks one
step ahead: lerp(g, B, μ)); the update's singular values are pushed toward 1 by ``ns_steps``
Newton–Schulz iterations X ← aX + (bXXᵀ + c(XXᵀ)²)X, run in bfloat16 on X scaled to norm ≤ 1
(the wide orientation, so that XXᵀ is the smaller Gram matrix); then decoupled weight decay
p ·= 1 − lr·wd and p −= lr·k·X, with k = sqrt(max(1, rows/cols)) ("original") or
0.2·sqrt(max(rows, cols)) ("match_rms_adamw"). The same operators as torch's, in its order.
"""
import math

from .._functional import addmm, zeros_like
from .._tensor import Tensor
from .._tensor_base import torch_size_text
from ..autograd.grad_mode import no_grad
from ..c10.memory_format import preserve_format
from .optimizer import Optimizer, to_scalar

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """The quintic Newton–Schulz iteration toward the orthogonal factor of ``grad`` (its singular
    values end near, not at, 1: the coefficients favour speed), in bfloat16."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = grad.bfloat16()
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    ortho_grad.div_(ortho_grad.norm().clamp(min=eps))      # spectral norm at most 1
    for _ in range(ns_steps):
        gram_matrix = ortho_grad @ ortho_grad.T
        gram_update = addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
        ortho_grad = addmm(ortho_grad, gram_update, ortho_grad, beta=a)
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    return ortho_grad


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """The lr scaled so that the orthogonalised update's RMS is alike across matrix shapes."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        adjusted_ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        adjusted_ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        adjusted_ratio = 1.0
    return lr * adjusted_ratio


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{torch_size_text(p.size())}")

    def _init_group(self, group):
        """The parameters that have a gradient (complex ones and sparse gradients refused when the
        loop reaches them) and their momentum buffers, zeros like the gradient."""
        params = []
        for p, state in self._params_with_grads(group, "Muon", refuse_complex=True):
            params.append(p)
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = zeros_like(p.grad, memory_format=preserve_format)
        return params

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = self._init_group(group)
            _single_tensor_muon(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_muon(params, states, group):
    lr, momentum = to_scalar(group["lr"]), group["momentum"]
    for param, state in zip(params, states):
        grad = param.grad
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf = state["momentum_buffer"]
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], param.shape)
        param.mul_(1 - lr * group["weight_decay"])
        param.add_(update, alpha=-adjusted_lr)
