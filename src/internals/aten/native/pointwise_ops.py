"""addcmul and addcdiv (``aten/src/ATen/native/PointwiseOps.cpp``, kernels in
``cpu/PointwiseOpsKernel.cpp``): ``self + value * tensor1 * tensor2`` and
``self + value * tensor1 / tensor2`` in one loop over three inputs.

The meta functions build a ternary TensorIterator (``build_ternary_op``): the three inputs
promoted to their common dtype, the result cast into ``out`` if that is safe. ``value`` is read
as the computation type (``value.to<opmath_t>()``), so float16 and bfloat16 compute in float32
and round once. The optimizers' moment updates are written with these.
"""
from ...c10 import scalar_type as st
from ..tensor_iterator import TensorIteratorConfig
from . import scalar_ops as ops
from .dispatch_stub import loops

__all__ = ["addcmul", "addcmul_", "addcdiv", "addcdiv_"]


def _pointwise(op, name, self, tensor1, tensor2, value, out):
    it = (TensorIteratorConfig().add_output(out).add_const_input(self).add_const_input(tensor1)
          .add_const_input(tensor2).promote_inputs_to_common_dtype().cast_common_dtype_to_outputs()
          .enforce_safe_casting_to_output().build())
    if it.common_dtype is st.bool_:
        raise NotImplementedError(f'"{name}_cpu_out" not implemented for \'Bool\'')
    scalar = st.checked_convert(value, it.compute_dtype)
    return it.for_each(lambda buffers, *geometry: loops(it.device).ternary_loop(op, *buffers, scalar, *geometry))


def addcmul(self, tensor1, tensor2, *, value=1):
    return _pointwise(ops.ADDCMUL, "addcmul", self, tensor1, tensor2, value, None)


def addcmul_(self, tensor1, tensor2, *, value=1):
    return _pointwise(ops.ADDCMUL, "addcmul", self, tensor1, tensor2, value, self)


def _check_addcdiv(tensor1, tensor2):
    """``TORCH_META_FUNC(addcdiv)``: integer (or bool) operands would once have floor-divided."""
    if tensor1.dtype.category <= st.INTEGRAL and tensor2.dtype.category <= st.INTEGRAL:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def addcdiv(self, tensor1, tensor2, *, value=1):
    _check_addcdiv(tensor1, tensor2)
    return _pointwise(ops.ADDCDIV, "addcdiv", self, tensor1, tensor2, value, None)


def addcdiv_(self, tensor1, tensor2, *, value=1):
    _check_addcdiv(tensor1, tensor2)
    return _pointwise(ops.ADDCDIV, "addcdiv", self, tensor1, tensor2, value, self)
