"""Factories: tensors from sizes, values and ranges (``aten/src/ATen/native/TensorFactories.cpp``).

Each factory is an operator declared in ``native_functions.yaml``. ``empty.memory_format`` and
``empty_strided`` are backend kernels: they allocate. The others are
``CompositeExplicitAutograd`` kernels made of operators, called through the dispatcher as
torch's are (``zeros`` is ``empty`` then ``zero_``, ``full`` is ``empty`` then ``fill_``,
``zeros_like`` is ``empty_like`` then ``zero_``), so a profiler sees the same nesting.

Kernels that allocate their outputs (elementwise, reductions, copies, ...) call :func:`empty` and
:func:`empty_strided` directly, as torch's call ``at::detail::empty_cpu``: no dispatch on the hot path.

``requires_grad`` is no argument of these operators: the Python binding handles it
(``autograd/variable_factories.py``). Values of ranges and random draws are computed on the host
with NumPy and copied to the device: a factory's work is allocation and layout, which is what
the course looks at. The random factories (``rand``, ``randn``, ``randint``, ``randperm``, ...)
live with the distributions, in ``distributions.py``.
"""
import ctypes
import math
import warnings

import numpy as np

from ..._tensor_base import TensorBase
from ...c10 import generator
from ...c10 import scalar_type as st
from ...c10.device import _CPU
from ...c10.dispatch_key import DispatchKey, DispatchKeySet
from ...c10.grad_mode import GradMode
from ...c10.local_dispatch_key_set import below_ad_inplace_or_view, exclude_keys
from ...c10.memory_format import (
    channels_last,
    channels_last_3d,
    channels_last_strides,
    contiguous_format,
    preserve_format,
)
from ...c10.storage import UntypedStorage, bytes_of
from ...c10.sym import is_symbolic
from ...c10.tensor_impl import TensorImpl, check_size_nonnegative, contiguous_strides
from .. import dispatcher
from ..empty_tensor import check_contiguous_nbytes, empty_strided
from ..tensor_iterator import output_layout
from .cpu.range_factories import linspace_fill, logspace_fill
from .dispatch_stub import fma_contracted, refuse_unlisted_dtypes


# ---------------------------------------------------------------------- allocation (backend kernels)
# ``empty_strided``'s kernel is ``aten/empty_tensor.py``'s, which TensorIterator also calls.
def empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """``empty.memory_format``'s CPU and CUDA kernel (torch's ``empty_cpu``, ``empty_cuda``)."""
    size = tuple(size)
    check_size_nonnegative(size)
    check_contiguous_nbytes(size, dtype or st.get_default_dtype())
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")   # torch's check in empty_cpu
    strides = contiguous_strides(size) if memory_format in (None, contiguous_format) else \
        channels_last_strides(size, memory_format)
    return empty_strided(size, strides, dtype=dtype, device=device, pin_memory=pin_memory)


def _empty(size, dtype, layout, device, pin_memory):
    """``at::empty(size, options)`` from a composite kernel: through the dispatcher."""
    return dispatcher.call("empty.memory_format", size, dtype=dtype, layout=layout, device=device,
                           pin_memory=pin_memory)


# ---------------------------------------------------------------------- filled (composite kernels)
def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    if any(n < 0 for n in size):     # zeros checks before allocating, with its own words
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return dispatcher.call("zero_", _empty(size, dtype, layout, device, pin_memory))


def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return dispatcher.call("fill_.Scalar", _empty(size, dtype, layout, device, pin_memory), 1)


def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    """The dtype, if not given, is the fill value's: bool, int64, the default float dtype or the
    default complex dtype."""
    out = _empty(size, dtype or _infer_scalar_dtype(fill_value), layout, device, pin_memory)
    return dispatcher.call("fill_.Scalar", out, fill_value)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    """A 0-dim tensor holding ``s``, in the default dtype unless given (a Scalar made a Tensor
    inside a composite, as ``where``'s Scalar overloads do)."""
    return dispatcher.call("fill_.Scalar", _empty([], dtype or st.get_default_dtype(), layout, device, pin_memory), s)


def _infer_scalar_dtype(value):
    d = st.scalar_dtype(value)
    if d.is_complex:
        return st.default_complex_dtype()
    return st.get_default_dtype() if d.is_floating_point else d


