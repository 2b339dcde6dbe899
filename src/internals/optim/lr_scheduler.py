"""Learning-rate schedulers (``torch/optim/lr_scheduler.py``): LRScheduler, LambdaLR, StepLR, CosineAnnealingLR.

A scheduler owns no learning rate of its own: each ``step()`` advances ``last_epoch`` and writes
new values into the optimizer's ``param_groups[i]["lr"]``, which ``optimizer.step()`` reads. The
first step happens in ``__init__`` (epoch -1 -> 0), so a fresh scheduler has already set the
epoch-0 rates. StepLR and CosineAnnealingLR are *chainable*: each new rate is computed from the
group's current ``lr``, not from ``base_lrs``, so the floats match torch's only if the same
recurrence is evaluated in the same order, which is what these classes do.
"""
import math
import types
import warnings
from functools import wraps
from weakref import ref

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "CosineAnnealingLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
_SEE_DOCS = "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"


def _group_values(optimizer, key):
    """``group[key]`` of every group, a tensor cloned so that the caller cannot alias the group's."""
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups]


def _track_step_called(optimizer):
    """Wrap ``optimizer.step`` (once, on the instance) so that it records ``_opt_called``: the first
    ``scheduler.step()`` warns if it comes before any ``optimizer.step()`` (pytorch/pytorch#20124)."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    opt_ref, func = ref(optimizer), optimizer.step.__func__     # a weak ref: no optimizer <-> wrapper cycle

    @wraps(func)
    def wrapper(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func.__get__(opt, type(opt))(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


class LRScheduler:
    """Base class: subclasses implement ``get_lr()``, the rates for epoch ``last_epoch``."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:        # a fresh run: remember each group's starting rate
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:                       # resuming: the checkpointed optimizer must carry them already
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler "
                        "with last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume "
                        "training from a checkpoint but haven't properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_step_called(optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True       # lets chainable schedulers keep the groups' rates at epoch 0
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """Every attribute but the optimizer (which is saved on its own)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def step(self, epoch=None):
        if self._step_count == 1:
            self._warn_order()
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _warn_order(self):
        if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
            warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                          "initialization. Please, make sure to call `optimizer.step()` before "
                          f"`lr_scheduler.step()`. {_SEE_DOCS}", UserWarning, stacklevel=3)
        elif not getattr(self.optimizer, "_opt_called", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                          "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                          "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                          "will result in PyTorch skipping the first value of the learning rate schedule. "
                          f"{_SEE_DOCS}", UserWarning, stacklevel=3)

    def _update_lr(self, epoch):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:                     # a jump to a given epoch: the recurrence does not apply
                self.last_epoch = epoch
                values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            if isinstance(group["lr"], Tensor):
                group["lr"].fill_(lr.item() if isinstance(lr, Tensor) else lr)    # keep the tensor's identity
            else:
                group["lr"] = lr
        self._last_lr = _group_values(self.optimizer, "lr")

    def _warn_if_called_outside_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)


class LambdaLR(LRScheduler):
    """lr = base_lr · lr_lambda(epoch), one lambda for all groups or one per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """Functions and lambdas cannot be saved; a callable object's ``__dict__`` is saved instead."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        lambdas_state = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lambdas_state          # leave the caller's dict as it was
        for fn, saved in zip(self.lr_lambdas, lambdas_state):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self):
        self._warn_if_called_outside_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class StepLR(LRScheduler):
    """Multiply each group's lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr follows eta_min + (base_lr − eta_min)·(1 + cos(π·t/T_max))/2, evaluated as torch does: as a
    recurrence on the current lr (so an lr changed by hand between steps is carried along)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:      # resumed at a later epoch: closed form
            return self._get_closed_form_lr()
        groups = self.optimizer.param_groups
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # Leaving a minimum (t − 1 = T_max mod 2·T_max): the ratio below would be 0/0, so step up.
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        # Ratio of consecutive cosine factors, applied to the distance above eta_min.
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]
