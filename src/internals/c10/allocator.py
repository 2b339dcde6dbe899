"""Allocators hand out the raw bytes behind a Storage (``c10/core/Allocator.h``, ``CPUAllocator.cpp``).

The CPU allocator gives NumPy byte arrays and counts what it has handed out, so a free can be
seen to happen at the moment the last reference to a storage goes away.

Allocators for other devices live in the layers that know those devices; each registers itself
here with :func:`set_allocator` (c10's ``SetAllocator``), so a storage finds its allocator by
device type (``GetAllocator``) without c10 importing anything above it.
"""
import numpy as np

__all__ = ["CPUAllocator", "cpu_allocator", "set_allocator", "get_allocator"]


_BYTE = np.dtype(np.uint8)


class CPUAllocator:
    def __init__(self):
        self.allocated_bytes = 0
        self.peak_bytes = 0
        self.num_allocs = 0
        self.num_frees = 0

    def allocate(self, nbytes):
        try:
            buffer = np.empty(nbytes, _BYTE)     # a dtype object, not a type: NumPy skips converting it
        except (MemoryError, ValueError):      # NumPy's two ways of saying no: torch raises RuntimeError
            raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                               f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate "
                               "memory)") from None
        self.allocated_bytes += nbytes
        if self.allocated_bytes > self.peak_bytes:
            self.peak_bytes = self.allocated_bytes
        self.num_allocs += 1
        return buffer

    def free(self, data, nbytes):
        """Called by the storage's finalizer when the last reference to it is gone."""
        self.allocated_bytes -= nbytes
        self.num_frees += 1

    @staticmethod
    def address_of(data):
        """The address of a buffer this allocator handed out (what ``data_ptr`` reports)."""
        return data.ctypes.data

    def stats(self):
        return {"allocated_bytes.current": self.allocated_bytes, "allocated_bytes.peak": self.peak_bytes,
                "num_allocs": self.num_allocs, "num_frees": self.num_frees}


cpu_allocator = CPUAllocator()


_allocators = {"cpu": cpu_allocator}


def set_allocator(device_type, allocator):
    """``SetAllocator``: the allocator storages on ``device_type`` take their bytes from."""
    _allocators[device_type] = allocator


def get_allocator(device_type):
    """``GetAllocator``: the registered allocator for ``device_type``, or None when none is."""
    return _allocators.get(device_type)
