"""Native operator implementations, by family, as in ``aten/src/ATen/native``."""
