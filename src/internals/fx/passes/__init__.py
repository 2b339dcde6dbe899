"""Graph passes (``torch/fx/passes``, ``torch/_functorch``)."""
from .functionalize import functionalize

__all__ = ["functionalize"]
