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
With ``foreach=True`` the step is torch's ``_multi_tensor_adafactor`` (parameters grouped by device,
dtype, and whether they are matrices or vectors): the update is scaled by its step size first and
then added, so its bits are torch's ``foreach=True`` ones, which may differ from the loop's in the
last bit. torch picks no multi-tensor default here: ``foreach=None`` runs the loop.
"""
from .. import _functional as F
from .._functional import norm, zeros_like
from .._tensor import Tensor
from .._type_info import finfo
from ..aten.native.tensor_factories import tensor
from ..autograd.grad_mode import no_grad
from ..c10.memory_format import preserve_format
from ..c10.scalar_type import float32
from .optimizer import Optimizer, group_tensors_by_device_and_dtype, to_scalar

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
            step = _multi_tensor_adafactor if group["foreach"] else _single_tensor_adafactor
            step(params, [self.state[p] for p in params], group)
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


def _group_by_device_dtype_and_is_multidim(tensorlists):
    """torch's ``_group_tensors_by_device_dtype_and_is_multidim``: each device-and-dtype group cut
    again into the tensors whose gradient (the second list) is a matrix and those whose is a
    vector, so that one group is either all factored or all whole; {(device, dtype, is_matrix): lists}."""
    grouped = {}
    for (device, dtype), (lists, _) in group_tensors_by_device_and_dtype(tensorlists).items():
        for j, grad in enumerate(lists[1]):
            part = grouped.setdefault((device, dtype, grad.dim() > 1), [[] for _ in lists])
            for i, tensors in enumerate(lists):
                part[i].append(tensors[j])
    return grouped


def _multi_tensor_adafactor(params, states, group):
    """``_multi_tensor_adafactor``: per device, dtype and kind (matrix or vector), the means and
    the averages as ``_foreach_*`` calls; the step sizes are Python floats read from the norms."""
    if not params:
        return
    lr, d, beta2_decay, weight_decay = to_scalar(group["lr"]), group["d"], group["beta2_decay"], group["weight_decay"]
    eps1, eps2 = group["eps"]
    lists = [params, [p.grad for p in params], [s.get("row_var") for s in states], [s.get("col_var") for s in states],
             [s.get("variance") for s in states], [s["step"] for s in states]]
    for (_, dtype, is_matrix), (device_params, grads, row_vars, col_vars, variances, steps) in \
            _group_by_device_dtype_and_is_multidim(lists).items():
        if eps1 is None:        # the first group's dtype decides it for the others, as in torch
            eps1 = finfo(dtype).eps
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        one_minus_beta2_ts, rho_ts = [], []
        for step in steps:      # torch reads each count three times (its unused β2_t among them)
            one_minus_beta2_ts.append(step.item() ** beta2_decay)
            step.item()
            rho_ts.append(min(lr, 1 / (step.item() ** 0.5)))
        alphas = [max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho for p, rho in zip(device_params, rho_ts)]
        if weight_decay != 0:
            F._foreach_mul_(device_params, 1 - lr * weight_decay)
        if is_matrix:
            var_estimates = _factored_estimates(grads, row_vars, col_vars, one_minus_beta2_ts, eps1)
        else:
            F._foreach_lerp_(variances, F._foreach_mul(grads, grads), one_minus_beta2_ts)
            var_estimates = [v.clone() for v in variances]
        F._foreach_clamp_min_(var_estimates, eps1 * eps1)
        F._foreach_rsqrt_(var_estimates)
        F._foreach_mul_(var_estimates, grads)
        updates = var_estimates
        scales = [-a / max(1.0, u.norm(2).item() / ((u.numel() ** 0.5) * d)) for a, u in zip(alphas, updates)]
        F._foreach_mul_(updates, scales)
        F._foreach_add_(device_params, updates)


def _factored_estimates(grads, row_vars, col_vars, one_minus_beta2_ts, eps1):
    """The row and column averages moved towards the gradients' mean squares, and their outer
    products divided by the mean of the row averages (clamped below by eps1)."""
    row_means = [norm(g, dim=-1, keepdim=True) for g in grads]
    F._foreach_mul_(row_means, row_means)
    F._foreach_div_(row_means, [g.size(-1) for g in grads])
    F._foreach_lerp_(row_vars, row_means, one_minus_beta2_ts)
    col_means = [norm(g, dim=-2, keepdim=True) for g in grads]
    F._foreach_mul_(col_means, col_means)
    F._foreach_div_(col_means, [g.size(-2) for g in grads])
    F._foreach_lerp_(col_vars, col_means, one_minus_beta2_ts)
    estimates = [r @ c for r, c in zip(row_vars, col_vars)]
    row_var_means = [r.mean(dim=-2, keepdim=True) for r in row_vars]
    F._foreach_clamp_min_(row_var_means, eps1)
    F._foreach_div_(estimates, row_var_means)
    return estimates
