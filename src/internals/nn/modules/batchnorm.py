"""``BatchNorm1d`` and ``BatchNorm2d`` (``torch/nn/modules/batchnorm.py``).

While training, each channel is normalized by the batch's mean and variance, and the running
statistics (buffers: saved in ``state_dict``, moved by ``.to()``, not trained) move towards them
by ``momentum``; in eval mode the running statistics are used instead.
"""
from ... import distributed as dist
from ..._functional import empty, ones, zeros
from ...aten.native.tensor_factories import tensor
from ...c10 import scalar_type as st
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from ._repr_fields import bias_field
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]


class _BatchNorm(Module):
    _version = 2        # version 2 added num_batches_tracked
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(empty((num_features,), device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty((num_features,), device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros((num_features,), device=device, dtype=dtype))
            self.register_buffer("running_var", ones((num_features,), device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=st.int64, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:       # a cumulative average: each batch weighs 1/n
                factor = 1.0 / float(self.num_batches_tracked)
        # In eval mode without running statistics, the batch's statistics are used.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias, bn_training, factor,
                            self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"
                f"{bias_field(self, 'BatchNorm1d')}, track_running_stats={self.track_running_stats}")


    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        """A state dict of version 1 (or with no version: a plain dict) predates num_batches_tracked:
        the module's current count is kept, as torch's ``_NormBase`` keeps it."""
        key = prefix + "num_batches_tracked"
        version = local_metadata.get("version")
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)


class BatchNorm1d(_BatchNorm):
    """Over (N, C) or (N, C, L) input: statistics per channel C."""

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Over (N, C, H, W) input: statistics per channel C, over the batch and every position."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Over (N, C, D, H, W) input: statistics per channel C, over the batch and every position."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics are taken over every process of a group (``batchnorm.py``).

    Statistics are synchronised only while training inside an initialised process group; torch
    does that for accelerator tensors only, so on the CPU such a call raises as torch's does, and
    outside a process group the layer is a plain batch norm over any input of 2 or more dims.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        if self.training and dist.is_available() and dist.is_initialized():
            # torch syncs through its accelerator kernels only; a CPU tensor is refused up front
            if input.device.type not in ("cuda", "hpu", "xpu", "privateuseone"):
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
            if dist.get_world_size(self.process_group) > 1:
                raise NotImplementedError("internals.nn.SyncBatchNorm does not synchronise statistics across "
                                          "processes; use BatchNorm with DistributedDataParallel")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every batch norm in it replaced by a SyncBatchNorm holding the same
        parameter and buffer objects, training flag and ``qconfig``; other modules are kept."""
        out = module
        # torch's test is its _BatchNorm, which the instance norms do not derive from (here they do);
        # the lazy batch norms derive from these three
        if isinstance(module, (BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm)):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


# ---- the lazy norms (``batchnorm.py``'s ``_LazyNormBase``): num_features from the first input's dim 1
class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        # no affine parameters nor statistics yet: tensors made now would be replaced at the first call
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=st.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A BatchNorm1d whose num_features is its first input's dim 1: then it becomes one."""
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    cls_to_become = BatchNorm3d