# ---------------------------------------------------------------------- ranges (composite kernels)
def _copy_from_host(out, values):
    """``out.copy_`` of a NumPy array's values (torch's range and random kernels write theirs in place)."""
    return dispatcher.call("copy_", out, TensorBase._from_impl(_host_impl(np.array(values, order="C", copy=None))))


def _from_host(values, dtype, layout, device, pin_memory):
    """A composite's fresh tensor holding a NumPy array's values: ``empty``, then ``copy_``."""
    return _copy_from_host(_empty(values.shape, dtype, layout, device, pin_memory), values)


def from_host(values, dtype, device):
    """The same for a kernel: allocated directly, and filled below ADInplaceOrView (its own fill of
    a fresh tensor is not a write anyone could observe)."""
    with below_ad_inplace_or_view():
        return _copy_from_host(empty(values.shape, dtype=dtype, device=device), values)


def arange(start, end=None, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    """The kernel of ``arange``, ``arange.start`` and ``arange.start_step`` (only ``end`` given: ``start`` is 0)."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = st.get_default_dtype() if is_float else st.int64
    refuse_unlisted_dtypes("arange_cpu", dtype)     # before any check
    # torch's kernels list the real numbers only; its meta function lays any dtype out
    if (dtype is st.bool_ or dtype.is_complex) and getattr(device, "type", device) != "meta":
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dtype.torch_name}\'')
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is st.int64:   # the bounds read as int64 (``start.to<int64_t>()``): 0.5 is 0, 2**63 refused
        start, end, step = (int(st.checked_convert(v, st.int64)) for v in (start, end, step))
        if step == 0:       # the kernel's own check, a ValueError
            raise ValueError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = _arange_size(start, end, step, dtype)
    out = _empty((n,), dtype, layout, device, pin_memory)      # a size too large fails here, as torch's
    # torch computes start + i * step in double (its accumulate type) and casts once.
    values = start + np.arange(n, dtype=np.float64) * step if dtype.is_floating_point else \
        start + np.arange(n, dtype=np.int64) * int(step)
    return _copy_from_host(out, values)


def _arange_size(start, end, step, dtype):
    """``arange_out``'s element count: in double, but for int64 in int64 arithmetic (wrapping as C
    does: ``arange(-2**63, 2**63 - 1, 2**62)`` is empty), refused past int64."""
    if dtype is st.int64:
        sign = 1 if step > 0 else -1
        span = (end - start + step - sign + 2**63) % 2**64 - 2**63
        size = abs(span) // abs(step) * (1 if (span >= 0) == (step > 0) else -1)    # C's truncation
    else:
        size = math.ceil((float(end) - float(start)) / float(step))
    if not 0 <= size <= 2**63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    return size


def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    """torch's CPU algorithm: the first half counts up from ``start``, the second down from ``end``.

    Floats are stepped in their own type (float16 and bfloat16 in float32 here, an
    approximation); integer dtypes truncate ``start`` and ``end``, step in double and truncate
    each value, as torch's kernel does.
    """
    # a complex start or end infers the default dtype's complex type, which no real dtype takes
    inferred = st.to_complex(st.get_default_dtype()) if complex in (type(start), type(end)) else None
    if inferred is not None and dtype is not None and not dtype.is_complex:
        raise RuntimeError(f"torch.linspace(): inferred dtype {st.type_meta_name(inferred)} can't be safely cast to "
                           f"passed dtype {dtype.torch_name}")
    dtype = dtype or inferred or st.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps:       # an empty one is made without the kernel
        refuse_unlisted_dtypes("linspace_cpu", dtype)
        if dtype is st.bool_:
            raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
    if dtype.is_complex:
        # c10::complex's step times an index scales both parts by the index, so each part is
        # the real linspace of the parts, in the part's own type
        part = np.float64 if dtype is st.complex128 else np.float32
        values = np.empty(steps, dtype=np.complex128 if dtype is st.complex128 else np.complex64)
        for name in ("real", "imag"):
            start_, end_ = part(getattr(complex(start), name)), part(getattr(complex(end), name))
            line = np.full(steps, start_, dtype=part)
            if steps > 1:
                linspace_fill(line, start_, end_, (end_ - start_) / part(steps - 1), np.arange(steps).astype(part),
                              fma_contracted())
            setattr(values, name, line)
        return _from_host(values, dtype, layout, device, pin_memory)
    if dtype.is_floating_point:
        compute = np.float64 if dtype is st.float64 else np.float32
        start_, end_ = compute(start), compute(end)
    else:       # the kernel's ``start.to<scalar_t>()``, checked (a float out of range refused, an int wraps)
        compute = np.float64
        start_, end_ = (compute(int(st.checked_convert(v, dtype) if steps else v)) for v in (start, end))
    values = np.full(steps, start_, dtype=compute)
    if steps > 1:
        step = (end_ - start_) / compute(steps - 1)
        linspace_fill(values, start_, end_, step, np.arange(steps).astype(compute), fma_contracted())
    return _from_host(values, dtype, layout, device, pin_memory)


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    """torch's CPU algorithm (``logspace_out``): ``base`` to the power of a linspace made as
    ``linspace``'s, counting up from ``start`` and down from ``end``. ``start`` and ``end`` are
    first converted to the result's dtype (float16 and bfloat16 round as float32 here, an
    approximation); a floating result computes the exponents and powers in double, an integer
    one in float, then truncates. One step is ``base ** start`` in double."""
    dtype = dtype or st.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 1:
        return _from_host(np.array([float(base) ** float(start)]), dtype, layout, device, pin_memory)
    if dtype.is_floating_point:     # ``scalar_t`` start and end, their difference; double from there
        scalar = np.float64 if dtype is st.float64 else np.float32
        compute, start_, end_ = np.float64, scalar(start), scalar(end)
        step = np.float64(end_ - start_) / (steps - 1)
    else:                           # integer start and end; float from there
        compute, start_, end_ = np.float32, int(start), int(end)
        step = np.float32(end_ - start_) / np.float32(steps - 1)
    values = np.empty(steps, dtype=compute)
    logspace_fill(values, compute(start_), compute(end_), compute(step), compute(base),
                  np.arange(steps).astype(compute))
    return _from_host(values, dtype, layout, device, pin_memory)


# ---- linspace and logspace with 0-dim tensor ends (``RangeFactories.cpp``'s Tensor overloads):
# each end read as a number (``item()``), then the Scalar operator.
def _tensor_ends(name, start, end):
    """The ends as numbers, after torch's check that every tensor end has no dimensions."""
    tensors = [(what, t) for what, t in (("start", start), ("end", end)) if isinstance(t, TensorBase)]
    if any(t.dim() != 0 for _, t in tensors):
        got = " and ".join(f"{what} with {t.dim()} dimension(s)" for what, t in tensors)
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {got}.")
    return [t.item() if isinstance(t, TensorBase) else t for t in (start, end)]


