"""The CUDA caching allocator, rule for rule (``c10/cuda/CUDACachingAllocator.cpp``).

cudaMalloc is slow and synchronizes the device, so torch asks CUDA for big *segments* and carves
them into *blocks*, one per storage. A freed block is not given back to CUDA: it goes to a pool of
cached blocks, merges with free neighbours, and serves the next request of a fitting size made on
the same stream. ``memory_allocated`` counts the blocks handed out (rounded sizes);
``memory_reserved`` counts the segments. ``empty_cache`` gives back every segment that is
entirely free. The function names below are torch's, so the two files can be read side by side.

History: ``_record_memory_history`` makes the allocator keep trace entries and stack traces
(``memory_history.py``), in the format of torch's snapshots.

Expandable segments (``expandable_segments:True``): blocks live in one growing range per stream
and pool, mapped page by page (``expandable_segments.py``; on the simulator only).

Left out: CUDA graphs' private pools, ``record_stream`` events (no kernel here runs on a second
stream).

Thread safety: as torch's, each device allocator holds a recursive mutex for the whole of every
call that reads or changes its pools, segments or statistics (a storage may be freed on any
thread, by the garbage collector, while another allocates); ``NativeCachingAllocator`` holds its
own lock for its table of live blocks.
"""
import bisect
import functools
import threading
from dataclasses import dataclass, field

import numpy as np

from ..c10.allocator import set_allocator
from . import streams
from ._device_memory import DeviceMemory, address_of
from .allocator_config import SIZE_MAX, get_config
from .expandable_segments import ExpandableSegment, SegmentRange
from .memory_history import ALL, STATE, MemoryHistory

__all__ = ["OutOfMemoryError", "DeviceCachingAllocator", "NativeCachingAllocator", "cuda_allocator",
           "round_size", "get_allocation_size", "format_size"]

kMinBlockSize = 512            # every size is rounded up to a multiple of 512 bytes
kSmallSize = 1024 * 1024       # requests up to 1 MiB go to the small pool
kSmallBuffer = 2 * 1024**2     # small blocks are carved from 2 MiB segments
kMinLargeAlloc = 10 * 1024**2  # large requests under 10 MiB share 20 MiB segments
kLargeBuffer = 20 * 1024**2
kRoundLarge = 2 * 1024**2      # larger segments are rounded up to 2 MiB


class OutOfMemoryError(RuntimeError):
    """``torch.OutOfMemoryError`` (= ``torch.cuda.OutOfMemoryError``), a RuntimeError."""


def format_size(size):
    """Bytes as torch prints them in its messages (``format_size``): 2 decimals, KiB/MiB/GiB."""
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1024**2:
        return f"{size / 1024:.2f} KiB"
    if size <= 1024**3:
        return f"{size / 1024**2:.2f} MiB"
    return f"{size / 1024**3:.2f} GiB"


def roundup_power2_next_division(size, divisions):
    """Round up to the next of ``divisions`` equal steps between two powers of two (1200 with 4 -> 1280)."""
    if size & (size - 1) == 0:
        return size
    power2_floor = 1 << (size.bit_length() - 1)
    step = power2_floor // divisions
    if step == 0:
        return power2_floor << 1
    floor = size & ~(step - 1)
    return size if floor == size else floor + step


