"""Adagrad (``torch/optim/adagrad.py``: ``Adagrad.__init__`` and ``_single_tensor_adagrad``).

Per parameter, in torch's order and with torch's in-place operators:
    g = grad (−grad if maximizing, + weight_decay·p)
    clr = lr / (1 + (step − 1)·lr_decay)        a Python float, from the step count's value
    sum = sum + g²                               ``state_sum.addcmul_(grad, grad, value=1)``
    p −= clr · g / (sqrt(sum) + eps)             ``param.addcdiv_(grad, std, value=-clr)``
A sparse gradient (``nn.Embedding(sparse=True)``) takes torch's sparse path: coalesced first (the
update squares the gradient, so a row listed twice must be summed before), then only the rows it
lists are touched: ``sum += g²`` as a sparse addition, and ``p −= clr · g / (sqrt(sum) + eps)``
with the accumulator read at those rows (``sparse_mask``). Weight decay is refused with it.
Unlike the other optimizers, Adagrad makes every parameter's state in its constructor (its
accumulator starts at ``initial_accumulator_value``, not zero), so a fresh optimizer's
``state_dict`` already lists them, as torch's does.
"""
from .. import _functional as F
from ..aten.native.sparse.sparse_tensor import sparse_coo_tensor
from ..aten.native.tensor_factories import full_like, tensor
from ..c10.memory_format import preserve_format
from .optimizer import (
    Optimizer,
    _use_grad_for_differentiable,
    check_foreach_differentiable,
    check_lr,
    foreach_weight_decay,
    group_tensors_by_device_and_dtype,
    lists_as_real_if_complex,
    to_scalar,
    use_foreach,
    view_as_real_if_complex,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    _loaded_group_defaults = dict(foreach=None, maximize=False, differentiable=False, fused=None)
    _state_numbers = ("step",)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        for name, value in (("lr_decay value", lr_decay), ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value),
                            ("epsilon value", eps)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p):
        """The step count a float32 0-dim tensor; the accumulator filled with the initial value
        (in both parts of a complex parameter)."""
        value = self.defaults["initial_accumulator_value"]
        state = self.state[p]
        state["step"] = tensor(0.0)
        state["sum"] = full_like(p, complex(value, value) if p.dtype.is_complex else value,
                                 memory_format=preserve_format)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                if not self.state[p]:
                    self._init_state(p)
            check_foreach_differentiable(group)
            step = _multi_tensor_adagrad if use_foreach(group, params) else _single_tensor_adagrad
            step(params, [self.state[p] for p in params], group)
        return loss


def _single_tensor_adagrad(params, states, group):
    """One parameter at a time; a complex one through real views after the weight decay."""
    # A tensor lr stays a tensor, as torch's: the step size is then rounded in its dtype, and one
    # that requires grad is refused by addcdiv_'s number argument as torch's is (never dropped).
    lr = to_scalar(group["lr"])
    for param, state in zip(params, states):
        state["step"] += 1
        step = state["step"].item()
        grad = -param.grad if group["maximize"] else param.grad
        if group["weight_decay"] != 0:
            if grad.is_sparse:
                raise RuntimeError("weight_decay option is not compatible with sparse gradients")
            grad = grad.add(param, alpha=group["weight_decay"])
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        if grad.is_sparse:
            _sparse_adagrad_update(param, grad, state["sum"], clr, group["eps"])
            continue
        param, grad, state_sum = view_as_real_if_complex(param, grad, state["sum"])
        state_sum.addcmul_(grad, grad, value=1)
        # differentiable: a new tensor, since sqrt's backward reads the output it saved
        std = state_sum.sqrt() + group["eps"] if group["differentiable"] else state_sum.sqrt().add_(group["eps"])
        param.addcdiv_(grad, std, value=-clr)


def _sparse_adagrad_update(param, grad, state_sum, clr, eps):
    """torch's sparse branch: the rows the coalesced gradient lists, and only those."""
    grad = grad.coalesce()
    indices, values = grad._indices(), grad._values()
    state_sum.add_(sparse_coo_tensor(indices, values.pow(2), grad.size()))
    std_values = state_sum.sparse_mask(grad)._values().sqrt_().add_(eps)
    param.add_(sparse_coo_tensor(indices, values / std_values, grad.size()), alpha=-clr)


def _multi_tensor_adagrad(params, states, group):
    """``_multi_tensor_adagrad``: per device and dtype, one ``_foreach_*`` call a line; a group
    with a sparse gradient takes the single-tensor loop, as torch's does."""
    if not params:
        return
    lr, eps, weight_decay, lr_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"], group["lr_decay"]
    lists = [params, [p.grad for p in params], states]
    for (device_params, grads, device_states), _ in group_tensors_by_device_and_dtype(lists).values():
        if any(grad.is_sparse for grad in grads):
            _single_tensor_adagrad(device_params, device_states, group)
            continue
        steps = [s["step"] for s in device_states]
        device_params, grads, state_sums = lists_as_real_if_complex(device_params, grads,
                                                                    [s["sum"] for s in device_states])
        if group["maximize"]:
            grads = F._foreach_neg(grads)
        F._foreach_add_(steps, tensor(1.0), alpha=1.0)
        grads = foreach_weight_decay(grads, device_params, group, weight_decay)
        minus_clr = [-lr / (1 + (step.item() - 1) * lr_decay) for step in steps]
        F._foreach_addcmul_(state_sums, grads, grads, value=1)
        std = F._foreach_sqrt(state_sums)
        F._foreach_add_(std, eps)
        if weight_decay != 0 or group["maximize"]:
            F._foreach_mul_(grads, minus_clr)    # the gradients are copies already: scaled in place
            numerator = grads
        else:
            numerator = F._foreach_mul(grads, minus_clr)
        F._foreach_addcdiv_(device_params, numerator, std)