def linspace_tensor(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    """``linspace.Tensor_Tensor``, ``.Tensor_Scalar`` and ``.Scalar_Tensor``."""
    start, end = _tensor_ends("linspace", start, end)
    return dispatcher.call("linspace", start, end, steps, dtype=dtype, layout=layout, device=device,
                           pin_memory=pin_memory)


def logspace_tensor(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    """``logspace.Tensor_Tensor``, ``.Tensor_Scalar`` and ``.Scalar_Tensor``."""
    start, end = _tensor_ends("logspace", start, end)
    return dispatcher.call("logspace", start, end, steps, base, dtype=dtype, layout=layout, device=device,
                           pin_memory=pin_memory)


def eye(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=None):
    """The kernel of ``eye`` and ``eye.m`` (no ``m``: square)."""
    for name, value in (("n", n), ("m", m)):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    return _from_host(np.eye(n, n if m is None else m), dtype or st.get_default_dtype(), layout, device, pin_memory)


def _triangle_indices(name, numpy_indices, row, col, offset, dtype, layout, device, pin_memory):
    """``tril_indices_cpu`` / ``triu_indices_cpu`` (``TensorFactories.cpp``): a 2 x N tensor of the
    coordinates in the triangle, row by row, in an index dtype (int32 or int64)."""
    for what, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{what} must be non-negative, got{value}")
    dtype = st.int64 if dtype is None else dtype
    if dtype not in (st.int32, st.int64):
        raise NotImplementedError(f'"{name}" not implemented for \'{dtype.torch_name}\'')
    values = np.array(numpy_indices(row, offset, col), dtype=np.int64).reshape(2, -1)
    return _from_host(values, dtype, layout, device, pin_memory)


def tril_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype, layout, device, pin_memory)


def triu_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype, layout, device, pin_memory)