def round_size(size, config=None):
    """``round_size``: below 512 bytes -> 512, else up to a multiple of 512 (or a power-of-2 division)."""
    config = config or get_config()
    if size < kMinBlockSize:
        return kMinBlockSize
    divisions = config.roundup_power2_divisions(size)
    if divisions > 1 and size > kMinBlockSize * divisions:
        return roundup_power2_next_division(size, divisions)
    return kMinBlockSize * ((size + kMinBlockSize - 1) // kMinBlockSize)


def get_allocation_size(size):
    """``get_allocation_size``: the segment cudaMalloc'd when no cached block fits a rounded request."""
    if size <= kSmallSize:
        return kSmallBuffer
    if size < kMinLargeAlloc:
        return kLargeBuffer
    return kRoundLarge * ((size + kRoundLarge - 1) // kRoundLarge)


class Block:
    """A piece of a segment: its address, size, stream, and neighbours in the segment (``Block``)."""

    def __init__(self, stream, size, pool, ptr):
        self.stream, self.size, self.pool, self.ptr = stream, size, pool, ptr
        self.requested_size = 0
        self.allocated = False
        self.prev = self.next = None   # neighbours in the same segment, in address order
        self.gc_count_base = 0
        self.mapped = True             # backed by memory (False: unmapped pages of an expandable segment)
        self.expandable_segment = None
        self.frames = None             # context_when_allocated: the stack that last handed it out
        self.segment_frames = None     # context_when_segment_allocated (the segment's first block)

    def key(self):
        """Where the block sorts in its pool (``BlockComparatorSize``): stream, then size, then address."""
        return (self.stream, self.size, self.ptr)

    def is_split(self):
        return self.prev is not None or self.next is not None

    def splice(self, before, after):
        """Put this block between ``before`` and ``after`` in its segment."""
        if before is not None:
            before.next = self
        if after is not None:
            after.prev = self
        self.prev, self.next = before, after

    def __repr__(self):
        state = "allocated" if self.allocated else "free"
        return f"Block(size={self.size}, stream={self.stream}, {state})"


class BlockPool:
    """The cached (free) blocks of one pool, sorted by ``Block.key``, torch's ``std::set``."""

    def __init__(self, is_small):
        self.is_small = is_small
        self.blocks = []
        self.unmapped = []   # unmapped blocks of expandable segments, by (stream, address)
        self.get_free_blocks_call_count = 0

    def insert_into_blocks(self, block):
        block.gc_count_base = self.get_free_blocks_call_count
        bisect.insort(self.blocks, block, key=Block.key)

    def lower_bound(self, stream, size):
        """Index of the smallest block on ``stream`` of at least ``size`` bytes (or past them all)."""
        return bisect.bisect_left(self.blocks, (stream, size, 0), key=Block.key)

    def remove(self, block):
        (self.blocks if block.mapped else self.unmapped).remove(block)

    def insert_unmapped(self, block):
        bisect.insort(self.unmapped, block, key=lambda b: (b.stream, b.ptr))


class Stat:
    """One statistic: its current value, its peak, and the totals ever added and taken away."""

    def __init__(self):
        self.current = self.peak = self.allocated = self.freed = 0

    def increase(self, amount):
        self.current += amount
        self.peak = max(self.peak, self.current)
        self.allocated += amount

    def decrease(self, amount):
        self.current -= amount
        self.freed += amount


STAT_TYPES = ("all", "small_pool", "large_pool")
ARRAY_STATS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
               "active_bytes", "inactive_split_bytes", "requested_bytes")


class DeviceStats:
    """``DeviceStats`` (``c10/core/CachingDeviceAllocator.h``): each array stat split by pool."""

    def __init__(self):
        for name in ARRAY_STATS:
            setattr(self, name, {t: Stat() for t in STAT_TYPES})
        self.oversize_allocations, self.oversize_segments = Stat(), Stat()
        self.num_alloc_retries = self.num_ooms = self.num_sync_all_streams = 0
        self.num_device_alloc = self.num_device_free = self.num_oom_rejections = 0
        self.max_split_size = 0

    def each(self, name, pool):
        """The two entries a change in ``pool`` updates: "all" and the pool's own."""
        array = getattr(self, name)
        return array["all"], array["small_pool" if pool.is_small else "large_pool"]


@dataclass
class AllocParams:
    size: int
    stream: int
    pool: BlockPool
    alloc_size: int
    block: Block = field(default=None)
    context: list = field(default=None)   # the stack gathered when malloc began, if recording


def _locked(method):
    """Run ``method`` holding the allocator's mutex (torch's ``std::lock_guard<std::recursive_mutex>``)."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self.mutex:
            return method(self, *args, **kwargs)
    return locked


class DeviceCachingAllocator:
    """The allocator of one device (``DeviceCachingAllocator``): pools, segments, statistics."""

    def __init__(self, memory=None, config=None):
        self.mutex = threading.RLock()      # recursive: a free-memory callback may free storages
        self.memory = memory or DeviceMemory()
        self.config = config or get_config()
        self.stats = DeviceStats()
        self.large_blocks = BlockPool(is_small=False)
        self.small_blocks = BlockPool(is_small=True)
        self.active_blocks = set()
        self.total_allocated_memory = 0     # bytes in segments, what cudaMalloc handed us
        self.allowed_memory_maximum = None  # set by a memory fraction below 1
        self.free_memory_callbacks = []     # FreeCudaMemoryCallbacksRegistry: callables -> bool
        self.history = MemoryHistory()      # switched on by _record_memory_history
        self.expandable_segments = []
        # Read once, as torch does when it builds the allocator: SIZE_MAX reads back as -1 (int64).
        self.stats.max_split_size = _int64(self.config.max_split_size)
        self.set_memory_fraction(self.config.per_process_memory_fraction)

    # ------------------------------------------------------------------ malloc
    @_locked
    def malloc(self, orig_size, stream=0):
        """A block for ``orig_size`` bytes on ``stream``: reuse, else a new segment, else OOM (``malloc``)."""
        size = round_size(orig_size, self.config)
        pool = self.get_pool(size)
        params = AllocParams(size, stream, pool, get_allocation_size(size), context=self.history.gather(STATE))
        found = self.get_free_block(params) or (self.trigger_free_memory_callbacks() and self.get_free_block(params))
        if not found:
            if self.allowed_memory_maximum is not None and self.config.garbage_collection_threshold > 0:
                self.garbage_collect_cached_blocks()
            found = (self.alloc_block(params, is_retry=False)
                     # free cached oversize blocks, just enough, and try again
                     or (self.release_available_cached_blocks(params) and self.alloc_block(params, is_retry=False))
                     # free every cached segment that is entirely free, and try a last time
                     or (self.release_cached_blocks(params.context) and self.alloc_block(params, is_retry=True)))
        if not found:
            self.raise_out_of_memory(params)
        return self.alloc_found_block(params, orig_size, self.should_split(params.block, size))

    def get_pool(self, size):
        """``get_pool``: rounded sizes up to 1 MiB are small, the rest large."""
        return self.small_blocks if size <= kSmallSize else self.large_blocks

    def get_free_block(self, p):
        """``get_free_block``: best fit among the cached blocks of the same stream, with two refusals."""
        pool = p.pool
        max_split = self.config.max_split_size
        if self.allowed_memory_maximum is not None and self.config.garbage_collection_threshold > 0:
            pool.get_free_blocks_call_count += 1   # ages cached blocks, for garbage collection
        i = pool.lower_bound(p.stream, p.size)
        if i == len(pool.blocks) or pool.blocks[i].stream != p.stream:
            return False
        if pool.blocks[i].expandable_segment is not None:
            i = self.expandable_best_fit(pool, i, p.stream)
            if i is None:
                return False
        block = pool.blocks[i]
        # An oversize block (>= max_split_size) is not cut up for a smaller request...
        if p.size < max_split and block.size >= max_split:
            return False
        # ...and serves an oversize request only if it wastes less than max_non_split_rounding_size.
        if p.size >= max_split and block.size >= p.size + self.config.max_non_split_rounding_size:
            return False
        p.block = pool.blocks.pop(i)
        return True

    def expandable_best_fit(self, pool, i, stream):
        """The index ``get_free_block`` settles on when the candidate lives in an expandable segment.

        With expandable segments on, a free block followed by unmapped pages counts as the size it
        can grow to; with them off (switched off after use), expandable blocks are skipped.
        """
        def grows_to(b):
            return b.size + (b.next.size if b.next is not None and not b.next.mapped else 0)
        blocks = pool.blocks
        if self.config.expandable_segments:
            while (blocks[i].expandable_segment is not None and i + 1 < len(blocks)
                   and blocks[i + 1].stream == stream and grows_to(blocks[i + 1]) < grows_to(blocks[i])):
                i += 1
            return i
        while i < len(blocks) and blocks[i].expandable_segment is not None and blocks[i].stream == stream:
            i += 1
        return i if i < len(blocks) and blocks[i].stream == stream else None

    def trigger_free_memory_callbacks(self):
        freed = False
        for callback in self.free_memory_callbacks:
            freed |= bool(callback())
        return freed

    def should_split(self, block, size):
        """``should_split``: small pool if >= 512 bytes remain; large pool if the request is not
        oversize and more than 1 MiB would remain (smaller leftovers stay inside the block)."""
        remaining = block.size - size
        if block.pool.is_small or self.config.expandable_segments:
            return remaining >= kMinBlockSize
        return size < self.config.max_split_size and remaining > kSmallSize

    def alloc_block(self, p, is_retry):
        """``alloc_block``: cudaMalloc a new segment of ``p.alloc_size`` bytes, as one free block."""
        size = p.alloc_size
        if is_retry:
            self.stats.num_alloc_retries += 1
        if self.allowed_memory_maximum is not None and self.total_allocated_memory + size > self.allowed_memory_maximum:
            return False   # over the memory fraction: refused without asking the device
        if self.config.expandable_segments:
            p.block = self.try_allocate_expandable_block(p.stream, p.pool, p.size, p.context)
            return p.block is not None
        ptr = self.memory.malloc(size)
        if ptr is None:
            return False
        self.total_allocated_memory += size
        p.block = Block(p.stream, size, p.pool, ptr)
        p.block.segment_frames = p.context
        self.history.record("segment_alloc", ptr, size, p.stream, p.context)
        for stat in self.stats.each("segment", p.pool):
            stat.increase(1)
        for stat in self.stats.each("reserved_bytes", p.pool):
            stat.increase(size)
        if size >= self.config.max_split_size:
            self.stats.oversize_segments.increase(1)
        self.stats.num_device_alloc += 1
        return True

    def alloc_found_block(self, p, orig_size, split_remainder):
        """``alloc_found_block``: hand out ``p.block``, first cutting off what it has beyond the request."""
        block, size, pool = p.block, p.size, p.pool
        already_split = block.is_split()
        if split_remainder:
            remaining = block
            block = Block(p.stream, size, pool, remaining.ptr)
            block.prev, block.next = remaining.prev, remaining
            block.segment_frames, remaining.segment_frames = remaining.segment_frames, None   # it heads now
            if block.prev:
                block.prev.next = block
            remaining.prev = block
            remaining.ptr += size
            remaining.size -= size
            block.expandable_segment = remaining.expandable_segment
            pool.insert_into_blocks(remaining)
            if block.expandable_segment is not None:
                pass            # expandable segments stay out of the inactive_split statistics, as in torch
            elif already_split:   # a free piece shrank by `size`
                for stat in self.stats.each("inactive_split_bytes", pool):
                    stat.decrease(size)
            else:               # a new free piece appeared
                for name, amount in (("inactive_split_bytes", remaining.size), ("inactive_split", 1)):
                    for stat in self.stats.each(name, pool):
                        stat.increase(amount)
        elif already_split and block.expandable_segment is None:   # a free piece became active whole
            for name, amount in (("inactive_split_bytes", block.size), ("inactive_split", 1)):
                for stat in self.stats.each(name, pool):
                    stat.decrease(amount)
        block.allocated = True
        block.requested_size = orig_size
        block.frames = p.context
        self.history.record("alloc", block.ptr, orig_size, block.stream, block.frames)
        self.active_blocks.add(block)
        for name, amount in (("allocation", 1), ("allocated_bytes", block.size), ("active", 1),
                             ("active_bytes", block.size), ("requested_bytes", orig_size)):
            for stat in self.stats.each(name, pool):
                stat.increase(amount)
        if block.size >= self.config.max_split_size:
            self.stats.oversize_allocations.increase(1)
        return block

    def raise_out_of_memory(self, p):
        free, total = self.memory.mem_get_info()
        allowed = "" if self.allowed_memory_maximum is None else f"{format_size(self.allowed_memory_maximum)} allowed; "
        self.stats.num_ooms += 1
        self.history.record("oom", free, p.size, p.stream, p.context)
        allocated = self.stats.allocated_bytes["all"].current
        reserved = self.stats.reserved_bytes["all"].current
        raise OutOfMemoryError(
            f"CUDA out of memory. Tried to allocate {format_size(p.alloc_size)}. GPU 0 has a total capacity of "
            f"{format_size(total)} of which {format_size(free)} is free. {allowed}Of the allocated memory "
            f"{format_size(allocated)} is allocated by PyTorch, and {format_size(reserved - allocated)} is reserved "
            "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
            "Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html"
            "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)")

    # ------------------------------------------------------------------ giving memory back
    def release_available_cached_blocks(self, p):
        """``release_available_cached_blocks``: cudaFree cached oversize blocks, just enough for ``p``.

        Only with max_split_size set: the smallest big-enough oversize block, else the largest
        ones until their sizes add up to the request.
        """
        max_split = self.config.max_split_size
        if max_split == SIZE_MAX:
            return False
        pool = p.pool
        target = max(p.size, max_split)
        i = pool.lower_bound(p.stream, target)
        if i < len(pool.blocks) and pool.blocks[i].stream == p.stream:
            self.release_block(pool.blocks[i], p.context)
            return True
        released = 0
        i -= 1   # the largest block below `target` (if it is on this stream)
        while i >= 0 and released < target and pool.blocks[i].size >= max_split and pool.blocks[i].stream == p.stream:
            released += pool.blocks[i].size
            self.release_block(pool.blocks[i], p.context)
            i -= 1
        return released >= target

    def release_cached_blocks(self, context=None):
        """``release_cached_blocks`` (and ``empty_cache``): cudaFree every cached block that is a whole segment."""
        self.stats.num_sync_all_streams += 1   # synchronize_and_free_events: no events to wait for here
        for pool in (self.large_blocks, self.small_blocks):
            self.release_blocks(pool, context)
        return True

    def release_blocks(self, pool, context):
        """``release_blocks``: cudaFree every whole cached segment; unmap the free pages of expandable ones."""
        to_unmap = [b for b in pool.blocks if b.expandable_segment is not None]
        for block in [b for b in pool.blocks if b.expandable_segment is None and not b.is_split()]:
            self.release_block(block, context)
        for block in to_unmap:
            self.unmap_block(block, context)
            if not block.is_split():
                self.release_expandable_segment(block)

    # ------------------------------------------------------------------ expandable segments
    def find_expandable_block(self, stream, pool, size):
        """``find_expandable_block``: the lowest unmapped range of ``stream`` with room for ``size``
        (taking the free block just before it along), else a new expandable segment."""
        def allocatable(b):
            return b is not None and not b.allocated

        def has_room(b):
            total = 0
            while total < size and allocatable(b):
                total, b = total + b.size, b.next
            return total >= size
        for candidate in [b for b in pool.unmapped if b.stream == stream]:
            if allocatable(candidate.prev):
                candidate = candidate.prev
            if has_room(candidate):
                return candidate
        segment = ExpandableSegment(self.memory, stream, kSmallBuffer if pool.is_small else kLargeBuffer)
        self.expandable_segments.append(segment)
        candidate = Block(stream, segment.size(), pool, segment.ptr)
        candidate.mapped, candidate.expandable_segment = False, segment
        pool.insert_unmapped(candidate)
        return candidate

    def map_block(self, to_map, size, context):
        """``map_block``: map the pages for the first ``size`` bytes of an unmapped block; False on OOM."""
        mapped = to_map.expandable_segment.map(SegmentRange(to_map.ptr, size))
        if mapped.size == 0:
            return False
        pool = to_map.pool
        pool.unmapped.remove(to_map)
        to_map.mapped = True
        if mapped.size < to_map.size:   # the rest stays unmapped, as a block of its own
            rest = Block(to_map.stream, to_map.size - mapped.size, pool, to_map.ptr + mapped.size)
            rest.mapped, rest.expandable_segment = False, to_map.expandable_segment
            rest.splice(to_map, to_map.next)
            pool.insert_unmapped(rest)
            to_map.size = mapped.size
        for neighbour in (to_map.prev, to_map.next):
            self.try_merge_blocks(to_map, neighbour, pool)
        pool.insert_into_blocks(to_map)
        self.total_allocated_memory += mapped.size
        for stat in self.stats.each("reserved_bytes", pool):
            stat.increase(mapped.size)
        self.stats.num_device_alloc += 1
        self.history.record("segment_map", mapped.ptr, mapped.size, to_map.stream, context)
        return True

    def try_allocate_expandable_block(self, stream, pool, size, context):
        """``try_allocate_expandable_block``: map pages until a free block of ``size`` bytes exists."""
        candidate = self.find_expandable_block(stream, pool, size)
        if not candidate.mapped and not self.map_block(candidate, min(candidate.size, size), context):
            return None
        while candidate.size < size:   # free, then unmapped pages: map some and merge them in
            grown = candidate.next
            if not self.map_block(grown, min(size - candidate.size, grown.size), context):
                return None
            candidate = grown
        pool.blocks.remove(candidate)
        return candidate

    def unmap_block(self, block, context):
        """``unmap_block``: give back the whole pages inside a free expandable block."""
        unmapped = block.expandable_segment.unmap(SegmentRange(block.ptr, block.size))
        if unmapped.size == 0:
            return
        pool = block.pool
        pool.blocks.remove(block)
        before = unmapped.ptr - block.ptr
        after = block.size - before - unmapped.size
        for start, length, place in ((block.ptr, before, "before"), (unmapped.ptr + unmapped.size, after, "after")):
            if length > 0:   # the part of a page still in use by a neighbour stays mapped and free
                piece = Block(block.stream, length, pool, start)
                piece.expandable_segment = block.expandable_segment
                piece.splice(*((block.prev, block) if place == "before" else (block, block.next)))
                pool.insert_into_blocks(piece)
        block.ptr, block.size, block.mapped = unmapped.ptr, unmapped.size, False
        for neighbour in (block.prev, block.next):
            self.try_merge_blocks(block, neighbour, pool)
        pool.insert_unmapped(block)
        self.total_allocated_memory -= unmapped.size
        for stat in self.stats.each("reserved_bytes", pool):
            stat.decrease(unmapped.size)
        self.stats.num_device_free += 1
        self.history.record("segment_unmap", unmapped.ptr, unmapped.size, block.stream,
                            context or block.segment_frames)

    def release_expandable_segment(self, block):
        """``release_expandable_segment``: the whole range is unmapped; give the addresses back."""
        self.expandable_segments.remove(block.expandable_segment)
        block.pool.unmapped.remove(block)
        block.expandable_segment.release()

    def release_block(self, block, context=None):
        """``release_block``: cudaFree one cached segment."""
        assert block.expandable_segment is None, "expandable segments are unmapped, not freed"
        self.history.record("segment_free", block.ptr, block.size, block.stream, context or block.segment_frames)
        self.stats.num_device_free += 1
        self.memory.free(block.ptr)
        self.total_allocated_memory -= block.size
        for stat in self.stats.each("segment", block.pool):
            stat.decrease(1)
        for stat in self.stats.each("reserved_bytes", block.pool):
            stat.decrease(block.size)
        if block.size >= self.config.max_split_size:
            self.stats.oversize_segments.decrease(1)
        block.pool.remove(block)

    def garbage_collect_cached_blocks(self):
        """``garbage_collect_cached_blocks``: above threshold * allowed memory, cudaFree the cached
        whole segments of the large pool that have waited longest (by get_free_block calls)."""
        threshold = int(self.config.garbage_collection_threshold * self.allowed_memory_maximum)
        if self.total_allocated_memory <= threshold:
            return
        target, reclaimed = self.total_allocated_memory - threshold, 0
        pool = self.large_blocks
        candidates = [b for b in pool.blocks if not b.is_split()]
        while candidates and reclaimed < target:
            ages = [pool.get_free_blocks_call_count - b.gc_count_base for b in candidates]
            average = sum(ages) / len(ages)
            old = [b for b, age in zip(candidates, ages) if age >= average]
            for block in old:
                reclaimed += block.size
                self.release_block(block)
            candidates = [b for b in candidates if b not in old]

    @_locked
    def free(self, block):
        """``free``: the storage is gone; its block returns to the cache (not to CUDA)."""
        block.allocated = False
        context = self.history.gather(ALL)
        self.history.record("free_requested", block.ptr, block.requested_size, block.stream, context)
        for stat in self.stats.each("allocation", block.pool):
            stat.decrease(1)
        for stat in self.stats.each("allocated_bytes", block.pool):
            stat.decrease(block.size)
        if block.size >= self.config.max_split_size:
            self.stats.oversize_allocations.decrease(1)
        self.free_block(block, context)

    def free_block(self, block, context=None):
        """``free_block``: merge with free neighbours of the segment, then cache the result."""
        self.history.record("free_completed", block.ptr, block.requested_size, block.stream, context or block.frames)
        block.frames = None
        pool, orig_size, requested = block.pool, block.size, block.requested_size
        net_pieces = net_bytes = 0
        for neighbour in (block.prev, block.next):
            subsumed = self.try_merge_blocks(block, neighbour, pool)
            if subsumed:
                net_pieces -= 1
                net_bytes -= subsumed
        self.active_blocks.discard(block)
        pool.insert_into_blocks(block)
        if block.is_split():
            net_pieces += 1
            net_bytes += block.size
        if block.expandable_segment is not None:
            net_pieces = net_bytes = 0   # left out of inactive_split, as in torch
        for name, change in (("inactive_split", net_pieces), ("inactive_split_bytes", net_bytes)):
            for stat in self.stats.each(name, pool):
                if change > 0:
                    stat.increase(change)
                elif change < 0:
                    stat.decrease(-change)
        for name, amount in (("active", 1), ("active_bytes", orig_size), ("requested_bytes", requested)):
            for stat in self.stats.each(name, pool):
                stat.decrease(amount)

    @staticmethod
    def try_merge_blocks(dst, src, pool):
        """``try_merge_blocks``: absorb the free neighbour ``src`` into ``dst``; its size, or 0."""
        if src is None or src.allocated or src.mapped != dst.mapped:
            return 0
        if dst.prev is src:   # [src dst]: dst becomes the piece at src's address
            dst.ptr, dst.prev, dst.segment_frames = src.ptr, src.prev, src.segment_frames
            if dst.prev:
                dst.prev.next = dst
        else:                 # [dst src]
            dst.next = src.next
            if dst.next:
                dst.next.prev = dst
        dst.size += src.size
        pool.remove(src)
        return src.size

    # ------------------------------------------------------------------ settings and reports
    @_locked
    def set_memory_fraction(self, fraction):
        """``setMemoryFraction``: below 1, segments may add up to fraction * total capacity, no more."""
        self.allowed_memory_maximum = int(fraction * self.memory.total()) if fraction < 1.0 else None

    @_locked
    def empty_cache(self):
        self.release_cached_blocks(self.history.gather(ALL))

    @_locked
    def reset_peak_stats(self):
        for stat in self._all_stats():
            stat.peak = stat.current

    @_locked
    def reset_accumulated_stats(self):
        for stat in self._all_stats():
            stat.allocated = stat.freed = 0
        s = self.stats
        s.num_alloc_retries = s.num_ooms = s.num_sync_all_streams = s.num_device_alloc = s.num_device_free = 0

    def _all_stats(self):
        for name in ARRAY_STATS:
            yield from getattr(self.stats, name).values()
        yield self.stats.oversize_allocations
        yield self.stats.oversize_segments

    @_locked
    def segments(self):
        """The head block of every segment, by address (what ``snapshot`` walks)."""
        blocks = list(self.active_blocks) + self.small_blocks.blocks + self.large_blocks.blocks
        # an expandable segment shows as one segment per run of mapped blocks
        return sorted((b for b in blocks if b.prev is None or not b.prev.mapped), key=lambda b: b.ptr)


def segment_blocks(head):
    """The blocks of the segment starting at ``head``, in address order (mapped ones only)."""
    block = head
    while block is not None and block.mapped:
        yield block
        block = block.next


def _int64(value):
    return value - 2**64 if value >= 2**63 else value


class NativeCachingAllocator:
    """The face the storage sees (``NativeCachingAllocator``): bytes in, bytes out, by address.

    ``allocate`` returns a slice of the segment's device array, so kernels and views work on it
    as on any device array; ``free`` finds the block again from the slice's address.
    """

    def __init__(self):
        self._device_allocator = None
        self.allocated_blocks = {}   # address -> (the DeviceCachingAllocator, the block)
        self.mutex = threading.RLock()   # guards ``allocated_blocks`` and the lazy creation below

    @property
    def device_allocator(self):
        with self.mutex:
            if self._device_allocator is None:   # built on first use, as torch's lazy CUDA init does
                self._device_allocator = DeviceCachingAllocator()
            return self._device_allocator

    @device_allocator.setter
    def device_allocator(self, allocator):
        self._device_allocator = allocator

    def allocate(self, nbytes):
        from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
        if nbytes >= 2**60:
            raise OutOfMemoryError("CUDA out of memory. Tried to allocate more than 1EB memory.")
        if nbytes == 0:   # torch hands out a null pointer and allocates nothing
            return cuda.device_array(0, dtype=np.uint8)
        owner = self.device_allocator
        with owner.mutex:      # the segment's links stay put until the block is registered
            block = owner.malloc(nbytes, streams.current_stream().cuda_stream)
            with self.mutex:
                self.allocated_blocks[block.ptr] = (owner, block)
            head = block
            while head.prev is not None:   # getBaseAllocation: the segment's first block
                head = head.prev
            offset = block.ptr - head.ptr
        return owner.memory.array(head.ptr)[offset:offset + nbytes]

    def free(self, data, nbytes):
        """Called by the storage's finalizer: the block goes back to its allocator's cache."""
        if nbytes == 0:
            return
        with self.mutex:
            owner, block = self.allocated_blocks.pop(address_of(data))
        owner.free(block)

    address_of = staticmethod(address_of)


cuda_allocator = NativeCachingAllocator()
set_allocator("cuda", cuda_allocator)     # c10's storages find it by device type
