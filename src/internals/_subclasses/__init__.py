"""Tensor subclasses the compiler stack uses (``torch/_subclasses``)."""
from .fake_tensor import FakeTensor, FakeTensorMode

__all__ = ["FakeTensor", "FakeTensorMode"]
