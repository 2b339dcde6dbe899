"""Padding layers (``torch/nn/modules/padding.py``): each keeps its padding as a tuple of
2, 4 or 6 ints (an int is repeated) and calls ``F.pad`` with its mode."""
from .. import functional as F
from .module import Module


def _padding_tuple(padding, n):
    """``_pair``/``_quadruple``/``_ntuple(6)``: an int repeated ``n`` times, a sequence as a tuple."""
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * n


class _PadNd(Module):
    """One of torch's ``_ReflectionPadNd``/``_ReplicationPadNd``/``_CircularPadNd``: ``mode``
    and the padding's length set by each subclass."""
    mode = "constant"
    size = 2

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding_tuple(padding, self.size)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _layer(name, base, mode, size):
    return type(name, (base,), {"mode": mode, "size": size, "__module__": __name__,
                                "__doc__": f"``F.pad`` in mode {mode!r} over the last {size // 2} dim(s)."})


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_layer(f"ReflectionPad{n}d", _PadNd, "reflect", 2 * n)
                                                     for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_layer(f"ReplicationPad{n}d", _PadNd, "replicate", 2 * n)
                                                        for n in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_layer(f"CircularPad{n}d", _PadNd, "circular", 2 * n)
                                               for n in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (_layer(f"ConstantPad{n}d", _ConstantPadNd, "constant", 2 * n)
                                               for n in (1, 2, 3))


class _ZeroPadNd(_ConstantPadNd):
    """``ZeroPad{1,2,3}d``: constant padding with 0.0, shown without its value."""
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_layer(f"ZeroPad{n}d", _ZeroPadNd, "constant", 2 * n) for n in (1, 2, 3))
