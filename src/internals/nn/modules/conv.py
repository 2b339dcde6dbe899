"""``Conv1d``, ``Conv2d``, ``Conv3d`` and their transposed twins (``torch/nn/modules/conv.py``): learned
convolutions, run by ``F.conv1d``, ``F.conv2d``, ``F.conv3d`` and ``F.conv_transpose1d/2d/3d``."""
import math

from ..._functional import empty
from ..._tensor_base import torch_size_text
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _ntuple(v, n):
    return v if isinstance(v, str) else tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    """What Conv1d and Conv2d share; ``_n`` is the number of spatial dims, ``_conv`` the functional."""
    _n, _transposed = 2, False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None, output_padding=0):
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
        self.transposed, self.output_padding = self._transposed, _ntuple(output_padding, n)
        # a transposed convolution's weight is its plain twin's: (in, out / groups, k…)
        rows, cols = (in_channels, out_channels // groups) if self._transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(empty((rows, cols, *self.kernel_size), device=device, dtype=dtype))
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
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
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


class Conv3d(_ConvNd):
    """``Conv3d(in_channels, out_channels, kernel_size, ...)``: weight (out_channels, in_channels /
    groups, kt, kh, kw), bias (out_channels,); input (N, C, T, H, W) or (C, T, H, W)."""
    _n = 3
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d and ConvTranspose2d share: zeros padding only, and an ``output_size``
    at call time that picks the output padding (a strided convolution maps several sizes to one,
    so its adjoint needs telling which one to produce)."""
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            # torch's transposed modules pass padding through _pair/_triple, which makes a string
            # a tuple of its characters (no "same"/"valid" there): the call refuses it, with a TypeError
            padding = tuple(padding)
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """The output padding that makes each side ``output_size``, which must lie between the
        smallest size these settings give and that plus ``stride − 1``."""
        if output_size is None:
            return self.output_padding
        n = self._n
        leading = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == leading + n:
            output_size = output_size[leading:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                             f"{leading + n} elements (got {len(output_size)})")
        smallest = [(input.shape[leading + d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        largest = [s + self.stride[d] - 1 for d, s in enumerate(smallest)]
        for size, low, high in zip(output_size, smallest, largest):
            if not low <= size <= high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} "
                                 f"to {largest} (for an input of {input.shape[2:]})")
        return [size - low for size, low in zip(output_size, smallest)]

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                          self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """``ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    output_padding=0, groups=1, bias=True, dilation=1)``: weight (in_channels, out_channels /
    groups, k); input (N, C, L) or (C, L)."""
    _n = 1
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """``ConvTranspose2d(in_channels, out_channels, kernel_size, ...)``: the upsampling layer of
    generators and decoders; weight (in_channels, out_channels / groups, kh, kw)."""
    _n = 2
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """``ConvTranspose3d(in_channels, out_channels, kernel_size, ...)``: weight (in_channels,
    out_channels / groups, kt, kh, kw); input (N, C, T, H, W) or (C, T, H, W)."""
    _n = 3
    _conv = staticmethod(F.conv_transpose3d)


# ---- the lazy convolutions (``conv.py``'s ``_LazyConvXdMixin``): in_channels from the first input
class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        """The channels of a batched (N, C, ...) or unbatched (C, ...) input."""
        no_batch = self._n + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {torch_size_text(input.shape)}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def _uninitialized(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


def _lazy_conv(eager):
    class LazyConv(_LazyConvXdMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            # no bias yet: a tensor made now would be replaced at the first call
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                             dtype=dtype)
            self._uninitialized(out_channels, bias, device, dtype)
    LazyConv.__name__ = LazyConv.__qualname__ = f"Lazy{eager.__name__}"
    LazyConv.__doc__ = f"A {eager.__name__} whose in_channels is its first input's: then it becomes one."
    return LazyConv


def _lazy_conv_transpose(eager):
    class LazyConvTranspose(_LazyConvXdMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode, device=device, dtype=dtype)
            self._uninitialized(out_channels, bias, device, dtype)
    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = f"Lazy{eager.__name__}"
    LazyConvTranspose.__doc__ = f"A {eager.__name__} whose in_channels is its first input's: then it becomes one."
    return LazyConvTranspose


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(c) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv_transpose(c) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
for _lazy in (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d):
    _lazy.__module__ = __name__
