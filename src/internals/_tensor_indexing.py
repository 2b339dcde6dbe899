"""``x[index]`` and ``x[index] = v`` (torch's ``torch/csrc/autograd/python_variable_indexing.cpp``
and ``ATen/TensorIndexing.h``).

As torch does, the index's items are applied in order (``applySlicing``), each as a view operator
through the dispatcher: ``select.int`` for an int, ``slice.Tensor`` for a slice, ``unsqueeze`` for
None. A slice that keeps all of its dim makes no call at all (torch skips it), except when it is
the whole index (``x[:]``, always a new view); an index that selects everything (``x[...]``,
``x[:, :]``) returns ``alias``. Tensors are only recorded, by the dim of the view they index, and
go to one ``index.Tensor`` (a copy) or ``index_put_`` (a write into the view) at the end. A list
or NumPy array becomes a tensor where it stands; a Python bool, or a 0-dim bool tensor, adds a
size-1 dim that an index ``[0]`` keeps (True) or an empty index empties (False); a 0-dim integer
tensor counts as an int.
"""
import operator
import warnings

import numpy as np

from ._tensor_base import TensorBase
from .aten import dispatcher
from .aten.native.tensor_factories import tensor
from .c10 import scalar_type as st
from .c10.sym import SymInt, is_symbolic

__all__ = ["getitem", "setitem"]


_SEQUENCE_WARNING = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
                     "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted "
                     "as tensor index, x[torch.tensor(seq)], which will result either in an error or a different "
                     "result")


def _items(index):
    return list(index) if isinstance(index, tuple) else [index]


def as_tuple(index):
    """NumPy's heuristic, kept by torch (``treatSequenceAsTuple``): a list shorter than 32 holding a
    sequence, tensor, slice, ``...`` or None is a tuple of indices (``x[[[0, 1], [1, 2]]]`` picks
    two elements), with a deprecation warning."""
    if not isinstance(index, list) or len(index) >= 32:
        return index
    if any(i is None or i is Ellipsis or isinstance(i, slice) or _is_sequence(i) for i in index):
        warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=4)   # the line with x[seq]
        return tuple(index)
    return index


def getitem(x, index):
    """``THPVariable_getitem``."""
    if index is Ellipsis:
        return dispatcher.call("alias", x)
    if isinstance(index, slice):         # ``x[:]`` is always a new view: no shortcut for the whole dim
        return _apply_slice(x, 0, index, disable_slice_optimization=True)     # (slice() refuses a 0-dim x)
    if type(index) is int:      # ``THPUtils_checkLong``, torch's first case: ``applySelect`` on dim 0
        if not x._impl.sizes:
            _refuse_int_index_of_0_dim(index)
        return _apply_select(x, 0, _unpack_long(index), 0)
    if x.dim() == 0 and _is_int(index):
        _refuse_int_index_of_0_dim(index)
    sliced, tensors = apply_slicing(x, as_tuple(index))
    if tensors:
        return dispatcher.call("index.Tensor", sliced, _index_list(tensors))
    return dispatcher.call("alias", x) if sliced is x else sliced


def setitem(x, index, value):
    """``THPVariable_setitem``: the value is made a tensor first, then the index is applied."""
    value = _value_to_tensor(x, value)
    if index is False:                    # a new size-1 dim that nothing is written to
        return
    if x.dim() == 0 and _is_int(index):
        _refuse_int_index_of_0_dim(index)
    if isinstance(index, slice):          # a whole-dim slice writes x itself (slice() refuses a 0-dim x)
        sliced, tensors = _apply_slice(x, 0, index, disable_slice_optimization=False), []
    else:
        sliced, tensors = apply_slicing(x, None if index is True else as_tuple(index))
    if not tensors:
        copy_to(sliced, value)
        return
    stripped = _strip_leading_ones(value.shape)
    if stripped != value.shape:
        value = dispatcher.call("view", value, stripped)
    dispatcher.call("index_put_", sliced, _index_list(tensors), value)


def _refuse_int_index_of_0_dim(index):
    """``x[i]`` of a 0-dim ``x``: ``applySelect`` reads the size of the dim it lacks as 0."""
    if _unpack_long(index) == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    raise IndexError(f"index {index} is out of bounds for dimension 0 with size 0")


