"""addcmul and addcdiv (``aten/src/ATen/native/PointwiseOps.cpp``, kernels in
``cpu/PointwiseOpsKernel.cpp``): ``self + value * tensor1 * tensor2`` and
``self + value * tensor1 / tensor2`` in one loop over three inputs.

Declared structured, as torch declares them: each a meta step that builds a ternary
TensorIterator (``build_ternary_op``: the three inputs promoted to their common dtype, the result
cast into ``out`` if that is safe) and an impl step that runs the loop; ``addcmul.out`` is the
primary kernel, the functional and in-place forms are derived from it. ``value`` is read
as the computation type (``value.to<opmath_t>()``), so float16 and bfloat16 compute in float32
and round once. The optimizers' moment updates are written with these.
"""
from ...c10 import scalar_type as st
from ..tensor_iterator import TensorIteratorConfig
from . import scalar_ops as ops
from .dispatch_stub import loops
from .elementwise import complex32_in_opmath, complex32_product, complex32_sum, rounded_to_complex32
from .structured import structured
from .tensor_factories import wrap_scalar

__all__ = ["addcmul_out", "addcdiv_out"]


def _ternary_op(out, self, tensor1, tensor2):
    """``build_ternary_op``: the three inputs promoted to their common dtype, the result cast
    into ``out`` if that is safe (``out`` resized, or allocated when None)."""
    return (TensorIteratorConfig().add_output(out).add_const_input(self).add_const_input(tensor1)
            .add_const_input(tensor2).promote_inputs_to_common_dtype().cast_common_dtype_to_outputs()
            .enforce_safe_casting_to_output().build())


def _run(it, op, name, value):
    """The stub's loop: ``value`` read as the computation type, bool refused by the dispatch
    macro (``AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2``, no Bool)."""
    if it.common_dtype is st.bool_:
        raise NotImplementedError(f'"{name}_cpu_out" not implemented for \'Bool\'')
    scalar = st.checked_convert(value, it.compute_dtype)
    return it.for_each(lambda buffers, *geometry: loops(it.device).ternary_loop(op, *buffers, scalar, *geometry))


def meta_addcmul(out, self, tensor1, tensor2, *, value=1):
    """``TORCH_META_FUNC(addcmul)``."""
    return _ternary_op(out, self, tensor1, tensor2)


def impl_addcmul(it, self, tensor1, tensor2, *, value=1):
    """``TORCH_IMPL_FUNC(addcmul_out)``: ``addcmul_stub``."""
    if it.common_dtype is st.complex32:
        return complex32_in_opmath(it.result, lambda s, t1, t2: _complex32_addcmul(s, t1, t2, value),
                                   self, tensor1, tensor2)
    return _run(it, ops.ADDCMUL, "addcmul", value)


addcmul_out = structured(meta_addcmul, impl_addcmul)


def _complex32_addcmul(self, tensor1, tensor2, value):
    """``self + value * tensor1 * tensor2`` in ``c10::complex<c10::Half>`` arithmetic (the
    kernel's scalar_t): value converted to complex32, each product rounded to it in turn."""
    def mul(a, b):
        return rounded_to_complex32(complex32_product(a, b))
    product = mul(mul(rounded_to_complex32(wrap_scalar(value)), tensor1), tensor2)
    return complex32_sum(self, product)


def meta_addcdiv(out, self, tensor1, tensor2, *, value=1):
    """``TORCH_META_FUNC(addcdiv)``: integer (or bool) operands would once have floor-divided."""
    if tensor1.dtype.category <= st.INTEGRAL and tensor2.dtype.category <= st.INTEGRAL:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    return _ternary_op(out, self, tensor1, tensor2)


def impl_addcdiv(it, self, tensor1, tensor2, *, value=1):
    """``TORCH_IMPL_FUNC(addcdiv_out)``: ``addcdiv_stub``."""
    return _run(it, ops.ADDCDIV, "addcdiv", value)


addcdiv_out = structured(meta_addcdiv, impl_addcdiv)
