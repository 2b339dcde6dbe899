"""1-d, 2-d and 3-d convolution as im2col + matrix product (``aten/src/ATen/native/Convolution.cpp``, the
``slow_conv2d`` path of ``ConvolutionMM2d.cpp`` with ``Unfold2d.cpp`` / ``im2col.cuh``, and the
``slow_conv3d`` path of ``ConvolutionMM3d.cpp`` with ``vol2col.h``).

``im2col`` copies, for every output position, the ``C·kh·kw`` input values its kernel window
covers into one column (zeros where the window hangs over the padding). The convolution is then
one matrix product, ``weight (OC, C·kh·kw) @ columns (C·kh·kw, OH·OW)``, per image and group.
The backward pass reuses both pieces: the weight's gradient is ``grad_output @ columnsᵀ``; the
input's is ``weightᵀ @ grad_output``, folded back onto the image by ``col2im``, which sums every
column entry into the input element it was copied from.

torch's CPU wheel runs float32 convolutions through oneDNN (mkldnn) instead; the numbers agree to
float rounding, and the operators a dispatch mode sees (``convolution``, ``convolution_backward``)
are the same.
"""
import math
from collections import namedtuple

from ...c10 import scalar_type as st
from ...c10.exception import warn_once
from ...c10.memory_format import (
    channels_last,
    channels_last_3d,
    channels_last_strides,
    is_channels_last_contiguous,
    suggest_memory_format,
)
from ..dispatcher import call
from .copy import buffer, contiguous, to
from .dispatch_stub import loops, onednn_native
from .tensor_factories import empty, empty_strided

Geometry = namedtuple("Geometry", "N C H W OC G kh kw sh sw ph pw dh dw OH OW")
# A 3-d convolution's: each of the kernel, stride, padding, dilation and output sizes is a
# (frames, rows, columns) triple.
Geometry3d = namedtuple("Geometry3d", "N C T H W OC G k s p d O")


def _expand(name, values, dim):
    """``expand_param_if_needed``: one value for every spatial dim, or one per dim."""
    values = [int(values)] if isinstance(values, int) else [int(v) for v in values]
    if len(values) == 1:
        values *= dim
    if len(values) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} values to match the "
                           f"convolution dimensions, but got {name}={values}")
    return values


def _pair(name, values):
    return _expand(name, values, 2)


