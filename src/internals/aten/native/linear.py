"""``tensordot`` (``aten/src/ATen/native/Linear.cpp``) and ``kron`` (``LinearAlgebra.cpp``):
CompositeImplicitAutograd, written with permutes, reshapes and one product, as torch writes
them, so autograd records the operators they call; ``bilinear`` over ``_trilinear`` (also
``Linear.cpp``), the one of them with a derivative of its own."""
import math

from ...c10.scalar_type import type_meta_name
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


def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """``_trilinear`` (``Linear.cpp``): three operands, each unsqueezed at its ``expand`` dims to a
    common rank, multiplied and summed over ``sumdim``, which is then squeezed away. torch
    writes its result into a zeroed, contiguous output of the broadcast sizes (a summed dim kept
    at 1 until the end), summing the first two operands' products over the dims the third lacks
    first, then the third's; the package forms the same two partial sums by broadcasting (torch
    runs them as batched matrix products, one slice of ``unroll_dim`` at a time: the same sums in
    another order, so values agree within rounding)."""
    total = i1.dim() + len(expand1)
    for name, t, expand in (("i2", i2, expand2), ("i3", i3, expand3)):
        if t.dim() + len(expand) != total:
            raise RuntimeError(f"number of dimensions of {name} doesn't match that of i1")
    if not 0 <= unroll_dim < total:
        raise IndexError(f"unroll_dim must be in [0,{total - 1}]")
    e1, e2, e3, summed = (set(dim_list_to_bitset(v, total)) for v in (expand1, expand2, expand3, sumdim))
    output_size, sum12, sum23 = [], [], []
    for i in range(total):
        s = 0
        if i in e1:
            i1 = dispatcher.call("unsqueeze", i1, i)
        else:
            s = i1.shape[i]
        if i in e2:
            i2 = dispatcher.call("unsqueeze", i2, i)
        else:
            s = i2.shape[i]
        if i in e3:
            i3 = dispatcher.call("unsqueeze", i3, i)
            if i in summed and i != unroll_dim:
                sum12.append(i)
        else:
            s = i3.shape[i]
            if i in summed and i != unroll_dim:
                sum23.append(i)
        output_size.append(1 if i in summed else s)
    output = dispatcher.call("zeros", output_size, dtype=i1.dtype, device=i1.device)
    if i1.numel() and i2.numel() and i3.numel():
        part = dispatcher.call("mul.Tensor", i1, i2)
        if sum12:
            part = dispatcher.call("sum.dim_IntList", part, sum12, True, dtype=None)
        part = dispatcher.call("mul.Tensor", part, i3)
        rest = sum23 + ([unroll_dim] if unroll_dim in summed else [])
        if rest:
            part = dispatcher.call("sum.dim_IntList", part, rest, True, dtype=None)
        dispatcher.call("add_.Tensor", output, part, alpha=1)
    for i in reversed(range(total)):
        if i in summed:
            output = dispatcher.call("squeeze.dim", output, i)
    return output


def bilinear(input1, input2, weight, bias=None):
    """``bilinear``, CompositeImplicitAutograd (``Linear.cpp``): ``y = x1ᵀ A x2 + b`` for each output
    feature, as one ``_trilinear`` of the inputs flattened to matrices and the weight, reshaped to
    the batch dims, then the bias added."""
    operands = [("input1", input1), ("input2", input2), ("weight", weight)]
    operands += [("bias", bias)] if bias is not None else []
    if any(t.dtype is not input1.dtype for _, t in operands):     # checked before any size, as torch does
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{n}: {type_meta_name(t.dtype)}" for n, t in operands))
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} and "
                               f"{input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    output_size = [*input1.shape[:-1], weight.shape[0]]
    flat1 = dispatcher.call("reshape", input1, [-1, input1.shape[-1]])
    flat2 = dispatcher.call("reshape", input2, [-1, input2.shape[-1]])
    output = dispatcher.call("reshape", dispatcher.call("_trilinear", flat1, weight, flat2, [1, 3], [0], [1, 2],
                                                        [2, 3], 1), output_size)
    if bias is not None:
        output = dispatcher.call("add.Tensor", output, bias, alpha=1)
    return output
