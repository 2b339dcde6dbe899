"""``InstanceNorm1d``, ``InstanceNorm2d``, ``InstanceNorm3d`` (``torch/nn/modules/instancenorm.py``).

Each channel of each sample is normalized over its own spatial positions. The modules share
batch norm's parameters and buffers (torch's ``_NormBase``), with other defaults: no affine
parameters and no running statistics unless asked for.
"""
import warnings

from .. import functional as F
from .batchnorm import _BatchNorm, _LazyNormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_BatchNorm):
    _spatial = 1        # spatial dims of one sample; an unbatched input has 1 + _spatial dims

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _get_no_batch_dim(self):
        return 1 + self._spatial

    def _check_input_dim(self, input):
        dims = (self._spatial + 1, self._spatial + 2)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._get_no_batch_dim():     # unbatched: a batch of one, squeezed off again
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        """A checkpoint without a version (saved before running statistics became optional) may
        hold running statistics a module without them cannot take: refused with torch's message."""
        if local_metadata.get("version") is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                errors.append(f"Unexpected running stats buffer(s) {names} for {klass} with "
                              "track_running_stats=False. If state_dict is a checkpoint saved before 0.4.0, this may "
                              f"be expected because {klass} does not track running stats by default since 0.4.0. "
                              "Please remove these keys from state_dict. If the running stats are actually needed, "
                              f"instead set track_running_stats=True in {klass} to enable them. See the documentation "
                              f"of {klass} for details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)


class InstanceNorm1d(_InstanceNorm):
    """Over (N, C, L) or (C, L) input."""
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Over (N, C, H, W) or (C, H, W) input."""
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Over (N, C, D, H, W) or (C, D, H, W) input."""
    _spatial = 3


# the lazy instance norms: torch's defaults for them are the batch norms' (affine, running statistics)
class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """An InstanceNorm1d whose num_features is its first input's dim 1: then it becomes one."""
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
