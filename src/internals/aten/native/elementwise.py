"""Elementwise operators: unary, binary and ``where`` (``UnaryOps.cpp``, ``BinaryOps.cpp``,
``TensorCompare.cpp`` in ``aten/src/ATen/native``).

Each follows the same path as a structured ATen kernel: check the devices, compute the result
dtype by torch's promotion rules, broadcast, allocate the output with the layout TensorIterator
gives it (or check the in-place output), cast inputs to the computation dtype, and run one loop.
float16 and bfloat16 compute in float32 and round once at the end, as ATen's ``opmath`` does.
"""
import numpy as np

from ...c10 import scalar_type as st
from ..tensor_iterator import broadcast_shapes, check_no_overlap, geometry, output_layout
from . import scalar_ops as ops
from .copy import _cast_like, _same_device_copy, buffer
from .dispatch_stub import loops
from .tensor_factories import empty_strided


def common_device(*tensors):
    """The op's device. A 0-dim CPU tensor (a wrapped Python scalar, say) may join any device."""
    found = None
    for t in tensors:
        impl = t._impl
        if impl.sizes or impl.device.type != "cpu":
            if found is None:
                found = impl.device
            elif impl.device != found:
                a, b = sorted({found, impl.device}, key=str, reverse=True)
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                                   f"devices, {a} and {b}!")
    return found or tensors[0].device


def _compute_dtype(dtype):
    return st.float32 if dtype.is_reduced_float else dtype


def _prepare(x, dtype, device):
    """``x`` as ``dtype`` on ``device``, copying only when it must."""
    if x.device != device:
        x = x.to(device)
    return x if x.dtype is dtype else _cast_like(x, dtype)


def _result(out, inputs, shape, out_dtype, common, layout_from=None):
    """Allocate the output, or check an in-place/``out=`` one.

    A new output takes the layout TensorIterator computes from ``layout_from`` (the inputs as
    promoted, see ``_promoted``; by default ``inputs``). The checks of an in-place output come
    in ``TensorIterator::build``'s order: memory overlap, then shape, then device and dtype (an
    expanded bool tensor told to ``add_(1)`` hears about the overlap).
    """
    if out is None:
        strides = output_layout([i._impl for i in (layout_from or inputs)], shape)
        return empty_strided(shape, strides, dtype=out_dtype, device=common_device(*inputs))
    check_no_overlap(out._impl, [i._impl for i in inputs])
    if tuple(out.shape) != shape:
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape {list(shape)}")
    common_device(out, *inputs)     # in place too: only a 0-dim CPU operand may join another device
    if not st.can_cast(out_dtype, out.dtype):
        raise RuntimeError(f"result type {out_dtype.torch_name} can't be cast to the desired output "
                           f"type {out.dtype.torch_name}")
    return out


def _promoted(x, dtype):
    """The input as a CPU TensorIterator reads it: cast to the common ``dtype`` first.

    ``compute_types`` replaces such an input by ``x.to(dtype)``, a copy with x's layout made
    dense, and the output's layout is computed from the copies. It can differ from the one x
    itself would give: x of shape (1, 1, 2) and strides (1, 1, 2) sorts its size-1 dims first,
    its copy is plain contiguous. (CUDA casts inside the kernel instead: no copies there.)
    """
    return x if x.dtype is dtype or x.device.type != "cpu" else _cast_like(x, dtype)


def _run(out, compute_out_dtype, run_loop):
    """Run the loop into ``out`` directly, or through a temporary when dtypes differ."""
    target = out if out.dtype is compute_out_dtype else out._empty_like(compute_out_dtype)
    if out.numel():
        run_loop(target)
        if target is not out:
            _same_device_copy(out, target)
    return out


