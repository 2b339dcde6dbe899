"""Factories: tensors from sizes, values and ranges (``aten/src/ATen/native/TensorFactories.cpp``).

Values are computed on the host with NumPy and copied to the device: a factory's work is
allocation and layout, which is what the course looks at.
"""
import math

import numpy as np

from ...c10 import scalar_type as st
from ...c10.device import as_device
from ...c10.storage import UntypedStorage
from ...c10.tensor_impl import TensorImpl, check_sizes_and_strides, contiguous_strides, required_storage_elements
from ... import _tensor
from ...c10.local_dispatch_key_set import below_ad_inplace_or_view
from ..tensor_iterator import output_layout
from .cpu.range_factories import linspace_fill

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
    check_sizes_and_strides(size, stride)   # before allocating: negative ones would ask for negative bytes
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
    with below_ad_inplace_or_view():   # a factory's own fill is not a write: the result is at version 0
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
    with below_ad_inplace_or_view():
        out.fill_(fill_value)
    return out.requires_grad_(requires_grad) if requires_grad else out


def zeros(*size, dtype=None, device=None, requires_grad=False):
    if any(n < 0 for n in _sizes(size)):     # zeros checks before allocating, with its own words
        raise RuntimeError("zeros: Dimension size must be non-negative.")
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
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
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
    """torch's CPU algorithm: the first half counts up from ``start``, the second down from ``end``.

    Floats are stepped in their own type (float16 and bfloat16 in float32 here, an
    approximation); integer dtypes truncate ``start`` and ``end``, step in double and truncate
    each value, as torch's kernel does.
    """
    dtype = dtype or st.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype.is_floating_point:
        compute = np.float64 if dtype is st.float64 else np.float32
        start_, end_ = compute(start), compute(end)
    else:
        compute = np.float64
        start_, end_ = compute(int(start)), compute(int(end))
    values = np.full(steps, start_, dtype=compute)
    if steps > 1:
        step = (end_ - start_) / compute(steps - 1)
        linspace_fill(values, start_, end_, step, np.arange(steps).astype(compute))
    out = from_host(values, dtype, device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    for name, value in (("n", n), ("m", m)):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
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


def _check_floating(dtype, kernel):
    """rand/randn fill only floating dtypes; torch's dispatch macro names the kernel that refused."""
    if not dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dtype.torch_name}\'')


def _fill_random(out, values):
    """Copy host random ``values`` into the fresh ``out`` (a factory's fill: not counted as a write)."""
    with below_ad_inplace_or_view():
        return out.copy_(Tensor._from_impl(_host_impl(values)))


def rand(*size, dtype=None, device=None, generator=None, requires_grad=False):
    dtype = dtype or st.get_default_dtype()
    _check_floating(dtype, "check_uniform_bounds")
    out = empty(*size, dtype=dtype, device=device)      # as torch: allocate (checks the sizes), then fill
    g = (generator or default_generator).bit_generator
    out = _fill_random(out, g.random(out.shape))
    return out.requires_grad_(requires_grad) if requires_grad else out


def randn(*size, dtype=None, device=None, generator=None, requires_grad=False):
    dtype = dtype or st.get_default_dtype()
    _check_floating(dtype, "normal_kernel_cpu")
    out = empty(*size, dtype=dtype, device=device)
    g = (generator or default_generator).bit_generator
    out = _fill_random(out, g.standard_normal(out.shape))
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
    with below_ad_inplace_or_view():
        out.fill_(fill_value)
    return out.requires_grad_(requires_grad) if requires_grad else out


def zeros_like(x, **kw):
    return full_like(x, 0, **kw)


def ones_like(x, **kw):
    return full_like(x, 1, **kw)


def _random_like(make, x, dtype, device):
    """Like torch (``empty_like`` then fill): the result takes ``x``'s layout."""
    out = empty_like(x, dtype=dtype, device=device)
    values = make(x.shape, dtype=out.dtype, device=out.device)
    with below_ad_inplace_or_view():
        return out.copy_(values)


def rand_like(x, *, dtype=None, device=None):
    return _random_like(rand, x, dtype, device)


def randn_like(x, *, dtype=None, device=None):
    return _random_like(randn, x, dtype, device)


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor (always a copy) from nested lists, a scalar, a NumPy array or a tensor.

    An array or a tensor is copied the way torch does it (wrap it, then ``.to(copy=True)``): the
    copy keeps a dense source's strides, a transposed array stays transposed.
    """
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(data, (Tensor, np.ndarray)):
        source = from_numpy(data) if isinstance(data, np.ndarray) else data.detach()
        out = empty_like(source, dtype=dtype or source.dtype, device=device)
        with below_ad_inplace_or_view():
            out.copy_(source)
    else:
        inferred = infer_scalar_type(data)
        holder = np.bool_ if inferred is st.bool_ else np.float64 if inferred.is_floating_point else np.int64
        out = from_host(np.array(data, dtype=holder), dtype or inferred, device)   # holder: exact for ``inferred``
    return out.requires_grad_(requires_grad) if requires_grad else out


def infer_scalar_type(obj):
    """The dtype ``torch.tensor(obj)`` picks (``infer_scalar_type`` in ``torch/csrc/utils/tensor_new.cpp``).

    Python bools, ints and floats give bool, int64 and the default dtype; NumPy scalars and arrays
    keep their own dtype; a sequence promotes over its items, and an empty one is the default dtype.
    """
    if isinstance(obj, bool):
        return st.bool_
    if isinstance(obj, (np.generic, np.ndarray)):
        return st.from_numpy_dtype(obj.dtype)
    if isinstance(obj, int):
        return st.int64
    if isinstance(obj, float):
        return st.get_default_dtype()
    if isinstance(obj, Tensor):
        return obj.dtype
    if isinstance(obj, str):
        raise ValueError("too many dimensions 'str'")
    if isinstance(obj, (list, tuple)):
        result = None
        for item in obj:
            d = infer_scalar_type(item)
            result = d if result is None else st.promote_types(result, d)
        return result or st.get_default_dtype()
    raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}")


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
