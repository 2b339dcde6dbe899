"""``Optimizer``: parameter groups, per-parameter state, and the step protocol (``torch/optim/optimizer.py``).

An optimizer holds references to the very Parameter objects of a model, grouped in
``param_groups`` (each group a dict: ``params`` plus hyper-parameters), and a ``state`` dict
keyed by parameter (momentum buffers, Adam's moments). ``step()`` reads each ``p.grad`` and
updates ``p`` in place under no_grad: the update is not part of any graph, and the model sees
the new values because they are written into the same storage. With ``differentiable=True`` the
step runs with grad enabled instead, and the updated tensors carry the step's graph.
"""
import functools
from collections import defaultdict
from copy import deepcopy

from .. import _functional as F
from .._functional import view_as_real
from .._tensor import Tensor
from ..aten.native.tensor_factories import tensor
from ..autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..autograd.graph import RemovableHandle
from ..autograd.profiler import record_function
from ..c10.scalar_type import float32, float64, get_default_dtype
from ..nn.modules.module import _typename, zero_grads
from ..nn.parameter import Parameter

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


def _use_grad_for_differentiable(step):
    """Each optimizer's ``step`` runs with grad mode set to the optimizer's ``differentiable``
    (torch's decorator of the same name): off, the update is no part of any graph; on, autograd
    records it, so that a later loss can be differentiated through the step (to the learning rate,
    or to the parameters before it). The caller's grad mode is restored afterwards."""
    @functools.wraps(step)
    def _use_grad(self, *args, **kwargs):
        previous = is_grad_enabled()
        try:
            set_grad_enabled(bool(self.defaults["differentiable"]))
            return step(self, *args, **kwargs)
        finally:
            set_grad_enabled(previous)
    return _use_grad


def check_foreach_differentiable(group, params=True):
    """torch's multi-tensor steps call the ``_foreach`` operators, which record no autograd: asked
    for both ``foreach=True`` and ``differentiable=True``, they fail when the step runs (Adam and
    RMSprop only when the group has a parameter with a gradient; Adagrad always)."""
    if group.get("foreach") and group.get("differentiable") and params:
        raise AssertionError("_foreach ops don't support autograd")

# Hooks around every optimizer's step, registered for all of them at once (before each
# optimizer's own pre-hooks, after its own post-hooks, as torch orders them).
_global_optimizer_pre_hooks = []
_global_optimizer_post_hooks = []


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return
    ``(new_args, new_kwargs)`` to change what ``step`` is called with."""
    _global_optimizer_pre_hooks.append(hook)
    return RemovableHandle(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    _global_optimizer_post_hooks.append(hook)
    return RemovableHandle(_global_optimizer_post_hooks, hook)


def _split_names(params):
    """``params`` and, where they come as (name, tensor) pairs (``named_parameters()``), the
    group's ``param_names``: all named or none."""
    names = [p[0] for p in params if isinstance(p, tuple)]
    if not names:
        return {"params": params}
    if len(names) != len(params):
        raise ValueError("all optimizer params should be with/without names. Some param names are missing")
    return {"params": [p[1] for p in params], "param_names": names}


def _take_saved_group(group, saved_group):
    """``group`` becomes a copy of the checkpoint's group holding this optimizer's parameters, as
    torch's ``load_state_dict`` replaces each group by its deep-copied saved one: the keys in the
    checkpoint's order, none the checkpoint lacks (a scheduler's ``initial_lr`` added since), and
    no tensor hyper-parameter (a tensor ``lr``) shared with the optimizer that saved it, which a
    scheduler's in-place update would otherwise change as well. The group's names stay when the
    checkpoint has none."""
    loaded = dict(saved_group, params=group["params"])
    if "param_names" in group and "param_names" not in loaded:
        loaded["param_names"] = group["param_names"]
    group.clear()
    group.update(loaded)


def _cast_like(value, param):
    """A loaded state tensor moved to its parameter's device, and to its dtype when the parameter
    is floating point (torch's ``_process_value_according_to_param_policy``; ``step`` is kept).
    Lists and dicts of them (LBFGS's history) are cast item by item, as torch's ``_cast`` recurses."""
    if isinstance(value, dict):
        return {k: v if k == "step" else _cast_like(v, param) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_like(v, param) for v in value)
    if not isinstance(value, Tensor):
        return value
    if param.is_floating_point():
        return value.to(dtype=param.dtype, device=param.device)
    return value.to(device=param.device)


