"""Automatic mixed precision (``torch/amp``)."""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled, register_autocast_kernels  # noqa: F401
