"""``CrossMapLRN2d``'s autograd function (``torch/nn/modules/_functions.py``): local response
normalization across channels, written as Lua Torch's ``SpatialCrossMapLRN`` was. The window's
sum of squares slides over the channels (add the channel entering, subtract the one leaving),
and the backward walks the channels with a running sum, so the values' roundings are torch's.
"""
from ...autograd.function import Function

__all__ = ["CrossMapLRN2d"]


def _window_sums(squares, size):
    """scale[:, c] for each channel c: the running sum of the squares in c's window. The first
    channel's window holds channels [0, pre_pad); each next one adds the channel entering it,
    and drops the one leaving only from c > pre_pad on (Lua Torch's bound, kept as torch keeps it)."""
    channels = squares.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    scale = squares.new_zeros(squares.shape)
    running = scale.select(1, 0)
    for c in range(min(pre_pad, channels)):
        running.add_(squares.select(1, c))
    for c in range(1, channels):
        current = scale.select(1, c)
        current.copy_(scale.select(1, c - 1))
        if c < channels - pre_pad + 1:
            current.add_(squares.select(1, c + pre_pad - 1))
        if c > pre_pad:
            current.add_(squares.select(1, c - pre_pad), alpha=-1)
    return scale


class CrossMapLRN2d(Function):
    """y = x · (k + α/size · Σ_window x²)^-β over a 4-d input's channels; node CrossMapLRN2dBackward."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        ctx.scale = _window_sums(input.pow(2), size).mul_(alpha / size).add_(k)
        output = ctx.scale.pow(-beta).mul_(input)
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        grad_input = ctx.scale.pow(-ctx.beta).mul_(grad_output)
        for n in range(input.shape[0]):
            _subtract_window_term(grad_input[n], input[n], grad_output[n] * output[n] / ctx.scale[n], ctx)
        return grad_input, None, None, None, None


def _subtract_window_term(grad_input, input, ratio, ctx):
    """grad_input[c] -= 2αβ/size · x[c] · Σ ratio over the channels whose window holds c: the
    ratios padded with zeros, a running sum over ``size`` of them moved one channel at a time."""
    channels, size = input.shape[0], ctx.size
    before = int(size - (size - 1) / 2)
    padded = ratio.new_zeros((channels + size - 1, *input.shape[1:]))
    padded.narrow(0, before, channels).copy_(ratio)
    running = padded.narrow(0, 0, size - 1).sum(0)
    coefficient = 2 * ctx.alpha * ctx.beta / size
    for c in range(channels):
        running.add_(padded[c + size - 1])
        grad_input[c].addcmul_(input[c], running, value=-coefficient)
        running.add_(padded[c], alpha=-1)
