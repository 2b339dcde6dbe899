"""Reach a module's tensors by dotted name and swap them in and out
(``torch/nn/utils/_named_member_accessor.py``): what ``functional_call`` stands on."""
from ..._tensor import Tensor
from ..modules.module import Module

# Marks a name the module did not have before a swap, so the swap back deletes it again.
_MISSING = object()


def swap_tensor(module, name, tensor, allow_missing=False):
    """Put ``tensor`` under ``name`` on ``module`` (one level, no dots) and return what was there.

    A parameter or buffer slot is overwritten in its own dictionary, without ``__setattr__``, so a
    plain tensor may stand where a ``Parameter`` was; ``_MISSING`` deletes the name."""
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for store in (module._parameters, module._buffers):
        if name in store:
            original = store[name]
            if tensor is _MISSING:
                del store[name]
            else:
                store[name] = tensor
            return original
    return _swap_plain_attribute(module, name, tensor, allow_missing)


def _swap_plain_attribute(module, name, tensor, allow_missing):
    """The swap for a name that is neither a parameter nor a buffer: an ordinary attribute."""
    if hasattr(module, name):
        original = getattr(module, name)
    elif allow_missing:
        original = _MISSING
    else:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    if original is not _MISSING and original is not None and not isinstance(original, Tensor):
        raise TypeError(f"attribute `{name}`: {original} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return original


class NamedMemberAccessor:
    """A module's submodules and tensors by dotted path (``"layer1.conv.weight"``), with the
    submodules looked up once and remembered."""

    def __init__(self, module):
        self.module = module
        self.memo = {}

    def get_submodule(self, name):
        if not name:
            return self.module
        if name not in self.memo:
            prefix, _, attr = name.rpartition(".")
            parent = self.get_submodule(prefix)
            try:
                submodule = getattr(parent, attr)
            except AttributeError as ex:
                raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
            if not isinstance(submodule, Module):
                raise TypeError(f"submodule `{name}`: {submodule} is not an instance of torch.nn.Module")
            self.memo[name] = submodule
        return self.memo[name]

    def swap_tensor(self, name, value, allow_missing=False):
        prefix, _, attr = name.rpartition(".")
        return swap_tensor(self.get_submodule(prefix), attr, value, allow_missing=allow_missing)

    def swap_tensors_dict(self, named_tensors, allow_missing=False):
        """Swap every ``name: tensor``; return ``(originals, names that were missing)``.

        All or nothing: if one swap fails, or a name is missing and that is not allowed, the swaps
        already made are undone before the error goes up."""
        originals, missing = {}, []
        try:
            for name, tensor in named_tensors.items():
                original = self.swap_tensor(name, tensor, allow_missing=True)
                if original is _MISSING:
                    missing.append(name)
                originals[name] = original
        except Exception:
            self._swap_back(originals)
            raise
        if missing and not allow_missing:
            self._swap_back(originals)
            raise RuntimeError(f"Missing key(s): {', '.join(map(repr, missing))}.")
        return originals, missing

    def _swap_back(self, originals):
        for name, original in originals.items():
            self.swap_tensor(name, original, allow_missing=True)

    def check_keys(self, keys):
        """``(missing, unexpected)``, sorted: the module's tensor names absent from ``keys``, and
        the keys that name no parameter or buffer (tied names count one by one)."""
        keys = set(keys)
        valid = {name for name, _ in self.module.named_parameters(remove_duplicate=False)}
        valid |= {name for name, _ in self.module.named_buffers(remove_duplicate=False)}
        return sorted(valid - keys), sorted(keys - valid)
