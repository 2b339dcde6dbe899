"""``channel_shuffle`` and ``native_channel_shuffle`` (``aten/src/ATen/native/ChanelShuffle.cpp``,
torch's spelling of the file).

The channels, split into ``groups`` groups of ``C / groups``, are interleaved: output channel
``i·groups + g`` is input channel ``g·(C / groups) + i`` (ShuffleNet's shuffle). Nothing is
computed, so the kernel is a view and one copy, written in the layout the input suggests.
``channel_shuffle`` checks its arguments and calls ``native_channel_shuffle``; its gradient is the
inverse shuffle, ``channel_shuffle(grad, C / groups)``.
"""
from ...c10.memory_format import channels_last, contiguous_format, suggest_memory_format
from ..dispatcher import call

__all__ = ["channel_shuffle", "channel_shuffle_cpu", "math_channel_shuffle"]


def _check(self, groups):
    """The checks both kernels make (torch's ``channel_shuffle`` and its CPU ``native_channel_shuffle``)."""
    if self.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(self.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if self.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {self.shape[1]} channels and "
                           f"{groups} groups.")


def channel_shuffle(self, groups):
    _check(self, groups)
    return call("native_channel_shuffle", self, groups)


def _shuffled(self, groups):
    """(b, groups, C / groups, rest) with the two middle dims swapped, as a view."""
    b, c = self.shape[0], self.shape[1]
    return call("permute", call("view", self, [b, groups, c // groups, -1]), [0, 2, 1, 3])


def _suggested(self):
    return channels_last if self.dim() == 4 and suggest_memory_format(self.shape, self.stride()) is channels_last \
        else contiguous_format


def channel_shuffle_cpu(self, groups):
    """The CPU kernel: an empty input is returned as an alias; otherwise the output is allocated
    in the input's suggested memory format and the shuffled view copied into it."""
    _check(self, groups)
    if self.numel() == 0:
        return call("alias", self)
    fmt = _suggested(self)
    out = call("empty.memory_format", list(self.shape), dtype=self.dtype, device=self.device, memory_format=fmt)
    source = _contiguous(self, fmt)
    return call("copy_", out, call("reshape", call("clone", _shuffled(source, groups),
                                                   memory_format=contiguous_format), list(self.shape)))


def math_channel_shuffle(self, groups):
    """CompositeImplicitAutograd (the other devices, and autograd): view, permute, contiguous,
    reshape, then contiguous in the input's suggested format."""
    _check(self, groups)
    shuffled = call("reshape", _contiguous(_shuffled(self, groups), contiguous_format), list(self.shape))
    return _contiguous(shuffled, _suggested(self))


def _contiguous(x, fmt):
    """``x.contiguous(memory_format=fmt)``: ``x`` itself when already laid out so, else a clone."""
    return x if x.is_contiguous(memory_format=fmt) else call("clone", x, memory_format=fmt)
