"""Stochastic gradient descent with momentum (``torch/optim/sgd.py``: ``_single_tensor_sgd``, and
``_multi_tensor_sgd`` with ``foreach=True``).

Per parameter, in torch's order:  g = grad (+ weight_decay·p);  with momentum,
buf = g on the first step, else buf = momentum·buf + (1 − dampening)·g; then g = buf, or
g + momentum·buf with Nesterov;  finally p −= lr·g. The multi-tensor step computes the same
with one ``_foreach_*`` call per line over all parameters of a device and dtype; its Nesterov
line adds into the gradients in place (``p.grad`` changes too, as in torch).
"""
from .. import _functional as F
from .._tensor import Tensor
from .optimizer import Optimizer, _use_grad_for_differentiable, check_lr, group_tensors_by_device_and_dtype, use_foreach

__all__ = ["SGD", "sgd_step"]


class SGD(Optimizer):
    _loaded_group_defaults = dict(nesterov=False, maximize=False, foreach=None, differentiable=False, fused=False)

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

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            # Parameters without a gradient this step (set to None by zero_grad) are left alone.
            params = [p for p in group["params"] if p.grad is not None]
            buffers = [self.state[p].get("momentum_buffer") if group["momentum"] != 0 else None for p in params]
            step = _multi_tensor_sgd if use_foreach(group, params) and not group["differentiable"] else sgd_step
            step(params, [p.grad for p in params], buffers, lr=group["lr"],
                     weight_decay=group["weight_decay"], momentum=group["momentum"],
                     dampening=group["dampening"], nesterov=group["nesterov"], maximize=group["maximize"])
            if group["momentum"] != 0:
                for p, buf in zip(params, buffers):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd_step(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov, maximize):
    """One SGD step over a list of parameters, in place (``_single_tensor_sgd``): the rule in the
    module docstring. ``momentum_buffers[i]`` is None before parameter i's first step with
    momentum; this fills it with a buffer of its own (a copy of the gradient, never the gradient
    itself, which ``zero_grad(set_to_none=False)`` would zero in place). A tensor learning rate
    or weight decay that requires grad (a differentiable step) enters as a tensor operand, so the
    step's graph reaches it; one element in any shape acts as a 0-dim one."""
    lr = lr.squeeze() if isinstance(lr, Tensor) and lr.dim() else lr
    for i, p in enumerate(params):
        grad = grads[i].neg() if maximize else grads[i]
        if weight_decay != 0:
            if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
                grad = grad.addcmul_(p.clone(), weight_decay)
            else:
                grad = grad.add(p, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffers[i]
            if buf is None:
                buf = momentum_buffers[i] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        if isinstance(lr, Tensor) and lr.requires_grad:
            p.addcmul_(grad, lr, value=-1)
        else:
            p.add_(grad, alpha=-lr)


def _multi_tensor_sgd(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov,
                      maximize):
    """``_multi_tensor_sgd``: the rule of :func:`sgd_step`, a ``_foreach_*`` call per line over
    each device-and-dtype group. A group whose buffers all exist updates them with two foreach
    calls; one with a missing buffer goes one parameter at a time, as torch's does."""
    if not params:
        return
    lr = lr.item() if isinstance(lr, Tensor) else lr
    groups = group_tensors_by_device_and_dtype([params, grads, momentum_buffers])
    for (device_params, device_grads, device_bufs), indices in groups.values():
        if maximize:
            device_grads = F._foreach_neg(device_grads)
        if weight_decay != 0:
            if maximize:        # the negated gradients are copies: add into them
                F._foreach_add_(device_grads, device_params, alpha=weight_decay)
            else:
                device_grads = F._foreach_add(device_grads, device_params, alpha=weight_decay)
        if momentum != 0:
            if all(buf is not None for buf in device_bufs):
                bufs = device_bufs
                F._foreach_mul_(bufs, momentum)
                F._foreach_add_(bufs, device_grads, alpha=1 - dampening)
            else:
                bufs = []
                for i, buf in enumerate(device_bufs):
                    if buf is None:
                        buf = momentum_buffers[indices[i]] = device_grads[i].detach().clone()
                    else:
                        buf.mul_(momentum).add_(device_grads[i], alpha=1 - dampening)
                    bufs.append(buf)
            if nesterov:
                F._foreach_add_(device_grads, bufs, alpha=momentum)
            else:
                device_grads = bufs
        F._foreach_add_(device_params, device_grads, alpha=-lr)
