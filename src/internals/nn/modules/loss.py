"""Loss modules (``torch/nn/modules/loss.py``): thin wrappers over ``nn.functional``."""
from .. import _reduction
from .. import functional as F
from .module import Module

__all__ = ["MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        """The legacy ``size_average`` and ``reduce``, where either is given, set the reduction."""
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _reduction.legacy_get_string(size_average, reduce)
        self.reduction = reduction


class MSELoss(_Loss):
    """Mean (or sum, or per-element) squared difference of input and target."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean (or sum, or per-element) absolute difference of input and target."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class _WeightedLoss(_Loss):
    """A loss with per-class (or per-element) weights: a buffer, so ``to()`` moves it."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class NLLLoss(_WeightedLoss):
    """The negative log-likelihood of the target classes, given log-probabilities."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities in [0, 1] against targets in [0, 1]."""

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """log_softmax over the class dimension, then the negative log-likelihood of the target classes."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits against targets in [0, 1]; ``weight`` and ``pos_weight`` are
    buffers, so ``to()`` moves them with the module."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)
