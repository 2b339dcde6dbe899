"""``tensordot`` (``aten/src/ATen/native/Linear.cpp``) and ``kron`` (``LinearAlgebra.cpp``):
CompositeImplicitAutograd, written with permutes, reshapes and one product, as torch writes
them, so autograd records the operators they call."""
import math

from ...c10.wrap_dim import dim_list_to_bitset
from .. import dispatcher


def tensordot(x, y, dims_self, dims_other):
    """The contracted dims moved last in ``x`` and first in ``y``, both reshaped to matrices, one
    ``mm``, reshaped to the free dims; a contracted dim of size 1 on one side is summed away first."""
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if x.dtype is not y.dtype:
        raise RuntimeError("both inputs should have same dtype")
    csize, t1, t2 = 1, x, y
    for d1, d2 in zip(dims_self, dims_other):
        s1, s2 = x.shape[d1], y.shape[d2]
        if s2 == 1:
            t1 = dispatcher.call("sum.dim_IntList", t1, [d1], True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = dispatcher.call("sum.dim_IntList", t2, [d2], True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {d1} and "
                                   f"second has size {s2} in dim {d2}")
            csize *= s1
    c1 = dim_list_to_bitset(dims_self, x.dim())
    c2 = dim_list_to_bitset(dims_other, y.dim())
    free1 = [i for i in range(x.dim()) if i not in c1]
    free2 = [i for i in range(y.dim()) if i not in c2]
    size1, size2 = math.prod(t1.shape[i] for i in free1), math.prod(t2.shape[i] for i in free2)
    t1 = dispatcher.call("reshape", dispatcher.call("permute", t1, free1 + list(dims_self)), [size1, csize])
    t2 = dispatcher.call("reshape", dispatcher.call("permute", t2, list(dims_other) + free2), [csize, size2])
    sizes = [x.shape[i] for i in free1] + [y.shape[i] for i in free2]
    return dispatcher.call("reshape", dispatcher.call("mm", t1, t2), sizes)


def kron(x, y):
    """Each input viewed with a dim of size 1 beside each of its dims (``_unsafe_view``), the two
    multiplied with broadcasting, and the product viewed as the result's shape (``KronImpl``)."""
    n = max(x.dim(), y.dim())
    a, b = [1] * (n - x.dim()) + list(x.shape), [1] * (n - y.dim()) + list(y.shape)
    a_view = dispatcher.call("_unsafe_view", x, [s for d in a for s in (d, 1)])
    b_view = dispatcher.call("_unsafe_view", y, [s for d in b for s in (1, d)])
    return dispatcher.call("_unsafe_view", dispatcher.call("mul.Tensor", a_view, b_view),
                           [i * j for i, j in zip(a, b)])
