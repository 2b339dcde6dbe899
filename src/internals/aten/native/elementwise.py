"""Elementwise helpers: ``where`` (``TensorCompare.cpp``), the activations' backward kernels
(``threshold_backward``, ``sigmoid_backward``, ``tanh_backward``), the Scalar overloads of the
arithmetic operators, and the loop step every binary operator's impl ends with (``binary_loop``;
the binary operators are declared in ``binary_ops.py``, the unary ones in ``unary_ops.py``).

float16 and bfloat16 compute in float32 and round once at the end, as ATen's ``opmath`` does.
"""
import warnings

from ...c10 import scalar_type as st
from ...c10.tensor_impl import strided
from .. import dispatcher
from ..tensor_iterator import TensorIteratorConfig, common_device
from . import scalar_ops as ops
from .copy import cast_like, to
from .dispatch_stub import loops
from .tensor_factories import wrap_scalar

__all__ = ["binary_loop", "where", "common_device", "complex32_in_opmath", "complex32_product", "complex32_sum",
           "rounded_to_complex32"]


def binary_loop(it, op, scalar):
    """The last step of a binary operator's impl (``add_stub(device_type(), *this, alpha)``): the
    loop of scalar function ``op`` over the built iterator ``it``, with ``scalar`` (alpha, or a
    parameter of the function) already in the compute dtype. Returns the result (``out`` itself
    for out=)."""
    # The device's loop is looked up when the loop runs (metadata-only execution runs none, and a
    # meta tensor has no loops to find), and called with its arguments in place: a plain call,
    # no argument list assembled from the buffers and the geometry.
    return it.for_each(lambda buffers, shape, strides, offsets: loops(it.device).binary_loop(
        op, buffers[0], buffers[1], buffers[2], scalar, shape, strides, offsets),
        limited_unsigned=op in _LIMITED_UNSIGNED_OPS, float8=_FLOAT8_OPS.get(op, False))


# The binary kernels torch compiles for uint16, uint32 and uint64 (``AT_DISPATCH_V2`` with
# ``AT_BAREBONES_UNSIGNED_TYPES``): equality, product and the bitwise and/or/xor. Their results
# wrap around exactly as the fixed-width integers do.
_LIMITED_UNSIGNED_OPS = frozenset((ops.EQ, ops.NE, ops.MUL, ops.BITWISE_AND, ops.BITWISE_OR, ops.BITWISE_XOR))
# The binary kernels torch compiles for the float8 types: equality and the product (computed in
# float32, rounded once into the float8 type), the product of two tensors only ("tensors": a
# one-value operand takes ``mul_kernel``'s scalar road, ``mul_cpu_reduced_float``, without them).
_FLOAT8_OPS = {ops.EQ: True, ops.NE: True, ops.MUL: "tensors"}


# ---- complex32: the few loops torch has for it (``BinaryOpsKernel.cpp``'s kComplexHalf branches)
# load each ``c10::complex<c10::Half>`` as ``complex<float>`` (its opmath type), compute there and
# round each part back to float16. complex64 holds every float16 part exactly, and the cast into
# complex32 rounds each part to nearest, ties to even, so these steps do the same with the
# complex64 kernels: no loop ever reads complex32 words as numbers.
def _widened(t):
    """An operand as torch's complex32 loop sees it: cast to the common dtype (a number or an
    int64 rounds to float16 parts there), then loaded as complex<float>."""
    t = wrap_scalar(t)
    return cast_like(cast_like(t, st.complex32), st.complex64)


def rounded_to_complex32(t):
    """A complex64 value rounded to complex32 and widened again: one ``complex<Half>`` operation
    of ``c10::complex<c10::Half>``'s arithmetic (``x * y`` on two of them rounds its product)."""
    return cast_like(cast_like(t, st.complex32), st.complex64)


def _parts(t):
    return dispatcher.call("unbind.int", dispatcher.call("view_as_real", t), -1)


def complex32_sum(a, b):
    """``complex<float>``'s ``+``, part by part (complex64's ``add`` would multiply ``b`` by its
    alpha once more)."""
    (a_re, a_im), (b_re, b_im) = _parts(a), _parts(b)
    add = "add.Tensor"
    return dispatcher.call("complex", dispatcher.call(add, a_re, b_re), dispatcher.call(add, a_im, b_im))


