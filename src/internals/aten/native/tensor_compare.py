"""Whole-tensor comparisons (``aten/src/ATen/native/TensorCompare.cpp``): ``isin``.

``isin(elements, test_elements)`` asks, for each element, whether it equals any test element,
both compared in their promoted dtype (``result_type``). torch picks one of two ways by size:
a few test elements are compared with every element at once (``isin_default``); more are
sorted, and each element looked up in them (the sorting path). The answers are the same; the
first is what torch's message names when a dtype has no loop.
"""
from ...c10 import scalar_type as st
from .. import dispatcher
from .tensor_factories import empty, wrap_scalar

__all__ = ["isin_tensor_tensor", "isin_tensor_scalar", "isin_scalar_tensor"]

# ``check_for_unsupported_isin_dtype``: the dtypes neither way compares
_UNSUPPORTED = (st.bool_, st.complex64, st.complex128)


def _check_dtype(dtype):
    if dtype in _UNSUPPORTED:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {dtype.torch_name}")


def _uses_default(elements, test_elements):
    """torch's choice: compare with every test element while there are fewer than
    10·n^0.145 of them (n the number of elements)."""
    return test_elements.numel() < 10.0 * elements.numel() ** 0.145


def isin_tensor_tensor(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor shaped as ``elements`` (contiguous): True where the element is among
    ``test_elements`` (False with ``invert``). ``assume_unique`` only lets torch skip work."""
    _check_dtype(elements.dtype)
    _check_dtype(test_elements.dtype)
    out = empty(tuple(elements.shape), dtype=st.bool_, device=elements.device)
    if elements.numel() == 0:
        return out
    common = st.result_type(elements, test_elements)
    default = _uses_default(elements, test_elements)
    if common in st.LIMITED_UNSIGNED and default:
        raise NotImplementedError(f'"isin_default_{elements.device.type}" not implemented for '
                                  f"'{common.torch_name}'")
    flat = _flat(elements, common)
    tests = _flat(test_elements, common)
    found = _compare_all(flat, tests) if default else _look_up(flat, tests)
    if invert:
        found = dispatcher.call("logical_not", found)
    return dispatcher.call("copy_", out, dispatcher.call("reshape", found, list(elements.shape)))


def _flat(t, dtype):
    return dispatcher.call("reshape", dispatcher.call("_to_copy", t, dtype=dtype), [-1])


def _compare_all(flat, tests):
    """(n, 1) == (m,): an n×m table of matches, any along each row."""
    table = dispatcher.call("eq.Tensor", dispatcher.call("unsqueeze", flat, 1), tests)
    return dispatcher.call("any.dim", table, 1)


def _look_up(flat, tests):
    """Each element's place in the sorted test elements, and whether the one there equals it
    (NaN sorts last and equals nothing; -0.0 and 0.0 are equal)."""
    ordered = dispatcher.call("sort", tests)[0]
    places = dispatcher.call("searchsorted.Tensor", ordered, flat)
    places = dispatcher.call("clamp_max", places, tests.numel() - 1)
    return dispatcher.call("eq.Tensor", dispatcher.call("index_select", ordered, 0, places), flat)


def isin_tensor_scalar(elements, test_element, *, assume_unique=False, invert=False):
    """One test element: ``eq`` (``ne`` with ``invert``) with it, promoted as a number."""
    _check_dtype(elements.dtype)
    _check_dtype(st.scalar_dtype(test_element))
    return dispatcher.call("ne.Scalar" if invert else "eq.Scalar", elements, test_element)


def isin_scalar_tensor(element, test_elements, *, assume_unique=False, invert=False):
    """One element, wrapped as a number (so it promotes as one): a 0-dim result."""
    wrapped = dispatcher.call("_to_copy", wrap_scalar(element), device=test_elements.device)
    wrapped._impl.is_wrapped_number = True
    return isin_tensor_tensor(wrapped, test_elements, assume_unique=assume_unique, invert=invert)
