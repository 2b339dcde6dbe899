"""Elementwise operators: unary ones and ``where`` (``UnaryOps.cpp``, ``TensorCompare.cpp`` in
``aten/src/ATen/native``), and the loop step every binary operator's impl ends with
(``binary_loop``; the binary operators are declared in ``binary_ops.py``).

Each follows the same path as a structured ATen kernel: check the devices, compute the result
dtype by torch's promotion rules, broadcast, allocate the output with the layout TensorIterator
gives it (or check the in-place output), cast inputs to the computation dtype, and run one loop.
float16 and bfloat16 compute in float32 and round once at the end, as ATen's ``opmath`` does.
"""
import warnings

from ...c10 import scalar_type as st
from ...c10.tensor_impl import strided
from .. import dispatcher
from ..tensor_iterator import TensorIterator, TensorIteratorConfig, common_device
from . import scalar_ops as ops
from .copy import to
from .dispatch_stub import loops
from .tensor_factories import wrap_scalar

__all__ = ["unary", "binary_loop", "where", "common_device"]


def unary(op, x, *, out=None, floating=False, name=None):
    """A unary op. ``floating`` ops (exp, log, ...) turn integer inputs into the default float."""
    if x.dtype is st.bool_ and op in (ops.NEG, ops.ABS, ops.RELU):
        raise _bool_error(op, name)
    if x.dtype.is_complex:
        op = _complex_op(op, name)
    it = TensorIterator.unary_float_op(out, x) if floating else TensorIterator.unary_op(out, x)
    return it.for_each(lambda buffers, *geometry: loops(it.device).unary_loop(op, *buffers, *geometry))


# The unary ops with a complex kernel here, and the scalar function each uses for complex numbers.
_COMPLEX_UNARY = {ops.NEG: ops.NEG, ops.CONJ: ops.CONJ, ops.EXP: ops.EXP_COMPLEX, ops.LOG: ops.LOG_COMPLEX,
                  ops.SQRT: ops.SQRT_COMPLEX, ops.SIN: ops.SIN_COMPLEX, ops.COS: ops.COS_COMPLEX,
                  ops.TAN: ops.TAN_COMPLEX, ops.TANH: ops.TANH_COMPLEX, ops.SIGMOID: ops.SIGMOID_COMPLEX}


def _complex_op(op, name):
    if op == ops.RELU:
        raise NotImplementedError("clamp is not supported for complex types")
    if op not in _COMPLEX_UNARY:      # torch has complex kernels for most of these: internals not yet
        raise NotImplementedError(f"internals: {name} is not implemented for complex tensors")
    return _COMPLEX_UNARY[op]


def real_valued_unary(op, complex_op, x):
    """abs and angle (``abs``, ``angle`` in UnaryOps.cpp): a complex input gives a real output,
    of the matching real dtype; a real input keeps its dtype (angle: integers become floats)."""
    if not x.dtype.is_complex:
        return unary(op, x, floating=op == ops.ANGLE, name="abs" if op == ops.ABS else "angle")
    it = (TensorIteratorConfig().add_output(None, st.to_real(x.dtype)).add_const_input(x)
          .compute_in_opmath(False).build())
    return it.for_each(lambda buffers, *geometry: loops(it.device).unary_loop(complex_op, *buffers, *geometry))


def _bool_error(op, name):
    if op == ops.NEG:
        return RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                            "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if op == ops.RELU:
        return RuntimeError("Boolean inputs not supported for relu")
    return NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')


def binary_loop(it, op, scalar):
    """The last step of a binary operator's impl (``add_stub(device_type(), *this, alpha)``): the
    loop of scalar function ``op`` over the built iterator ``it``, with ``scalar`` (alpha, or a
    parameter of the function) already in the compute dtype. Returns the result (``out`` itself
    for out=)."""
    return it.for_each(lambda buffers, *geometry: loops(it.device).binary_loop(op, *buffers, scalar, *geometry))


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


# The kernels by their names in native_functions.yaml: each one TensorIterator loop over one op.
# ``name_`` is the in-place variant: its output is its first input.

def neg(x):
    return unary(ops.NEG, x, name="neg")


def neg_(x):
    return unary(ops.NEG, x, out=x, name="neg")


def abs(x):
    return real_valued_unary(ops.ABS, ops.ABS, x)


def abs_(x):
    if x.dtype.is_complex:     # the result is real: it cannot go back into x
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return unary(ops.ABS, x, out=x, name="abs")


def angle(x):
    return real_valued_unary(ops.ANGLE, ops.ANGLE_COMPLEX, x)


def exp(x):
    return unary(ops.EXP, x, floating=True, name="exp")


def exp_(x):
    return unary(ops.EXP, x, out=x, floating=True, name="exp")


def log(x):
    return unary(ops.LOG, x, floating=True, name="log")


def log_(x):
    return unary(ops.LOG, x, out=x, floating=True, name="log")


def sqrt(x):
    return unary(ops.SQRT, x, floating=True, name="sqrt")


def sqrt_(x):
    return unary(ops.SQRT, x, out=x, floating=True, name="sqrt")


def relu(x):
    return unary(ops.RELU, x, name="relu")


def relu_(x):
    return unary(ops.RELU, x, out=x, name="relu")


def threshold_backward(grad_output, self, threshold):
    it = TensorIterator.binary_op(None, self, grad_output)
    return binary_loop(it, ops.THRESHOLD_BACKWARD, st.checked_convert(threshold, it.compute_dtype))


# sigmoid's and tanh's backward kernels (``sigmoid_backward``, ``tanh_backward`` in
# BinaryOpsKernel.cpp), from the output y: grad·(1 − y)·y and grad·(1 − y²).
def sigmoid_backward(grad_output, output):
    one_minus = dispatcher.call("rsub.Scalar", output, 1)
    return dispatcher.call("mul.Tensor", dispatcher.call("mul.Tensor", grad_output, one_minus), output)


def tanh_backward(grad_output, output):
    one_minus = dispatcher.call("rsub.Scalar", dispatcher.call("mul.Tensor", output, output), 1)
    return dispatcher.call("mul.Tensor", grad_output, one_minus)


def sigmoid(x):
    return unary(ops.SIGMOID, x, floating=True, name="sigmoid")


def sigmoid_(x):
    return unary(ops.SIGMOID, x, out=x, floating=True, name="sigmoid")


def tanh(x):
    return unary(ops.TANH, x, floating=True, name="tanh")


def tanh_(x):
    return unary(ops.TANH, x, out=x, floating=True, name="tanh")


def add_scalar(a, b, alpha=1):
    """``add.Scalar`` (CompositeExplicitAutograd): ``add.Tensor`` with the number wrapped."""
    return dispatcher.call("add.Tensor", a, wrap_scalar(b), alpha=alpha)


def sub_scalar(a, b, alpha=1):
    """``sub.Scalar`` (CompositeExplicitAutograd): ``sub.Tensor`` with the number wrapped."""
    return dispatcher.call("sub.Tensor", a, wrap_scalar(b), alpha=alpha)


def mul_scalar(a, b):
    """``mul.Scalar`` (CompositeExplicitAutograd): ``mul.Tensor`` with the number wrapped."""
    return dispatcher.call("mul.Tensor", a, wrap_scalar(b))


def div_scalar(a, b):
    return dispatcher.call("div.Tensor", a, wrap_scalar(b))


def div_scalar_(a, b):
    return dispatcher.call("div_.Tensor", a, wrap_scalar(b))
