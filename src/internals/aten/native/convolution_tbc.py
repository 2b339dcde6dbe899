"""``conv_tbc`` and ``conv_tbc_backward`` (``aten/src/ATen/native/ConvolutionTBC.cpp``): a 1-d
convolution of a (time, batch, channels) input, fairseq's layout, by a (width, in, out) weight.

Each tap k of the kernel is one matrix product: the input's time steps it reaches, flattened
with the batch to rows, times ``weight[k]``, added into the output rows it writes. The output
starts as the bias; the backward makes the same products transposed, into zeroed gradients.
"""
from ...c10.memory_format import contiguous_format
from ..dispatcher import call

__all__ = ["conv_tbc", "conv_tbc_backward"]


def _check(self, weight, bias):
    if self.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if self.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")


def _taps(ilen, kw, pad):
    """(k, input start, output start, steps) for each tap that reaches the output, and its length."""
    olen = ilen - kw + 1 + pad * 2
    real_pad = (olen - ilen + kw - 1) // 2
    taps = []
    for k in range(kw):
        i_shift, o_shift = max(0, k - real_pad), max(0, real_pad - k)
        steps = min(ilen + real_pad - k, olen) - o_shift
        if steps > 0:
            taps.append((k, i_shift, o_shift, steps))
    return taps, olen


def _rows(t, start, steps, width):
    """Time steps [start, start + steps) of a (time, batch, width) tensor as (steps·batch, width): a view."""
    return call("view", call("narrow", t, 0, start, steps), [steps * t.shape[1], width])


def conv_tbc(self, weight, bias, pad=0):
    _check(self, weight, bias)
    taps, olen = _taps(self.shape[0], weight.shape[0], pad)
    out_planes = weight.shape[2]
    output = call("empty.memory_format", [olen, self.shape[1], out_planes], dtype=self.dtype, device=self.device)
    call("copy_", output, call("expand", bias, list(output.shape)))
    for k, i_shift, o_shift, steps in taps:
        rows = _rows(output, o_shift, steps, out_planes)
        call("addmm_", rows, _rows(self, i_shift, steps, self.shape[2]), call("select.int", weight, 0, k))
    return output


def conv_tbc_backward(grad, input, weight, bias, pad):
    """(dInput, dWeight, dBias): dOutput·weight[k]ᵀ into each tap's input rows, inputᵀ·dOutput
    into dWeight[k], and dOutput summed over time, then batch."""
    taps, _ = _taps(input.shape[0], weight.shape[0], pad)
    in_planes, out_planes = input.shape[2], weight.shape[2]
    d_input = call("zeros_like", input, memory_format=contiguous_format)
    for k, i_shift, o_shift, steps in taps:
        call("addmm_", _rows(d_input, i_shift, steps, in_planes), _rows(grad, o_shift, steps, out_planes),
             call("t", call("select.int", weight, 0, k)))
    d_weight = call("zeros_like", weight, memory_format=contiguous_format)
    for k, i_shift, o_shift, steps in taps:
        call("addmm_", call("select.int", d_weight, 0, k), call("t", _rows(input, i_shift, steps, in_planes)),
             _rows(grad, o_shift, steps, out_planes))
    d_bias = call("zeros_like", bias, memory_format=contiguous_format)
    call("copy_", d_bias, call("sum.dim_IntList", call("sum.dim_IntList", grad, [0], False), [0], False))
    return d_input, d_weight, d_bias
