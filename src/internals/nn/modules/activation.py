"""Activation modules (``torch/nn/modules/activation.py``): ReLU, GELU, SiLU, Sigmoid, LogSigmoid,
Tanh, Softmax, LogSoftmax, LeakyReLU; and Dropout (``dropout.py``)."""
from .. import functional as F
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "LogSigmoid", "Tanh", "Softmax", "LogSoftmax", "Dropout",
           "Hardtanh", "ReLU6", "ELU", "SELU", "CELU", "Softsign", "Tanhshrink", "Softmin", "Identity"]


class ReLU(Module):
    """max(x, 0) elementwise; ``inplace=True`` overwrites the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x where x > 0, else ``negative_slope``·x; ``inplace=True`` overwrites the input."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{', inplace=True' if self.inplace else ''}"


class GELU(Module):
    """x·Φ(x), Φ the standard normal CDF; ``approximate="tanh"`` uses torch's tanh formula."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x·sigmoid(x)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Softmax(Module):
    """softmax along ``dim`` (``None``: the dim F.softmax picks, with its warning)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Dropout(Module):
    """During training, zero each element with probability ``p`` and scale the rest by 1 / (1 - p);
    in eval mode (``module.eval()``), the identity."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


# ---- activations of a reader's own training script (``torch/nn/modules/activation.py``, ``linear.py``)
def _inplace_suffix(inplace):
    return ", inplace=True" if inplace else ""


class Hardtanh(Module):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """A Hardtanh on [0, 6]."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class Softmin(Softmax):
    """softmax of -x along ``dim``."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Identity(Module):
    """Returns its input; takes (and ignores) any arguments, so it can stand in for another layer."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input
