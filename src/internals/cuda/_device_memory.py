"""What the caching allocator asks of the CUDA runtime: cudaMalloc, cudaFree and cudaMemGetInfo.

On a GPU the bytes come from Numba (``cuda.device_array``) and the capacity is the GPU's. On
Numba's simulator a device array is host memory, and the device has whatever capacity we say
(16 GiB unless ``set_capacity`` or ``INTERNALS_CUDA_DEVICE_CAPACITY`` says otherwise), so that
out-of-memory can be taught without a GPU. A capacity set on a GPU is enforced too.
"""
import mmap
import os

import numpy as np

from .._cuda_env import SIMULATED

__all__ = ["DeviceMemory", "address_of", "SIMULATED_DEFAULT_CAPACITY"]

SIMULATED_DEFAULT_CAPACITY = 16 * 1024**3


def address_of(array):
    """The device address of a Numba device array (a host address on the simulator)."""
    if SIMULATED:
        return array.ctypes.data
    return array.__cuda_array_interface__["data"][0]


def _capacity_from_env():
    value = os.environ.get("INTERNALS_CUDA_DEVICE_CAPACITY")
    return int(value) if value else None


class DeviceMemory:
    """One device's memory as cudaMalloc sees it: whole segments, each one device array."""

    def __init__(self, capacity=None):
        self.capacity = capacity if capacity is not None else _capacity_from_env()
        self.arrays = {}   # address -> the device array holding that segment's bytes
        self.reserved = {}  # address -> the array over a reserved range (expandable segments)
        self.mapped = 0     # bytes of pages mapped into reserved ranges

    def used(self):
        return sum(a.size for a in self.arrays.values()) + self.mapped

    def mem_get_info(self):
        """``(free, total)`` bytes, as ``cudaMemGetInfo``."""
        if self.capacity is None and not SIMULATED:
            from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
            free, total = cuda.current_context().get_memory_info()
            return int(free), int(total)
        total = self.capacity if self.capacity is not None else SIMULATED_DEFAULT_CAPACITY
        return max(total - self.used(), 0), total

    def total(self):
        return self.mem_get_info()[1]

    def malloc(self, size):
        """A new segment's address, or None where cudaMalloc would fail with cudaErrorMemoryAllocation."""
        if (self.capacity is not None or SIMULATED) and size > self.mem_get_info()[0]:
            return None
        from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
        try:
            array = cuda.device_array(size, dtype=np.uint8)
        except Exception as error:   # CudaAPIError(CUDA_ERROR_OUT_OF_MEMORY) on a GPU
            if "OUT_OF_MEMORY" in str(error) or "out of memory" in str(error).lower():
                return None
            raise
        address = address_of(array)
        self.arrays[address] = array
        return address

    def free(self, address):
        """cudaFree: drop the segment's array. On a GPU, Numba batches its frees: flush them now,
        so that the memory is back on the device at once, as after torch's cudaFree."""
        del self.arrays[address]
        if not SIMULATED:
            from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
            cuda.current_context().deallocations.clear()

    def array(self, address):
        return self.arrays[address] if address in self.arrays else self.reserved[address][0]

    # cuMemAddressReserve, cuMemCreate + cuMemMap, cuMemUnmap, cuMemAddressFree: expandable segments
    def reserve(self, size):
        """A range of ``size`` addresses with no memory behind it yet; its address."""
        if not SIMULATED:
            raise NotImplementedError("internals emulates expandable segments on Numba's CUDA simulator only: "
                                      "Numba has no CUDA virtual-memory calls (cuMemAddressReserve, cuMemMap)")
        # what cuda.device_array gives on the simulator; imported here, as Numba is imported lazily
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray  # numba.cuda is slow: loaded on use

        buffer = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0))
        array = FakeCUDAArray(np.frombuffer(buffer, dtype=np.uint8))
        self.reserved[address_of(array)] = (array, buffer)
        return address_of(array)

    def map(self, size):
        """Back ``size`` more bytes of reserved addresses with memory; False if the device is full."""
        if size > self.mem_get_info()[0]:
            return False
        self.mapped += size
        return True

    def unmap(self, address, size):
        """Give back the memory behind ``[address, address + size)`` (the pages read as zeros again)."""
        base = next(a for a, (array, _) in self.reserved.items() if a <= address < a + array.size)
        buffer = self.reserved[base][1]
        if hasattr(mmap, "MADV_DONTNEED"):
            buffer.madvise(mmap.MADV_DONTNEED, address - base, size)
        self.mapped -= size

    def release(self, address):
        del self.reserved[address]
