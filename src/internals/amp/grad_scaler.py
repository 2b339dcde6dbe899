"""``GradScaler`` (``torch/amp/grad_scaler.py``): loss scaling for float16 training.

A float16 gradient underflows to zero below about 6e-8; multiplying the loss by a large factor
(65536 at first) lifts every gradient by the same factor, and ``step`` divides it out again
before the optimizer sees it. A step whose gradients overflowed (inf or NaN) is skipped and the
factor halved; after ``growth_interval`` clean steps it doubles. torch does the unscale and the
update with two operators (``_amp_foreach_non_finite_check_and_unscale_`` and
``_amp_update_scale_``); here they are the same arithmetic spelled with tensor operators, so the
scale, the skipped steps and the gradients come out as torch's: the gradients are multiplied by
``1 / scale`` computed in float64 and rounded to float32, as torch computes it.
"""
import warnings
from enum import Enum

from .. import cuda
from ..aten.native.tensor_factories import full
from ..c10 import scalar_type as st

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.**16, growth_factor=2., backoff_factor=.5,
    growth_interval=2000, enabled=True)``; disabled, every method passes straight through."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = str(device)
        self._enabled = enabled
        if enabled and self._device == "cuda" and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale, self._growth_factor, self._backoff_factor = init_scale, growth_factor, backoff_factor
        self._growth_interval, self._init_growth_tracker = growth_interval, 0
        self._scale = self._growth_tracker = None
        self._per_optimizer_states = {}

    # ---- scaling the loss
    def _lazy_init(self, device):
        self._scale = full((), self._init_scale, dtype=st.float32, device=device)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=st.int32, device=device)

    def scale(self, outputs):
        """``outputs`` times the current scale: a tensor, or any nesting of lists and tuples of them."""
        if not self._enabled:
            return outputs
        if hasattr(outputs, "is_floating_point"):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        if isinstance(outputs, (list, tuple)) or hasattr(outputs, "__iter__"):
            scaled = [self.scale(v) for v in outputs]
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else iter(scaled)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    # ---- unscaling the gradients
    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Every gradient times ``inv_scale``; ``found_inf`` (per device) becomes 1 where one of
        them held an inf or NaN (checked before the multiplication, as torch's kernel does)."""
        per_device = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if not allow_fp16 and param.grad.dtype is st.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grad = param.grad
                device = str(grad.device)
                if device not in per_device:
                    per_device[device] = found_inf.to(device=grad.device, copy=True)
                if not bool(grad.isfinite().all()):
                    per_device[device].fill_(1.0)
                grad.mul_(inv_scale.to(device=grad.device))
        return per_device

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale now (to clip them, say); once per step."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=st.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale if not done yet, then ``optimizer.step()`` unless a gradient was inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    # ---- updating the scale
    def update(self, new_scale=None):
        """Back off after an overflow, grow after ``growth_interval`` clean steps (or set
        ``new_scale``); then every optimizer is ready for the next iteration."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                self._scale.copy_(new_scale)
        else:
            found = [f.to(device=self._scale.device) for state in self._per_optimizer_states.values()
                     for f in state["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(sum(f.item() for f in found) > 0)
        self._per_optimizer_states = {}

    def _update_scale(self, found_inf):
        """``_amp_update_scale_``'s rule; a grown scale that is no longer finite is not kept."""
        if found_inf:
            self._scale.mul_(self._backoff_factor)
            self._growth_tracker.fill_(0)
            return
        successful = self._growth_tracker.item() + 1
        if successful == self._growth_interval:
            grown = self._scale * self._growth_factor
            if bool(grown.isfinite()):
                self._scale.copy_(grown)
            successful = 0
        self._growth_tracker.fill_(successful)

    def _check_scale(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")

    # ---- settings and checkpoints
    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """Plain numbers, as torch saves them (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