def complex32_product(a, b):
    """``complex<float>``'s ``operator*`` on two widened complex32 values, the textbook formula
    (ac - bd, ad + bc) that c10::complex writes: an infinite part meeting a zero gives what the
    formula gives (``(2+1j) * (inf+0j)`` is inf+infj), where a vectorised complex64 product
    differs. Each product of two float16 parts is exact in float32, so one rounding per part
    remains, fused multiply-add or not."""
    (a_re, a_im), (b_re, b_im) = _parts(a), _parts(b)      # the parts broadcast as the numbers would

    def mul(u, v):
        return dispatcher.call("mul.Tensor", u, v)
    real = dispatcher.call("sub.Tensor", mul(a_re, b_re), mul(a_im, b_im))
    imag = dispatcher.call("add.Tensor", mul(a_re, b_im), mul(a_im, b_re))
    return dispatcher.call("complex", real, imag)


def complex32_in_opmath(result, compute, *operands):
    """``compute(*operands)`` for a complex32 result: the operands widened to complex64, the
    answer (complex64, or float32 for ``abs``) rounded into complex32 (float16) and copied into
    ``result``. Returns ``result``."""
    answer = compute(*(_widened(t) for t in operands))
    answer = cast_like(answer, st.complex32 if answer.dtype.is_complex else st.float16)
    return dispatcher.call("copy_", result, answer)


# where's Scalar overloads (TensorCompare.cpp): the number becomes a ``scalar_tensor`` of the
# result type, the tensor is cast to it, and ``where.self`` runs.
def _scalar_tensor(value, dtype, like):
    return dispatcher.call("scalar_tensor", value, dtype=dtype, layout=strided, device=like.device)


def where_scalar_self(cond, a, b):
    common = st.result_type(b, wrap_scalar(a))
    return dispatcher.call("where.self", cond, _scalar_tensor(a, common, b), to(b, common))


def where_scalar_other(cond, a, b):
    common = st.result_type(a, wrap_scalar(b))
    b_t = _scalar_tensor(b, common, a)
    return dispatcher.call("where.self", cond, to(a, common), b_t)


def where_scalar(cond, a, b):
    common = st.result_type(wrap_scalar(a), wrap_scalar(b))
    b_t = _scalar_tensor(b, common, cond)
    return dispatcher.call("where.self", cond, _scalar_tensor(a, common, cond), b_t)


def where(cond, a, b):
    """``where.self``: ``a`` where ``cond``, else ``b``; a uint8 condition still works, with
    torch's deprecation warning (TensorCompare.cpp), as its nonzero elements."""
    if cond.dtype is st.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in "
                      "a future version of PyTorch. Use a boolean condition instead.", stacklevel=2)
        cond = dispatcher.call("_to_copy", cond, dtype=st.bool_)
    if cond.dtype is not st.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{cond.dtype.torch_name}")
    common = st.result_type(a, b)
    device = common_device(cond, a, b)
    # where casts its values with ``.to(result_type)`` before building its TensorIterator (on
    # every device), so the output's layout follows the cast copies.
    cond, a, b = (x if x.device == device else dispatcher.call("_to_copy", x, device=device) for x in (cond, a, b))
    a, b = (x if x.dtype is common else dispatcher.call("_to_copy", x, dtype=common) for x in (a, b))
    it = (TensorIteratorConfig().add_output(None, common).add_const_input(cond).add_const_input(a).add_const_input(b)
          .compute_in_opmath(False).build())      # the loop only moves values: no arithmetic
    return it.for_each(lambda buffers, *geometry: loops(device).ternary_loop(ops.WHERE, *buffers, 0, *geometry))


def add_scalar(a, b, alpha=1):
    """``add.Scalar`` (CompositeExplicitAutograd): ``add.Tensor`` with the number wrapped."""
    return dispatcher.call("add.Tensor", a, wrap_scalar(b), alpha=alpha)


def sub_scalar(a, b, alpha=1):
    """``sub.Scalar`` (CompositeExplicitAutograd): ``sub.Tensor`` with the number wrapped."""
    return dispatcher.call("sub.Tensor", a, wrap_scalar(b), alpha=alpha)


def mul_scalar(a, b):
    """``mul.Scalar`` (CompositeExplicitAutograd): ``mul.Tensor`` with the number wrapped."""
    return dispatcher.call("mul.Tensor", a, wrap_scalar(b))


def add_scalar_(a, b, alpha=1):
    """``add_.Scalar``: the in-place ``add.Scalar``, over ``add_.Tensor`` (the foreach loops call it)."""
    return dispatcher.call("add_.Tensor", a, wrap_scalar(b), alpha=alpha)


def sub_scalar_(a, b, alpha=1):
    return dispatcher.call("sub_.Tensor", a, wrap_scalar(b), alpha=alpha)


def mul_scalar_(a, b):
    return dispatcher.call("mul_.Tensor", a, wrap_scalar(b))


def div_scalar(a, b):
    return dispatcher.call("div.Tensor", a, wrap_scalar(b))


def div_scalar_(a, b):
    return dispatcher.call("div_.Tensor", a, wrap_scalar(b))
