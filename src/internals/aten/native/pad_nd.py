"""Padding (``aten/src/ATen/native/PadNd.cpp``, ``ReflectionPad.cpp``, ``ReplicationPadding.cpp``):
``pad``, the operator ``F.pad`` calls, checks the pad list and hands each mode to its operator.
Pads come in (left, right) pairs from the last dim backwards; negative pads crop.

* "constant": ``constant_pad_nd`` fills a new tensor with the value and copies the input into
  the middle (the input is narrowed first where a pad is negative).
* "reflect" and "replicate": ``reflection_pad{1,2,3}d`` and ``replication_pad{1,2,3}d``, each
  output element read from one input element. Here each padded dim is gathered in turn with
  ``index_select`` (the CPU and CUDA kernels of indexing), from the source positions torch's
  decomposition computes (``torch/_decomp/decompositions.py``: ``_reflection_pad``); their
  backward adds the gradient back with ``index_add_`` in the reverse order.
* "circular": ``_pad_circular``, CompositeImplicitAutograd: the input copied into the middle of
  a new tensor, then each side filled from the other side of the result (so its ``grad_fn`` is
  ``CopySlices``).
"""
from ...c10.memory_format import channels_last_strides, contiguous_format, suggest_memory_format
from ..dispatcher import call
from .structured import set_output, structured

_NON_CONSTANT = {"reflect": "reflection_pad{}d", "replicate": "replication_pad{}d", "circular": "_pad_circular"}


def pad(x, pad, mode="constant", value=None):
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * x.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {x.dim()}")
    if mode == "constant":
        return call("constant_pad_nd", x, list(pad), 0.0 if value is None else value)
    if mode not in _NON_CONSTANT:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    dims = len(pad) // 2
    if x.dim() not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {x.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    return call(_NON_CONSTANT[mode].format(dims), x, list(pad))


def _check_valid_input(x, dims):
    """``padding::check_valid_input``: a batch of size 0 is allowed, no other empty dim."""
    batched = x.dim() == dims + 2
    if x.dim() not in (dims + 1, dims + 2) or 0 in x.shape[int(batched):]:
        raise RuntimeError(f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(x.shape)}")


def _padded_dims(x, padding):
    """(dim, left, right) of each padded dim, the first (outermost) first."""
    dims = len(padding) // 2
    return [(x.dim() - dims + i, padding[2 * (dims - 1 - i)], padding[2 * (dims - 1 - i) + 1]) for i in range(dims)]


def _check_output_sizes(x, padding, reflect):
    """The padded sizes; the 1-d meta functions name a too small input, the others fail to
    allocate a negative size (``reflection_pad2d``'s CPU kernel multiplies it first)."""
    shape = list(x.shape)
    for d, left, right in _padded_dims(x, padding):
        shape[d] += left + right
    if len(padding) == 2 and shape[-1] < 1:
        raise RuntimeError(f"input (W: {x.shape[-1]}) is too small. Calculated output W: {shape[-1]}")
    negative = [s for s in shape if s < 0]
    if negative and reflect and len(padding) == 4:
        raise RuntimeError("numel: integer multiplication overflow")
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {shape}")
    return shape


def _source_positions(x, d, left, right, reflect):
    """For each output position along dim ``d``, the input position it reads."""
    size = x.shape[d]
    index = call("arange.start", -left, size + right, device=x.device)
    if reflect:     # size - 1 - |size - 1 - |i||: the input mirrored about its first and last element
        return call("rsub.Scalar", call("abs", call("rsub.Scalar", call("abs", index), size - 1)), size - 1)
    return call("clamp", index, 0, size - 1)


# ---- the meta and impl steps of the reflection and replication pads. torch structures
# ``reflection_pad1d``/``3d``, ``replication_pad1d``/``2d``/``3d`` and the backwards of the 1-d
# ones and ``reflection_pad3d`` (TORCH_META_FUNC / TORCH_IMPL_FUNC in ``ReflectionPad.cpp`` and
# ``ReplicationPadding.cpp``); the others keep a functional kernel, here the same two steps run
# with no ``out``.
def _layout(x, shape):
    """The strides the CPU kernels lay an output or a gradient out with: as the input suggests
    (channels-last, 2-d or 3-d, stays so); CUDA's are contiguous (None)."""
    if x.device.type != "cpu":
        return None
    fmt = suggest_memory_format(x.shape, x.stride())
    if fmt is contiguous_format:
        return None
    return channels_last_strides(tuple(shape), fmt)


def _restride(out, x, padding):
    """The 2-d and 3-d CPU kernels resize their output once more, in the input's suggested
    memory format: an ``out`` that already fit is laid out again (its strides not kept, unlike a
    structured kernel's usual ``out``); the 1-d ones write into ``out`` as it is."""
    if len(padding) > 2:
        fmt = suggest_memory_format(x.shape, x.stride()) if x.device.type == "cpu" else contiguous_format
        call("resize_", out, list(out.shape), memory_format=fmt)


def _check_pad(x, padding, reflect):
    """``padding::check_valid_input``, the reflection pads' ``padding < input size``, then the
    padded sizes."""
    dims = len(padding) // 2
    _check_valid_input(x, dims)
    if reflect:
        for i, (d, left, right) in enumerate(reversed(_padded_dims(x, padding))):
            if left >= x.shape[d] or right >= x.shape[d]:
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                                   f"input dimension, but got: padding ({left}, {right}) at dimension {d} of input "
                                   f"{list(x.shape)}")
    return _check_output_sizes(x, padding, reflect)


