"""Operators, mirroring ``aten/src/ATen``: the dispatcher, TensorIterator and the native kernels."""
