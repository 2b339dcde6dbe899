"""``Flatten`` and ``Unflatten`` (``torch/nn/modules/flatten.py``): dims ``start_dim..end_dim``
into one, and one dim into several (views when they can be)."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Dim ``dim`` split into ``unflattened_size`` (``Tensor.unflatten``: a view when it can be)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim, self.unflattened_size = dim, unflattened_size

    @staticmethod
    def _require_tuple_int(sizes):
        if not isinstance(sizes, (tuple, list)):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(sizes).__name__}")
        for i, n in enumerate(sizes):
            if not isinstance(n, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(n).__name__} at pos {i}")

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
