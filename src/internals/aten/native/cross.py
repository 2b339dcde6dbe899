"""``linalg_cross`` and ``cross`` (``aten/src/ATen/native/Cross.cpp``): the cross product of
3-vectors along one dim, the other dims broadcast."""
import warnings

from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from ...c10.wrap_dim import wrap_dim
from .. import dispatcher
from ..tensor_iterator import broadcast_shapes
from .copy import buffer, contiguous
from .dispatch_stub import loops
from .scalar_ops import contracted_fma

_warned = []        # TORCH_WARN_ONCE: once per process


@register_jitable
def cross_row(out, a, b, at):
    """The cross product of ``a[at:at + 3]`` and ``b[at:at + 3]`` into ``out``; the second product
    rounded, the first fused with the subtraction where torch's build contracts (not on the x86-64
    ``default`` build, which rounds both products)."""
    for i in range(3):
        j, k = at + (i + 1) % 3, at + (i + 2) % 3
        out[at + i] = contracted_fma(a[j], b[k], -(a[k] * b[j]))


def linalg_cross(x, y, *, dim=-1):
    """The meta function's checks, then each component ``x[i+1] y[i+2] - x[i+2] y[i+1]`` written
    with the elementwise kernels into a contiguous result of the broadcast shape."""
    if x.dim() != y.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, x.dim())
    if x.shape[d] != 3 or y.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {x.shape[d]} and "
                           f"{y.shape[d]}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"expected scalar type {x.dtype.torch_name} but found {y.dtype.torch_name}")
    if x.dtype is st.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    shape = list(broadcast_shapes(tuple(x.shape), tuple(y.shape)))
    out = dispatcher.call("empty.memory_format", shape, dtype=x.dtype, device=x.device,
                          memory_format=contiguous_format)
    a, b = dispatcher.call("expand", x, shape), dispatcher.call("expand", y, shape)
    if x.dtype.is_floating_point and not x.dtype.is_reduced_float:
        return _floating_cross(out, a, b, d)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        value = dispatcher.call("sub.Tensor", dispatcher.call("mul.Tensor", _at(a, d, j), _at(b, d, k)),
                                dispatcher.call("mul.Tensor", _at(a, d, k), _at(b, d, j)))
        dispatcher.call("copy_", _at(out, d, i), value)
    return out


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
        if not _warned:
            _warned.append(True)
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                          "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
                          "agree with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((i for i, n in enumerate(x.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return dispatcher.call("linalg_cross", x, y, dim=dim)