def unary(op, x, *, out=None, floating=False, name=None):
    """A unary op. ``floating`` ops (exp, log, ...) turn integer inputs into the default float."""
    if x.dtype is st.bool_ and op in (ops.NEG, ops.ABS, ops.RELU):
        raise _bool_error(op, name)
    dtype = x.dtype
    if floating and not dtype.is_floating_point:
        dtype = st.get_default_dtype()
    xp = _promoted(x, dtype)
    out = _result(out, [x], tuple(x.shape), dtype, x, layout_from=[xp])
    compute = _compute_dtype(dtype)
    xc = _prepare(xp, compute, out.device)

    def run_loop(target):
        g = geometry([target._impl, xc._impl], target.shape)
        loops(target.device).unary_loop(op, buffer(target), buffer(xc), g.shape, g.strides, g.offsets)
    return _run(out, compute, run_loop)


def _bool_error(op, name):
    if op == ops.NEG:
        return RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                            "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if op == ops.RELU:
        return RuntimeError("Boolean inputs not supported for relu")
    return NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')


def binary(op, a, b, *, alpha=1, out=None):
    """A binary op with broadcasting and type promotion; ``out`` is the in-place target, if any."""
    common = st.result_type(a, b)
    _check_binary(op, a, b, common, alpha)
    if op == ops.DIV and not common.is_floating_point:
        common = st.get_default_dtype()                   # true division of integers
    out_dtype = st.bool_ if op in ops.COMPARISONS else common
    shape = broadcast_shapes(tuple(a.shape), tuple(b.shape))
    ap, bp = _promoted(a, common), _promoted(b, common)
    out = _result(out, [a, b], shape, out_dtype, common, layout_from=[ap, bp])
    if _pow_by_zero_or_one(op, b):
        # ``pow(Tensor, Scalar)`` (Pow.cpp) takes a short cut for these exponents: x ** 0 is a
        # fill with ones and x ** 1 a copy. That is why they work for bool, which has no pow.
        if b.item() == 0:
            out.fill_(1)
        else:
            out.copy_(a)
        return out
    compute = _compute_dtype(common)
    device = out.device
    ac, bc = _binary_inputs(op, ap, bp, b, common, compute, device)
    if op == ops.POW and not compute.is_floating_point:
        op = ops.INT_POW
    scalar = st.checked_convert(alpha, compute)
    compute_out = st.bool_ if op in ops.COMPARISONS else compute

    def run_loop(target):
        g = geometry([target._impl, ac._impl, bc._impl], shape)
        loops(device).binary_loop(op, buffer(target), buffer(ac), buffer(bc), scalar, g.shape, g.strides, g.offsets)
    return _run(out, compute_out, run_loop)


def _binary_inputs(op, a, b, original_b, common, compute, device):
    """The inputs as the loop reads them: in ``common`` first (``a``, ``b``: see ``_promoted``),
    then in ``compute``.

    TensorIterator casts every input to the common dtype before the kernel runs, so with a
    float16 result a Python 2.3 is the float16 2.30078 and an int32 5001 is 5000; the kernel
    then widens to float32. One exception (``mul_kernel``, ``div_true_kernel`` in
    ``BinaryOpsKernel.cpp``): mul and div read a one-element second operand's original value
    at float32 precision (``original_scalar_value<opmath_t>``), so ``x * 2.3`` uses 2.3f.
    """
    if a.dtype is compute and original_b.dtype is compute and a.device == original_b.device:
        return a, original_b                # the usual case: nothing to cast, nothing to move
    def to_common(x):
        return x if x.dtype is common or compute is common else _cast_like(x, common)
    keep_b = op in (ops.MUL, ops.DIV) and original_b.numel() == 1
    return _prepare(to_common(a), compute, device), _prepare(original_b if keep_b else to_common(b), compute, device)


def _pow_by_zero_or_one(op, b):
    return op == ops.POW and b._impl.is_wrapped_number and b.item() in (0, 1)