# ---------------------------------------------------------------------- *_like (composite kernels)
def like_strides(x, memory_format=None):
    """The strides ``empty_like`` gives: those of ``memory_format`` if one is asked, else
    (``preserve_format``) a dense input's own strides, else dense strides in the order of the input's."""
    if memory_format is contiguous_format:
        return contiguous_strides(x.shape)
    if memory_format in (channels_last, channels_last_3d):
        return channels_last_strides(tuple(x.shape), memory_format)
    if x._impl.is_non_overlapping_and_dense():
        return x.stride()
    return output_layout([x._impl], x.shape)


def empty_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """``at::empty_strided`` with the input's layout (``at::empty`` when contiguous is asked)."""
    dtype, device = dtype or self.dtype, device if device is not None else self.device
    if memory_format is contiguous_format:
        return _empty(self.shape, dtype, layout, device, pin_memory)
    return dispatcher.call("empty_strided", self.shape, like_strides(self, memory_format), dtype=dtype, layout=layout,
                           device=device, pin_memory=pin_memory)


def _empty_like(self, dtype, layout, device, pin_memory, memory_format):
    """``at::empty_like`` from a composite kernel: through the dispatcher."""
    return dispatcher.call("empty_like", self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                           memory_format=memory_format)


def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return dispatcher.call("zero_", _empty_like(self, dtype, layout, device, pin_memory, memory_format))


def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return full_like(self, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                     memory_format=memory_format)


def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    out = _empty_like(self, dtype, layout, device, pin_memory, memory_format)
    return dispatcher.call("fill_.Scalar", out, fill_value)


# ---------------------------------------------------------------------- torch.tensor
def lift_fresh(self):
    """``lift_fresh``: marks a tensor just made from Python data. A no-op for a plain tensor; it
    exists so that a TorchDispatchMode (functionalization, fake tensors) sees the new constant."""
    return self


def lift_fresh_copy(self):
    """``lift_fresh_copy``: ``lift_fresh`` followed by a contiguous copy, as torchgen writes the
    kernel of every ``view_copy`` operator. ``make_fx`` records it where ``torch.tensor`` calls
    ``lift_fresh`` (``proxy_tensor.py``), so that each run of the graph gets its own tensor."""
    return dispatcher.call("clone", dispatcher.call("lift_fresh", self), memory_format=contiguous_format)


_NOT_PYTHON = DispatchKeySet([DispatchKey.Python, DispatchKey.PythonTLSSnapshot])


def check_dtype_argument(name, dtype):
    """The argument parser's reading of a ``dtype`` given to ``tensor``/``as_tensor``, which parse
    their arguments before reading the data: a dtype, None, or a Python type (``float``)."""
    if dtype is None or isinstance(dtype, st.dtype):
        return dtype
    if isinstance(dtype, type) and dtype in st.PYTHON_TYPES:
        return st.PYTHON_TYPES[dtype]
    from ..._python_arg_parser import _type_name  # the parser imports this module: only when refusing
    raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not {_type_name(dtype)}")


