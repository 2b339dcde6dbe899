"""DistributedDataParallel (``torch/nn/parallel/distributed.py``): one copy of the module per
process, each on its own slice of the batch, gradients averaged by the reducer during backward.

The module's steps follow torch's: at construction the parameters are broadcast from rank 0 and
bucketed; before each forward the buckets may be rebuilt once (``_pre_forward``); after it the
reducer is armed for the coming backward (``_post_forward``); ``no_sync`` skips the arming, so
gradients only accumulate locally.
"""
import contextlib
import sys

from ... import distributed as dist
from ..._tensor_base import TensorBase
from ...autograd.grad_mode import is_grad_enabled
from ...distributed.bucketing import _DEFAULT_FIRST_BUCKET_BYTES, _compute_bucket_assignment_by_size
from ...distributed.reducer import Reducer
from ..modules.module import Module

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25


def _find_tensors(obj):
    """The tensors in a forward's output: a tensor, or lists, tuples and dicts of them."""
    if isinstance(obj, TensorBase):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    return []


class DistributedDataParallel(Module):
    """Data parallelism over processes; see the module docstring."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if gradient_as_bucket_view or static_graph:
            raise NotImplementedError("internals' DDP keeps .grad apart from the buckets, with a dynamic graph")
        self.module, self.process_group = module, process_group
        self.broadcast_buffers, self.find_unused_parameters = broadcast_buffers, find_unused_parameters
        self.require_backward_grad_sync = self.require_forward_param_sync = True
        params = [p for p in dict.fromkeys(module.parameters()) if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any "
                               "parameter that requires a gradient.")
        self._sync_module_states()
        cap = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap * _MB)
        first = _DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        # Without unused-parameter detection the first iteration uses one bucket for everything; the
        # buckets are then rebuilt in the order that iteration's gradients arrived.
        if not find_unused_parameters:
            limits = [sys.maxsize]
        elif first < self.bucket_bytes_cap:
            limits = [first, self.bucket_bytes_cap]
        else:
            limits = [self.bucket_bytes_cap]
        indices, per_limits = _compute_bucket_assignment_by_size(params, limits)
        # Reversed: the parameters registered last get their gradients first.
        self.reducer = Reducer(params, list(reversed(indices)), process_group, self.bucket_bytes_cap,
                               find_unused_parameters, first, list(reversed(per_limits)))

    def _sync_module_states(self):
        """Every process starts from rank 0's parameters and buffers (``_sync_module_states``)."""
        for t in [*self.module.parameters(), *self.module.buffers()]:
            dist.broadcast(t, 0, self.process_group)

    def forward(self, *inputs, **kwargs):
        self._pre_forward()
        output = self.module(*inputs, **kwargs)
        self._post_forward(output)
        return output

    def _pre_forward(self):
        if is_grad_enabled():
            self.reducer.rebuild_buckets()
        buffers = list(self.module.buffers())
        if self.broadcast_buffers and buffers and self.require_forward_param_sync:
            for b in buffers:
                dist.broadcast(b, 0, self.process_group)

    def _post_forward(self, output):
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(_find_tensors(output) if self.find_unused_parameters else [])
        else:
            self.require_forward_param_sync = False

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside only accumulate ``.grad`` locally; the first synchronised backward
        after it all-reduces the sums. The forward must run inside too, as in torch."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def __del__(self):
        reducer = self.__dict__.get("reducer")      # torch's reducer removes its hooks when destroyed
        if reducer is not None:
            reducer.remove_hooks()
