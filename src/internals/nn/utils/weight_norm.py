"""The older, hook-based weight normalization (``torch/nn/utils/weight_norm.py``): ``weight``
becomes a plain attribute recomputed from ``weight_g`` and ``weight_v`` by a forward pre-hook.
Torch deprecates it for ``nn.utils.parametrizations.weight_norm``, which loads its state dicts."""
import warnings

from ... import _functional as _F
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _pre_hooks(module):
    """The module's forward pre-hooks as registered (the package wraps each with its flags)."""
    return [getattr(entry, "hook", entry) for entry in module._forward_pre_hooks]


class WeightNorm:
    """The forward pre-hook: sets ``module.<name>`` to ``g * v / ||v||`` before each forward."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _F._weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
        for hook in _pre_hooks(module):
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        # The weight leaves the parameters; g and v take its place (w = g / ||v|| * v).
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_F.norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replace ``module.<name>`` by a magnitude ``<name>_g`` and a direction ``<name>_v``,
    recombined by a forward pre-hook (deprecated in torch: it warns with FutureWarning)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Fold ``<name>_g`` and ``<name>_v`` back into one parameter ``<name>``."""
    for i, hook in enumerate(_pre_hooks(module)):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[i]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