def conv_geometry(input, weight, stride, padding, dilation, groups, bias=None):
    """Every size the loops need, checked in the order of ``_convolution``, ``check_shape_forward``,
    ``_select_conv_backend`` and ``slow_conv2d_shape_check``."""
    k = weight.dim()
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride, padding, dilation = (_expand(n, v, k - 2) for n, v in
                                 (("stride", stride), ("padding", padding), ("dilation", dilation)))
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 0:
        raise RuntimeError("dilation should be greater than zero")
    if k != input.dim():
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight {list(weight.shape)}, but got "
                           f"{input.dim()}-dimensional input of size {list(input.shape)} instead")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError("Given groups=" + str(groups) + ", expected weight to be divisible by " + str(groups)
                           + " at dimension 0, but got weight of size " + str(list(weight.shape)) + " instead")
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                           f"{input.shape[1]} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{weight.shape[0]} elements, but got bias of size {list(bias.shape)} instead")
    padded = [n + 2 * p for n, p in zip(input.shape[2:], padding)]
    extent = [d * (n - 1) + 1 for d, n in zip(dilation, weight.shape[2:])]    # the window, dilation included
    if any(p < e for p, e in zip(padded, extent)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, extent))}). Kernel size can't be greater than actual input "
                           "size")
    if k == 3:        # checked in 1-d terms; the caller convolves 2-d views (``view1d_as_2d``)
        return None
    if k not in (4, 5):
        raise NotImplementedError("internals' convolution is 1-d, 2-d or 3-d only")
    if input.numel() == 0 and input.shape[0] and input.shape[1]:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{list(input.shape)}")
    if k == 5:
        if input.numel() and (min(dilation) <= 0 or min(weight.shape[2:]) <= 0):
            raise RuntimeError(f"kernel size and dilation should be greater than zero, but got kernel size "
                               f"{list(weight.shape[2:])} and dilation {dilation}")
        out_size = tuple((p - e) // s + 1 for p, e, s in zip(padded, extent, stride))
        return Geometry3d(*input.shape, weight.shape[0], groups, tuple(weight.shape[2:]), tuple(stride),
                          tuple(padding), tuple(dilation), out_size)
    N, C, H, W = input.shape
    OC, _, kh, kw = weight.shape
    if input.numel() == 0 and C and weight.numel() == 0:   # torch's empty backend reads the weight's element 0
        raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
    if input.numel():       # the kernels' own checks (an empty batch never reaches them)
        if min(dilation) == 0:
            what, got = ("kernel size", [kh, kw]) if min(kh, kw) == 0 else ("dilation", dilation)
            raise RuntimeError(f"{what} should be greater than zero, but got {got}")
        if min(kh, kw) == 0:
            raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} "
                               f"kernel_width: {kw}")
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    OH, OW = ((p - e) // s + 1 for p, e, s in zip(padded, extent, stride))
    return Geometry(N, C, H, W, OC, groups, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


# The C++ type names torch's errors print (``TensorBase::toString``): "CPUHalfType", which torch's
# Python layer then rewrites to the legacy tensor name where there is one ("torch.HalfTensor").
_LEGACY_NAMES = {st.float32: "Float", st.float64: "Double", st.float16: "Half", st.uint8: "Byte", st.int8: "Char",
                 st.int16: "Short", st.int32: "Int", st.int64: "Long"}


def _type_string(t):
    cuda = t.device.type == "cuda"
    if t.dtype in _LEGACY_NAMES:
        return f"torch.{'cuda.' if cuda else ''}{_LEGACY_NAMES[t.dtype]}Tensor"
    return f"{'CUDA' if cuda else 'CPU'}{t.dtype.torch_name}Type"


def _check_onednn_types(input, weight, bias, transposed=False, output_padding=(), stride=()):
    """``ConvParams::use_mkldnn``'s first rule: on a CPU where oneDNN computes bfloat16 (or half)
    natively, torch hands such convolutions to oneDNN, which wants the weight and the bias in
    the input's type (``check_input_same_type_as_parameters``, Mkldnn backend). Elsewhere the
    slow kernels below run and decide for themselves (a transposed one adds the bias with add_)."""
    if input.device.type != "cpu" or input.dtype not in (st.bfloat16, st.float16):
        return
    if not onednn_native(input.dtype.torch_name):
        return
    if transposed and any(o >= s for o, s in zip(output_padding, stride)):    # is_output_padding_big
        return
    for name, other in (("weight", weight), ("bias", bias)):
        if other is not None and other.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({_type_string(input)}) and {name} type ({_type_string(other)}) should "
                               f"be the same or input should be a MKLDNN tensor and {name} is a dense tensor")


def _check_types(input, weight, bias):
    for other in (weight, bias):
        if other is not None and other.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype.torch_name} but found {other.dtype.torch_name}")
    if input.dtype is st.bool_:
        raise NotImplementedError("\"slow_conv2d_cpu\" not implemented for 'Bool'")
    if input.device != weight.device or (bias is not None and bias.device != input.device):
        raise RuntimeError("Input and weight should be on the same device")


def keep_channels_last(out, *inputs):
    """torch's layer kernels write a channels-last output when an input is channels-last
    (``suggest_memory_format``): the loops here write NCHW, and this copies to NHWC then, with
    exactly NHWC's strides even where sizes of 1 would make NCHW's do."""
    if not any(t is not None and t.dim() == 4 and suggest_memory_format(t.shape, t.stride()) is channels_last
               for t in inputs):
        return out
    strides = channels_last_strides(tuple(out.shape), channels_last)
    if tuple(out.stride()) == strides:
        return out
    return call("copy_", empty_strided(tuple(out.shape), strides, dtype=out.dtype, device=out.device), out, False)


def _weight_grad_layout(grad_weight, input, weight, dilation):
    """The weight's gradient of a channels-last convolution: oneDNN (float32 and bfloat16 on torch's
    CPU wheel) allocates it channels-last; the other dtypes take ``slow_conv2d``, whose gradient
    is laid out as the weight is when the weight already reads as channels-last (sizes of 1 can
    make NCHW's strides NHWC's too: a depthwise weight, a 1x1 kernel), channels-last otherwise.
    A dilated one takes ``slow_conv_dilated2d``, which allocates it channels-last always."""
    if (grad_weight.dtype not in (st.float32, st.bfloat16) and all(d == 1 for d in dilation) and any(
            suggest_memory_format(t.shape, t.stride()) is channels_last for t in (input, weight))
            and is_channels_last_contiguous(tuple(weight.shape), tuple(weight.stride()), channels_last)):
        return call("copy_", empty_strided(tuple(weight.shape), tuple(weight.stride()), dtype=grad_weight.dtype,
                                           device=grad_weight.device), grad_weight, False)
    return keep_channels_last(grad_weight, input, weight)