def check_flag_argument(fn_name, name, value):
    """torch's argument parser takes a Python bool for a ``bool`` keyword argument, not a number
    or None: ``tensor([1.], requires_grad=1)`` is a TypeError."""
    if not isinstance(value, bool):
        raise TypeError(f"{fn_name}(): argument '{name}' must be bool, not {type(value).__name__}")


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """``torch.tensor`` (``internal_new_from_data`` in ``torch/csrc/utils/tensor_new.cpp``): a new tensor
    (always a copy) from nested lists, a scalar, a NumPy array or a tensor.

    Not an operator: it is built below ADInplaceOrView and out of Python modes' sight, then handed to
    ``lift_fresh`` through the dispatcher -- the one operator a TorchDispatchMode sees, as in torch.
    An array or a tensor is copied the way torch does it (wrap it, then ``.to(copy=True)``): the copy
    keeps a dense source's strides, a transposed array stays transposed.
    """
    check_flag_argument("tensor", "requires_grad", requires_grad)
    dtype = check_dtype_argument("tensor", dtype)
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    with below_ad_inplace_or_view(), exclude_keys(_NOT_PYTHON):
        if isinstance(data, (TensorBase, np.ndarray)):
            source = from_numpy(data) if isinstance(data, np.ndarray) else data.detach()
            out = empty_like(source, dtype=dtype or source.dtype, device=device).copy_(source)
        else:
            sizes = _nested_sizes(data)
            if dtype is not None:      # torch stores each value as the dtype asks, without inferring
                _check_no_strings(data, dtype)
            inferred = infer_scalar_type(data)
            _check_nesting(data, sizes, 0, dtype or inferred)
            _check_real_target(inferred, dtype)
            values = _host_values(data, inferred, dtype or inferred)
            _check_fits(values, dtype or inferred)
            out = _from_host(values, dtype or inferred, None, device, None)
    out = dispatcher.call("lift_fresh", out)
    if requires_grad and not (out.dtype.is_floating_point or out.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return out.requires_grad_(requires_grad) if requires_grad else out


def _host_values(data, inferred, target):
    """The Python numbers as a NumPy array in a holder exact for what ``store_scalar`` unpacks: a
    float or bool target unpacks each number as a double or a truth value (``tensor(2**63,
    dtype=float32)`` is 9.2234e+18), an integral one as a long long, which a Python int beyond
    int64 overflows."""
    holder = (np.bool_ if inferred is st.bool_ else np.complex128 if inferred.is_complex
              else np.float64 if inferred.is_floating_point else np.int64)
    if holder is np.int64 and target.category != st.INTEGRAL:
        holder = np.bool_ if target is st.bool_ else np.float64
    if holder is np.int64 and target is st.uint64:      # unpacked as an unsigned long long
        holder = np.uint64
    enabled = GradMode.is_enabled()
    GradMode.set_enabled(False)     # tensors among the values are read as numbers, as torch's item() reads them
    try:
        return np.array(data, dtype=holder)
    except OverflowError:
        if holder is np.uint64:
            negative = bool((np.array(data, dtype=object) < 0).any())
            raise OverflowError("can't convert negative int to unsigned" if negative else "int too big to convert") \
                from None
        if holder is not np.int64:
            raise                            # "int too large to convert to float", as Python says
        raise ValueError("Overflow when unpacking long long") from None
    finally:
        GradMode.set_enabled(enabled)


def _is_sequence(obj):
    return isinstance(obj, (list, tuple)) or isinstance(obj, TensorBase) and obj.dim() > 0


def _nested_sizes(data):
    """The sizes torch reads off the first element at each depth (``compute_sizes``)."""
    sizes = []
    while _is_sequence(data):
        sizes.append(len(data))
        if not len(data):
            break
        data = data[0]
    if isinstance(data, str) and sizes:     # a string is a sequence to compute_sizes, one too deep
        raise ValueError("too many dimensions 'str'")
    return sizes


def _check_nesting(data, sizes, dim, target):
    """Every sequence as long as the first one at its depth (``recursive_store``'s checks), and
    every number one that ``store_scalar`` can unpack as ``target``."""
    if dim == len(sizes):
        if isinstance(data, TensorBase) and data.numel() != 1:     # read with item(), as torch reads it
            raise ValueError("only one element tensors can be converted to Python scalars")
        if _is_sequence(data):
            raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as an integer")
        if target.category == st.INTEGRAL:
            _check_integer_leaf(data, target)
        return
    if not _is_sequence(data):
        raise TypeError("not a sequence")
    if len(data) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(data)})")
    for item in data:
        _check_nesting(item, sizes, dim + 1, target)


def _check_integer_leaf(value, target):
    """``store_scalar`` into an integer type: a uint64 takes Python ints only (``unpackIntegral``);
    the others take a Python float too (truncated), and read anything else as an index
    (``__index__``), which a NumPy float or a floating tensor refuses."""
    if isinstance(value, int):
        return
    if target is st.uint64:
        raise TypeError("an integer is required")
    if isinstance(value, float):
        return
    if isinstance(value, np.floating):
        raise TypeError(f"'numpy.{type(value).__name__}' object cannot be interpreted as an integer")
    if isinstance(value, TensorBase) and value.dtype.category > st.INTEGRAL:
        raise TypeError("only integer tensors of a single element can be converted to an index")


