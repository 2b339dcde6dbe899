"""OffsetCalculator: where the element at a linear index lies (``ATen/cuda/detail/OffsetCalculator.cuh``).

Every strided loop, on either device, turns a position in its iteration space into an offset in
an operand's buffer: the position is unravelled over the sizes (fastest dim first, as
TensorIterator orders them) and each coordinate times its stride is summed. Written once here,
as a ``register_jitable`` function, so the CPU loops (``@njit``), the CUDA kernels
(``@cuda.jit``) and the reductions of both compile the same code.
"""
import numpy as np
from numba.extending import register_jitable

__all__ = ["index_to_offset"]


@register_jitable
def index_to_offset(index, sizes, strides, first_dim):
    """Offset, in elements, of linear ``index`` over ``sizes[first_dim:]`` (fastest first), where
    dim ``d`` steps ``strides[d]``. Loops that split off dim 0 pass ``first_dim=1``."""
    pos, rest = 0, np.int64(index)      # a prange index may be unsigned: keep the arithmetic signed
    for d in range(first_dim, sizes.size):
        pos += (rest % sizes[d]) * strides[d]
        rest //= sizes[d]
    return pos
