"""Adafactor (``torch/optim/_adafactor.py``: ``Adafactor._init_group`` and ``_single_tensor_adafactor``).

Adam's second moment without its memory: for a matrix gradient (and each matrix of a batch of
them) only the means of g² along its rows and along its columns are kept, and their outer product,
divided by the mean of the row means, stands in for the full table of v. Vectors keep v whole.
With t the step count, β2_t = 1 − t^beta2_decay (so 1 − β2_t is ``one_minus_beta2_t``):
    ρ_t = min(lr, 1/sqrt(t)),   α = max(eps2, RMS(p))·ρ_t       (relative step size)
    p ·= 1 − lr·weight_decay                                    (decoupled decay)
    r = lerp(r, mean_cols(g²), 1 − β2_t),  c = lerp(c, mean_rows(g²), 1 − β2_t)
    v̂ = r @ c / max(mean(r), eps1)                              (or v = lerp(v, g², 1 − β2_t))
    u = g / sqrt(max(v̂, eps1²));   p −= α / max(1, RMS(u)/d) · u
eps1 None means the parameter's dtype's machine epsilon. There is no momentum, no complex
parameter, and no differentiable step: torch's runs under no_grad.
``foreach=True`` is accepted and runs this same loop: torch's multi-tensor loop orders a few
operations differently, so its parameters may differ from these in the last bit.
"""
from .._functional import norm, zeros_like
from .._tensor import Tensor
from .._type_info import finfo
from ..aten.native.tensor_factories import tensor
from ..autograd.grad_mode import no_grad
from ..c10.memory_format import preserve_format
from ..c10.scalar_type import float32
from .optimizer import Optimizer, to_scalar

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    _loaded_group_defaults = dict(foreach=None)
    _state_numbers = ("step",)

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def _init_group(self, group):
        """The parameters that have a gradient (a complex parameter or a sparse gradient refused
        when the loop reaches it), and their state made on first use: the step count a float32
        0-dim tensor; for a gradient of two or more dimensions the row and column factors (the
        last dimension, resp. the one before it, of size 1), for a vector the whole variance."""
        params = []
        for p, state in self._params_with_grads(group, "Adafactor", refuse_complex=True):
            params.append(p)
            if not state:
                state["step"] = tensor(0.0, dtype=float32)
                if p.grad.dim() > 1:
                    state["row_var"] = p.grad.new_zeros([*p.grad.shape[:-1], 1])
                    state["col_var"] = p.grad.new_zeros([*p.grad.shape[:-2], 1, p.grad.shape[-1]])
                else:
                    state["variance"] = zeros_like(p.grad, memory_format=preserve_format)
        return params

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = self._init_group(group)
            _single_tensor_adafactor(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_adafactor(params, states, group):
    """One parameter at a time, torch's operators in torch's order. The step sizes are Python
    floats read from the parameter's and the update's norms (``.item()``), as torch's are."""
    lr, d, beta2_decay, weight_decay = to_scalar(group["lr"]), group["d"], group["beta2_decay"], group["weight_decay"]
    eps1, eps2 = group["eps"]
    for param, state in zip(params, states):
        grad = -param.grad if group["maximize"] else param.grad
        if eps1 is None:        # the first parameter's dtype decides it for the whole group, as in torch
            eps1 = finfo(param.dtype).eps
        state["step"] += 1
        step_float = state["step"].item()
        one_minus_beta2_t = step_float ** beta2_decay
        rho_t = min(lr, 1 / (step_float ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_mean = norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2_t)
            col_mean = norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denom)
