"""``linalg_cross`` and ``cross`` (``aten/src/ATen/native/Cross.cpp``): the cross product of
3-vectors along one dim, the other dims broadcast. ``linalg_cross`` is declared as torch declares
it, structured: a meta step (the dims checked, the broadcast shape) and an impl step (the
overlap and dtype checks, then the loop), ``linalg_cross.out`` the primary form."""
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.exception import warn_once
from ...c10.wrap_dim import wrap_dim
from .. import dispatcher
from ..empty_tensor import is_meta_execution
from ..tensor_iterator import assert_no_internal_overlap, assert_no_overlap, infer_size
from .copy import buffer, contiguous
from .dispatch_stub import loops
from .scalar_ops import contracted_fma
from .structured import set_output, structured

_warned = []        # TORCH_WARN_ONCE: once per process


@register_jitable
def cross_row(out, a, b, at):
    """The cross product of ``a[at:at + 3]`` and ``b[at:at + 3]`` into ``out``; the second product
    rounded, the first fused with the subtraction where torch's build contracts (not on the x86-64
    ``default`` build, which rounds both products)."""
    for i in range(3):
        j, k = at + (i + 1) % 3, at + (i + 2) % 3
        out[at + i] = contracted_fma(a[j], b[k], -(a[k] * b[j]))


def meta_linalg_cross(out, input, other, *, dim=-1):
    """``TORCH_META_FUNC(linalg_cross)``: inputs of as many dims, both of length 3 along ``dim``;
    the output of their broadcast shape (``infer_size``), contiguous, in ``input``'s dtype."""
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.dim())
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return set_output(out, infer_size(tuple(input.shape), tuple(other.shape)), input.dtype, input.device)


def impl_linalg_cross(out, input, other, *, dim=-1):
    """``TORCH_IMPL_FUNC(linalg_cross_out)``: an output that reaches no element twice and shares
    none with an input, inputs of one dtype (the kernel's TensorIterator), then each component
    ``x[i+1] y[i+2] - x[i+2] y[i+1]`` of the inputs expanded to the output's shape."""
    if is_meta_execution():
        return out
    assert_no_internal_overlap(out._impl)
    assert_no_overlap(out._impl, input._impl)
    assert_no_overlap(out._impl, other._impl)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.torch_name} but found {other.dtype.torch_name}")
    if input.dtype is st.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    d = wrap_dim(dim, input.dim())
    shape = list(out.shape)
    a, b = dispatcher.call("expand", input, shape), dispatcher.call("expand", other, shape)
    if input.dtype.is_floating_point and not input.dtype.is_reduced_float:
        return _floating_cross(out, a, b, d)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        value = dispatcher.call("sub.Tensor", dispatcher.call("mul.Tensor", _at(a, d, j), _at(b, d, k)),
                                dispatcher.call("mul.Tensor", _at(a, d, k), _at(b, d, j)))
        dispatcher.call("copy_", _at(out, d, i), value)
    return out


linalg_cross_out = structured(meta_linalg_cross, impl_linalg_cross)


def _floating_cross(out, a, b, d):
    """Rows of 3 (``d`` moved last, contiguous) through the loop, then moved back into ``out``."""
    rows = [_from_zero(contiguous(dispatcher.call("movedim.int", t, d, -1))) for t in (a, b)]
    result = dispatcher.call("empty_like", rows[0])
    if result.numel():
        loops(out.device, "cross").cross_loop(buffer(result), buffer(rows[0]), buffer(rows[1]), result.numel() // 3)
    return dispatcher.call("copy_", out, dispatcher.call("movedim.int", result, -1, d))


def _from_zero(t):
    return dispatcher.call("clone", t) if t.storage_offset() else t


def _at(t, d, i):
    return dispatcher.call("select.int", t, d, i)


def cross(x, y, dim=None):
    """CompositeImplicitAutograd: ``linalg_cross`` along ``dim``, by default the first dim of size
    3 (deprecated: torch warns once)."""
    if dim is None:
        warn_once("cross without dim", "Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                  "either pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
                  "change to agree with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((i for i, n in enumerate(x.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return dispatcher.call("linalg_cross", x, y, dim=dim)
