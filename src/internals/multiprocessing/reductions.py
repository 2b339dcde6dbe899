"""How a tensor crosses a process boundary (``torch/multiprocessing/reductions.py``).

``multiprocessing`` pickles what it sends with ``ForkingPickler``; registering a reduction for a
type there changes what that type becomes on the wire, for queues, pipes and process arguments
alike. A CPU tensor meets three of torch's reductions (torch registers them for ~70 types):

- a tensor becomes ``rebuild_tensor(cls, typed_storage, (offset, size, stride, requires_grad))``:
  metadata only, so a view arrives as a view of the same storage;
- a typed storage becomes ``rebuild_typed_storage(untyped_storage, dtype)``;
- an untyped storage is first moved into shared memory (in place: the sender's tensors now use
  the segment too), then becomes ``rebuild_storage_fd(cls, DupFd(fd), nbytes)``. ``DupFd`` is
  ``multiprocessing``'s way of passing a descriptor: the sender keeps a duplicate and hands it
  over a Unix socket (``SCM_RIGHTS``) when the receiver asks, so the sender must still be alive
  when the message is unpickled. No byte of the tensor's data is in the pickle.

Each process keeps a cache from a segment's identity (inode, device) to the storage that maps
it, so the same segment received twice, or sent back to its owner, is one storage again.
"""
import multiprocessing
import os
import weakref
from multiprocessing.reduction import ForkingPickler

from .._tensor import Tensor
from ..c10.storage import UntypedStorage
from ..c10.tensor_impl import TensorImpl
from ..nn.parameter import Parameter
from ..storage import TypedStorage

__all__ = ["init_reductions", "reduce_tensor", "reduce_storage", "rebuild_tensor", "rebuild_storage_fd"]

shared_cache = {}       # (st_ino, st_dev) of a segment -> weak reference to the storage mapping it


def fd_id(fd):
    """What identifies a segment whatever descriptor reaches it."""
    stat = os.fstat(fd)
    return stat.st_ino, stat.st_dev


def _remember(key, storage):
    for dead in [k for k, ref in shared_cache.items() if ref() is None]:
        del shared_cache[dead]
    shared_cache[key] = weakref.ref(storage)


def storage_from_cache(key):
    ref = shared_cache.get(key)
    return None if ref is None else ref()


def rebuild_tensor(cls, storage, metadata):
    """A tensor over the received storage with the sender's offset, sizes and strides."""
    storage_offset, size, stride, requires_grad = metadata
    impl = TensorImpl(storage._untyped_storage, tuple(size), tuple(stride), storage_offset, storage.dtype)
    t = Tensor._from_impl(impl)
    if cls is Parameter:     # the class decides requires_grad at construction, as in torch
        return Parameter(t, requires_grad=requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def reduce_tensor(tensor):
    """Metadata and the storage; autograd history cannot travel, so a non-leaf that requires
    grad is refused with torch's message."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
                           "does not support crossing process boundaries.  If you just want to transfer the data, "
                           "call detach() on the tensor before serializing (e.g., putting it on the queue).")
    metadata = (tensor.storage_offset(), tensor.size(), tensor.stride(), tensor.requires_grad)
    return rebuild_tensor, (type(tensor), tensor._typed_storage(), metadata)


def rebuild_typed_storage(storage, dtype):
    return TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)


def reduce_typed_storage(storage):
    return rebuild_typed_storage, (storage._untyped_storage, storage.dtype)


def rebuild_storage_fd(cls, df, size):
    """The receiving end: take the descriptor from the sender, map its segment (or find the
    storage that maps it already), and close the descriptor (the storage keeps a duplicate)."""
    fd = df.detach()
    try:
        key = fd_id(fd)
        storage = storage_from_cache(key)
        if storage is None:
            storage = cls._new_shared_fd_cpu(fd, size)
            _remember(key, storage)
        return storage
    finally:
        os.close(fd)


def rebuild_storage_empty(cls):
    return cls(0)


def reduce_storage(storage):
    """The sending end (torch's ``file_descriptor`` strategy). An empty storage has nothing to
    map and travels as a call that makes a new empty one."""
    if storage.device.type == "cuda":
        raise RuntimeError("Cannot pickle CUDA storage; try pickling a CUDA tensor instead")
    if storage.nbytes() == 0:
        return rebuild_storage_empty, (type(storage),)
    fd, size = storage._share_fd_cpu_()
    df = multiprocessing.reduction.DupFd(fd)
    _remember(fd_id(fd), storage)
    return rebuild_storage_fd, (type(storage), df, size)


def init_reductions():
    """Register the reductions on ``ForkingPickler`` (for every process that imports this
    package, as importing torch does). Registration is by exact type, so ``Parameter`` needs its
    own entry."""
    ForkingPickler.register(UntypedStorage, reduce_storage)
    ForkingPickler.register(TypedStorage, reduce_typed_storage)
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