def _meta_pad(out, x, padding, reflect):
    shape = _check_pad(x, list(padding), reflect)
    return set_output(out, shape, x.dtype, x.device, _layout(x, shape))


def _impl_pad(out, x, padding, reflect):
    """Each padded dim gathered in turn, the outermost first, then written into ``out``."""
    result = x
    for d, left, right in _padded_dims(x, list(padding)):
        result = call("index_select", result, d, _source_positions(x, d, left, right, reflect))
    _restride(out, x, padding)
    return call("copy_", out, result)


def _meta_pad_backward(grad_input, grad_output, x, padding, reflect):
    """The forward's checks, grad_output of the padded sizes; the gradient laid out as the input."""
    shape = _check_pad(x, list(padding), reflect)
    if list(grad_output.shape) != shape:
        raise RuntimeError(f"grad_output size unexpected. Expected: {shape}, Got: {list(grad_output.shape)}")
    return set_output(grad_input, x.shape, x.dtype, x.device, _layout(x, x.shape))


def _impl_pad_backward(grad_input, grad_output, x, padding, reflect):
    """Each output element's gradient added to the input element it was read from."""
    result = grad_output
    for d, left, right in reversed(_padded_dims(x, list(padding))):
        shape = list(result.shape)
        shape[d] = x.shape[d]
        zeros = call("zeros", shape, dtype=grad_output.dtype, device=grad_output.device)
        result = call("index_add_", zeros, d, _source_positions(x, d, left, right, reflect), result)
    _restride(grad_input, x, padding)
    return call("copy_", grad_input, result)


def meta_reflection_pad1d(out, self, padding):
    return _meta_pad(out, self, padding, reflect=True)


def impl_reflection_pad1d(out, self, padding):
    """``reflection_pad1d``/``2d``/``3d``: the border reflected, the edge element not repeated."""
    return _impl_pad(out, self, padding, reflect=True)


def meta_reflection_pad3d(out, self, padding):
    return _meta_pad(out, self, padding, reflect=True)


def meta_replication_pad1d(out, self, padding):
    return _meta_pad(out, self, padding, reflect=False)


def impl_replication_pad1d(out, self, padding):
    """``replication_pad1d``/``2d``/``3d``: the edge element repeated."""
    return _impl_pad(out, self, padding, reflect=False)


def meta_replication_pad2d(out, self, padding):
    return _meta_pad(out, self, padding, reflect=False)


def meta_replication_pad3d(out, self, padding):
    return _meta_pad(out, self, padding, reflect=False)


def meta_reflection_pad1d_backward(grad_input, grad_output, self, padding):
    return _meta_pad_backward(grad_input, grad_output, self, padding, reflect=True)


def impl_reflection_pad1d_backward(grad_input, grad_output, self, padding):
    return _impl_pad_backward(grad_input, grad_output, self, padding, reflect=True)


def meta_reflection_pad3d_backward(grad_input, grad_output, self, padding):
    return _meta_pad_backward(grad_input, grad_output, self, padding, reflect=True)


def meta_replication_pad1d_backward(grad_input, grad_output, self, padding):
    return _meta_pad_backward(grad_input, grad_output, self, padding, reflect=False)


def impl_replication_pad1d_backward(grad_input, grad_output, self, padding):
    return _impl_pad_backward(grad_input, grad_output, self, padding, reflect=False)


