"""The older, hook-based spectral normalization (``torch/nn/utils/spectral_norm.py``):
``weight_orig`` is the parameter, ``weight_u``/``weight_v`` the power iteration's buffers, and
a forward pre-hook sets ``module.weight = weight_orig / sigma`` before each forward.
``nn.utils.parametrizations.spectral_norm`` replaces it in torch."""
from ... import _functional as _F
from ... import linalg
from ...autograd.grad_mode import no_grad
from ...c10.memory_format import contiguous_format
from .. import functional as F
from ..parameter import Parameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook", "spectral_norm",
           "remove_spectral_norm"]


def _unwrapped(hooks):
    """Registered hooks as given (the package wraps forward and load pre-hooks)."""
    return [getattr(entry, "hook", entry) for entry in hooks]


class SpectralNorm:
    """The forward pre-hook, and the state every step of it needs."""

    # Version 1 stores weight_v; a version-0 checkpoint stored the weight instead, and v is
    # solved for on load (SpectralNormLoadStateDictPreHook).
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                # In place (out=), so the buffers carry the estimate to the next forward;
                # v first here, where the parametrization's version updates u first.
                for _ in range(self.n_power_iterations):
                    v = F.normalize(_F.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(_F.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                # Clones for autograd, which must not see the next step's in-place writes.
                u = u.clone(memory_format=contiguous_format)
                v = v.clone(memory_format=contiguous_format)
        sigma = _F.dot(u, _F.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # The v with u = W v / sigma, by least squares, scaled so that dot(u, W v) = sigma.
        v = linalg.pinv(weight_mat.t().mm(weight_mat)).mm(weight_mat.t()).mm(u.unsqueeze(1)).squeeze(1)
        return v.mul_(target_sigma / _F.dot(u, _F.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in _unwrapped(module._forward_pre_hooks):
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            # Random starting vectors, drawn u then v as torch draws them.
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain attribute until the first forward sets the normalized weight.
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads a version-0 checkpoint (``weight``, ``weight_orig``, ``weight_u``, no ``weight_v``)
    by solving for the ``v`` that reproduces its sigma."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v")) \
                and weight_key not in state_dict:
            return      # a version-1 dict whose metadata was lost
        missing = [weight_key + s for s in ("_orig", "", "_u") if weight_key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            sigma = (weight_orig / state_dict.pop(weight_key)).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, state_dict[weight_key + "_u"], sigma)


class SpectralNormStateDictHook:
    """Records the layout's version in the state dict's metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm before each forward (hook-based)."""
    if dim is None:
        # Torch also names ConvTranspose3d, which the package does not have.
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d  # a real cycle: nn.modules.rnn imports nn.utils
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Put back a plain ``<name>`` parameter holding the normalized weight."""
    for i, hook in enumerate(_unwrapped(module._forward_pre_hooks)):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[i]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for i, hook in enumerate(_unwrapped(hooks)):
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[i]
                break
    return module
