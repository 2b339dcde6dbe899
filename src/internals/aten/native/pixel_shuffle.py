"""``pixel_shuffle`` and ``pixel_unshuffle`` (``aten/src/ATen/native/PixelShuffle.cpp``, checks from
``PixelShuffle.h``).

Shuffling moves every element once and computes nothing, so the kernel is a view and one copy:
the channels split into (oc, r, r), permuted beside the height and width, and the result written
into a fresh tensor, contiguous or channels-last as the input suggests (torch's CPU kernel
allocates in ``suggest_memory_format``). Each operator's gradient is the other.
"""
from ...c10.memory_format import channels_last, contiguous_format, suggest_memory_format
from ..dispatcher import call

__all__ = ["pixel_shuffle", "pixel_unshuffle"]


def _check(self, factor, what, name):
    if self.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{self.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def output_format(self):
    """The layout torch's CPU kernel allocates its result in: channels-last if the input suggests it."""
    if self.dim() == 4 and suggest_memory_format(self.shape, self.stride()) is channels_last:
        return channels_last
    return contiguous_format


def _materialise(permuted, final_shape, self):
    """The permuted view copied out once, in the layout torch's kernel allocates."""
    out = call("empty.memory_format", list(final_shape), dtype=self.dtype, device=self.device,
               memory_format=output_format(self))
    return call("copy_", out, call("reshape", call("clone", permuted, memory_format=contiguous_format),
                                   list(final_shape)), False)


def pixel_shuffle_shape(self, upscale_factor):
    """The checks of ``PixelShuffle.h``, then the output's sizes (the meta function's too)."""
    _check(self, upscale_factor, "upscale_factor", "pixel_shuffle")
    r = upscale_factor
    *batch, c, h, w = self.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return (*batch, c // (r * r), h * r, w * r)


def pixel_shuffle(self, upscale_factor):
    """(*, C·r², H, W) -> (*, C, H·r, W·r): channel c·r² + i·r + j lands on row h·r + i, column w·r + j."""
    final_shape = pixel_shuffle_shape(self, upscale_factor)
    r = upscale_factor
    *batch, c, h, w = self.shape
    lead = list(range(len(batch)))
    split = call("reshape", self, [*batch, c // (r * r), r, r, h, w])
    permuted = call("permute", split, [*lead, -5, -2, -4, -1, -3])
    return _materialise(permuted, final_shape, self)


def pixel_unshuffle(self, downscale_factor):
    """(*, C, H·r, W·r) -> (*, C·r², H, W), the inverse of :func:`pixel_shuffle`."""
    _check(self, downscale_factor, "downscale_factor", "pixel_unshuffle")
    r = downscale_factor
    *batch, c, h, w = self.shape
    for name, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={size} is not divisible by {r}")
    if self.numel() == 0:       # torch's CPU kernel returns a copy of an empty input, its shape unchanged
        return call("clone", self)
    lead = list(range(len(batch)))
    split = call("reshape", self, [*batch, c, h // r, r, w // r, r])
    permuted = call("permute", split, [*lead, -5, -3, -1, -4, -2])
    return _materialise(permuted, (*batch, c * r * r, h // r, w // r), self)