def view_as_real_if_complex(param, *tensors):
    """``param`` and its companions (grad, state) as real views when ``param`` is complex: torch's
    single-tensor optimizers (``torch/optim/adam.py``, ``rmsprop.py``) update a complex parameter
    as pairs of independent real numbers, so the squares and roots act on each part, not on |z|²."""
    if not param.dtype.is_complex:
        return (param, *tensors)
    return tuple(None if t is None else view_as_real(t) for t in (param, *tensors))


def lists_as_real_if_complex(params, *lists):
    """A multi-tensor step's lists of one device and dtype, with real views in place of complex
    tensors (torch's ``_view_as_real`` in ``torch/optim/optimizer.py``, which rewrites the lists)."""
    if not params or not params[0].dtype.is_complex:
        return (params, *lists)
    return tuple([None if t is None else view_as_real(t) for t in ts] for ts in (params, *lists))


def group_tensors_by_device_and_dtype(tensorlists):
    """``Optimizer._group_tensors_by_device_and_dtype`` (torch's C++ ``_group_tensors_by_device_and_dtype``):
    the lists cut into groups by the device and dtype of the first list's tensors, in the order
    each pair first appears; {(device, dtype): (the lists' parts, their indices)}."""
    groups = {}
    for i, t in enumerate(tensorlists[0]):
        lists, indices = groups.setdefault((t.device, t.dtype), ([[] for _ in tensorlists], []))
        for part, whole in zip(lists, tensorlists):
            part.append(whole[i])
        indices.append(i)
    return groups


def foreach_weight_decay(grads, params, group, weight_decay, lr=None):
    """A multi-tensor step's weight decay, as each of torch's ``_multi_tensor_*`` steps writes it:
    with ``decoupled_weight_decay`` the parameters shrink by ``lr * weight_decay`` (AdamW's form);
    otherwise ``weight_decay * param`` is added to the gradients, in place when ``maximize``
    has already negated them into fresh tensors, into new ones when they are the ``.grad``s."""
    if weight_decay == 0:
        return grads
    if group.get("decoupled_weight_decay"):
        F._foreach_mul_(params, 1 - lr * weight_decay)
    elif group["maximize"]:
        F._foreach_add_(grads, params, alpha=weight_decay)
    else:
        grads = F._foreach_add(grads, params, alpha=weight_decay)
    return grads


def use_foreach(group, params):
    """Whether a step takes its multi-tensor form: the group's ``foreach`` when set, else torch's
    default (``_default_to_fused_or_foreach`` in ``torch/optim/optimizer.py``): yes when the step
    is not differentiable and every parameter is a plain Tensor or Parameter on a GPU (so on the
    CPU the single-tensor loop runs)."""
    if group.get("foreach") is not None:
        return group["foreach"]
    if group.get("differentiable") or group.get("fused"):
        return False
    return all(type(p) in (Tensor, Parameter) and p.device.type in ("cuda", "xpu") for p in params)