def im2col_columns(input, kernel_size, stride, padding, dilation):
    """The columns of ``input`` (N, C, H, W), as ``torch.nn.functional.unfold`` returns them
    (``im2col`` in ``aten/src/ATen/native/im2col.h``): (N, C·kh·kw, OH·OW), one row per
    (channel, ki, kj) and one column per output position, zeros where a window covers padding.
    Each argument after ``input`` is a pair (height, width)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    N, C, H, W = input.shape
    OH = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    OW = (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    x = contiguous(input)
    cols = empty((N, C * kh * kw, OH * OW), dtype=x.dtype, device=x.device)
    if cols.numel():
        loops(x.device, "im2col").im2col(buffer(cols), x._flat_buffer(), C, H, W, kh, kw, sh, sw, ph, pw, dh, dw,
                                         OH, OW)
    return cols


def im2col(input, g):
    """The columns of ``input`` (N, C, H, W) by group: (N, G, C/G·kh·kw, OH·OW). A group's rows
    are consecutive, so this is ``im2col_columns``' matrix with its rows split by group (a
    reader's ``im2col_columns``, plugged in by ``internals.exercises.use_mine``, runs here)."""
    cols = im2col_columns(input, (g.kh, g.kw), (g.sh, g.sw), (g.ph, g.pw), (g.dh, g.dw))
    return call("reshape", cols, [g.N, g.G, g.C // g.G * g.kh * g.kw, g.OH * g.OW])


def col2im(cols, g):
    """The adjoint of :func:`im2col`: each input element is the sum of the column entries copied from it."""
    cols = contiguous(cols)
    image = empty((g.N, g.C, g.H, g.W), dtype=cols.dtype, device=cols.device)
    if image.numel():
        loops(cols.device, "im2col").col2im(buffer(image), cols._flat_buffer(), *g[1:4], *g[6:])
    return image


def _view4d(t):
    """(N, C, L) as (N, C, 1, L): a 1-d convolution is a 2-d one over a height of 1."""
    return call("unsqueeze", t, 2)


def _params_as_2d(stride, padding, dilation):
    """The 2-d parameters of a 1-d convolution: stride and dilation 1, padding 0 along the height."""
    return ([1, *_expand("stride", stride, 1)], [0, *_expand("padding", padding, 1)],
            [1, *_expand("dilation", dilation, 1)])


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``convolution`` for 1-d and 2-d, non-transposed convolutions: im2col, then one batched matrix
    product. A 1-d input is made contiguous and convolved as a 2-d one of height 1, then viewed
    back (``_convolution``'s ``view1d_as_2d``, ``view4d``, ``view3d``). A transposed one is the
    adjoint of the plain one, see :func:`_transposed_convolution`."""
    if transposed:
        return _transposed_convolution(input, weight, bias, stride, padding, dilation, output_padding, groups)
    if bias is not None and bias.dtype is not input.dtype:      # _convolution checks the bias before the weight
        raise RuntimeError(f"Input type ({st.type_meta_name(input.dtype)}) and bias type "
                           f"({st.type_meta_name(bias.dtype)}) should be the same")
    _check_onednn_types(input, weight, bias)
    _check_types(input, weight, bias)
    g = conv_geometry(input, weight, stride, padding, dilation, groups, bias)
    if g is None:
        out = convolution(_view4d(contiguous(input)), _view4d(weight), bias, *_params_as_2d(stride, padding, dilation),
                          False, [0, 0], groups)
        return call("squeeze.dim", out, 2)
    if isinstance(g, Geometry3d):
        return _convolution3d(input, weight, bias, g)
    if g.C == 0:      # torch's empty backend multiplies the empty input by the weight: no channels out
        return _zeros([g.N, 0, g.OH, g.OW], input)
    compute = st.opmath_type(input.dtype)      # 16-bit floats multiply in float32, as torch's CPU loops do
    x, w = to(input, compute), to(weight, compute)
    out = call("matmul", call("reshape", w, [g.G, g.OC // g.G, -1]), im2col(x, g))     # (N, G, OC/G, OH·OW)
    out = call("reshape", out, [g.N, g.OC, g.OH, g.OW])
    if bias is not None:
        out = call("add_.Tensor", out, call("reshape", to(bias, compute), [g.OC, 1, 1]), alpha=1)
    return keep_channels_last(to(out, input.dtype), input, weight)


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    """The three gradients, each only if ``output_mask`` asks for it."""
    if transposed:
        return _transposed_backward(grad_output, input, weight, stride, padding, dilation, output_padding, groups,
                                    output_mask)
    g = conv_geometry(input, weight, stride, padding, dilation, groups)
    if g is None:
        grads = convolution_backward(_view4d(grad_output), _view4d(contiguous(input)), _view4d(weight), bias_sizes,
                                     *_params_as_2d(stride, padding, dilation), False, [0, 0], groups, output_mask)
        return tuple(t if t is None or i == 2 else call("squeeze.dim", t, 2) for i, t in enumerate(grads))
    if isinstance(g, Geometry3d):
        return _convolution3d_backward(grad_output, input, weight, bias_sizes, g, output_mask)
    if input.numel() == 0:       # an empty batch, or no channels: zeros (the products would be empty)
        return _empty_backend_backward(input, weight, bias_sizes, output_mask)
    compute = st.opmath_type(input.dtype)
    go = call("reshape", to(grad_output, compute), [g.N, g.G, g.OC // g.G, g.OH * g.OW])
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        w = call("reshape", to(weight, compute), [g.G, g.OC // g.G, -1])
        # torch's gradients follow the forward's layout: channels-last if the input or weight is
        grad_input = keep_channels_last(to(col2im(call("matmul", call("transpose.int", w, 1, 2), go), g),
                                           input.dtype), input, weight)
    if output_mask[1]:
        # Σ over images of grad_output @ columnsᵀ, as one product per group: the images are laid
        # side by side along the summed dimension, (G, OC/G, N·L) @ (G, N·L, C/G·kh·kw).
        cols = call("reshape", call("permute", im2col(to(input, compute), g), [1, 0, 3, 2]),
                    [g.G, g.N * g.OH * g.OW, -1])
        go_rows = call("reshape", call("permute", go, [1, 2, 0, 3]), [g.G, g.OC // g.G, -1])
        grad_weight = _weight_grad_layout(to(call("reshape", call("matmul", go_rows, cols), list(weight.shape)),
                                             weight.dtype), input, weight, dilation)
    if output_mask[2]:
        summed = call("sum.dim_IntList", to(grad_output, compute), [0, 2, 3], False, dtype=None)
        grad_bias = to(summed, grad_output.dtype)
    return grad_input, grad_weight, grad_bias


# ---- 3-d convolution (``slow_conv3d``: ``vol2col`` + gemm, ``col2vol`` for the input's gradient)
# The columns are a view first: the padded input read through ``as_strided`` with one stride per
# kernel offset and one per output position, (N, C, kt, kh, kw, OT, OH, OW), which ``reshape``
# copies into the (N, G, C/G·kt·kh·kw, OT·OH·OW) matrix, so the loops are the copy's and no 3-d
# loop of its own is needed (on the CPU and the GPU alike). ``col2vol`` adds the columns back one
# kernel offset at a time, in the kernel's order, as ``vol2col.h``'s loop does.

def _layout3d(out, input, weight):
    """torch's CPU wheel runs a float32 3-d convolution through oneDNN, which writes channels-last-3d
    when the input or the weight is; other dtypes take ``slow_conv3d``, which writes contiguous."""
    if input.dtype is not st.float32 or not any(
            suggest_memory_format(t.shape, t.stride()) is channels_last_3d for t in (input, weight)):
        return out
    strides = channels_last_strides(tuple(out.shape), channels_last_3d)
    return call("copy_", empty_strided(tuple(out.shape), strides, dtype=out.dtype, device=out.device), out, False)


def vol2col(x, g):
    """The columns of ``x`` (N, C, T, H, W) by group: (N, G, C/G·kt·kh·kw, OT·OH·OW)."""
    pads = [v for p in reversed(g.p) for v in (p, p)]        # constant_pad_nd's order: last dim first
    x = contiguous(call("constant_pad_nd", x, pads, 0) if any(g.p) else x)
    sN, sC, *spatial = x.stride()
    view = call("as_strided", x, [g.N, g.C, *g.k, *g.O],
                [sN, sC, *(d * s for d, s in zip(g.d, spatial)), *(st_ * s for st_, s in zip(g.s, spatial))],
                x.storage_offset())
    return call("reshape", view, [g.N, g.G, g.C // g.G * math.prod(g.k), math.prod(g.O)])


def col2vol(cols, g):
    """The adjoint of :func:`vol2col`: each input element is the sum of the column entries copied
    from it, added kernel offset by kernel offset."""
    padded_size = [n + 2 * p for n, p in zip((g.T, g.H, g.W), g.p)]
    image = _zeros([g.N, g.C, *padded_size], cols)
    sN, sC, *spatial = image.stride()
    cols = call("reshape", cols, [g.N, g.C, *g.k, *g.O])
    for i in range(g.k[0]):
        for j in range(g.k[1]):
            for m in range(g.k[2]):
                offset = sum(o * d * s for o, d, s in zip((i, j, m), g.d, spatial))
                window = call("as_strided", image, [g.N, g.C, *g.O],
                              [sN, sC, *(st_ * s for st_, s in zip(g.s, spatial))], offset)
                entry = call("select.int", call("select.int", call("select.int", cols, 2, i), 2, j), 2, m)
                call("add_.Tensor", window, entry, alpha=1)
    for dim, (p, n) in enumerate(zip(g.p, (g.T, g.H, g.W))):
        image = call("narrow", image, dim + 2, p, n)
    return contiguous(image)


def _convolution3d(input, weight, bias, g):
    """``weight (G, OC/G, C/G·kt·kh·kw) @ columns`` per image and group, then the bias."""
    if g.C == 0:
        return _zeros([g.N, 0, *g.O], input)
    compute = st.opmath_type(input.dtype)
    out = call("matmul", call("reshape", to(weight, compute), [g.G, g.OC // g.G, -1]), vol2col(to(input, compute), g))
    out = call("reshape", out, [g.N, g.OC, *g.O])
    if bias is not None:
        out = call("add_.Tensor", out, call("reshape", to(bias, compute), [g.OC, 1, 1, 1]), alpha=1)
    return _layout3d(to(out, input.dtype), input, weight)


def _convolution3d_backward(grad_output, input, weight, bias_sizes, g, output_mask):
    if input.numel() == 0:
        return _empty_backend_backward(input, weight, bias_sizes, output_mask)
    compute = st.opmath_type(input.dtype)
    L = math.prod(g.O)
    go = call("reshape", to(grad_output, compute), [g.N, g.G, g.OC // g.G, L])
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        w = call("reshape", to(weight, compute), [g.G, g.OC // g.G, -1])
        grad_input = _layout3d(to(col2vol(call("matmul", call("transpose.int", w, 1, 2), go), g), input.dtype),
                               input, weight)
    if output_mask[1]:
        cols = call("reshape", call("permute", vol2col(to(input, compute), g), [1, 0, 3, 2]), [g.G, g.N * L, -1])
        go_rows = call("reshape", call("permute", go, [1, 2, 0, 3]), [g.G, g.OC // g.G, -1])
        grad_weight = _layout3d(to(call("reshape", call("matmul", go_rows, cols), list(weight.shape)), weight.dtype),
                                input, weight)
    if output_mask[2]:
        summed = call("sum.dim_IntList", to(grad_output, compute), [0, 2, 3, 4], False, dtype=None)
        grad_bias = to(summed, grad_output.dtype)
    return grad_input, grad_weight, grad_bias


# ---- transposed convolution ("deconvolution"): the plain convolution's adjoint
# A plain convolution with weight (C_in, C_out/G, k…) maps a (N, C_out, OH, OW) image to
# (N, C_in, H, W); the transposed one with the same weight maps back. Its forward is therefore
# the plain one's input gradient (weightᵀ @ columns, folded by ``col2im``), and its input
# gradient is the plain convolution of grad_output: no loop of its own, as torch's
# ``slow_conv_transpose2d`` (``NaiveConvolutionTranspose2d.cpp``) is built from gemm + col2im.

class _Sized:
    """Only the sizes of an image, for :func:`conv_geometry` to describe the transposed output."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def dim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)


def _check_transposed(input, weight, bias, output_padding, stride, dilation, groups):
    """``check_shape_forward``'s transposed branch, then the 2-d kernel's output-padding check (a
    1-d convolution reaches it as a 2-d one of height 1, and is named so in its message)."""
    if groups > 0 and weight.dim() > 2 and weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    if input.dim() == weight.dim() > 2 and input.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[0]} channels, but got {input.shape[1]} "
                           "channels instead")
    if bias is not None and weight.dim() > 2 and (bias.dim() != 1 or bias.shape[0] != weight.shape[1] * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {weight.shape[1] * groups} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if weight.dim() in (4, 5) and any(o >= max(s, d) for o, s, d in zip(output_padding, stride, dilation)):
        named = (("output_padding", output_padding), ("stride", stride), ("dilation", dilation))
        dims = ("height", "width") if weight.dim() == 4 else ("depth", "height", "width")
        parts = [f"{what}_{n}: {v}" for what, values in named for n, v in zip(dims, values)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(parts))


def _transposed_params(weight, stride, padding, dilation, output_padding):
    n = max(weight.dim() - 2, 1)
    return [_expand(name, v, n) for name, v in (("stride", stride), ("padding", padding), ("dilation", dilation),
                                                 ("output_padding", output_padding))]


def _transposed_shape(input, weight, stride, padding, dilation, output_padding, groups):
    """(N, C_out, …) with each side ``(n − 1)·s − 2p + d·(k − 1) + output_padding + 1``."""
    spatial = [(n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, s, p, d, k, o in
               zip(input.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding)]
    return [input.shape[0], weight.shape[1] * groups, *spatial]


def _output_sizes(g):
    return list(g.O) if isinstance(g, Geometry3d) else [g.OH, g.OW]


def _pad_to(t, g):
    """``t`` (N, C, H, W) or (N, C, T, H, W) with zeros after each spatial side up to the plain
    convolution's output: an output padding past the stride adds positions no input reaches."""
    extra = [o - n for o, n in zip(_output_sizes(g), t.shape[2:])]
    return t if not any(extra) else call("constant_pad_nd", t, [v for e in reversed(extra) for v in (0, e)], 0)


def _transposed_convolution(input, weight, bias, stride, padding, dilation, output_padding, groups):
    """``weightᵀ @ input`` per group, folded onto the output image by ``col2im``; then the bias.
    torch's 2-d kernel (``slow_conv_transpose2d``) adds the bias with ``add_``, so a bias of
    another floating dtype is taken (promoted, the sum cast to the output's dtype); its 3-d kernel
    reads the bias in the input's dtype and refuses any other."""
    stride, padding, dilation, output_padding = _transposed_params(weight, stride, padding, dilation, output_padding)
    _check_onednn_types(input, weight, bias, True, output_padding, stride)
    _check_types(input, weight, bias if weight.dim() == 5 else None)
    _check_transposed(input, weight, bias, output_padding, stride, dilation, groups)
    if weight.dim() == 3:
        out = _transposed_convolution(_view4d(contiguous(input)), _view4d(weight), bias,
                                      *_params_as_2d(stride, padding, dilation), [0, *output_padding], groups)
        return call("squeeze.dim", out, 2)
    if weight.numel() == 0:     # the shape checks of slow_conv_transpose{2,3}d (an empty batch: the empty backend)
        if input.numel() == 0:
            raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
        if weight.dim() == 5:
            raise RuntimeError("non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x "
                               f"kernel_width) tensor expected for weight, but got: {list(weight.shape)}")
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: {list(weight.shape)}")
    shape = _transposed_shape(input, weight, stride, padding, dilation, output_padding, groups)
    if min(shape[2:]) < 1:      # slow_conv_transpose{2,3}d_shape_check, before any size reaches a loop
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). Calculated "
                           f"output size per channel: ({' x '.join(map(str, shape[2:]))}). Output size is too small")
    g = conv_geometry(_Sized(shape), weight, stride, padding, dilation, groups)
    compute = st.opmath_type(input.dtype)
    spatial = _output_sizes(g)
    x = call("reshape", _pad_to(to(input, compute), g), [g.N, g.G, g.OC // g.G, math.prod(spatial)])
    w = call("reshape", to(weight, compute), [g.G, g.OC // g.G, -1])
    columns = call("matmul", call("transpose.int", w, 1, 2), x)
    out = col2vol(columns, g) if isinstance(g, Geometry3d) else col2im(columns, g)
    if bias is not None:
        added = bias if bias.dtype is not input.dtype else to(bias, compute)
        out = call("add_.Tensor", out, call("reshape", added, [g.C] + [1] * len(spatial)), alpha=1)
    if isinstance(g, Geometry3d):
        return _layout3d(to(out, input.dtype), input, weight)
    return keep_channels_last(to(out, input.dtype), input, weight)


def _transposed_backward(grad_output, input, weight, stride, padding, dilation, output_padding, groups, output_mask):
    """The input's gradient is the plain convolution of ``grad_output``; the weight's is the plain
    convolution's weight gradient with the roles swapped (``grad_output`` as its input, ``input``
    as its output gradient); the bias's sums ``grad_output`` over all but the channels."""
    stride, padding, dilation, output_padding = _transposed_params(weight, stride, padding, dilation, output_padding)
    if weight.dim() == 3:
        grads = _transposed_backward(_view4d(grad_output), _view4d(contiguous(input)), _view4d(weight),
                                     *_params_as_2d(stride, padding, dilation), [0, *output_padding], groups,
                                     output_mask)
        return tuple(t if t is None or i == 2 else call("squeeze.dim", t, 2) for i, t in enumerate(grads))
    if input.numel() == 0:
        return _empty_backend_backward(input, weight, [weight.shape[1] * groups], output_mask)
    g = conv_geometry(grad_output, weight, stride, padding, dilation, groups)
    grad_input = grad_weight = grad_bias = None
    layout = _layout3d if isinstance(g, Geometry3d) else keep_channels_last
    spatial = list(range(2, input.dim()))
    if output_mask[0]:
        plain = convolution(grad_output, weight, None, stride, padding, dilation, False, [0] * len(spatial), groups)
        if list(plain.shape[2:]) != list(input.shape[2:]):
            # the output padding's rows reach no input: torch's kernel writes a gradient of the
            # input's own size, so the narrowed result is copied to a dense tensor
            for dim in spatial:
                plain = call("narrow", plain, dim, 0, input.shape[dim])
            plain = contiguous(plain)
        grad_input = layout(plain, input, weight)
    if output_mask[1]:
        grad_weight = convolution_backward(_pad_to(input, g), grad_output, weight, None, stride, padding, dilation,
                                           False, [0] * len(spatial), groups, [False, True, False])[1]
        grad_weight = layout(grad_weight, input, weight)
    if output_mask[2]:
        compute = st.opmath_type(grad_output.dtype)
        grad_bias = to(call("sum.dim_IntList", to(grad_output, compute), [0, *spatial], False, dtype=None),
                       grad_output.dtype)
    return grad_input, grad_weight, grad_bias


def _empty_backend_backward(input, weight, bias_sizes, output_mask):
    """``convolution_backward``'s empty backend (an empty batch or no channels): ``zeros_like`` the
    input and the weight, so each gradient keeps its tensor's strides, as torch's does."""
    return (call("zeros_like", input) if output_mask[0] else None,
            call("zeros_like", weight) if output_mask[1] else None,
            _zeros(bias_sizes, weight) if output_mask[2] else None)


def _zeros(sizes, like):
    return call("zeros", list(sizes), dtype=like.dtype, device=like.device)


def _batchify(input, spatial=2):
    """``batchify``: an unbatched (C, *spatial) input gets a batch of one."""
    dims = spatial + 2
    if input.dim() not in (dims - 1, dims):
        raise RuntimeError(f"Expected {dims - 1}D (unbatched) or {dims}D (batched) input to conv{spatial}d, but got "
                           f"input of size: {list(input.shape)}")
    return input if input.dim() == dims else call("unsqueeze", input, 0)


def conv3d(input, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1):
    """``conv3d``, CompositeImplicitAutograd: ``convolution`` of an (N, C, T, H, W) input."""
    out = call("convolution", _batchify(input, 3), weight, bias, stride, padding, dilation, False, [0, 0, 0], groups)
    return out if input.dim() == 5 else call("squeeze.dim", out, 0)


def conv3d_padding(input, weight, bias=None, stride=(1, 1, 1), padding="valid", dilation=(1, 1, 1), groups=1):
    """``conv3d.padding``: "valid" or "same", as :func:`conv2d_padding` one dimension up."""
    return _convolution_mode(conv3d, 3, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """``conv2d``, CompositeImplicitAutograd."""
    out = call("convolution", _batchify(input), weight, bias, stride, padding, dilation, False, [0, 0], groups)
    return out if input.dim() == 4 else call("squeeze.dim", out, 0)


def conv1d(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
    """``conv1d``, CompositeImplicitAutograd: ``convolution`` of an (N, C, L) input."""
    out = call("convolution", _batchify(input, 1), weight, bias, stride, padding, dilation, False, [0], groups)
    return out if input.dim() == 3 else call("squeeze.dim", out, 0)


def conv1d_padding(input, weight, bias=None, stride=(1,), padding="valid", dilation=(1,), groups=1):
    """``conv1d.padding``: "valid" or "same", as :func:`conv2d_padding` over a height of 1."""
    if padding == "valid":
        return conv1d(input, weight, bias, stride, (0,), dilation, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    batched = _batchify(input, 1)
    if any(s != 1 for s in _expand("stride", stride, 1)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    (d,) = _expand("dilation", dilation, 1)
    total = max(d * (weight.shape[-1] - 1), 0) if weight.dim() == 3 else 0
    if total % 2:
        _warn_uneven_same_padding(stacklevel=3)
        batched = call("constant_pad_nd", batched, [0, 1], 0)
    out = call("convolution", batched, weight, bias, stride, [total // 2], dilation, False, [0], groups)
    return out if input.dim() == 3 else call("squeeze.dim", out, 0)


def _warn_uneven_same_padding(stacklevel):
    """``convolution_same``'s warning, given once per process as torch's is: an even kernel under
    an odd dilation pads one side one more than the other, with a padded copy of the input."""
    warn_once("_warn_uneven_same_padding", "Using padding='same' with even kernel lengths and odd dilation may "
              "require a zero-padded copy of the input be created", UserWarning, stacklevel=stacklevel)


def conv2d_padding(input, weight, bias=None, stride=(1, 1), padding="valid", dilation=(1, 1), groups=1):
    """``conv2d.padding``: "valid" is no padding; "same" pads so the output keeps the input's size
    (``_convolution_mode`` and ``convolution_same``, which check before padding)."""
    return _convolution_mode(conv2d, 2, input, weight, bias, stride, padding, dilation, groups)


def _convolution_mode(conv, dims, input, weight, bias, stride, padding, dilation, groups):
    """torch's ``_convolution_mode`` for a ``dims``-d convolution ``conv``: "valid" is no padding;
    "same" is ``convolution_same``, its checks, then the padding."""
    batched = _batchify(input, dims)
    if padding == "valid":
        return conv(input, weight, bias, stride, [0] * dims, dilation, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    k = weight.dim()
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if k != batched.dim():
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight{list(weight.shape)}, but got "
                           f"{batched.dim()}-dimensional input of size {list(batched.shape)} instead")
    if any(s != 1 for s in _expand("stride", stride, dims)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    # Total padding d·(k − 1) per dim, split l = total // 2 on the left and r = total − l on the
    # right. Where they differ, torch's ``convolution_same`` first pads the input's right side by
    # r − l = 1 (``constant_pad_nd``: the gradient's graph has torch's ConstantPadNdBackward0) and
    # then pads l on both sides. (An empty kernel's negative total is left for the convolution
    # to refuse.)
    totals = [max(d * (n - 1), 0) for d, n in zip(_expand("dilation", dilation, dims), weight.shape[2:])]
    if any(t % 2 for t in totals):
        _warn_uneven_same_padding(stacklevel=4)
        pad_nd = [p for t in reversed(totals) for p in (0, t % 2)]     # F.pad's order: last dim first
        # The batched input is padded (torch's conv*d_padding batchify first), so an unbatched
        # input's gradient ends in the unsqueeze's SqueezeBackward1, as torch's does.
        batched = call("constant_pad_nd", batched, pad_nd, 0)
    out = conv(batched, weight, bias, stride, [t // 2 for t in totals], dilation, groups)
    return out if input.dim() == dims + 2 else call("squeeze.dim", out, 0)


def conv_transpose2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0), groups=1,
                     dilation=(1, 1)):
    """``conv_transpose2d.input``, CompositeImplicitAutograd: ``convolution`` with ``transposed``
    (torch's argument order: ``output_padding`` and ``groups`` before ``dilation``)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of "
                           f"size: {list(input.shape)}")
    batched = input if input.dim() == 4 else call("unsqueeze", input, 0)
    out = call("convolution", batched, weight, bias, stride, padding, dilation, True, output_padding, groups)
    return out if input.dim() == 4 else call("squeeze.dim", out, 0)


def conv_transpose3d(input, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0), output_padding=(0, 0, 0), groups=1,
                     dilation=(1, 1, 1)):
    """``conv_transpose3d.input``, CompositeImplicitAutograd, over (N, C, T, H, W) or (C, T, H, W)."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input of "
                           f"size: {list(input.shape)}")
    batched = input if input.dim() == 5 else call("unsqueeze", input, 0)
    out = call("convolution", batched, weight, bias, stride, padding, dilation, True, output_padding, groups)
    return out if input.dim() == 5 else call("squeeze.dim", out, 0)


def conv_transpose1d(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1,
                     dilation=(1,)):
    """``conv_transpose1d``, CompositeImplicitAutograd, over (N, C, L) or (C, L)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of "
                           f"size: {list(input.shape)}")
    batched = input if input.dim() == 3 else call("unsqueeze", input, 0)
    out = call("convolution", batched, weight, bias, stride, padding, dilation, True, output_padding, groups)
    return out if input.dim() == 3 else call("squeeze.dim", out, 0)
