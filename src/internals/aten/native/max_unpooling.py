"""Max unpooling (``aten/src/ATen/native/MaxUnpooling.cpp``, ``Pool.h``; loops in
``cpu/MaxUnpoolKernel.cpp`` and ``cuda/MaxUnpooling.cu``).

The partial inverse of max pooling: each input value is written back at the position its index
names in a zeroed (OH, OW) plane, or (OT, OH, OW) volume, of its image and channel; every other
element stays zero. The indices are those ``max_pool2d/3d(..., return_indices=True)`` gives, so
two inputs may name one position (overlapping windows): the later one in the plane's order wins,
as in torch's loop run on one thread. The gradient is the reverse gather (``derivatives.yaml``:
``max_pool_double_backward``), so no backward operator of its own.

torch declares neither operator structured: an out= kernel resizes ``out`` itself (``resize_``,
no warning) and the functional kernel calls it on an empty tensor. The 2-d operator lays a 4-d
output out in the input's suggested memory format (channels-last stays so); the 3-d one wants a
contiguous ``out``. Here the checks and the layout are the meta step (which fake tensors run)
and the loop the impl step. The loop writes where the indices point, so every index is checked
against its plane before it runs (torch's loop checks each as it goes and raises after): an index
from outside the plane never reaches memory. Floating types only, as torch's kernels.
"""
import math

import numpy as np
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.memory_format import channels_last, contiguous_format, suggest_memory_format
from ..context import alert_not_deterministic
from ..dispatcher import call
from ..empty_tensor import is_meta_execution
from .copy import buffer, contiguous, to_device
from .dispatch_stub import loops
from .tensor_factories import empty

UNPOOL_TYPES = (st.float32, st.float64, st.float16, st.bfloat16)


def _ints(values, n):
    """A ``SymInt[n]``/``int[n]`` argument as a list: one int stands for all ``n`` (torch's parser)."""
    return [int(values)] * n if isinstance(values, int) else [int(v) for v in values]


def _check_non_empty_dims(x, fn_name):
    """``check_non_empty_dims(input, 1, ...)``: only the batch may be empty."""
    for i in range(1, x.dim()):
        if x.shape[i] <= 0:
            raise RuntimeError(f"{fn_name}: Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{list(x.shape)} with dimension {i} being empty.")