def _check_no_strings(data, dtype):
    """A string among the values: Python refuses to read it as the dtype's number."""
    if isinstance(data, (list, tuple)):
        for item in data:
            _check_no_strings(item, dtype)
    elif isinstance(data, str):
        raise TypeError("must be real number, not str" if dtype.is_floating_point or dtype.is_complex
                        else "'str' object cannot be interpreted as an integer")


def _check_real_target(inferred, dtype):
    """A Python complex stored as a real dtype: torch's ``store_scalar`` unpacks it as a double or
    an integer, which Python refuses (bool takes its truth value)."""
    if not inferred.is_complex or dtype is None or dtype.is_complex or dtype is st.bool_:
        return
    if dtype.is_floating_point:
        raise TypeError("must be real number, not complex")
    raise TypeError("'complex' object cannot be interpreted as an integer")


def _check_fits(values, dtype):
    """Python numbers stored as an integral dtype must fit it (``c10::checked_convert``); the
    extremes decide. A float or complex dtype takes anything (out of range is inf)."""
    if values.size and dtype.category == st.INTEGRAL:
        try:
            st.checked_convert(values.min().item(), dtype)
            st.checked_convert(values.max().item(), dtype)
        except RuntimeError:     # the same check; torch.tensor's message names the dtype its own way
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow") from None


def infer_scalar_type(obj):
    """The dtype ``torch.tensor(obj)`` picks (``infer_scalar_type`` in ``torch/csrc/utils/tensor_new.cpp``).

    Python bools, ints, floats and complex numbers give bool, int64, the default dtype and the
    default complex dtype (complex64, or complex128 under float64); NumPy scalars and arrays
    keep their own dtype; a sequence promotes over its items, and an empty one is the default dtype.
    """
    if isinstance(obj, bool):
        return st.bool_
    if isinstance(obj, (np.generic, np.ndarray)):
        return _from_numpy_dtype(obj.dtype)
    if isinstance(obj, int):
        return st.int64
    if isinstance(obj, float):
        return st.get_default_dtype()
    if isinstance(obj, complex):
        return st.default_complex_dtype()
    if isinstance(obj, TensorBase):
        return obj.dtype
    if isinstance(obj, str):
        raise ValueError("too many dimensions 'str'")
    if isinstance(obj, (list, tuple)):
        if any(isinstance(item, str) for item in obj):
            raise TypeError("new(): invalid data type 'str'")
        result = None
        for item in obj:
            d = infer_scalar_type(item)
            result = d if result is None else st.promote_types(result, d)
        return result or st.get_default_dtype()
    raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}")


def _from_numpy_dtype(np_dtype):
    """A NumPy dtype as a torch dtype, byte-swapped ones refused first (``tensor_from_numpy``)."""
    if not np_dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")
    return st.from_numpy_dtype(np_dtype)


# ---------------------------------------------------------------------- host memory
def wrap_scalar(value):
    """A Python number as a 0-dim CPU tensor marked as a wrapped number (``scalar_to_tensor``).

    Made directly over a NumPy scalar's bytes, not through the dispatcher: wrapping an argument
    is part of the call, not an operator of its own.
    """
    if isinstance(value, TensorBase):
        return value
    kind = type(value)
    if kind is float or kind is int and -2**63 <= value < 2**63:   # ``x * 2``, ``x + 0.5``: the usual numbers
        impl = _host_impl(np.array(value, dtype=_FLOAT64 if kind is float else _INT64))
        impl.is_wrapped_number = True
        return TensorBase._from_impl(impl)
    if is_symbolic(value):
        # a number read from data while tracing (``x * x.sum().item()``): no bytes to hold, so a
        # storage-less wrapped number that remembers the symbol, as torch's ``item_memo``
        impl = TensorImpl.without_storage((), (), 0, st.scalar_dtype(value), _CPU)
        impl.storage.symbol = value
        impl.is_wrapped_number = True
        return TensorBase._from_impl(impl)
    st.unpack_int_scalar(value)
    if type(value) is int and value >= 2**63:
        impl = _host_impl(np.array(value - 2**64, dtype=np.int64))
        impl.is_wrapped_number = st.WRAPPED_UINT64
    else:
        impl = _host_impl(np.array(value, dtype=st.scalar_dtype(value).numpy_type))
        impl.is_wrapped_number = True
    return TensorBase._from_impl(impl)


_INT64, _FLOAT64 = st.int64.numpy_type, st.float64.numpy_type