def check_lr(lr):
    """A tensor learning rate holds one number; a negative one is refused."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def to_scalar(value):
    """A one-element tensor hyper-parameter as a 0-dim tensor, anything else as it is (torch's
    ``_to_scalar``): so that a ``[0.1]`` learning rate does not broadcast a 0-dim update to 1-dim."""
    return value.squeeze() if isinstance(value, Tensor) and value.dim() else value


def _hook_result(step, result, args, kwargs):
    """A pre-hook returns None (nothing changes) or the new ``(args, kwargs)``."""
    if result is None:
        return args, kwargs
    if isinstance(result, tuple) and len(result) == 2:
        return result
    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}.")


# The device types torch's capturable steps accept (``_get_capturable_supported_devices``).
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def check_capturable(group, params, supports_xla=True, names="params and state_steps"):
    """``capturable=True`` keeps the step count on the parameter's device, so that a CUDA graph
    can replay the step. torch accepts the flag when the optimizer is made and asserts, at the
    first parameter a step updates, that it lives on such a device: a CPU parameter fails there.
    internals records no CUDA graphs, so a CUDA parameter is refused as unimplemented.
    Adadelta's list leaves out XLA (``supports_xla=False`` in torch's call), and its message says so;
    ``names`` are the tensors the message says must share the device (NAdam adds its momenta)."""
    if not group.get("capturable") or not params:
        return
    devices = _CAPTURABLE_DEVICES if supports_xla else [d for d in _CAPTURABLE_DEVICES if d != "xla"]
    if any(p.device.type not in devices for p in params):
        raise AssertionError(f"If capturable=True, {names} must be on supported devices: {devices}.")
    raise NotImplementedError("internals' optimizers implement only capturable=False")


class Optimizer:
    """Base class: subclasses pass their hyper-parameters as ``defaults`` and implement ``step``."""

    # What torch's ``__setstate__`` gives a loaded group that lacks an option (a checkpoint older
    # than the option): each optimizer names its own; any other missing key stays missing, as in
    # torch. And the state entries it turns from Python numbers into tensors.
    _loaded_group_defaults = {}
    _state_numbers = ()

    # foreach (one multi-tensor kernel per step for a whole group) and fused (one fused kernel per
    # parameter) change how fast torch's step runs, not its algorithm (some multi-tensor loops, as
    # NAdam's, order a few operations differently: the last bit may move). Every optimizer but
    # LBFGS and SparseAdam takes its multi-tensor step with foreach=True (and, as torch, with
    # foreach unset when every parameter is on a GPU: ``use_foreach``), over the ``_foreach_*``
    # operators as torch's (ASGD's computes η in float32, far from its single-tensor loop's η).
    # fused runs the single-tensor loop, except with differentiable=True, which torch's fused kernels refuse
    # here and its multi-tensor steps refuse when they run (check_foreach_differentiable).
    # capturable is refused at step time, as torch refuses it (check_capturable).

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks, self._optimizer_step_post_hooks = [], []
        self._state_dict_pre_hooks, self._state_dict_post_hooks = [], []
        self._load_state_dict_pre_hooks, self._load_state_dict_post_hooks = [], []
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)
        if defaults.get("fused"):           # checked once the groups are made, as torch's constructors do
            if defaults.get("differentiable"):
                raise RuntimeError("`fused` does not support `differentiable`")
            if defaults.get("foreach"):
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def add_param_group(self, param_group):
        """Add a group; hyper-parameters it does not set are taken from ``defaults``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        param_group = dict(param_group, **_split_names([params] if isinstance(params, Tensor) else list(params)))
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            # a differentiable optimizer updates tensors that are outputs of a graph
            if not self.defaults.get("differentiable") and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {kind} to the optimizer")
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if seen & {id(p) for p in param_group["params"]}:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    @staticmethod
    def _refuse_sparse_grads(group, message):
        """``_init_group``'s check, made for the whole group before any parameter moves."""
        if any(p.grad is not None and p.grad.is_sparse for p in group["params"]):
            raise RuntimeError(message)

    def __init_subclass__(cls, **kwargs):
        """Each optimizer's ``step`` runs inside ``record_function("Optimizer.step#SGD.step")``, a
        range for the profiler, between the step hooks, as torch's ``profile_hook_step`` wraps it
        (an operator log shows the range's enter and exit). The hooks see ``args`` with the
        optimizer first, as the wrapper receives them."""
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None:
            @functools.wraps(step)
            def profiled_step(*args, **kwargs):
                self = args[0]
                with record_function(f"Optimizer.step#{type(self).__name__}.step"):
                    for hook in (*_global_optimizer_pre_hooks, *self._optimizer_step_pre_hooks):
                        args, kwargs = _hook_result(step, hook(self, args, kwargs), args, kwargs)
                    out = step(*args, **kwargs)
                    for hook in (*self._optimizer_step_post_hooks, *_global_optimizer_post_hooks):
                        hook(self, args, kwargs)
                    return out
            cls.step = profiled_step

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before this optimizer's ``step``; it may return
        ``(new_args, new_kwargs)``. Returns a handle whose ``remove()`` takes it out."""
        self._optimizer_step_pre_hooks.append(hook)
        return RemovableHandle(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after this optimizer's ``step``."""
        self._optimizer_step_post_hooks.append(hook)
        return RemovableHandle(self._optimizer_step_post_hooks, hook)

    @staticmethod
    def _add_hook(hooks, hook, prepend):
        hooks.insert(0, hook) if prepend else hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` before ``state_dict`` builds the dict."""
        return self._add_hook(self._state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` after; a dict it returns replaces the state dict."""
        return self._add_hook(self._state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` before loading (on a shallow copy); a dict it returns
        is loaded instead."""
        return self._add_hook(self._load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` after loading."""
        return self._add_hook(self._load_state_dict_post_hooks, hook, prepend)

    def zero_grad(self, set_to_none=True):
        with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
            zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    def _params_with_grads(self, group, name, refuse_complex=False):
        """Each parameter of ``group`` that has a gradient, with its state: the walk every
        ``_init_group`` makes. A sparse gradient (and, for the optimizers whose loop takes no
        complex numbers, a complex parameter) is refused with torch's message when the walk
        reaches it, so the state of the parameters before it is made, as in torch."""
        for p in group["params"]:
            if p.grad is None:
                continue
            if refuse_complex and p.dtype.is_complex:
                raise RuntimeError(f"{name} does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError(f"{name} does not support sparse gradients")
            yield p, self.state[p]

    @staticmethod
    def _evaluate(closure):
        """``step(closure)``: the closure recomputes the loss (and its backward) with grad enabled,
        although ``step`` itself runs under no_grad."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def state_dict(self):
        """``{'state': {index: state}, 'param_groups': [...]}`` with parameters replaced by their
        position across groups, as torch saves them (a checkpoint holds no tensor identities).
        The state dict hooks run around it, as in torch's ``Optimizer.state_dict``."""
        for hook in list(self._state_dict_pre_hooks):
            hook(self)
        index = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": [index[id(p)] for p in group["params"]]})
        state = {index[id(p)]: s for p, s in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in list(self._state_dict_post_hooks):
            result = hook(self, state_dict)
            state_dict = state_dict if result is None else result
        return state_dict

    def load_state_dict(self, state_dict):
        """Restore hyper-parameters and state saved by ``state_dict`` onto this optimizer's parameters."""
        state_dict = state_dict.copy()
        for hook in list(self._load_state_dict_pre_hooks):
            result = hook(self, state_dict)
            state_dict = state_dict if result is None else result
        self._load_state_dict(state_dict)
        for hook in list(self._load_state_dict_post_hooks):
            hook(self)

    def _load_state_dict(self, state_dict):
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        by_index = {}
        for group, saved_group in zip(self.param_groups, deepcopy(saved)):
            by_index.update(zip(saved_group["params"], group["params"]))
            _take_saved_group(group, saved_group)
        for group in self.param_groups:           # a checkpoint older than an option
            for name, default in self._loaded_group_defaults.items():
                group.setdefault(name, default)
        self.state = defaultdict(dict)
        # torch loads through ``__setstate__``, which gives the defaults a ``differentiable`` entry
        # (False) when the optimizer has none (Adafactor, LBFGS): groups added later carry it
        self.defaults.setdefault("differentiable", False)
        for i, s in state_dict["state"].items():
            p = by_index[i]
            self.state[p] = _cast_like(s, p)
        for group in self.param_groups:
            for p in group["params"]:
                if self.state.get(p):
                    self._numbers_to_tensors(self.state[p], p, group)

    def _numbers_to_tensors(self, state, param, group):
        """A checkpoint older than tensor step counts keeps them as Python numbers: torch's
        ``__setstate__`` makes each a 0-dim tensor of the default scalar type (float32, or float64
        when that is the default dtype), on the CPU unless the group is capturable or fused (ASGD
        puts its three on the parameter's device always)."""
        on_param = group.get("capturable") or group.get("fused") or "eta" in self._state_numbers
        for key in self._state_numbers:
            if key in state and not isinstance(state[key], Tensor):
                dtype = float64 if get_default_dtype() is float64 else float32
                state[key] = tensor(float(state[key]), dtype=dtype, device=param.device if on_param else "cpu")

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines += [""] * (i > 0) + [f"Parameter Group {i}"]      # torch: a blank line between groups
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines + [")"])
