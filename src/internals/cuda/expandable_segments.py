"""Expandable segments: one growing segment per stream and pool (``ExpandableSegment`` in
``c10/cuda/CUDACachingAllocator.cpp``).

torch reserves a range of virtual addresses as large as the device (and an eighth more) with
``cuMemAddressReserve``, then backs it page by page with physical memory (``cuMemCreate`` +
``cuMemMap``): 2 MiB pages for the small pool, 20 MiB for the large one. A block can then grow
into the pages after it instead of needing a new segment, and free pages can be given back
(``cuMemUnmap``) wherever they are. Here the reserved range is an anonymous memory map made with
``MAP_NORESERVE`` (the kernel hands out address space, no memory until a page is touched), and
``DeviceMemory`` counts the mapped pages against the device's capacity. Only on the simulator:
Numba exposes no CUDA virtual-memory calls for a real GPU.
"""
from dataclasses import dataclass

__all__ = ["ExpandableSegment", "SegmentRange"]


@dataclass
class SegmentRange:
    ptr: int
    size: int


class ExpandableSegment:
    """A reserved address range backed by ``segment_size`` pages, each mapped or not."""

    def __init__(self, memory, stream, segment_size):
        self.memory, self.stream, self.segment_size = memory, stream, segment_size
        total = memory.total()
        self.max_handles = -(-(total + total // 8) // segment_size)   # 1 1/8 of the device, as torch
        self.ptr = memory.reserve(self.size())
        self.handles = []   # one flag per page from the start: mapped or not (torch's handles_)

    def size(self):
        return self.max_handles * self.segment_size

    def map(self, range_):
        """Map the pages covering ``range_`` (which starts on a page); the range mapped, size 0 on OOM."""
        begin, end = self._left(range_.ptr), self._right(range_.ptr + range_.size)
        if begin == end:
            return self._range(begin, end)
        self.handles += [False] * (end - len(self.handles))
        if not self.memory.map((end - begin) * self.segment_size):
            self._trim()
            return self._range(begin, begin)
        for i in range(begin, end):
            assert not self.handles[i], "page mapped twice"
            self.handles[i] = True
        return self._range(begin, end)

    def unmap(self, range_):
        """Unmap the pages lying wholly inside ``range_``; the range unmapped (maybe size 0)."""
        begin, end = self._right(range_.ptr), self._left(range_.ptr + range_.size)
        if begin >= end:
            return SegmentRange(range_.ptr, 0)
        for i in range(begin, end):
            self.handles[i] = False
        self.memory.unmap(self.ptr + begin * self.segment_size, (end - begin) * self.segment_size)
        self._trim()
        return self._range(begin, end)

    def release(self):
        """``~ExpandableSegment``: give the address range back (every page is unmapped by now)."""
        self.memory.release(self.ptr)

    def _trim(self):
        while self.handles and not self.handles[-1]:
            self.handles.pop()

    def _left(self, address):
        return (address - self.ptr) // self.segment_size

    def _right(self, address):
        return -(-(address - self.ptr) // self.segment_size)

    def _range(self, begin, end):
        return SegmentRange(self.ptr + begin * self.segment_size, (end - begin) * self.segment_size)
