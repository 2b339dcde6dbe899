"""Moving tensors between ``internals`` and real torch, keeping sizes, strides and offset.

The whole storage is copied (not just the view), so a view stays a view of a same-sized
storage on the other side. torch is imported only here, and only when asked for.
"""
import numpy as np

from ._tensor_base import TensorBase
from .c10 import scalar_type as st
from .c10.storage import UntypedStorage
from .c10.tensor_impl import TensorImpl

_TORCH_NAMES = {d.name: d for d in st.ALL_DTYPES + st.LIMITED_UNSIGNED + st.FLOAT8}


def _torch_dtype(torch, d):
    return getattr(torch, d.name)


def from_torch(t):
    """An internals tensor with ``t``'s values, sizes, strides, offset and dtype (CPU or cuda)."""
    import torch  # torch is heavy and optional: imported only when converting
    if t.is_conj() or t.is_neg():    # its bytes hold the stored values: the same storage, the bits set again
        out = from_torch(_without_bits(t))
        out._impl._set_conj(t.is_conj())
        out._impl._set_neg(t.is_neg())
        return out
    dtype = _TORCH_NAMES[str(t.dtype).replace("torch.", "")]
    raw = t.untyped_storage()
    data = torch.empty(raw.nbytes(), dtype=torch.uint8)
    if raw.nbytes():
        data.untyped_storage().copy_(raw.cpu() if raw.device.type != "cpu" else raw)
    storage = UntypedStorage(raw.nbytes(), "cpu", data=data.numpy().copy())
    out = TensorBase._from_impl(TensorImpl(storage, tuple(t.shape), t.stride(), t.storage_offset(), dtype))
    if t.device.type == "cuda":
        out = _same_layout_on(out, "cuda")
    return out.requires_grad_(t.requires_grad) if t.requires_grad and t.is_leaf else out


def _without_bits(t):
    """A torch tensor over ``t``'s storage, with its sizes, strides and offset and no math bits."""
    return t.new_empty(0).set_(t.untyped_storage(), t.storage_offset(), tuple(t.shape), t.stride())


def _same_layout_on(t, device):
    """``t`` on ``device`` with the same storage size, sizes, strides and offset."""
    raw = t._impl.storage._data
    if device == "cuda":   # allocated by the caching allocator, so that memory_allocated() counts it
        storage = UntypedStorage(len(raw), device)
        if len(raw):
            storage._data.copy_to_device(raw)
    else:
        storage = UntypedStorage(len(raw), device, data=raw.copy_to_host())
    return TensorBase._from_impl(TensorImpl(storage, t.shape, t.stride(), t.storage_offset(), t.dtype))


def to_torch(t):
    """A torch tensor with ``t``'s values, sizes, strides, offset and dtype, on torch's CPU.

    cuda tensors come back to the CPU: torch on this machine may have no CUDA.
    """
    import torch  # torch is heavy and optional: imported only when converting
    if t.device.type != "cpu":
        t = _same_layout_on(t, "cpu")
    raw = np.ascontiguousarray(t._impl.storage._data)
    storage = torch.from_numpy(raw.copy()).untyped_storage()
    out = torch.empty(0, dtype=_torch_dtype(torch, t.dtype))
    out.set_(storage, t.storage_offset(), tuple(t.shape), t.stride())
    out = out.conj() if t.is_conj() else out     # torch's lazy views over the stored values
    return out._neg_view() if t.is_neg() else out