def apply_slicing(x, index, disable_slice_optimization=False):
    """``applySlicing``: the view that the index's ints, slices, None and bools make of ``x``, and
    the index tensors as ``[(dim of that view, tensor)]``."""
    items = _items(index)
    specified = _count_specified_dimensions(items)
    if specified > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    result, d, tensors = x, 0, []
    for position, i in enumerate(items):    # torch's messages name an item by its position
        if i is Ellipsis:
            d += x.dim() - specified        # the dims no other item claims stay whole (each ``...`` skips them)
        elif i is None:
            result = dispatcher.call("unsqueeze", result, d)
            d += 1
        elif getattr(i, "_functorch_batched", False) and i.dtype in (st.bool_, st.uint8):
            # each example's mask would select its own number of elements
            raise RuntimeError("vmap: We do not support batching operators that can support dynamic shape. "
                               "Attempting to batch over indexing with a boolean mask.")
        elif isinstance(i, bool) or _is_0dim(i, (st.bool_, st.uint8)):
            result = dispatcher.call("unsqueeze", result, d)
            keep = i if isinstance(i, bool) else bool(i.item())     # read after the unsqueeze, as torch
            tensors.append((d, _bool_index(result, keep)))
            d += 1
        elif isinstance(i, slice):
            result = _apply_slice(result, d, i, disable_slice_optimization)
            d += 1
        elif isinstance(i, SymInt):     # a symbol (a value read, made an input) selects as it is
            result = _apply_select(result, d, i, position)
        elif _is_int(i) or _is_0dim(i, None):
            result = _apply_select(result, d, i.item() if _is_0dim(i, None) else _unpack_long(i), position)
        elif _is_sequence(i):
            t = _as_index_tensor(i, x.device)
            tensors.append((d, t))
            d += _mask_dims(t)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                             f"are valid indices (got {_tp_name(i)})")
    return result, tensors


def _apply_slice(x, d, s, disable_slice_optimization):
    """``applySlice``: a slice that starts at 0, steps by 1 and ends at or past the dim's end makes
    no call."""
    start, stop, step = (_slice_index(b) for b in (s.start, s.stop, s.step))
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    step = max(step, -_SSIZE_MAX)
    if step < 0:
        raise ValueError("step must be greater than zero")
    # ``THPUtils_unpackSlice``: an open end is a number, as ``PySlice_Unpack`` gives it -- 0 and
    # PY_SSIZE_T_MAX -- so the operator (and a traced graph) gets ``slice(x, 1, 0, 2**63 - 1, 2)``
    start = 0 if start is None else start
    stop = _SSIZE_MAX if stop is None else stop
    # A traced size (a symbol) is not known to fit under ``stop`` for every size the graph may
    # serve, so the slice is recorded (torch's ``TORCH_STATICALLY_KNOWN_TRUE``), with no guard;
    # nor is a symbolic bound compared, which would pin it
    size = _size(x, d)
    whole = not any(map(is_symbolic, (start, stop, size))) and start == 0 and step == 1 and stop >= size
    if whole and not disable_slice_optimization and x.dim():
        return x
    return dispatcher.call("slice.Tensor", x, d, start, stop, step)


_SSIZE_MAX = 2**63 - 1


def _slice_index(bound):
    """``PySlice_Unpack``: a bound read with ``__index__`` (``x[t:]`` reads a 0-dim tensor ``t``)
    and clamped into Py_ssize_t."""
    if bound is None:
        return None
    if not hasattr(bound, "__index__"):
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    if is_symbolic(bound):      # a traced size (``x.shape[0] // 2``) stays a symbol, as a SymInt does in torch
        return bound
    return min(max(operator.index(bound), -_SSIZE_MAX - 1), _SSIZE_MAX)


def _apply_select(x, d, i, position):
    """``applySelect``: torch checks the bounds here, naming the item's position in the index."""
    size = _size(x, d)
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {position} with size {size}")
    return dispatcher.call("select.int", x, d, i)


def _size(x, d):
    """The size of dim ``d``; past the last dim (two ``...``) torch reads a size of 0."""
    sizes = x._impl.sizes       # read as torch's C++ reads them: no ``__torch_function__`` to ask
    return sizes[d] if d < len(sizes) else 0


def _bool_index(like, keep):
    """``boolToIndexingTensor``: index [0] keeps the new size-1 dim, an empty index empties it."""
    t = dispatcher.call("empty.memory_format", [1 if keep else 0], dtype=st.int64, device=like.device)
    return dispatcher.call("fill_.Scalar", t, 0) if keep else t


