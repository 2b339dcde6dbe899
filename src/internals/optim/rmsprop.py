"""RMSprop (``torch/optim/rmsprop.py``: ``RMSprop._init_group`` and ``_single_tensor_rmsprop``).

Per parameter, in torch's order and with torch's in-place operators:
    g = grad (−grad if maximizing, + weight_decay·p)
    v = α·v + (1 − α)·g²                      ``square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)``
    centered: a = a + (1 − α)·(g − a)         ``grad_avg.lerp_(grad, 1 - alpha)``
              avg = sqrt(v − a²)              ``square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()``
    else:     avg = sqrt(v);   then avg += eps
    momentum: buf = momentum·buf + g / avg    ``buf.mul_(momentum).addcdiv_(grad, avg)``, p −= lr·buf
    else:     p −= lr · g / avg               ``param.addcdiv_(grad, avg, value=-lr)``
With ``foreach=True`` (torch's default for parameters on a GPU) the step is torch's
``_multi_tensor_rmsprop``: the same lines as ``_foreach_*`` calls, torch's bits.
"""
from .. import _functional as F
from .._functional import zeros, zeros_like
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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    _loaded_group_defaults = dict(momentum=0, centered=False, capturable=False, foreach=None, maximize=False,
                                  differentiable=False)
    _state_numbers = ("step",)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        for name, value in (("epsilon value", eps), ("momentum value", momentum),
                            ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _init_group(self, group):
        """The parameters that have a gradient, and their state: made on first use (the step count a
        float32 0-dim CPU tensor, the averages like the parameter), for all of them before any update."""
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if not state:
                state["step"] = zeros(())
                state["square_avg"] = zeros_like(p, memory_format=preserve_format)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = zeros_like(p, memory_format=preserve_format)
                if group["centered"]:
                    state["grad_avg"] = zeros_like(p, memory_format=preserve_format)
        return params

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            self._refuse_sparse_grads(group, "RMSprop does not support sparse gradients")
            params = self._init_group(group)
            check_capturable(group, params)
            check_foreach_differentiable(group, params)
            step = _multi_tensor_rmsprop if use_foreach(group, params) else _single_tensor_rmsprop
            step(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_rmsprop(params, states, group):
    """One parameter at a time, torch's operators in torch's order; a complex parameter through
    real views after the weight decay, as torch's."""
    lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
    for param, state in zip(params, states):
        grad = -param.grad if group["maximize"] else param.grad
        square_avg = state["square_avg"]
        state["step"] += 1
        if group["weight_decay"] != 0:
            grad = grad.add(param, alpha=group["weight_decay"])
        param, grad, square_avg, grad_avg, buf = view_as_real_if_complex(
            param, grad, square_avg, state.get("grad_avg"), state.get("momentum_buffer"))
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        # differentiable: a new tensor, since sqrt's backward reads the output it saved
        avg = avg.add(eps) if group["differentiable"] else avg.add_(eps)
        if momentum > 0:
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


def _multi_tensor_rmsprop(params, states, group):
    """``_multi_tensor_rmsprop`` (not capturable): per device and dtype, one ``_foreach_*`` call
    a line; a maximized gradient is negated first, and the weight decay added into that copy."""
    if not params:
        return
    lr, alpha, eps, momentum = to_scalar(group["lr"]), group["alpha"], group["eps"], group["momentum"]
    weight_decay = group["weight_decay"]
    lists = [params, [p.grad for p in params], [s["square_avg"] for s in states], [s.get("grad_avg") for s in states],
             [s.get("momentum_buffer") for s in states], [s["step"] for s in states]]
    for (device_params, grads, square_avgs, grad_avgs, bufs, steps), _ in \
            group_tensors_by_device_and_dtype(lists).values():
        device_params, grads, square_avgs, grad_avgs, bufs = lists_as_real_if_complex(
            device_params, grads, square_avgs, grad_avgs, bufs)
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        grads = foreach_weight_decay(grads, device_params, group, weight_decay)
        F._foreach_mul_(square_avgs, alpha)
        F._foreach_addcmul_(square_avgs, grads, grads, value=1 - alpha)
        if group["centered"]:
            F._foreach_lerp_(grad_avgs, grads, 1 - alpha)
            avg = F._foreach_addcmul(square_avgs, grad_avgs, grad_avgs, value=-1)
            F._foreach_sqrt_(avg)
        else:
            avg = F._foreach_sqrt(square_avgs)
        F._foreach_add_(avg, eps)
        if momentum > 0:
            F._foreach_mul_(bufs, momentum)
            F._foreach_addcdiv_(bufs, grads, avg)
            F._foreach_add_(device_params, bufs, alpha=-lr)
        else:
            F._foreach_addcdiv_(device_params, grads, avg, value=-lr)
