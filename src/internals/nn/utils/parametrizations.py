"""Ready-made parametrizations (``torch/nn/utils/parametrizations.py``) on top of
``nn.utils.parametrize``: ``weight_norm`` (a direction and a magnitude learned apart) and
``spectral_norm`` (a weight divided by its largest singular value, estimated by power
iteration). Torch's ``orthogonal`` is not rebuilt yet: it needs ``matrix_exp`` and
``householder_product``, which the package does not have.
"""
from ... import _functional as _F
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...c10.memory_format import contiguous_format
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d
from ..modules.module import Module
from . import parametrize

__all__ = ["spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    """``weight = g * v / ||v||``, the norm taken over every dimension but ``dim``
    (over all of them when ``dim`` is None)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _F._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        # Two tensors, so they are stored as original0 (g) and original1 (v).
        return _F.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Split ``module.<name>`` into a magnitude ``original0`` and a direction ``original1``
    (Salimans and Kingma, 2016), each trained on its own."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        # A checkpoint of the older hook-based weight_norm names the tensors name_g and name_v.
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """``weight / sigma``, with ``sigma`` the largest singular value of the weight seen as a
    matrix (``dim`` first, the rest flattened), estimated from the vectors ``_u`` and ``_v``
    that each training-mode forward refines by ``n_power_iterations`` steps."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # A vector needs no estimate: its only singular value is its norm.
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            # Drawn in torch's order (u, then v) so the same seed gives the same start.
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # A random start is far from the top singular vectors; fifteen steps bring it close.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        # out= writes into the buffers themselves: the vectors persist from step to step, and
        # a DataParallel replica's updates would reach the same storage.
        for _ in range(n_power_iterations):
            self._u = F.normalize(_F.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
            self._v = F.normalize(_F.mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Clones: the power method overwrites the buffers in place, and autograd saved them.
        u = self._u.clone(memory_format=contiguous_format)
        v = self._v.clone(memory_format=contiguous_format)
        sigma = _F.vdot(u, _F.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        # Assigning a weight stores it as given: the next forward divides it by its sigma.
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Constrain ``module.<name>`` to spectral norm one (Miyato et al., 2018). ``dim`` defaults to
    the output-channel dimension: 1 for the transposed convolutions, 0 otherwise."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        # Torch also names ConvTranspose3d, which the package does not have.
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
