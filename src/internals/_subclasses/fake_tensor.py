"""FakeTensor: a tensor with metadata and no data (``torch/_subclasses/fake_tensor.py``).

Under a FakeTensorMode every operator call on fake tensors is answered without computing:
view ops run their real kernels (which only touch metadata, and a fake tensor's storage has no
memory to touch), in-place ops return their target after checking it, and every other op asks
its meta function (``internals._meta_registrations``) for the output's shape, strides and
dtype. A tracer runs a whole training step this way in microseconds per op, whatever the sizes.
"""
from .._meta_registrations import TensorMeta, meta_table
from .._tensor import Tensor
from ..aten.tensor_iterator import broadcast_shapes
from ..c10.dispatch_key import DispatchKeySet, backend_key_for
from ..c10.tensor_impl import TensorImpl
from ..utils._python_dispatch import TorchDispatchMode
from ..utils._pytree import tree_flatten, tree_map

__all__ = ["DataDependentOutputException", "FakeTensor", "FakeTensorMode", "UnsupportedFakeTensorException"]


class UnsupportedFakeTensorException(RuntimeError):
    """An operator has no meta function."""


class DataDependentOutputException(RuntimeError):
    """Code asked a fake tensor for its values (``.item()``, ``.tolist()``, an ``if`` on a tensor)."""


class FakeTensor(Tensor):
    """Sizes, strides, dtype and device, over a storage that holds no memory."""

    @classmethod
    def from_meta(cls, meta, storage_offset=0):
        impl = TensorImpl.without_storage(meta.shape, meta.strides, storage_offset, meta.dtype, meta.device)
        return cls._from_impl(impl)

    def _numpy_view(self):      # what numpy(), tolist() and printing read
        raise DataDependentOutputException(
            f"a FakeTensor has no data to read (size={tuple(self.shape)}, dtype={self.dtype}): the traced "
            "code depends on tensor values, which tracing on fake tensors cannot know")

    def __repr__(self):
        return f"FakeTensor(..., size={tuple(self.shape)}, dtype={self.dtype}, device={self.device})"


class FakeTensorMode(TorchDispatchMode):
    """Answers operator calls with fake tensors. Real tensors met on the way (a module's weights)
    are given fake twins first, one per tensor, so the same weight is the same fake each time."""

    def __init__(self):
        self._fakes = {}        # id(real tensor) -> (real, fake); the real is kept alive so ids stay unique

    def from_tensor(self, t):
        """The fake twin of a real tensor: same sizes, strides, offset, dtype, device, requires_grad."""
        if isinstance(t, FakeTensor):
            return t
        hit = self._fakes.get(id(t))
        if hit is None:
            impl = t._impl
            fake = FakeTensor.from_meta(TensorMeta(impl.sizes, impl.strides, impl.dtype, impl.device),
                                        impl.storage_offset)
            fake._impl.is_wrapped_number = impl.is_wrapped_number
            fake.requires_grad_(t.requires_grad)
            hit = self._fakes[id(t)] = (t, fake)
        return hit[1]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        args, kwargs = tree_map(self._fakeify, args), tree_map(self._fakeify, kwargs)
        name = func.name()
        if name == "aten::_local_scalar_dense":     # item(), float(), an ``if`` on a tensor: a value
            raise DataDependentOutputException(str(func))
        if _writes_first_argument(func):
            return self._inplace(name, args, kwargs)
        if name in meta_table:
            return _wrap(meta_table[name](*args, **kwargs))
        if _is_view(func):
            return self._view(func, args, kwargs)
        raise UnsupportedFakeTensorException(f"{func} has no meta function: fake tensors cannot run it")

    def _fakeify(self, x):
        return self.from_tensor(x) if isinstance(x, Tensor) else x

    def _inplace(self, name, args, kwargs):
        """``x.add_(y)`` is ``x``: check that the out-of-place result would have x's shape."""
        self_ = args[0]
        base = name.replace("_.", ".").rstrip("_")
        if base in meta_table:
            shape = meta_table[base](*args, **kwargs).shape
        elif name == "aten::copy_":
            shape = _broadcast_to(args[1], self_)
        else:                   # fill_, zero_: the target's shape by definition
            shape = tuple(self_.shape)
        if tuple(shape) != tuple(self_.shape):
            raise RuntimeError(f"output with shape {list(self_.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        return self_

    def _view(self, func, args, kwargs):
        """A view kernel computes metadata only: run the backend's kernel on the fakes themselves."""
        first = next(t for t in tree_flatten((args, kwargs)) if isinstance(t, Tensor))
        keys = DispatchKeySet([backend_key_for(first.device.type)])
        out = func.redispatch(keys, *args, **kwargs)
        return tree_map(lambda t: FakeTensor._from_impl(t._impl) if isinstance(t, Tensor) else t, out)


def _broadcast_to(src, target):
    return broadcast_shapes(tuple(src.shape), tuple(target.shape))


def _wrap(meta):
    if isinstance(meta, tuple) and not isinstance(meta, TensorMeta):
        return tuple(_wrap(m) for m in meta)
    return FakeTensor.from_meta(meta)


def _writes_first_argument(func):
    """In-place ops annotate ``self`` as written: ``Tensor(a!) self``."""
    args = func._schema.arguments.flat_positional
    return bool(args) and args[0].annotation is not None and args[0].annotation.is_write


def _is_view(func):
    """A view returns an alias of an input: ``-> Tensor(a)``."""
    return any(r.annotation is not None and not r.annotation.is_write for r in func._schema.returns)
