"""``LayerNorm`` and ``GroupNorm`` (``torch/nn/modules/normalization.py``)."""
import numbers

from ..._functional import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from ._repr_fields import bias_field
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "LocalResponseNorm", "CrossMapLRN2d", "RMSNorm"]


def _affine_parameters(module, affine, bias, shape, device, dtype):
    """The optional ``weight`` and ``bias`` both norms keep (registered as None when absent, so they
    stay in the module's parameter names as torch's do), then their initial values."""
    weight = Parameter(empty(shape, device=device, dtype=dtype)) if affine else None
    module.register_parameter("weight", weight)
    module.register_parameter("bias", Parameter(empty(shape, device=device, dtype=dtype)) if affine and bias else None)
    module.reset_parameters()


def _reset_affine(module):
    """Weight ones and bias zeros: each norm starts as the identity on its normalised values."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalize each sample over its last ``len(normalized_shape)`` dims, then scale and shift
    elementwise by ``weight`` and ``bias`` (of shape ``normalized_shape``)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, device, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
                f"{bias_field(self, 'LayerNorm')}")


class GroupNorm(Module):
    """Normalize each sample's channels in ``num_groups`` groups, then scale and shift each channel
    by ``weight`` and ``bias`` (of shape ``(num_channels,)``)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _affine_parameters(self, affine, bias, (num_channels,), device, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
                f"{bias_field(self, 'GroupNorm')}")


class LocalResponseNorm(Module):
    """Each value divided by a power of its neighbouring channels' mean square (``F.local_response_norm``)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class CrossMapLRN2d(Module):
    """Local response normalization of a 4-d input across its channels, as Lua Torch computed it
    (the autograd function in ``_functions.py``)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class RMSNorm(Module):
    """Divide each sample by the root mean square of its last ``len(normalized_shape)`` dims, then
    scale elementwise by ``weight``; ``eps`` None is the input dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, elementwise_affine, False, self.normalized_shape, device, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
