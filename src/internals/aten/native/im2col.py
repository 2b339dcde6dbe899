"""``im2col`` and ``col2im`` as operators, the kernels of ``F.unfold`` and ``F.fold``
(``aten/src/ATen/native/Im2Col.cpp``, ``Col2Im.cpp``, checks from ``im2col_shape_check.h``).

The convolution uses the same two loops (``cpu/im2col.py``) on its own geometry; here they are
reached with the user's kernel size, dilation, padding and stride, and checked as torch checks
them. Both operators are linear, and each one's gradient is the other (``derivatives.yaml``).
"""
import numpy as np

from ...c10 import scalar_type as st
from ..dispatcher import call
from .copy import buffer, contiguous, to
from .dispatch_stub import loops
from .tensor_factories import empty

__all__ = ["im2col_cpu", "im2col_cuda", "col2im_cpu", "col2im_cuda"]


def _two(name, values):
    """An ``int[2]`` argument: torch's kernels check the length before anything else."""
    values = [values] * 2 if isinstance(values, int) else [int(v) for v in values]
    if len(values) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")
    return values


def _check_parameters(kernel_size, dilation, padding, stride):
    """The four positivity checks, in ``im2col_shape_check``'s order for kernel and dilation."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}")
    if dw <= 0 or dh <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dh} "
                           f"dilation_width: {dw}")
    if pw < 0 or ph < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} pad_width: {pw}")
    if sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} stride_width: {sw}")


def _size(x, d):
    """``x.size(d)``, with torch's IndexError for a dim the tensor does not have."""
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if d >= x.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, {x.dim() - 1}], but got "
                         f"{d})")
    return x.shape[d]