def _count_specified_dimensions(items):
    """``count_specified_dimensions``: the dims an index claims; a bool or byte tensor claims as
    many as it has, None, ``...`` and bools none."""
    return sum(_mask_dims(i) if isinstance(i, TensorBase) else
               0 if i is None or i is Ellipsis or isinstance(i, bool) else 1 for i in items)


def _value_to_tensor(x, value):
    """``valueToTensor``: a Python number becomes a 0-dim CPU tensor of ``x``'s dtype (1000 is
    refused for int8, 1j for float32), made as ``torch.tensor`` makes one (``lift_fresh``). An
    int is read as an int64 first (2**63 fails there, whatever the dtype), and float16/bfloat16
    take the number as a double, so 1e6 rounds to inf instead of overflowing."""
    if isinstance(value, TensorBase):
        return value
    if not isinstance(value, (bool, int, float, complex, np.integer)):
        raise TypeError(f"can't assign a {_tp_name(value)} to a torch.{'cuda.' if x.is_cuda else ''}"
                        f"{x.dtype.torch_name}Tensor")
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = _unpack_long(value)
    st.checked_convert(value, st.float64 if x.dtype in (st.float16, st.bfloat16) else x.dtype)
    if x.dtype is st.uint64 and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = int(value)      # a float is truncated (a Scalar's double cast); a negative int64 wraps
        value += 2**64 if value < 0 else 0      # two's complement, as ``c10::overflows`` allows
    if isinstance(value, complex) and not x.dtype.is_complex:     # no imaginary part: checked above
        value = bool(value) if x.dtype is st.bool_ else value.real
    return tensor(value, dtype=x.dtype)


def _unpack_long(i):
    """``THPUtils_unpackLong``: a Python int as an int64, or a ValueError."""
    i = int(i)
    if not -2**63 <= i < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return i


def _tp_name(obj):
    """The type's C name, as torch's messages print it: ``str``, ``numpy.float64``."""
    kind = type(obj)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def copy_to(dst, src):
    """``x[basic] = src`` (``copy_to`` in ``ATen/TensorIndexing.h``): a copy when the sizes agree,
    a fill from a 0-dim CPU value, else the value without its leading ones, expanded if need be."""
    if dst.shape == src.shape:
        dispatcher.call("copy_", dst, src)
    elif src.dim() == 0 and src.device.type == "cpu":
        dispatcher.call("fill_.Tensor", dst, src)
    else:
        src = dispatcher.call("view", src, _strip_leading_ones(src.shape))
        if src.shape != dst.shape:
            src = dispatcher.call("expand", src, list(dst.shape))
        dispatcher.call("copy_", dst, src)


def _strip_leading_ones(shape):
    """``slicePrefix1sSize``: a value's leading size-1 dims, which NumPy ignores in assignment (a
    (1, 1, 4) value fills a row of 4)."""
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return tuple(shape[k:])


def _is_int(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, bool)


def _is_0dim(i, dtypes):
    """A 0-dim integer tensor, of one of ``dtypes`` (or not bool or byte, for None)."""
    if not isinstance(i, TensorBase) or i.dim() or i.dtype.category > st.INTEGRAL:
        return False
    if getattr(i, "_functorch_batched", False):     # one example's index of a vmap: an index tensor, as torch's
        return False
    return i.dtype in dtypes if dtypes else i.dtype not in (st.bool_, st.uint8)


def _is_sequence(i):
    return isinstance(i, (TensorBase, list, tuple, str, range, np.ndarray))


def _as_index_tensor(i, device):
    if isinstance(i, TensorBase):
        return i
    if isinstance(i, np.ndarray):
        return tensor(i).to(device)
    if isinstance(i, range):
        i = list(i)
    t = tensor(i, device=device)    # a list: bool or uint8 if it infers so, else int64 (``indexing_tensor_from_data``)
    if t.dtype.is_complex:          # each number is read as an int64 (a float is truncated)
        raise TypeError("'complex' object cannot be interpreted as an integer")
    return t if t.dtype in (st.bool_, st.uint8) else t.to(st.int64)


def _mask_dims(t):
    return t.dim() if t.dtype in (st.bool_, st.uint8) else 1


def _index_list(tensors):
    """The ``Tensor?[]`` of index.Tensor: None for each dim not indexed; a mask stands for its dims."""
    indices, d = [], 0
    for r, t in tensors:
        while d < r:
            indices.append(None)
            d += 1
        indices.append(t)
        d += _mask_dims(t)
    return indices
