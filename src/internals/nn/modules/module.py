"""``Module``: the base class that keeps a model's parameters, buffers and sub-modules.

Mirrors ``torch/nn/modules/module.py``. Nothing here is magic: assigning a Parameter or a Module
to an attribute is caught by ``__setattr__`` and filed in one of three ordered dicts
(``_parameters``, ``_buffers``, ``_modules``); ``__getattr__`` looks there when normal lookup
fails; every traversal (``named_parameters``, ``state_dict``, ``to``, ``zero_grad``) is a walk over
those dicts, with dotted prefixes ("0.weight", "2.0.bias") made from the attribute names.
"""
import functools
import warnings
from collections import OrderedDict, namedtuple

from ... import __future__ as _future
from ..._tensor import Tensor
from ..._tensor_base import torch_size_text
from ...autograd.grad_mode import no_grad
from ...c10 import scalar_type as st
from ...utils import swap_tensors
from ...utils.hooks import BackwardHook, RemovableHandle
from ..parameter import Buffer, Parameter

__all__ = ["Module", "register_module_buffer_registration_hook", "register_module_forward_hook",
           "register_module_forward_pre_hook", "register_module_backward_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

# Hooks every module runs (torch's ``_global_forward_hooks`` and kin): a global hook runs before
# the module's own hooks of its kind, on every call of every module. They are lists, as a
# module's own hooks are, so the handle a registration returns removes the hook the same way.
# The state_dict key of a module's ``get_extra_state``, after its prefix (torch's name).
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

_global_forward_pre_hooks = []
_global_forward_hooks = []
_global_backward_pre_hooks = []
_global_backward_hooks = []
_global_buffer_registration_hooks = []
_global_module_registration_hooks = []
_global_parameter_registration_hooks = []
# Whether the global backward hooks are full ones (True), the older kind (False) or none yet:
# a module, and the global list, holds one kind only.
_global_is_full_backward_hook = None


def register_module_forward_pre_hook(hook):
    """``hook(module, args)`` runs before every module's ``forward`` (before the module's own
    pre-hooks); a non-None result replaces ``args``, a lone value wrapped into a tuple."""
    return Module._add_hook(_global_forward_pre_hooks, _ForwardHook(hook, False, False))


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with ``with_kwargs``)
    runs after every module's ``forward``, before the module's own forward hooks."""
    return Module._add_hook(_global_forward_hooks, _ForwardHook(hook, with_kwargs, always_call))


def register_module_full_backward_pre_hook(hook):
    """``hook(module, grad_output)`` for every module whose outputs' gradients are known."""
    return Module._add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """``hook(module, grad_input, grad_output)`` for every module whose inputs' gradients are known."""
    _set_global_backward_hook_kind(True)
    return Module._add_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    """The older, deprecated global backward hook (see :meth:`Module.register_backward_hook`)."""
    _set_global_backward_hook_kind(False)
    return Module._add_hook(_global_backward_hooks, hook)


