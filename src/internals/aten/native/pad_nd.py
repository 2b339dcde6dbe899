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
from ...c10.memory_format import suggest_memory_format
from ..dispatcher import call
from .convolution import keep_channels_last

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


def _gather_pad(x, padding, reflect):
    dims = len(padding) // 2
    _check_valid_input(x, dims)
    if reflect:
        for i, (d, left, right) in enumerate(reversed(_padded_dims(x, padding))):
            if left >= x.shape[d] or right >= x.shape[d]:
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                                   f"input dimension, but got: padding ({left}, {right}) at dimension {d} of input "
                                   f"{list(x.shape)}")
    shape = _check_output_sizes(x, padding, reflect)
    result = x
    for d, left, right in _padded_dims(x, padding):
        result = call("index_select", result, d, _source_positions(x, d, left, right, reflect))
    # the CPU kernels write into an output laid out as the input (channels-last stays so); CUDA's
    # are contiguous
    layout = suggest_memory_format(x.shape, x.stride()) if x.device.type == "cpu" else None
    out = call("empty.memory_format", shape, dtype=x.dtype, device=x.device, memory_format=layout)
    call("copy_", out, result)
    return out


def _gather_pad_backward(grad, x, padding, reflect):
    """Each output element's gradient added to the input element it was read from."""
    grad_input = grad
    for d, left, right in reversed(_padded_dims(x, padding)):
        shape = list(grad_input.shape)
        shape[d] = x.shape[d]
        zeros = call("zeros", shape, dtype=grad.dtype, device=grad.device)
        grad_input = call("index_add_", zeros, d, _source_positions(x, d, left, right, reflect), grad_input)
    return grad_input


def reflection_pad(x, padding):
    """``reflection_pad1d``/``2d``/``3d``: the border reflected, the edge element not repeated."""
    return _gather_pad(x, padding, reflect=True)


def replication_pad(x, padding):
    """``replication_pad1d``/``2d``/``3d``: the edge element repeated."""
    return _gather_pad(x, padding, reflect=False)


def reflection_pad_backward(grad_output, x, padding):
    # torch's meta step allocates the gradient in the input's suggested memory format
    return keep_channels_last(_gather_pad_backward(grad_output, x, padding, reflect=True), x)


def replication_pad_backward(grad_output, x, padding):
    return keep_channels_last(_gather_pad_backward(grad_output, x, padding, reflect=False), x)


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
