"""Rprop, resilient backpropagation (``torch/optim/rprop.py``: ``Rprop.__init__``, ``_init_group``
and ``_single_tensor_rprop``).

Rprop reads only the sign of each gradient element. Each element keeps a step size of its own
(``lr`` at first) and the gradient of the step before, ``prev``; per parameter, in torch's order:
    s = sign(g · prev)                        ``grad.mul(prev).sign()``
    factor = etaplus where s > 0, etaminus where s < 0, 1 where s = 0   (masked writes into s)
    step_size = clamp(step_size · factor, step_size_min, step_size_max)
    g = 0 where the sign flipped              (the minimum was overshot: no move, and no flip next)
    p −= sign(g) · step_size                  ``param.addcmul_(grad.sign(), step_size, value=-1)``
    prev = g
"""
from .. import _functional as F
from .._functional import full_like, where, zeros, zeros_like
from .._tensor import Tensor
from ..aten.native.tensor_factories import tensor
from ..c10.memory_format import preserve_format
from .optimizer import (
    Optimizer,
    _use_grad_for_differentiable,
    check_capturable,
    check_foreach_differentiable,
    check_lr,
    group_tensors_by_device_and_dtype,
    lists_as_real_if_complex,
    use_foreach,
    view_as_real_if_complex,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    _loaded_group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _state_numbers = ("step",)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _init_group(self, group):
        """The parameters that have a gradient (a sparse one refused at the first that has it),
        and their state, made on first use: the step count a float32 0-dim CPU tensor, ``prev``
        zeros, and the step sizes filled with the group's learning rate (in both parts of a
        complex parameter, which torch treats as two independent reals)."""
        params = []
        for p, state in self._params_with_grads(group, "Rprop"):
            params.append(p)
            if not state:
                state["step"] = zeros(())
                state["prev"] = zeros_like(p, memory_format=preserve_format)
                lr = group["lr"]
                if p.dtype.is_complex:
                    state["step_size"] = full_like(p.grad, complex(lr, lr))
                else:
                    lr = lr.squeeze() if isinstance(lr, Tensor) and lr.dim() else lr    # torch's _to_scalar
                    state["step_size"] = full_like(p.grad, lr)
        return params

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = self._init_group(group)
            # torch's multi-tensor step returns before its differentiable check when no parameter
            # has a gradient
            check_foreach_differentiable(group, params)
            check_capturable(group, params)
            step = _multi_tensor_rprop if use_foreach(group, params) else _single_tensor_rprop
            step(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_rprop(params, states, group):
    """One parameter at a time, torch's operators in torch's order; a complex parameter through
    real views."""
    etaminus, etaplus = group["etas"]
    step_size_min, step_size_max = group["step_sizes"]
    for param, state in zip(params, states):
        grad = -param.grad if group["maximize"] else param.grad
        state["step"] += 1
        param, grad, prev, step_size = view_as_real_if_complex(param, grad, state["prev"], state["step_size"])
        # differentiable: prev is written in place below, after the product saved it
        sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone(memory_format=preserve_format)
        grad[sign.eq(etaminus)] = 0
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


def _multi_tensor_rprop(params, states, group):
    """``_multi_tensor_rprop`` (not capturable): per device and dtype; ``prev`` takes the (maximized)
    gradient first and is then zeroed where the sign flipped, standing in for the gradient."""
    if not params:
        return
    etaminus, etaplus = group["etas"]
    step_size_min, step_size_max = group["step_sizes"]
    lists = [params, [p.grad for p in params], [s["prev"] for s in states], [s["step_size"] for s in states],
             [s["step"] for s in states]]
    for (device_params, grads, prevs, step_sizes, steps), _ in group_tensors_by_device_and_dtype(lists).values():
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        device_params, grads, prevs, step_sizes = lists_as_real_if_complex(device_params, grads, prevs, step_sizes)
        signs = F._foreach_mul(grads, prevs)
        if group["maximize"]:
            F._foreach_neg_(signs)
        F._foreach_copy_(prevs, grads)
        if group["maximize"]:
            F._foreach_neg_(prevs)
        F._foreach_sign_(signs)
        for sign in signs:
            sign[sign.gt(0)] = etaplus
            sign[sign.lt(0)] = etaminus
            sign[sign.eq(0)] = 1
        F._foreach_mul_(step_sizes, signs)
        for step_size in step_sizes:
            step_size.clamp_(step_size_min, step_size_max)
        for prev, sign in zip(prevs, signs):
            prev.copy_(where(sign.eq(etaminus), 0, prev))
        grad_signs = [prev.sign() for prev in prevs]
        F._foreach_addcmul_(device_params, grad_signs, step_sizes, value=-1)
