"""``Conv1d`` and ``Conv2d`` (``torch/nn/modules/conv.py``): learned convolutions, run by
``F.conv1d`` and ``F.conv2d``."""
import math

from ..._functional import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d"]


def _ntuple(v, n):
    return v if isinstance(v, str) else tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    """What Conv1d and Conv2d share; ``_n`` is the number of spatial dims, ``_conv`` the functional."""
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        if padding == "same" and any(s != 1 for s in _ntuple(stride, self._n)):
            raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, "
                             f"but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        n = self._n
        self.kernel_size, self.stride, self.dilation = (_ntuple(v, n) for v in (kernel_size, stride, dilation))
        self.padding, self.padding_mode = _ntuple(padding, n), padding_mode
        self.transposed, self.output_padding = False, (0,) * n
        self.weight = Parameter(empty((out_channels, in_channels // groups, *self.kernel_size), device=device,
                                      dtype=dtype))
        if bias:
            self.bias = Parameter(empty((out_channels,), device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # As Linear: kaiming_uniform_ with a=sqrt(5), a bound of 1/sqrt(fan_in), fan_in = in/groups·kh·kw.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _reversed_padding_repeated_twice(self):
        """F.pad's argument for a padding mode other than zeros: the last dimension first, each
        side's amount (for 'same', the odd extra on the right, as torch splits it)."""
        if self.padding == "same":
            pads = []
            for k, d in zip(reversed(self.kernel_size), reversed(self.dilation)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return pads
        if self.padding == "valid":
            return [0, 0] * self._n
        return [p for p in reversed(self.padding) for _ in range(2)]

    def forward(self, input):
        """A padding mode other than zeros pads first with F.pad, then convolves without padding."""
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice(), mode=self.padding_mode)
            return self._conv(padded, self.weight, self.bias, self.stride, (0,) * self._n, self.dilation, self.groups)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """``Conv1d(in_channels, out_channels, kernel_size, ...)``: weight (out_channels,
    in_channels / groups, k), bias (out_channels,); input (N, C, L) or (C, L)."""
    _n = 1
    _conv = staticmethod(F.conv1d)


class Conv2d(_ConvNd):
    """``Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
    bias=True)``: weight (out_channels, in_channels / groups, kh, kw), bias (out_channels,)."""
    _n = 2
    _conv = staticmethod(F.conv2d)
