"""Constant padding (``aten/src/ATen/native/PadNd.cpp``): ``pad``, the operator ``F.pad`` calls,
checks the pad list and hands its "constant" mode to ``constant_pad_nd``, which fills a new
tensor with the value and copies the input into the middle. Negative pads crop (the input is
narrowed first). Pads come in (left, right) pairs from the last dim backwards.

Only the constant mode is in internals (torch also reflects, replicates and wraps).
"""
from ...c10.memory_format import suggest_memory_format
from ..dispatcher import call


def pad(x, pad, mode="constant", value=None):
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * x.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {x.dim()}")
    if mode != "constant":
        raise NotImplementedError(f"internals: F.pad supports mode='constant' only, not {mode!r}")
    return call("constant_pad_nd", x, list(pad), 0.0 if value is None else value)


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
