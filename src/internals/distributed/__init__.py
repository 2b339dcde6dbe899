"""Communication between processes (``torch/distributed``), a thin pass-through to torch's own.

The transport is torch's: its process groups (gloo over loopback in the course) and their
collectives. What this package adds is the handover: an internals tensor on the CPU is given to
torch as a torch tensor over the *same bytes* (``as_torch``), so a collective that writes into
the torch tensor writes into the internals tensor, with no copy either way. Above it sits the
part the course rebuilds, DDP's reducer (``reducer.py``).
"""
from datetime import timedelta

import numpy as np

from .bucketing import _DEFAULT_FIRST_BUCKET_BYTES, _compute_bucket_assignment_by_size

__all__ = ["is_available", "init_process_group", "destroy_process_group", "is_initialized", "get_rank",
           "get_world_size", "new_group", "barrier", "all_reduce", "broadcast", "ReduceOp", "as_torch",
           "_DEFAULT_FIRST_BUCKET_BYTES", "_compute_bucket_assignment_by_size"]


def _dist():
    import torch.distributed as dist  # torch is optional for the package: imported only when used
    return dist


def is_available():
    """Whether torch was built with distributed support (its CPU wheels are)."""
    try:
        return _dist().is_available()
    except ImportError:
        return False


def as_torch(t):
    """A torch tensor over the same memory as the CPU internals tensor ``t`` (sizes, strides, offset
    kept): torch's collectives then read and write ``t`` itself, as the reducer needs."""
    import torch  # torch is optional for the package: imported only when used
    if t.device.type != "cpu":
        raise RuntimeError(f"internals.distributed hands CPU tensors to gloo; got a {t.device} tensor")
    raw = t._impl.storage._data.view(np.uint8)
    storage = torch.from_numpy(raw).untyped_storage()   # shares the buffer, holds the array alive
    out = torch.empty(0, dtype=getattr(torch, t.dtype.name))
    return out.set_(storage, t.storage_offset(), tuple(t.shape), t.stride())


def init_process_group(backend="gloo", init_method=None, timeout=timedelta(minutes=30), world_size=-1,
                       rank=-1, store=None, **kwargs):
    """Join the default process group (``torch.distributed.init_process_group``)."""
    _dist().init_process_group(backend, init_method=init_method, timeout=timeout, world_size=world_size,
                               rank=rank, store=store, **kwargs)


def destroy_process_group(group=None):
    _dist().destroy_process_group(group)


def is_initialized():
    return _dist().is_initialized()


def get_rank(group=None):
    return _dist().get_rank(group)


def get_world_size(group=None):
    return _dist().get_world_size(group)


def new_group(ranks=None, timeout=None, backend=None):
    """A process group over ``ranks``; every rank of the default group must call it."""
    return _dist().new_group(ranks, timeout=timeout, backend=backend)


def barrier(group=None):
    _dist().barrier(group)


def all_reduce(tensor, op=None, group=None, async_op=False):
    """Reduce ``tensor`` across the group in place; with ``async_op`` return torch's ``Work``
    at once, whose ``wait()`` says the bytes of ``tensor`` hold the result."""
    dist = _dist()
    return dist.all_reduce(as_torch(tensor), dist.ReduceOp.SUM if op is None else op, group, async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Overwrite ``tensor`` on every rank with rank ``src``'s values."""
    return _dist().broadcast(as_torch(tensor), src, group, async_op)


def __getattr__(name):
    if name == "ReduceOp":       # torch's enum itself: the op travels to torch unchanged
        return _dist().ReduceOp
    raise AttributeError(f"module 'internals.distributed' has no attribute '{name}'")
