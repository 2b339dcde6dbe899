"""Indexing with tensors, lists and bools in ``x[...]`` and ``x[...] = v`` (torch's
``torch/csrc/autograd/python_variable_indexing.cpp``).

As torch does, the index is taken apart: its ints, slices, ``None`` and ``...`` are applied first
as basic indexing (views: select, slice, unsqueeze), each tensor left in place as a full slice;
then the tensors go to one ``index.Tensor`` (a copy) or ``index_put_`` (a write into the view),
listed by the dim they index. A list or NumPy array is made a tensor first; a Python bool or a
0-dim bool tensor adds a size-1 dim that the bool keeps (True) or empties (False); a 0-dim
integer tensor counts as an int.
"""
import warnings

import numpy as np

from .c10 import scalar_type as st

__all__ = ["as_tuple", "copy_to", "is_advanced", "getitem", "setitem", "strip_leading_ones"]


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
    from ._tensor import Tensor  # _tensor imports this module: a real cycle
    if not isinstance(index, list) or len(index) >= 32:
        return index
    if any(i is None or i is Ellipsis or isinstance(i, (Tensor, list, tuple, str, slice, np.ndarray)) for i in index):
        warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=3)
        return tuple(index)
    return index


def strip_leading_ones(value):
    """The value of ``x[...] = value`` without its leading size-1 dims (``slicePrefix1sDims``), which
    NumPy ignores there: a (1, 1, 4) value fills a row of 4."""
    k = 0
    while k < value.dim() and value.shape[k] == 1:
        k += 1
    return value.view(value.shape[k:]) if k else value


def copy_to(dst, src):
    """``x[basic] = src`` (``copy_to`` in ``ATen/TensorIndexing.h``): a copy when the sizes agree,
    a fill from a 0-dim CPU value, else the value without its leading ones, expanded if need be."""
    if dst.shape == src.shape:
        dst.copy_(src)
    elif src.dim() == 0 and src.device.type == "cpu":
        dst.fill_(src)
    else:
        k = 0
        while k < src.dim() - 1 and src.shape[k] == 1:
            k += 1
        src = src.view(src.shape[k:])
        dst.copy_(src if src.shape == dst.shape else src.expand(dst.shape))


def _is_int_tensor_scalar(i):
    from ._tensor import Tensor  # _tensor imports this module: a real cycle
    return isinstance(i, Tensor) and i.dim() == 0 and i.dtype is not st.bool_ and not i.dtype.is_floating_point


def is_advanced(index):
    """Does ``index`` need advanced indexing (a tensor, list, array or bool among its items)?"""
    from ._tensor import Tensor  # _tensor imports this module: a real cycle
    return any(isinstance(i, (bool, list, str, np.ndarray)) or isinstance(i, Tensor) and not _is_int_tensor_scalar(i)
               for i in _items(index))


def _as_index_tensor(i, device):
    from ._tensor import Tensor  # _tensor imports this module: a real cycle
    from .aten.native.tensor_factories import tensor  # loaded by _tensor, before the kernels: a cycle
    if isinstance(i, Tensor):
        return i
    if isinstance(i, np.ndarray):
        return tensor(i).to(device)
    t = tensor(i, device=device)    # a list: bool or uint8 if it infers so, else int64 (``indexing_tensor_from_data``)
    return t if t.dtype in (st.bool_, st.uint8) else t.to(st.int64)


def _mask_dims(t):
    return t.dim() if t.dtype in (st.bool_, st.uint8) else 1


def _split(x, index):
    """(the basic index, [(dim of the basic result, index tensor)]), as ``applySlicing`` splits it."""
    from ._tensor import Tensor  # _tensor imports this module: a real cycle
    from .aten.native.tensor_factories import empty_strided, tensor  # loaded by _tensor, before the kernels: a cycle
    items = [i if i is None or i is Ellipsis or isinstance(i, (bool, slice)) or _is_int_tensor_scalar(i)
             or not isinstance(i, (Tensor, list, tuple, str, np.ndarray)) else _as_index_tensor(i, x.device)
             for i in _items(index)]
    consumed = sum(_mask_dims(i) if isinstance(i, Tensor) and not _is_int_tensor_scalar(i) and i.dim() else
                   0 if i is None or i is Ellipsis or isinstance(i, bool) or isinstance(i, Tensor) and
                   i.dtype is st.bool_ and i.dim() == 0 else 1 for i in items)
    basic, tensors, r = [], [], 0
    for i in items:
        if i is Ellipsis:
            basic.append(i)
            r += x.dim() - consumed
        elif i is None:
            basic.append(i)
            r += 1
        elif isinstance(i, bool) or isinstance(i, Tensor) and i.dtype is st.bool_ and i.dim() == 0:
            # a new size-1 dim, indexed by [0] (kept) or by nothing (emptied)
            basic.append(None)
            keep = bool(i) if isinstance(i, bool) else bool(i.item())
            tensors.append((r, tensor([0], device=x.device) if keep else
                            empty_strided((0,), (1,), dtype=st.int64, device=x.device)))
            r += 1
        elif isinstance(i, Tensor) and not _is_int_tensor_scalar(i):
            k = _mask_dims(i)
            basic.extend([slice(None)] * k)
            tensors.append((r, i))
            r += k
        elif isinstance(i, slice):
            basic.append(i)
            r += 1
        else:
            basic.append(i)
    return tuple(basic), tensors


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


def getitem(x, index):
    basic, tensors = _split(x, index)
    return x[basic].index(_index_list(tensors))


def setitem(x, index, value):
    from ._tensor import Tensor  # _tensor imports this module: a real cycle
    from .aten import dispatcher  # loaded by _tensor, before the kernels: a cycle
    basic, tensors = _split(x, index)
    if not isinstance(value, Tensor):   # a number is written as one of x's dtype (``valueToTensor``)
        value = dispatcher.call("full", (), value, dtype=x.dtype, device=x.device)
    x[basic].index_put_(_index_list(tensors), value)