def _check_dtype(x, kernel):
    """Both kernels have loops for the floating and complex types and bool only."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex or x.dtype is st.bool_):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{x.dtype.torch_name}\'')


def _blocks(size, k, d, p, s):
    """How many windows fit along one dim (``div_rtn``: Python's ``//`` already rounds down)."""
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _im2col_geometry(x, kernel_size, dilation, padding, stride):
    kernel_size, dilation, padding, stride = (_two(n, v) for n, v in (
        ("kernel_size", kernel_size), ("dilation", dilation), ("padding", padding), ("stride", stride)))
    _check_parameters(kernel_size, dilation, padding, stride)
    sizes = list(x.shape)
    inner_ok = _size(x, 1) != 0 and _size(x, 2) != 0      # read before the dims are checked, as torch reads them
    if not ((x.dim() == 3 and sizes[0] and inner_ok) or (x.dim() == 4 and inner_ok and sizes[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {sizes}")
    H, W = sizes[-2:]
    OH, OW = (_blocks(n, k, d, p, s) for n, k, d, p, s in zip((H, W), kernel_size, dilation, padding, stride))
    if OH < 1 or OW < 1:
        (kh, kw), (dh, dw), (ph, pw) = kernel_size, dilation, padding
        raise RuntimeError(f"Given input with spatial size ({H}, {W}), kernel_size=({kh}, {kw}), dilation=({dh}, "
                           f"{dw}), padding=({ph}, {pw}), calculated shape of the array of sliding blocks as ({OH}, "
                           f"{OW}), but its components must be at least one.")
    return kernel_size, dilation, padding, stride, OH, OW


def _batched(x, dims):
    """An unbatched input gets a batch of one (the kernels squeeze it off the result again)."""
    return (x, True) if x.dim() == dims else (call("unsqueeze", x, 0), False)


def im2col_cpu(self, kernel_size, dilation, padding, stride):
    """(N, C, H, W) -> (N, C·kh·kw, L), one column per window position; (C, H, W) -> (C·kh·kw, L)."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw), OH, OW = _im2col_geometry(self, kernel_size, dilation, padding,
                                                                      stride)
    _check_dtype(self, "im2col_out_cpu")
    x, batched = _batched(self, 4)
    x = contiguous(x)
    N, C, H, W = x.shape
    cols = empty((N, C * kh * kw, OH * OW), dtype=x.dtype, device=x.device)
    if cols.numel():        # a pure copy: the 16-bit floats move as their bit patterns
        loops(x.device, "im2col").im2col(buffer(cols), x._flat_buffer(), C, H, W,
                                         kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)
    return cols if batched else call("squeeze.dim", cols, 0)


im2col_cuda = im2col_cpu


def _col2im_geometry(x, output_size, kernel_size, dilation, padding, stride):
    output_size, kernel_size, dilation, padding, stride = (_two(n, v) for n, v in (
        ("output_size", output_size), ("kernel_size", kernel_size), ("dilation", dilation),
        ("padding", padding), ("stride", stride)))
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}")
    if sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} stride_width: {sw}")
    if dw <= 0 or dh <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dh} "
                           f"dilation_width: {dw}")
    if pw < 0 or ph < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} pad_width: {pw}")
    sizes = list(x.shape)
    if not ((x.dim() == 2 and sizes[0] and sizes[1]) or (x.dim() == 3 and sizes[1] and sizes[2])):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {sizes}")
    planes, length = sizes[-2:]
    if planes % (kw * kh):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={planes} and kernel_size=({kh}, {kw}).")
    OH, OW = output_size
    BH, BW = _blocks(OH, kh, dh, ph, sh), _blocks(OW, kw, dw, pw, sw)
    given = (f"Given output_size=({OH}, {OW}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), padding=({ph}, "
             f"{pw}), stride=({sh}, {sw}), ")
    if length != BH * BW:
        raise RuntimeError(given + "expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {BH} * {BW} = {BH * BW}, but got input.size(2)={length}.")
    if BH < 1 or BW < 1:
        raise RuntimeError(given + f"calculated shape of the array of sliding blocks as ({BH}, {BW}), which is too "
                           "small (non-positive)")
    if OW < 1 or OH < 1:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: output_size=({OH}, {OW}).")
    return output_size, kernel_size, dilation, padding, stride, BH, BW


def col2im_cpu(self, output_size, kernel_size, dilation, padding, stride):
    """(N, C·kh·kw, L) -> (N, C, H, W): every column entry summed into the image element it was
    copied from; (C·kh·kw, L) -> (C, H, W). On CUDA the sums run in float32 for the 16-bit
    floats, rounded once at the end; on the CPU each add rounds (below)."""
    (H, W), (kh, kw), (dh, dw), (ph, pw), (sh, sw), BH, BW = _col2im_geometry(
        self, output_size, kernel_size, dilation, padding, stride)
    _check_dtype(self, "col2im_out_cpu")
    x, batched = _batched(self, 3)
    # bool sums as "any": counted in int64, then cast back (nonzero is True)
    compute = st.int64 if x.dtype is st.bool_ else st.opmath_type(x.dtype)
    x = contiguous(to(x, compute))
    N, C = x.shape[0], x.shape[1] // (kh * kw)
    image = empty((N, C, H, W), dtype=compute, device=x.device)
    if image.numel() and self.dtype.is_reduced_float and x.device.type == "cpu":
        buffer(image)[:] = _col2im_each_add_rounded(x._flat_buffer(), self.dtype, (N, C, H, W),
                                                    (kh, kw, dh, dw, ph, pw, sh, sw, BH, BW))
    elif image.numel():
        loops(x.device, "im2col").col2im(buffer(image), x._flat_buffer(), C, H, W,
                                         kh, kw, sh, sw, ph, pw, dh, dw, BH, BW)
    image = to(image, self.dtype)
    return image if batched else call("squeeze.dim", image, 0)


col2im_cuda = col2im_cpu


def _col2im_each_add_rounded(cols, dtype, shape, geometry):
    """CPU col2im on float16/bfloat16: ``im2col.h``'s loop adds into the 16-bit image
    (``data_im[...] += data_col[...]``), so every add rounds, in column-row order. For one
    kernel offset (ki, kj) no two blocks land on one pixel, so each offset is one vectorised
    add over a padded image, rounded; the padding is cut off at the end."""
    N, C, H, W = shape
    kh, kw, dh, dw, ph, pw, sh, sw, BH, BW = geometry
    cols = cols.reshape(N, C, kh, kw, BH, BW)
    padded = np.zeros((N, C, H + 2 * ph, W + 2 * pw), np.float32)
    for ki in range(kh):
        for kj in range(kw):
            rows = slice(ki * dh, ki * dh + (BH - 1) * sh + 1, sh)
            columns = slice(kj * dw, kj * dw + (BW - 1) * sw + 1, sw)
            padded[:, :, rows, columns] = _round_to(dtype, padded[:, :, rows, columns] + cols[:, :, ki, kj])
    return padded[:, :, ph:ph + H, pw:pw + W].ravel()


def _round_to(dtype, values):
    """float32 values rounded to nearest even in float16 or bfloat16, kept as float32."""
    if dtype is st.float16:
        return values.astype(np.float16).astype(np.float32)
    bits = values.view(np.uint32)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(values), np.float32(np.nan), bits.view(np.float32))
