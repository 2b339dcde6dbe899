"""3-d adaptive max pooling (``aten/src/ATen/native/AdaptiveMaxPooling3d.cpp``; loops in
``cpu/AdaptiveMaxPoolKernel.cpp`` and ``cuda/AdaptiveMaxPooling3d.cu``).

Output (i, j, k) is the largest value over frames [floor(i·T/OT), ceil((i+1)·T/OT)) and the rows
and columns likewise (the adaptive average's windows, never empty), with its index
``(t·H + h)·W + w`` in the input volume; ties and NaNs as in :mod:`dilated_max_pool3d`. torch
declares it structured: a meta step that checks the input and lays out contiguous outputs (a
channels-last-3d input included), an impl step that runs the loop. Floating types only. The
backward pass is max pooling's: each output's gradient added at its index.
"""
import numpy as np
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ..dispatcher import call
from .average_pool3d import avg3d_window
from .copy import buffer, contiguous, to
from .dispatch_stub import loops
from .pooling import _adaptive_windows, _scatter_max_gradient
from .structured import set_output, structured
from .tensor_factories import empty


def _adaptive_max_geometry(x, output_size):
    """``TORCH_META_FUNC(adaptive_max_pool3d)``'s checks in its order, then the output size and
    the windows (as the 3-d average's loops read them)."""
    if x.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(x.shape)}")
    for d in range(1, x.dim()):
        if x.shape[d] <= 0:
            raise RuntimeError("adaptive_max_pool3d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with dimension {d} being empty")
    output_size = [output_size] * 3 if isinstance(output_size, int) else [int(v) for v in output_size]
    if len(output_size) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    if min(output_size) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(output_size)}: "
                           f"{[*x.shape[:-3], *output_size]}")
    in_size = tuple(x.shape[-3:])
    vectors = [v for n, o in zip(in_size, output_size) for v in _adaptive_windows(n, o)]
    return in_size, tuple(output_size), np.array([v for vector in vectors for v in vector], dtype=np.int64)


# ---- TORCH_META_FUNC(adaptive_max_pool3d) / TORCH_IMPL_FUNC(adaptive_max_pool3d_out_cpu)
def meta_adaptive_max_pool3d(out, indices, self, output_size):
    _, size, _ = _adaptive_max_geometry(self, output_size)
    shape = (*self.shape[:-3], *size)
    return set_output(out, shape, self.dtype, self.device), set_output(indices, shape, st.int64, self.device)


def impl_adaptive_max_pool3d(outs, self, output_size):
    """The maximum of each adaptive window and its int64 position in its input volume."""
    in_size, out_size, windows = _adaptive_max_geometry(self, output_size)
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"adaptive_max_pool3d_cpu" not implemented for \'{self.dtype.torch_name}\'')
    out, indices = outs
    if out.numel():
        compute = st.opmath_type(self.dtype)
        xc = contiguous(to(self, compute))
        values = empty(tuple(out.shape), dtype=compute, device=self.device)
        positions = empty(tuple(out.shape), dtype=st.int64, device=self.device)
        loops(self.device, "pooling").adaptive_max_pool3d(buffer(values), buffer(positions), xc._flat_buffer(),
                                                          *in_size, *out_size, windows)
        call("copy_", out, values)
        call("copy_", indices, positions)
    return out, indices


adaptive_max_pool3d_out_cpu = structured(meta_adaptive_max_pool3d, impl_adaptive_max_pool3d, outputs=2)


# ---- TORCH_META_FUNC(adaptive_max_pool3d_backward) / TORCH_IMPL_FUNC(..._out_cpu): grad_output's
# non-batch sizes, the indices' rank, the dtype and the sizes checked, a contiguous gradient of
# the input's sizes; then max pooling's scatter.
def meta_adaptive_max_pool3d_backward(grad_input, grad_output, self, indices):
    for d in range(1, grad_output.dim()):
        if grad_output.shape[d] <= 0:
            raise RuntimeError("adaptive_max_pool3d_backward(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes {list(grad_output.shape)} with "
                               f"dimension {d} being empty")
    if self.dim() != indices.dim():
        raise RuntimeError(f"expected dimensions {self.dim()} for `indices` but got dimensions {indices.dim()}")
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {st.type_meta_name(self.dtype)} for `gradOutput` but got dtype "
                           f"{st.type_meta_name(grad_output.dtype)}")
    if tuple(indices.shape) != tuple(grad_output.shape):
        raise RuntimeError(f"expected sizes {list(indices.shape)} for `gradOutput` but got sizes "
                           f"{list(grad_output.shape)}")
    if tuple(indices.shape[:-3]) != tuple(self.shape[:-3]):   # left to the loop in torch, which reads past them
        raise RuntimeError(f"adaptive_max_pool3d_backward: expected indices of size "
                           f"{[*self.shape[:-3], *indices.shape[-3:]]}, but got {list(indices.shape)}")
    return set_output(grad_input, tuple(self.shape), self.dtype, self.device)


def impl_adaptive_max_pool3d_backward(grad_input, grad_output, self, indices):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"adaptive_max_pool3d_backward" not implemented for '
                                  f'\'{self.dtype.torch_name}\'')
    return _scatter_max_gradient("adaptive_max_pool3d_backward", grad_input, grad_output, self, indices, dims=3)


adaptive_max_pool3d_backward_out_cpu = structured(meta_adaptive_max_pool3d_backward,
                                                  impl_adaptive_max_pool3d_backward)


# Read by the CPU and CUDA loops.
@register_jitable
def adaptive_max3d_output(inp, p, T, H, W, OT, OH, OW, ot, oh, ow, windows):
    """Output (ot, oh, ow) of volume ``p``: the largest value of its window (never empty) and its index."""
    t0, t1, _, h0, h1, _, w0, w1, _ = avg3d_window(windows, OT, OH, OW, ot, oh, ow)
    base = p * T * H * W
    at = (t0 * H + h0) * W + w0
    best = inp[base + at]
    for t in range(t0, t1):
        for h in range(h0, h1):
            for w in range(w0, w1):
                i = (t * H + h) * W + w
                v = inp[base + i]
                if v > best or v != v:
                    best, at = v, i
    return best, at