def _set_global_backward_hook_kind(full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = full


def _older_backward_hook_warning(args, result, node):
    """Why an older backward hook on ``node`` misses gradients of the module (None when it does not):
    outputs that are not tensors, or come from other nodes; inputs that are not tensors, or reach
    ``node`` through more operators than one."""
    outputs = (result,) if isinstance(result, Tensor) else result
    if not (isinstance(outputs, tuple) and all(isinstance(r, Tensor) for r in outputs)):
        return ("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of Tensors "
                "is deprecated and will be removed in future versions. This hook will be missing some of the "
                "grad_output. Please use register_full_backward_hook to get the documented behavior.")
    if not all(isinstance(a, Tensor) for a in args):
        return ("Using non-full backward hooks on a Module that does not take as input a single Tensor or a tuple of "
                "Tensors is deprecated and will be removed in future versions. This hook will be missing some of the "
                "grad_input. Please use register_full_backward_hook to get the documented behavior.")
    output_nodes = {r.grad_fn for r in outputs if r.grad_fn is not None}
    if not output_nodes or (len(output_nodes) == 1 and node not in output_nodes):
        return ("Using a non-full backward hook when outputs are nested in python data structure is deprecated and "
                "will be removed in future versions. This hook will be missing some grad_output.")
    if len(output_nodes) > 1:
        return ("Using a non-full backward hook when outputs are generated by different autograd Nodes is deprecated "
                "and will be removed in future versions. This hook will be missing some grad_output. Please use "
                "register_full_backward_hook to get the documented behavior.")
    if {a.grad_fn for a in args if a.grad_fn is not None} != {n for n, _ in node.next_functions}:
        return ("Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated and "
                "will be removed in future versions. This hook will be missing some grad_input. Please use "
                "register_full_backward_hook to get the documented behavior.")
    return None


def _typename(value):
    """What torch's error messages call a value's type (``torch.typename``)."""
    if isinstance(value, Tensor):
        return value._type_name()
    module = type(value).__module__
    return type(value).__qualname__ if module == "builtins" else f"{module}.{type(value).__qualname__}"


def _addindent(text, spaces):
    """Indent every line but the first: a child's repr nested inside its parent's."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


def zero_grads(params, set_to_none=True):
    """Forget the gradients of the last backward (``Module.zero_grad``, ``Optimizer.zero_grad``).

    By default drop them (``.grad = None``): their memory is freed, and the next backward stores
    its gradient instead of adding it to a tensor of zeros. Otherwise zero them in place, out of
    any graph that made them.
    """
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if p.grad.grad_fn is not None:
            p.grad.detach_()
        else:
            p.grad.requires_grad_(False)
        p.grad.zero_()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns; prints as torch's does when every key matched."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _parse_to(args, kwargs):
    """``Module.to``'s arguments as (device, dtype, non_blocking, memory_format), in the forms
    torch's ``_parse_to`` accepts: a tensor stands for its device and dtype; a bool after the
    device or dtype is ``non_blocking``."""
    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "memory_format", "copy"}
    if unknown:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword "
                        f"{sorted(unknown)[0]!r}")
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    non_blocking = kwargs.get("non_blocking", False)
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, st.dtype):
            dtype = a
        elif isinstance(a, bool):
            non_blocking = a
        elif a is not None:
            device = a
    return device, dtype, non_blocking, kwargs.get("memory_format")


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, tensor)`` runs whenever any module registers a buffer; a non-None
    result is registered instead."""
    return Module._add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` runs whenever any module registers a child module."""
    return Module._add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` runs whenever any module registers a parameter."""
    return Module._add_hook(_global_parameter_registration_hooks, hook)


def _registered(hooks, module, name, value):
    """``value`` as the registration hooks leave it: each may hand back a replacement."""
    for hook in list(hooks):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


class _ForwardHook:
    """A registered forward (pre-)hook with its flags; called with the kwargs only when it asked
    for them (``with_kwargs``), as torch's ``_call_impl`` calls it."""

    def __init__(self, hook, with_kwargs, always_call):
        self.hook, self.with_kwargs, self.always_call = hook, with_kwargs, always_call

    def __call__(self, module, args, kwargs, *output):
        return self.hook(module, args, kwargs, *output) if self.with_kwargs else self.hook(module, args, *output)


class _LoadPreHook:
    """A load-state-dict pre-hook, given its module first when registered through the public API
    (torch's ``_WrappedHook``)."""

    def __init__(self, hook, module):
        self.hook, self.module = hook, module

    def __call__(self, *args):
        return self.hook(*args) if self.module is None else self.hook(self.module, *args)


class Module:
    """Base class of every layer and model: subclasses set attributes in ``__init__`` and define ``forward``."""

    _version = 1        # the layout of the module's state dict, recorded in its _metadata

    def __init__(self):
        # object.__setattr__: these dicts must exist before our own __setattr__ can file anything.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", [])
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_backward_pre_hooks", [])
        object.__setattr__(self, "_backward_hooks", [])
        object.__setattr__(self, "_is_full_backward_hook", None)
        for name in ("_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            object.__setattr__(self, name, [])

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------ registration
    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = _registered(_global_parameter_registration_hooks, self, name, param)

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that is state but not a parameter (running means, masks): moved by ``to``,
        saved in ``state_dict`` unless ``persistent=False``, never handed to an optimizer."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module", self._modules)
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    def _check_name(self, name, kind, own):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:     # torch names the culprit for modules only
            raise KeyError(f'{kind} name can\'t contain "."' + (f", got: {name}" if kind == "module" else ""))
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in own:
            raise KeyError(f"attribute '{name}' already exists")

    def __setattr__(self, name, value):
        params, modules, buffers = self.__dict__.get("_parameters"), self.__dict__.get("_modules"), \
            self.__dict__.get("_buffers")

        def forget(*stores):     # an attribute lives in exactly one place
            for store in stores:
                if store is not None and name in store:
                    del store[name]

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            forget(self.__dict__, buffers, modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            forget(self.__dict__, params, buffers)
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
        elif isinstance(value, Buffer):
            # a tensor marked by ``nn.Buffer``: registered as a buffer, persistent as it says
            self.register_buffer(name, value, value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = _registered(_global_buffer_registration_hooks, self, name, value)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Called only when normal lookup fails, so plain attributes cost nothing extra.
        for store in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(store)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    # ------------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """This module and every descendant, depth first, with dotted names ("" for self)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        """Entries of ``store`` ("_parameters" or "_buffers") of self (and descendants), each tensor once."""
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    # ------------------------------------------------------------------ modes, gradients, devices
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            module.training = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn):
        """Call ``fn`` on every submodule, children before their parent (``nn.Module.apply``)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's data by ``fn(data)``, keeping the Parameter objects:
        an optimizer built before ``model.to(...)`` still holds the right tensors. ``recurse``
        False: this module's own tensors only."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        swap = _future.get_swap_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                moved = fn(param)
            if swap:
                self._swap_in_converted(key, param, fn, moved)
                continue
            param.data = moved
            if param.grad is not None:
                with no_grad():
                    moved_grad = fn(param.grad)
                param.grad.data = moved_grad
        for name, buf in self._buffers.items():
            if buf is not None:
                self._buffers[name] = fn(buf)
        return self

    def _swap_in_converted(self, key, param, fn, moved):
        """``_apply`` under ``__future__.set_swap_module_params_on_conversion(True)``: the
        converted tensor, made a Parameter, is swapped into the Parameter object, and so is the
        converted gradient into the gradient object."""
        grad = param.grad
        try:
            if grad is not None:
                param.grad = None       # the swapped-in Parameter's grad would be checked against the old one
            swap_tensors(param, Parameter(moved, requires_grad=param.requires_grad))
        except Exception as e:
            if grad is not None:
                param.grad = grad
            raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") from e
        if grad is None:
            return
        with no_grad():
            moved_grad = fn(grad)
        moved_grad.requires_grad_(grad.requires_grad)
        try:
            swap_tensors(grad, moved_grad)
        except Exception as e:
            raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}.grad") from e
        param.grad = grad

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(tensor)`` (its device and
        dtype): the dtype applies to floating and complex tensors only, as in torch, so integer
        buffers keep theirs (complex ones become real under a floating dtype, as ``Tensor.to``)."""
        device, dtype, non_blocking, memory_format = _parse_to(args, kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype=torch.{dtype.name}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers. Please file an issue at https://github.com/pytorch/pytorch/issues/new?"
                              "template=bug-report.yml if a complex module does not work as expected.", stacklevel=2)

        def convert(t):
            wanted = dtype if t.is_floating_point() or t.is_complex() else None
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(device=device, dtype=wanted, non_blocking=non_blocking, memory_format=memory_format)
            return t.to(device=device, dtype=wanted, non_blocking=non_blocking)
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Every parameter and buffer as a new uninitialized tensor of its shape on ``device``
        (``nn.Module.to_empty``): how a module built on the meta device, which holds no values to
        copy, gets real memory before its weights are loaded or initialized."""
        from ...aten import dispatcher  # the operators sit below nn, looked up at the call
        return self._apply(lambda t: dispatcher.call("empty_like", t, device=device), recurse=recurse)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self):
        """Every parameter and buffer moved into shared memory (``Tensor.share_memory_``), in place:
        the same objects, so an optimizer built before still holds them."""
        return self._apply(lambda t: t.share_memory_())

    def type(self, dst_type):
        """Every parameter and buffer cast to ``dst_type``, integer buffers too (unlike ``to``),
        as torch's ``Module.type`` casts them."""
        return self._apply(lambda t: t.type(dst_type))

    # ------------------------------------------------------------------ lookup by dotted name
    def get_submodule(self, target):
        """The module at ``target`` ("" is this one), walking one dotted name at a time, with
        torch's AttributeError naming the step that fails (``nn.Module.get_submodule``)."""
        module = self
        for item in target.split(".") if target else []:
            if not hasattr(module, item):
                raise AttributeError(type(module).__name__ + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        """Put ``module`` at ``target``: the parent must exist; the name may be new unless ``strict``;
        what it replaces must be a module (``nn.Module.set_submodule``, with torch's errors)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if not hasattr(parent, name):
            if strict:
                raise AttributeError(type(parent).__name__ + " has no attribute `" + name + "`")
        elif not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def _owner_and_name(self, target):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(type(module).__name__ + " has no attribute `" + name + "`")
        return module, name

    def get_parameter(self, target):
        module, name = self._owner_and_name(target)
        if name not in module._parameters:
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return module._parameters[name]

    def get_buffer(self, target):
        module, name = self._owner_and_name(target)
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return module._buffers[name]

    # ------------------------------------------------------------------ state dict
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Every parameter and persistent buffer by dotted name, detached unless ``keep_vars``.
        Around this module's part run its hooks: the pre-hooks first, the post-hooks last (a
        post-hook registered with the private ``_register_state_dict_hook`` may return a new dict)."""
        if destination is None:
            destination = OrderedDict()
        local_metadata = self._record_version(destination, prefix)
        for hook in list(self._state_dict_pre_hooks):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination, prefix + name + ".", keep_vars)
        for hook in list(self._state_dict_hooks):
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _get_name(self):
        return self.__class__.__name__

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own parameters and persistent buffers (not its children's), then its
        extra state under ``_extra_state`` where the class defines ``get_extra_state``."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._defines("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def _defines(self, method):
        """Whether this module's class overrides Module's ``method`` (torch saves and loads extra
        state only for a class that does)."""
        return getattr(type(self), method, None) is not getattr(Module, method)

    def get_extra_state(self):
        """Any picklable state a subclass keeps besides tensors, saved in its state_dict under
        ``_extra_state``; Module's own is never called (``_save_to_state_dict`` checks first)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned, on ``load_state_dict``."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _record_version(self, destination, prefix):
        """Each module's ``_version`` under its dotted name in ``destination._metadata``, as torch
        records it, so that a loader knows which layout of the module's state it reads."""
        if not hasattr(destination, "_metadata"):
            destination._metadata = OrderedDict()
        local_metadata = destination._metadata[prefix[:-1]] = {"version": self._version}
        return local_metadata

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy ``state_dict``'s tensors into this module's parameters and buffers, in place.

        The copy goes through ``param.copy_`` under no_grad, so the Parameter objects (and any
        optimizer holding them) stay the same. Shapes must match; with ``strict``, keys too.
        With ``assign``, the state's tensors themselves become the parameters and buffers (their
        dtype and storage; a parameter keeps its ``requires_grad``), as torch's ``assign=True``.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", {})
        state_dict = OrderedDict(state_dict)        # a module may fill in keys: the caller's dict stays as it was

        def load(module, local_state, prefix=""):
            """One module, then each child on the entries under its prefix, then the module's
            post-hooks, which may change the lists of keys in place (torch's order)."""
            local_metadata = dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():      # a shared child loads once per place
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items() if k.startswith(child_prefix)}, child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in list(module._load_state_dict_post_hooks):
                if hook(module, keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        """This module's own entries, after its load pre-hooks; a key under ``prefix`` that names
        neither one of them nor a child is unexpected (a child's keys are its own business).
        ``local_metadata`` holds the module's saved ``version`` and, for ``assign=True``,
        ``assign_to_params_buffers`` (torch's signature, so a subclass overrides it as in torch)."""
        for hook in list(self._load_state_dict_pre_hooks):
            hook(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)
        assign = local_metadata.get("assign_to_params_buffers", False)
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update((k, v) for k, v in self._buffers.items()
                     if v is not None and k not in self._non_persistent_buffers_set)
        for name, own in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if isinstance(value, Tensor) and own.dim() == 0 and tuple(value.shape) == (1,):
                value = value[0]      # torch's backward compatibility: a (1,) entry loads into a 0-d tensor
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(value)}")
            elif value.shape != own.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape {torch_size_text(value.shape)} "
                              f"from checkpoint, the shape in current model is {torch_size_text(own.shape)}.")
            elif assign:
                self._assign_loaded(name, own, value)
            else:
                if own.is_meta and not value.is_meta:
                    warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter "
                                  "in the current model, which is a no-op. (Did you mean to pass `assign=True` to "
                                  "assign items in the state dictionary to their corresponding key in the module "
                                  "instead of copying them in place?)", stacklevel=2)
                try:
                    with no_grad():
                        own.copy_(value)
                except Exception as error:      # a meta value, which has nothing to copy: torch's report
                    errors.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{torch_size_text(own.shape)} and whose dimensions in the checkpoint are "
                                  f"{torch_size_text(value.shape)}, an exception occurred : {error.args}.")
        # torch's order: missing parameters, then the extra state, then the unexpected keys
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        self._load_extra_state(state_dict, extra_key, missing, unexpected)
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                head, *rest = key[len(prefix):].split(".", 1)
                if head not in (self._modules if rest else local):   # a dotted name belongs to a child
                    unexpected.append(key)

    def _load_extra_state(self, state_dict, key, missing, unexpected):
        """A class with ``set_extra_state`` expects ``key``; any other finds it unexpected
        (torch's ``Module._load_from_state_dict``)."""
        if self._defines("set_extra_state"):
            if key in state_dict:
                self.set_extra_state(state_dict[key])
            else:
                missing.append(key)
        elif key in state_dict:
            unexpected.append(key)

    def _assign_loaded(self, name, own, value):
        """``assign=True``: the loaded tensor takes the place of ``own``; in place of a parameter it
        becomes a Parameter (itself if it is one) with the old one's ``requires_grad``."""
        if isinstance(own, Parameter):
            if isinstance(value, Parameter):
                value.requires_grad_(own.requires_grad)
            else:
                value = Parameter(value, requires_grad=own.requires_grad)
        setattr(self, name, value)

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` saves this module."""
        return self._add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` runs after this module's part of
        ``state_dict`` is saved; it may change the dict in place and must return None."""
        hook._from_public_api = True
        return self._add_hook(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        """The older, private form of :meth:`register_state_dict_post_hook`: a non-None result
        replaces the state dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        return self._add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` runs before this module loads its entries (it may rewrite ``state_dict``)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """The private form: without ``with_module`` the hook is not given the module."""
        return self._add_hook(self._load_state_dict_pre_hooks, _LoadPreHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` runs after this module and its children loaded; it
        may edit the missing and unexpected keys in place (before ``strict`` judges them)."""
        return self._add_hook(self._load_state_dict_post_hooks, hook)

    # ------------------------------------------------------------------ calling
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces ``args``.
        With ``with_kwargs``, ``hook(module, args, kwargs)`` returns None or ``(args, kwargs)``."""
        return self._add_hook(self._forward_pre_hooks, _ForwardHook(hook, with_kwargs, False), prepend)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` runs after ``forward``; a non-None result replaces ``output``.
        With ``with_kwargs`` it is ``hook(module, args, kwargs, output)``; with ``always_call`` it
        also runs when ``forward`` (or an earlier hook) raised, before the exception goes on."""
        return self._add_hook(self._forward_hooks, _ForwardHook(hook, with_kwargs, always_call), prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients of the outputs are known; a non-None
        result replaces ``grad_output``."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the tensor inputs are
        known (None for the other arguments); a non-None result replaces ``grad_input``."""
        self._set_backward_hook_kind(True)
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """The older backward hook, deprecated in torch: ``hook(module, grad_input, grad_output)``
        is a hook on the autograd node that made the output (the last operator of ``forward``), so
        ``grad_input`` is that node's input gradients, not the module's; a forward call warns
        (FutureWarning) when that differs from the module's own."""
        self._set_backward_hook_kind(False)
        return self._add_hook(self._backward_hooks, hook)

    def _set_backward_hook_kind(self, full):
        if getattr(self, "_is_full_backward_hook", None) is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    def _get_backward_hooks(self):
        """(full hooks, older hooks), the global ones first in each."""
        full, older = [], []
        own_kind = getattr(self, "_is_full_backward_hook", None)
        for kind, hooks in ((_global_is_full_backward_hook, _global_backward_hooks), (own_kind, self._backward_hooks)):
            if kind is True:
                full += hooks
            elif kind is False:
                older += hooks
        return full, older

    @staticmethod
    def _add_hook(hooks, hook, prepend=False):
        if prepend:
            hooks.insert(0, hook)
        else:
            hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def __call__(self, *args, **kwargs):
        # The hooks registered now are those this call runs, as in torch.
        forward_hooks, called = _global_forward_hooks + self._forward_hooks, set()
        result = None
        try:
            args, kwargs = self._run_forward_pre_hooks(args, kwargs)
            bw_hook = None
            backward_hooks, older_backward_hooks = self._get_backward_hooks()
            backward_pre_hooks = _global_backward_pre_hooks + self._backward_pre_hooks
            if backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook in forward_hooks:
                if hook.always_call:
                    called.add(id(hook))
                hook_result = hook(self, args, kwargs, result)
                if hook_result is not None:
                    result = hook_result
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                                  f"Tensors but received {type(result)}", stacklevel=2)
                result = bw_hook.setup_output_hook(result)
            if older_backward_hooks:
                self._hook_the_output_node(older_backward_hooks, args, result)
            return result
        except Exception:
            self._run_always_called_hooks(forward_hooks, called, args, kwargs, result)
            raise

    def _hook_the_output_node(self, hooks, args, result):
        """The older backward hooks go on the node of the output's first tensor (looked for through
        the first item of a tuple or list, the first tensor value of a dict), then the call warns
        where that node's gradients are not the module's."""
        first = result
        while not isinstance(first, Tensor):
            first = next(v for v in first.values() if isinstance(v, Tensor)) if isinstance(first, dict) else first[0]
        node = first.grad_fn
        if node is None:
            return
        for hook in hooks:
            node.register_hook(functools.partial(hook, self))
        message = _older_backward_hook_warning(args, result, node)
        if message:
            warnings.warn(message, FutureWarning, stacklevel=2)

    def _run_forward_pre_hooks(self, args, kwargs):
        for hook in _global_forward_pre_hooks + self._forward_pre_hooks:
            result = hook(self, args, kwargs)
            if result is None:
                continue
            if hook.with_kwargs:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), but "
                                       f"got {result}.")
                args, kwargs = result
            else:
                args = result if isinstance(result, tuple) else (result,)
        return args, kwargs

    def _run_always_called_hooks(self, hooks, called, args, kwargs, result):
        """After an exception: the ``always_call`` hooks that have not run yet; an exception of
        theirs is only a warning (the first one goes on)."""
        for hook in hooks:
            if not hook.always_call or id(hook) in called:
                continue
            try:
                hook_result = hook(self, args, kwargs, result)
                if hook_result is not None:
                    result = hook_result
            except Exception as e:
                warnings.warn("module forward hook with ``always_call=True`` raised an exception that was silenced "
                              f"as another error was raised in forward: {e}", stacklevel=2)

    # ------------------------------------------------------------------ printing
    def extra_repr(self):
        """The text between the parentheses of a leaf module's repr (``in_features=4, ...``)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr().split("\n") if self.extra_repr() else []
        children = [f"({name}): {_addindent(repr(module), 2)}" for name, module in self._modules.items()]
        lines = extra + children
        body = ""
        if len(extra) == 1 and not children:
            body = extra[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{type(self).__name__}({body})"

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers) | set(self._modules))
