"""Expandable segments (``expandable_segments:True``): one growing segment per stream and pool.

No GPU here to record torch's numbers, so the expected numbers are derived by hand from torch's
rules (``find_expandable_block``, ``map_block``, ``unmap_block`` in ``CUDACachingAllocator.cpp``):
pages of 20 MiB (large pool) and 2 MiB (small pool), mapped when a request doesn't fit, unmapped
by ``empty_cache`` wherever a whole page is free; best fit counts a free block followed by
unmapped pages as the size it can grow to.
"""
import pytest

import internals
from internals.cuda import caching_allocator as ca
from internals.cuda import memory
from internals.cuda._device_memory import DeviceMemory

MiB = 1024**2
X = 4_000_256   # a 1000 x 1000 float32 tensor's block


@pytest.fixture
def expandable():
    native = ca.cuda_allocator
    saved = native.device_allocator
    native.device_allocator = ca.DeviceCachingAllocator(DeviceMemory(capacity=1024 * MiB))
    memory._set_allocator_settings("expandable_segments:True")
    yield native.device_allocator
    memory._set_allocator_settings("")
    native.device_allocator = saved


def numbers():
    segments = [(s["total_size"], s["is_expandable"], [(b["size"], b["state"]) for b in s["blocks"]])
                for s in internals.cuda.memory_snapshot()]
    return internals.cuda.memory_allocated(), internals.cuda.memory_reserved(), segments


def test_the_segment_grows_a_page_at_a_time(expandable):
    xs = [internals.empty(1000, 1000, device="cuda") for _ in range(5)]
    allocated, reserved, (segment,) = numbers()
    # five blocks in the first 20 MiB page; the rest of the page is a free block
    assert (allocated, reserved) == (5 * X, 20 * MiB)
    assert segment == (20 * MiB, True, [(X, "active_allocated")] * 5 + [(20 * MiB - 5 * X, "inactive")])
    del xs[1], xs[2]             # two holes of 4 MB, not neighbours
    y = internals.empty(2000, 1000, device="cuda")   # 8,000,000 bytes: no hole fits
    allocated, reserved, (segment,) = numbers()
    # y starts in the free tail of page 1 and a second page is mapped behind it: one segment still
    assert reserved == 40 * MiB and segment[2][-2:] == [(8_000_000, "active_allocated"),
                                                        (40 * MiB - 5 * X - 8_000_000, "inactive")]
    assert internals.cuda.memory_stats()["segment.all.current"] == 0   # torch counts no cudaMalloc
    del xs, y


def test_empty_cache_unmaps_whole_free_pages_only(expandable):
    a = internals.empty(30 * MiB, dtype=internals.uint8, device="cuda")   # two pages
    b = internals.empty(1000, 1000, device="cuda")                        # in the second page
    assert numbers()[1] == 40 * MiB
    del a
    internals.cuda.empty_cache()
    allocated, reserved, (segment,) = numbers()
    # page 1 is wholly free: unmapped; page 2 holds b, and a's last 10 MiB, free but mapped
    assert reserved == 20 * MiB and allocated == X
    assert segment[2] == [(10 * MiB, "inactive"), (X, "active_allocated"), (10 * MiB - X, "inactive")]
    del b
    internals.cuda.empty_cache()
    assert numbers() == (0, 0, [])
    assert expandable.memory.reserved == {} and expandable.memory.mapped == 0   # the range given back


def test_fragmentation_that_ooms_with_fixed_segments_fits(expandable):
    """Chapter 7's program on a 46 MiB device: with fixed segments the second 24 MiB request fails."""
    expandable.memory.capacity = 46 * MiB
    big = internals.empty(24 * MiB, dtype=internals.uint8, device="cuda")   # maps two 20 MiB pages
    del big
    small = internals.empty(1000, 1000, device="cuda")   # carved from the cached 40 MiB
    big = internals.empty(24 * MiB, dtype=internals.uint8, device="cuda")   # the rest still holds it
    assert numbers()[:2] == (X + 24 * MiB, 40 * MiB)
    assert internals.cuda.memory_stats()["num_ooms"] == 0
    del small, big


def test_values_survive_in_expandable_memory(expandable):
    x = internals.arange(12.0, device="cuda")
    y = internals.empty(3 * MiB, dtype=internals.uint8, device="cuda")
    z = (x * 2).reshape(3, 4).sum(1)
    assert z.tolist() == [12.0, 44.0, 76.0]
    del y


def test_map_and_unmap_are_recorded(expandable):
    memory._record_memory_history(max_entries=100, skip_actions=["snapshot"], clear_history=True)
    try:
        x = internals.empty(1000, 1000, device="cuda")
        del x
        internals.cuda.empty_cache()
        trace = memory._snapshot()["device_traces"][0]
    finally:
        memory._record_memory_history(None)
    assert [(e["action"], e["size"]) for e in trace] == [
        ("segment_map", 20 * MiB), ("alloc", 4_000_000), ("free_requested", 4_000_000),
        ("free_completed", 4_000_000), ("segment_unmap", 20 * MiB)]


def test_switching_off_keeps_new_blocks_out_of_expandable_segments(expandable):
    x = internals.empty(1000, 1000, device="cuda")
    memory._set_allocator_settings("expandable_segments:False")
    y = internals.empty(1000, 1000, device="cuda")     # the expandable page's free tail is skipped
    segments = internals.cuda.memory_snapshot()
    assert sorted(s["is_expandable"] for s in segments) == [False, True]
    del x, y
