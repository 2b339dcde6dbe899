"""Automatic mixed precision (``torch/amp``): autocast, and loss scaling with ``GradScaler``."""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled, register_autocast_kernels  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
