"""Whole-tensor comparisons (``aten/src/ATen/native/TensorCompare.cpp``): ``isin``.

``isin(elements, test_elements)`` asks, for each element, whether it equals any test element,
both compared in their promoted dtype (``result_type``). torch picks one of two ways by size:
a few test elements are compared with every element at once (``isin_default``); more are
sorted, and each element looked up in them (the sorting path). The answers are the same; the
first is what torch's message names when a dtype has no loop.

Each overload is declared as torch declares it, structured: a meta step (``TORCH_META_FUNC2``:
the dtypes checked, a bool output of the elements' shape) and an impl step that writes the
answers into it; the out= form is primary and the functional one derived from it.
"""
from ...c10 import scalar_type as st
from .. import dispatcher
from .structured import set_output, structured
from .tensor_factories import wrap_scalar

__all__ = ["isin_tensor_tensor_out", "isin_tensor_scalar_out", "isin_scalar_tensor_out"]

# ``check_for_unsupported_isin_dtype``: the dtypes neither way compares
_UNSUPPORTED = (st.bool_, st.complex64, st.complex128)


def _check_dtype(dtype):
    if dtype in _UNSUPPORTED:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {dtype.torch_name}")


def _uses_default(elements, test_elements):
    """torch's choice: compare with every test element while there are fewer than
    10·n^0.145 of them (n the number of elements)."""
    return test_elements.numel() < 10.0 * elements.numel() ** 0.145


def meta_isin_tensor_tensor(out, elements, test_elements, *, assume_unique=False, invert=False):
    """A bool output shaped as ``elements``, once both dtypes are ones isin compares."""
    _check_dtype(elements.dtype)
    _check_dtype(test_elements.dtype)
    return set_output(out, list(elements.shape), st.bool_, elements.device)


def impl_isin_tensor_tensor(out, elements, test_elements, *, assume_unique=False, invert=False):
    """True where the element is among ``test_elements`` (False with ``invert``).
    ``assume_unique`` only lets torch skip work."""
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


isin_tensor_tensor_out = structured(meta_isin_tensor_tensor, impl_isin_tensor_tensor)


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


def meta_isin_tensor_scalar(out, elements, test_element, *, assume_unique=False, invert=False):
    _check_dtype(elements.dtype)
    _check_dtype(st.scalar_dtype(test_element))
    return set_output(out, list(elements.shape), st.bool_, elements.device)


def impl_isin_tensor_scalar(out, elements, test_element, *, assume_unique=False, invert=False):
    """One test element: ``eq`` (``ne`` with ``invert``) with it, promoted as a number."""
    return dispatcher.call("ne.Scalar_out" if invert else "eq.Scalar_out", elements, test_element, out=out)


isin_tensor_scalar_out = structured(meta_isin_tensor_scalar, impl_isin_tensor_scalar)


def meta_isin_scalar_tensor(out, element, test_elements, *, assume_unique=False, invert=False):
    """A 0-dim bool output. torch's C++ meta step sizes an out= tensor [0] first (one of other
    elements is resized with the deprecation warning, naming [0]) and its impl step makes it
    0-dim; a fake tensor gets the 0-dim result at once, as from torch's Python meta function."""
    _check_dtype(st.scalar_dtype(element))
    _check_dtype(test_elements.dtype)
    if out is not None:
        out = set_output(out, [0], st.bool_, test_elements.device)
    return set_output(out, [], st.bool_, test_elements.device)


def impl_isin_scalar_tensor(out, element, test_elements, *, assume_unique=False, invert=False):
    """One element, wrapped as a number (so it promotes as one) on the test elements' device,
    through the Tensor/Tensor form into ``out``."""
    wrapped = dispatcher.call("_to_copy", wrap_scalar(element), device=test_elements.device)
    wrapped._impl.is_wrapped_number = True
    return dispatcher.call("isin.Tensor_Tensor_out", wrapped, test_elements, assume_unique=assume_unique,
                           invert=invert, out=out)


isin_scalar_tensor_out = structured(meta_isin_scalar_tensor, impl_isin_scalar_tensor)
