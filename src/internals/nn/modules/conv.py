"""``Conv2d`` (``torch/nn/modules/conv.py``): a learned 2-d convolution, run by ``F.conv2d``."""
import math

from ..._functional import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv2d"]


def _pair(v):
    return v if isinstance(v, str) else tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(Module):
    """``Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
    bias=True)``: weight (out_channels, in_channels / groups, kh, kw), bias (out_channels,)."""

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
        if padding == "same" and any(s != 1 for s in _pair(stride)):
            raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, "
                             f"but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _pair(kernel_size), _pair(stride), _pair(dilation)
        self.padding, self.padding_mode = _pair(padding), padding_mode
        self.transposed, self.output_padding = False, (0, 0)
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
        if self.padding == "same" or self.padding == ("same", "same"):
            pads = []
            for k, d in zip(reversed(self.kernel_size), reversed(self.dilation)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return pads
        if self.padding == "valid" or self.padding == ("valid", "valid"):
            return [0, 0, 0, 0]
        return [p for p in reversed(self.padding) for _ in range(2)]

    def forward(self, input):
        """A padding mode other than zeros pads first with F.pad, then convolves without padding."""
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice(), mode=self.padding_mode)
            return F.conv2d(padded, self.weight, self.bias, self.stride, (0, 0), self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