def _check_indices_shape(x, indices):
    if tuple(x.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(x.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")


# ---- meta steps: torch's checks in its order, then the output resized as torch resizes it
def meta_max_unpool2d(out, self, indices, output_size):
    if indices.dtype is not st.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype.torch_name}")
    output_size = _ints(output_size, 2)
    if len(output_size) != 2:
        raise RuntimeError("There should be exactly two elements (height, width) in output_size, but got "
                           f"{len(output_size)} elements.")
    if self.dim() not in (3, 4):
        raise RuntimeError("Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with "
                           f"{self.dim()} dimensions.")
    _check_indices_shape(self, indices)
    _check_non_empty_dims(self, "max_unpooling2d_forward_out_cpu()")
    oh, ow = output_size
    if oh < 0 or ow < 0:
        raise RuntimeError("max_unpooling2d(): output_size must contain non-negative spatial dimensions, but got "
                           f"output_size=({oh}, {ow})")
    out = empty([0], dtype=self.dtype, device=self.device) if out is None else out
    if self.dim() == 3:                 # ``resize_`` without a format: a fitting ``out`` keeps its strides
        return call("resize_", out, [self.shape[0], oh, ow])
    fmt = channels_last if suggest_memory_format(self.shape, self.stride()) is channels_last else contiguous_format
    return call("resize_", out, [self.shape[0], self.shape[1], oh, ow], memory_format=fmt)


def meta_max_unpool3d(out, self, indices, output_size, stride, padding):
    if out is not None and not out.is_contiguous():
        raise RuntimeError("output must be contiguous")
    if indices.dtype is not st.int64:
        raise RuntimeError("elements in indices should be type int64")
    if self.dim() not in (4, 5):
        raise RuntimeError("Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with "
                           f"{self.dim()} dimensions.")
    output_size, stride, padding = _ints(output_size, 3), _ints(stride, 3), _ints(padding, 3)
    for name, values, sep in (("output_size", output_size, ""), ("stride", stride, ":"), ("padding", padding, ":")):
        if len(values) != 3:
            raise RuntimeError(f"There should be exactly three elements (depth, height, width) in {name}, but got"
                               f"{sep} {len(values)} elements.")
    _check_indices_shape(self, indices)
    _check_non_empty_dims(self, "max_unpooling3d_forward_out_cpu()")
    if min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {stride}")
    ot, oh, ow = output_size
    if min(output_size) < 0:
        raise RuntimeError("max_unpooling3d(): output_size must contain non-negative spatial dimensions, but got "
                           f"output_size=({ot}, {oh}, {ow})")
    out = empty([0], dtype=self.dtype, device=self.device) if out is None else out
    return call("resize_", out, [*self.shape[:-3], ot, oh, ow])


# ---- impl step: the kernel's dtype checks, the indices checked, the scatter into a zeroed copy
def impl_max_unpool(out, self, indices, dims):
    """``out`` (already sized) zeroed, then each value of ``self`` written at its index's position
    in its plane (``dims`` = 2) or volume (``dims`` = 3)."""
    if out.numel() == 0 or is_meta_execution():       # torch runs no kernel for an empty output
        return out
    name = f"max_unpool{dims}d"
    if self.dtype not in UNPOOL_TYPES:
        raise NotImplementedError(f'"{name}" not implemented for \'{self.dtype.torch_name}\'')
    if out.dtype is not self.dtype:                   # the kernel's ``data_ptr<scalar_t>()``
        raise RuntimeError(f"expected scalar type {self.dtype.torch_name} but found {out.dtype.torch_name}")
    spatial = tuple(out.shape[-dims:])
    plane_out = math.prod(spatial)
    idx = call("clone", contiguous(indices))           # a private copy: checked, then read by the loop
    if call("min", idx).item() < 0 or call("max", idx).item() >= plane_out:
        host = np.asarray(to_device(idx, st.int64, "cpu")._flat_buffer())
        # torch's loop keeps the last bad index it met: on one thread, the last in order
        last = int(host[np.flatnonzero((host < 0) | (host >= plane_out))[-1]])
        raise RuntimeError(f"Found an invalid max index: {last} (output volumes are of size "
                           f"{'x'.join(map(str, spatial))})")
    x = contiguous(self)
    values = empty(tuple(out.shape), dtype=self.dtype, device=self.device)
    # a pure move of bit patterns: the 16-bit floats go through as their bits, never converted
    loops(self.device, "pooling").max_unpool(buffer(values), x._flat_buffer(), idx._flat_buffer(),
                                             math.prod(self.shape[-dims:]), plane_out)
    call("copy_", out, values)
    return out


# Two inputs may name one output position: on CUDA, which one lands is a race between threads,
# so torch alerts deterministic mode in these kernels on every device, the CPU's included.
def max_unpooling2d_forward_out_cpu(self, indices, output_size, *, out):
    alert_not_deterministic("max_unpooling2d_forward_out")
    return impl_max_unpool(meta_max_unpool2d(out, self, indices, output_size), self, indices, 2)


def max_unpooling2d_forward_cpu(self, indices, output_size):
    alert_not_deterministic("max_unpooling2d_forward_out")
    return impl_max_unpool(meta_max_unpool2d(None, self, indices, output_size), self, indices, 2)


def max_unpooling3d_forward_out_cpu(self, indices, output_size, stride, padding, *, out):
    alert_not_deterministic("max_unpooling3d_forward_out")
    return impl_max_unpool(meta_max_unpool3d(out, self, indices, output_size, stride, padding), self, indices, 3)


def max_unpooling3d_forward_cpu(self, indices, output_size, stride, padding):
    alert_not_deterministic("max_unpooling3d_forward_out")
    return impl_max_unpool(meta_max_unpool3d(None, self, indices, output_size, stride, padding), self, indices, 3)


# Read by the CPU and CUDA loops: one task (or thread) per plane, so a position two inputs name is
# written by one task only, in the plane's order, and no two tasks touch one element.
@register_jitable
def max_unpool_plane(out, inp, indices, p, plane_in, plane_out):
    """Plane ``p`` of the output: zeroed, then each input value of the plane written at its index
    (the host checked every index against ``plane_out``)."""
    for i in range(plane_out):
        out[p * plane_out + i] = 0
    for j in range(plane_in):
        out[p * plane_out + indices[p * plane_in + j]] = inp[p * plane_in + j]
