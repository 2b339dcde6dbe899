"""Core data structures, mirroring PyTorch's ``c10/core``: dtypes, devices, storage, TensorImpl."""
