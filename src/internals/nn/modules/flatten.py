"""``Flatten`` (``torch/nn/modules/flatten.py``): dims ``start_dim..end_dim`` into one (a view when it can be)."""
from .module import Module

__all__ = ["Flatten"]


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
