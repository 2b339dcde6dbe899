"""Factories: tensors from sizes, values and ranges (``aten/src/ATen/native/TensorFactories.cpp``).

Values are computed on the host with NumPy and copied to the device: a factory's work is
allocation and layout, which is what the course looks at.
"""
import math

import numpy as np

from ...c10 import scalar_type as st
from ...c10.device import as_device
from ...c10.storage import UntypedStorage
from ...c10.tensor_impl import TensorImpl, contiguous_strides, required_storage_elements
from ... import _tensor
from ..tensor_iterator import output_layout

Tensor = _tensor.Tensor


def _sizes(size):
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    dtype = dtype or st.get_default_dtype()
    device = as_device(device)
    if device.type == "cuda":
        from ... import cuda
        cuda._announce_simulator()
    nbytes = required_storage_elements(size, stride, 0) * dtype.itemsize
    t = Tensor._from_impl(TensorImpl(UntypedStorage(nbytes, device), size, stride, 0, dtype))
    return t.requires_grad_(requires_grad) if requires_grad else t


def empty(*size, dtype=None, device=None, requires_grad=False):
    size = _sizes(size)
    return empty_strided(size, contiguous_strides(size), dtype=dtype, device=device, requires_grad=requires_grad)


def from_host(array, dtype, device):
    """A contiguous tensor holding a NumPy array's values, cast to ``dtype``, on ``device``."""
    src = Tensor._from_impl(_host_impl(np.array(array, order="C", copy=None)))
    out = empty(array.shape, dtype=dtype, device=device)
    return out.copy_(src)


def _host_impl(array):
    """A TensorImpl viewing a C-contiguous NumPy array without copying (float16 included)."""
    from ...c10.storage import bytes_of
    dtype = st.from_numpy_dtype(array.dtype)
    storage = UntypedStorage(array.nbytes, "cpu", data=bytes_of(array) if array.size else np.empty(0, np.uint8))
    return TensorImpl(storage, array.shape, contiguous_strides(array.shape), 0, dtype)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    dtype = dtype or _infer_scalar_dtype(fill_value)
    out = empty(_sizes((size,)) if isinstance(size, int) else tuple(size), dtype=dtype, device=device)
    out.fill_(fill_value)
    return out.requires_grad_(requires_grad) if requires_grad else out


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return full(_sizes(size), 0, dtype=dtype or st.get_default_dtype(), device=device, requires_grad=requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return full(_sizes(size), 1, dtype=dtype or st.get_default_dtype(), device=device, requires_grad=requires_grad)


def _infer_scalar_dtype(value):
    d = st.scalar_dtype(value)
    return st.get_default_dtype() if d.is_floating_point else d


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = st.get_default_dtype() if is_float else st.int64
    n = math.ceil((end - start) / step)
    # torch computes start + i * step in double (its accumulate type) and casts once.
    values = start + np.arange(n, dtype=np.float64) * step if dtype.is_floating_point else \
        start + np.arange(n, dtype=np.int64) * int(step)
    out = from_host(values, dtype, device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """torch's CPU algorithm: the first half counts up from ``start``, the second down from ``end``."""
    dtype = dtype or st.get_default_dtype()
    compute = np.float64 if dtype is st.float64 else np.float32
    if steps == 1:
        values = np.array([start], dtype=compute)
    else:
        start_, end_ = compute(start), compute(end)
        step = (end_ - start_) / compute(steps - 1)
        idx = np.arange(steps)
        half = steps // 2
        values = np.where(idx < half, start_ + step * idx.astype(compute),
                          end_ - step * (steps - idx - 1).astype(compute)).astype(compute)
    out = from_host(values, dtype, device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    out = from_host(np.eye(n, n if m is None else m), dtype or st.get_default_dtype(), device)
    return out.requires_grad_(requires_grad) if requires_grad else out


class Generator:
    """The random state behind ``rand``/``randn`` (a NumPy PCG64; values differ from torch's)."""

    def __init__(self, seed=0):
        self.manual_seed(seed)

    def manual_seed(self, seed):
        self.seed = int(seed)
        self.bit_generator = np.random.Generator(np.random.PCG64(self.seed))
        return self

    def initial_seed(self):
        return self.seed


default_generator = Generator(0)


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def rand(*size, dtype=None, device=None, generator=None, requires_grad=False):
    g = (generator or default_generator).bit_generator
    out = from_host(g.random(_sizes(size)), dtype or st.get_default_dtype(), device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def randn(*size, dtype=None, device=None, generator=None, requires_grad=False):
    g = (generator or default_generator).bit_generator
    out = from_host(g.standard_normal(_sizes(size)), dtype or st.get_default_dtype(), device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def empty_like(x, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """``preserve_format``: keep a dense input's strides, else infer dense strides from them."""
    dtype, device = dtype or x.dtype, as_device(device) if device is not None else x.device
    if memory_format == "contiguous":
        strides = contiguous_strides(x.shape)
    elif x._impl.is_non_overlapping_and_dense():
        strides = x.stride()
    else:
        strides = output_layout([x._impl], x.shape)
    return empty_strided(x.shape, strides, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(x, fill_value, *, dtype=None, device=None, requires_grad=False):
    out = empty_like(x, dtype=dtype, device=device)
    out.fill_(fill_value)
    return out.requires_grad_(requires_grad) if requires_grad else out


def zeros_like(x, **kw):
    return full_like(x, 0, **kw)


def ones_like(x, **kw):
    return full_like(x, 1, **kw)


def rand_like(x, *, dtype=None, device=None):
    return rand(x.shape, dtype=dtype or x.dtype, device=device or x.device)


def randn_like(x, *, dtype=None, device=None):
    return randn(x.shape, dtype=dtype or x.dtype, device=device or x.device)


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor (always a copy) from nested lists, a scalar, a NumPy array or a tensor."""
    if isinstance(data, Tensor):
        data = data.detach().cpu().numpy() if data.dtype is not st.bfloat16 else data.float().numpy()
    if isinstance(data, np.ndarray):
        array = data
        inferred = st.from_numpy_dtype(array.dtype)
    else:
        array, inferred = _from_python(data)
    out = from_host(array, dtype or inferred, device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _from_python(data):
    """Nested lists -> (float64/int64/bool array, the dtype torch would infer)."""
    def scalars(x):
        if isinstance(x, (list, tuple)):
            for item in x:
                yield from scalars(item)
        else:
            yield x
    flat = list(scalars(data))
    for v in flat:
        if not isinstance(v, (bool, int, float, np.generic)):
            raise TypeError(f"Could not infer dtype of {type(v).__name__}")
    if flat and all(isinstance(v, (bool, np.bool_)) for v in flat):
        return np.array(data, dtype=np.bool_), st.bool_
    if all(isinstance(v, (bool, int, np.integer)) for v in flat) and flat:
        return np.array(data, dtype=np.int64), st.int64
    array = np.array(data, dtype=np.float64)
    if array.dtype == object:
        raise ValueError("expected sequence of equal-length lists")
    return array, st.get_default_dtype()


def from_numpy(array):
    """A tensor sharing ``array``'s memory (and keeping it alive), strides in elements."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    from ...c10.storage import bytes_of
    dtype = st.from_numpy_dtype(array.dtype)
    data = bytes_of(array)
    strides = tuple(s // array.itemsize for s in array.strides)
    storage = UntypedStorage(len(data), "cpu", data=data)
    return Tensor._from_impl(TensorImpl(storage, array.shape, strides, 0, dtype))
