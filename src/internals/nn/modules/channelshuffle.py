"""``ChannelShuffle`` (``torch/nn/modules/channelshuffle.py``): ShuffleNet's interleaving of
channel groups, as a module."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Split the C channels of a (N, C, *) input into ``groups`` groups and interleave them."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
