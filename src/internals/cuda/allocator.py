"""The cuda allocator: device bytes from Numba (``c10/cuda/CUDACachingAllocator.cpp`` in torch).

Each storage gets its own ``cuda.device_array`` of bytes, returned to Numba when the storage
dies. Counting what is handed out lets ``memory_allocated`` answer.
"""
import numpy as np


class CUDAAllocator:
    def __init__(self):
        self.allocated_bytes = 0

    def allocate(self, nbytes):
        from numba import cuda
        self.allocated_bytes += nbytes
        return cuda.device_array(nbytes, dtype=np.uint8)

    def free(self, nbytes):
        self.allocated_bytes -= nbytes


cuda_allocator = CUDAAllocator()