reflection_pad1d_out = structured(meta_reflection_pad1d, impl_reflection_pad1d)
reflection_pad3d_out = structured(meta_reflection_pad3d, impl_reflection_pad1d)
replication_pad1d_out = structured(meta_replication_pad1d, impl_replication_pad1d)
replication_pad2d_out = structured(meta_replication_pad2d, impl_replication_pad1d)
replication_pad3d_out = structured(meta_replication_pad3d, impl_replication_pad1d)
reflection_pad1d_backward_out = structured(meta_reflection_pad1d_backward, impl_reflection_pad1d_backward)
reflection_pad3d_backward_out = structured(meta_reflection_pad3d_backward, impl_reflection_pad1d_backward)
replication_pad1d_backward_out = structured(meta_replication_pad1d_backward, impl_replication_pad1d_backward)


# the pads torch leaves unstructured (``reflection_pad2d``, its backward, the 2-d and 3-d
# replication backwards): one functional kernel, the same steps with the output allocated
def reflection_pad(x, padding):
    return impl_reflection_pad1d(meta_reflection_pad1d(None, x, padding), x, padding)


def reflection_pad_backward(grad_output, x, padding):
    return impl_reflection_pad1d_backward(meta_reflection_pad1d_backward(None, grad_output, x, padding), grad_output,
                                          x, padding)


def replication_pad_backward(grad_output, x, padding):
    return impl_replication_pad1d_backward(meta_replication_pad1d_backward(None, grad_output, x, padding),
                                           grad_output, x, padding)


def _pad_circular(x, pad):
    """``_pad_circular_symint``: the input copied into the middle, then each padded dim's left
    side filled from the right end of the result and its right side from the left end (corners
    are written more than once)."""
    in_shape, dims = list(x.shape), len(pad) // 2
    nonpadded = x.dim() - dims
    if nonpadded not in (1, 2):
        raise RuntimeError(f"Invalid padding size, expected 1 or 2 non-padded dimensions, which would be "
                           f"equivalent to padding of length {(x.dim() - 1) * 2} or {(x.dim() - 2) * 2} "
                           f"respectively but got {len(pad)}")
    out_shape = list(in_shape)
    for d, left, right in _padded_dims(x, pad):
        out_shape[d] = in_shape[d] + left + right
        if left > in_shape[d] or right > in_shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[d] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = call("new_empty", x, out_shape)
    out_slice, in_slice = out, x
    for d, left, right in reversed(_padded_dims(x, pad)):
        out_slice = call("slice.Tensor", out_slice, d, max(left, 0), out_shape[d] - max(right, 0))
        in_slice = call("slice.Tensor", in_slice, d, max(-left, 0), in_shape[d] - max(-right, 0))
    call("copy_", out_slice, in_slice)
    for d, left, right in reversed(_padded_dims(x, pad)):
        if left > 0:
            call("copy_", call("slice.Tensor", out, d, 0, left),
                 call("slice.Tensor", out, d, out_shape[d] - left - max(right, 0), out_shape[d] - max(right, 0)))
        if right > 0:
            call("copy_", call("slice.Tensor", out, d, out_shape[d] - right, out_shape[d]),
                 call("slice.Tensor", out, d, max(left, 0), max(left, 0) + right))
    return out


def _dims_and_pads(x, pad):
    """(dim, before, after) for each padded dim, the last dim first as the pad list has it."""
    return [(x.dim() - 1 - k, pad[2 * k], pad[2 * k + 1]) for k in range(len(pad) // 2)]


def constant_pad_nd(x, pad, value=0):
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > x.dim():
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)}while the input has {x.dim()}dimensions.")
    cropped = x
    for d, before, after in reversed(_dims_and_pads(x, pad)):        # the first dims first, as torch's loop
        if before < 0:
            cropped = call("narrow", cropped, d, -before, cropped.shape[d] + before)
        if after < 0:
            cropped = call("narrow", cropped, d, 0, cropped.shape[d] + after)
    if all(p <= 0 for p in pad):
        return call("clone", cropped)
    shape = list(x.shape)
    for d, before, after in _dims_and_pads(x, pad):
        shape[d] = x.shape[d] + before + after
        if shape[d] < 0:
            raise RuntimeError(f"The input size {x.shape[d]}, plus negative padding {before} and {after} resulted "
                               f"in a negative output size, which is invalid. Check dimension {d} of your input.")
    out = call("empty.memory_format", shape, dtype=x.dtype, device=x.device,
               memory_format=suggest_memory_format(x.shape, x.stride()))
    call("fill_.Scalar", out, value)
    middle = out
    for d, before, after in reversed(_dims_and_pads(x, pad)):
        if before > 0:
            middle = call("narrow", middle, d, before, middle.shape[d] - before)
        if after > 0:
            middle = call("narrow", middle, d, 0, middle.shape[d] - after)
    call("copy_", middle, cropped)
    return out