def _check_binary(op, a, b, common, alpha):
    if op == ops.SUB and st.bool_ in (a.dtype, b.dtype):      # ``sub_check``: whatever the other operand
        if a.dtype is b.dtype:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    if common is st.bool_:
        if op == ops.POW and not _pow_by_zero_or_one(op, b):
            raise NotImplementedError('"pow" not implemented for \'Bool\'')
    if op in (ops.ADD, ops.SUB) and not common.is_floating_point and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if op in (ops.ADD, ops.SUB) and isinstance(alpha, complex):     # no complex dtypes here
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    if op in (ops.ADD, ops.SUB) and common is not st.bool_ and isinstance(alpha, bool):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if op == ops.POW and not common.is_floating_point and b._impl.is_wrapped_number and b.item() < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def where(cond, a, b):
    if cond.dtype is not st.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{cond.dtype.torch_name}")
    common = st.result_type(a, b)
    shape = broadcast_shapes(tuple(cond.shape), tuple(a.shape), tuple(b.shape))
    device = common_device(cond, a, b)
    # where casts its values with ``.to(result_type)`` before building its TensorIterator
    # (on every device), so the output's layout follows the cast copies.
    cc = _prepare(cond, st.bool_, device)
    ac, bc = _prepare(a, common, device), _prepare(b, common, device)
    out = _result(None, [cond, a, b], shape, common, common, layout_from=[cc, ac, bc])
    if out.numel():
        g = geometry([out._impl, cc._impl, ac._impl, bc._impl], shape)
        loops(device).where_loop(buffer(out), buffer(cc), buffer(ac), buffer(bc), g.shape, g.strides, g.offsets)
    return out


# The kernels by their names in native_functions.yaml: each a TensorIterator loop over one op.
def _unary_kernel(name, op, floating, inplace):
    def kernel(x):
        return unary(op, x, out=x if inplace else None, floating=floating, name=name)
    kernel.__name__ = kernel.__qualname__ = name + ("_" if inplace else "")
    return kernel


def _binary_kernel(name, op, inplace):
    def kernel(a, b, *, alpha=1):
        return binary(op, a, b, alpha=alpha, out=a if inplace else None)
    kernel.__name__ = kernel.__qualname__ = name + ("_" if inplace else "")
    return kernel


UNARY_OPS = {"neg": (ops.NEG, False), "abs": (ops.ABS, False), "exp": (ops.EXP, True), "log": (ops.LOG, True),
             "sqrt": (ops.SQRT, True), "relu": (ops.RELU, False), "sigmoid": (ops.SIGMOID, True),
             "tanh": (ops.TANH, True)}
BINARY_OPS = {"add": ops.ADD, "sub": ops.SUB, "mul": ops.MUL, "div": ops.DIV, "pow": ops.POW,
              "maximum": ops.MAXIMUM, "minimum": ops.MINIMUM, "eq": ops.EQ, "ne": ops.NE,
              "lt": ops.LT, "le": ops.LE, "gt": ops.GT, "ge": ops.GE}
def _scalar_kernel(name, op):
    """A ``.Scalar`` overload: the Python number arrives as is, and is wrapped here."""
    def kernel(a, other):
        return binary(op, a, _wrap(other))
    kernel.__name__ = kernel.__qualname__ = name + "_scalar"
    return kernel


def pow_tensor_scalar(self, exponent):
    return binary(ops.POW, self, _wrap(exponent))


def pow_scalar(self, exponent):
    """``pow.Scalar``: a Python number raised to a tensor (``2 ** x``)."""
    return binary(ops.POW, _wrap(self), exponent)


def rsub_scalar(self, other, alpha=1):
    """``rsub.Scalar``: ``other - alpha * self`` (``1 - x``)."""
    return binary(ops.SUB, _wrap(other), self, alpha=alpha)


def _wrap(value):
    from ..._tensor import wrap_scalar
    return wrap_scalar(value)


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _k = _scalar_kernel(_name, BINARY_OPS[_name])
    globals()[_k.__name__] = _k
for _name, (_op, _floating) in UNARY_OPS.items():
    for _inplace in (False, True):
        _k = _unary_kernel(_name, _op, _floating, _inplace)
        globals()[_k.__name__] = _k
for _name, _op in BINARY_OPS.items():
    for _inplace in (False, True):
        _k = _binary_kernel(_name, _op, _inplace)
        globals()[_k.__name__] = _k