def _host_impl(array):
    """A TensorImpl viewing a C-contiguous NumPy array without copying (float16 included)."""
    dtype = st.from_numpy_dtype(array.dtype)
    if not array.ndim:      # a wrapped number (``x * 2`` makes one per call): its bytes, no strides to check
        flat = array.reshape(1)
        storage = UntypedStorage(array.nbytes, _CPU, data=flat.view(np.uint8))
        if flat.dtype == dtype.numpy_type:      # the typed view a kernel reads it through (16-bit floats:
            storage._typed[dtype] = flat        # bit patterns, made when asked), ready
        return TensorImpl(storage, (), (), 0, dtype, fresh=True)
    storage = UntypedStorage(array.nbytes, _CPU, data=bytes_of(array) if array.size else np.empty(0, np.uint8))
    # ``fresh``: the storage holds exactly the contiguous array's bytes, so the view is in bounds
    # by construction (a wrapped ``x * 2`` comes here on every call: no check to repeat)
    return TensorImpl(storage, array.shape, contiguous_strides(array.shape), 0, dtype, fresh=True)


def writable_alias(data):
    """The same bytes as a writable array (kept alive by it): the kernels take writable buffers
    only (read-only is another array type to Numba, so a read-only input would not type)."""
    raw = (ctypes.c_uint8 * data.size).from_address(data.ctypes.data)
    raw.keep_alive = data
    return np.frombuffer(raw, dtype=np.uint8)


def from_numpy_lifted(array):
    """``torch.from_numpy``: :func:`from_numpy`'s tensor handed to ``lift_fresh`` through the
    dispatcher, the one operator a TorchDispatchMode sees (as for ``torch.tensor``)."""
    return dispatcher.call("lift_fresh", from_numpy(array, stacklevel=3))


def from_numpy(array, stacklevel=2):
    """A tensor sharing ``array``'s memory (and keeping it alive), strides in elements."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtype = _from_numpy_dtype(array.dtype)
    if any(s % array.itemsize for s in array.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. Copy the numpy "
                         "array to reallocate the memory.")
    data = bytes_of(array)
    if not data.flags.writeable:
        warnings.warn("The given NumPy array is not writable: the tensor shares its memory, and writing "
                      "to the tensor is undefined behavior (as in torch). Copy the array to protect its data.",
                      UserWarning, stacklevel=stacklevel)
        data = writable_alias(data)
    strides = tuple(s // array.itemsize for s in array.strides)
    storage = UntypedStorage(len(data), "cpu", data=data, resizable=False)   # NumPy owns the bytes
    return TensorBase._from_impl(TensorImpl(storage, array.shape, strides, 0, dtype))


def rng_state_bytes(state):
    """``check_rng_state``: a generator state must be a CPU uint8 tensor; its bytes, copied."""
    if not isinstance(state, TensorBase):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(state).__name__}")
    if state.dtype is not st.uint8 or state.device.type != "cpu":
        raise TypeError(f"RNG state must be a torch.ByteTensor, got {state.dtype.torch_name} on {state.device}")
    return state.contiguous()._numpy().copy()


# c10's Generator keeps its state as bytes; ATen gives it the tensors ``get_state``/``set_state`` use.
generator.set_state_tensor_conversion(from_numpy, rng_state_bytes)


# ---------------------------------------------------------------------- new_* (the tensor's dtype and device)
def _new(factory, self, size, *args, dtype=None, layout=None, device=None, pin_memory=None):
    """``new_zeros`` and friends: ``factory`` with ``self``'s dtype and device unless given."""
    return dispatcher.call(factory, size, *args, dtype=dtype or self.dtype, layout=layout,
                           device=self.device if device is None else device, pin_memory=pin_memory)


def new_empty(self, size, **options):
    return _new("empty.memory_format", self, size, **options)


def new_empty_strided(self, size, stride, **options):
    return _new("empty_strided", self, size, stride, **options)


def new_zeros(self, size, **options):
    """``empty(...).zero_()``, as torch's: a negative size is ``empty``'s to refuse (``zeros`` words it
    its own way)."""
    return dispatcher.call("zero_", new_empty(self, size, **options))


def new_ones(self, size, **options):
    return _new("ones", self, size, **options)


def new_full(self, size, fill_value, **options):
    return _new("full", self, size, fill_value, **options)
