"""The CUDA caching allocator: every rule of ``c10/cuda/CUDACachingAllocator.cpp``, with numbers.

The expected numbers are worked out from the rules; each comment names the torch function and
the rule it applies (torch 2.13 sources: ``c10/cuda/CUDACachingAllocator.cpp``,
``c10/core/AllocatorConfig.{h,cpp}``, ``c10/cuda/CUDAAllocatorConfig.cpp``). The same rules were
not yet measured on a GPU here: ``test_replay_matches_the_gpu_recording`` compares with torch's
own numbers once ``scripts/record_allocator_trace.py`` has recorded them on a GPU.

Most rule tests use a private allocator on a private simulated device; the tensor tests swap a
fresh allocator in for ``internals.cuda`` so that other tests' tensors do not count.
"""
import gc
import json
import pathlib
import re

import pytest
import torch
from allocator_programs import PROGRAMS, run_program  # noqa: E402
from helpers import assert_same_error  # noqa: E402

import internals
from internals.cuda import allocator_config, memory, streams
from internals.cuda import caching_allocator as ca
from internals.cuda._device_memory import DeviceMemory
from internals.cuda.allocator_config import AllocatorConfig

KiB, MiB, GiB = 1024, 1024**2, 1024**3
TRACE = pathlib.Path(__file__).parents[1] / "data" / "allocator_trace_cuda.json"


@pytest.fixture
def alloc():
    """A private allocator: its own 1 GiB simulated device and its own default settings."""
    return ca.DeviceCachingAllocator(DeviceMemory(capacity=GiB), AllocatorConfig())


def with_settings(text):
    config = AllocatorConfig()
    config.parse(text)
    return ca.DeviceCachingAllocator(DeviceMemory(capacity=GiB), config)


def totals(a):
    return a.stats.allocated_bytes["all"].current, a.stats.reserved_bytes["all"].current


def segment_sizes(a):
    return sorted(sum(b.size for b in ca.segment_blocks(head)) for head in a.segments())


@pytest.fixture
def fresh_cuda():
    """internals.cuda with a fresh allocator (16 GiB simulated device) for the test, then the old one back."""
    native = ca.cuda_allocator
    saved = native.device_allocator
    native.device_allocator = ca.DeviceCachingAllocator(DeviceMemory(capacity=16 * GiB))
    yield native.device_allocator
    native.device_allocator = saved   # blocks still out remember their allocator (allocated_blocks)
    memory._set_allocator_settings("")


# ---------------------------------------------------------------------------------------------
# round_size, get_pool, get_allocation_size
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("request_bytes, rounded", [
    (1, 512), (4, 512), (511, 512),      # round_size: size < kMinBlockSize -> kMinBlockSize
    (512, 512), (513, 1024),             # else: up to a multiple of kMinBlockSize (512)
    (4_000_000, 4_000_256),              # a 1000x1000 float32 tensor: 7813 * 512
    (MiB + 1, MiB + 512),
])
def test_round_size(request_bytes, rounded):
    assert ca.round_size(request_bytes, AllocatorConfig()) == rounded


@pytest.mark.parametrize("settings, request_bytes, rounded", [
    # roundup_power2_divisions(size) > 1 and size > kMinBlockSize * divisions:
    # roundup_power2_next_division: 1,200,000 lies in [1 MiB, 2 MiB), 4 steps of 256 KiB -> 1.25 MiB
    ("roundup_power2_divisions:4", 1_200_000, 1_310_720),
    ("roundup_power2_divisions:4", 5000, 5120),           # [4096, 8192) in steps of 1024
    ("roundup_power2_divisions:4", 600, 1024),            # 600 <= 512 * 4: plain 512 rounding
    ("roundup_power2_divisions:4", 4096, 4096),           # a power of two stays
    # bracketed form, boundaries in MB: "1" is the [1 MiB, 2 MiB) interval (and everything below it),
    # "2" the next one, ">" every later one (AcceleratorAllocatorConfig::parseRoundUpPower2Divisions)
    ("roundup_power2_divisions:[1:2,2:4,>:8]", 1_200_000, 1_572_864),
    ("roundup_power2_divisions:[1:2,2:4,>:8]", 3_000_000, 3_145_728),
    ("roundup_power2_divisions:[1:2,2:4,>:8]", 5_000_000, 5_242_880),
    # "256:1" also covers every smaller size: 1 division = no power-of-2 rounding
    ("roundup_power2_divisions:[256:1,512:2,>:4]", 1_200_000, 1_200_128),
    ("roundup_power2_divisions:[256:1,512:2,>:4]", 300 * MiB + 1, 300 * MiB + 512),
    ("roundup_power2_divisions:[256:1,512:2,>:4]", 600 * MiB, 768 * MiB),   # [512, 1024) MiB in 2 steps
    ("roundup_power2_divisions:[256:1,512:2,>:4]", 1100 * MiB, 1280 * MiB),  # later intervals: 4 steps
])
def test_round_size_power2_divisions(settings, request_bytes, rounded):
    config = AllocatorConfig()
    config.parse(settings)
    assert ca.round_size(request_bytes, config) == rounded


def test_bracketed_divisions_fill_the_intervals():
    config = AllocatorConfig()
    config.parse("roundup_power2_divisions:[64:8,256:4,1024:4,>:1]")
    # intervals: index i holds sizes in [2**i MiB, 2**(i+1) MiB); the first entry fills those below it
    assert config.roundup_power2_divisions_list == [8] * 7 + [0, 4, 0, 4] + [1] * 5
    assert config.roundup_power2_divisions(32 * MiB) == 8
    assert config.roundup_power2_divisions(300 * MiB) == 4
    assert config.roundup_power2_divisions(100 * GiB) == 1   # clamped to the last interval


@pytest.mark.parametrize("rounded, segment", [
    (512, 2 * MiB), (MiB, 2 * MiB),                    # get_allocation_size: <= kSmallSize -> kSmallBuffer
    (MiB + 512, 20 * MiB), (10 * MiB - 512, 20 * MiB),  # < kMinLargeAlloc -> kLargeBuffer
    (10 * MiB, 10 * MiB), (10 * MiB + 512, 12 * MiB),  # else round up to kRoundLarge (2 MiB)
    (31 * MiB, 32 * MiB),
])
def test_get_allocation_size(rounded, segment):
    assert ca.get_allocation_size(rounded) == segment


def test_get_pool_splits_at_one_mib(alloc):
    # get_pool: size <= kSmallSize -> small_blocks, else large_blocks
    assert alloc.get_pool(MiB) is alloc.small_blocks
    assert alloc.get_pool(MiB + 512) is alloc.large_blocks


# ---------------------------------------------------------------------------------------------
# malloc: new segments, splitting, reuse
# ---------------------------------------------------------------------------------------------
def test_a_four_byte_tensor_takes_512_bytes_of_a_2_mib_segment(alloc):
    block = alloc.malloc(4)
    # round_size(4) = 512; get_allocation_size(512) = kSmallBuffer; should_split (small pool):
    # remaining 2 MiB - 512 >= kMinBlockSize -> split
    assert (block.size, block.requested_size) == (512, 4)
    assert totals(alloc) == (512, 2 * MiB)
    assert alloc.stats.requested_bytes["all"].current == 4
    assert alloc.stats.segment["small_pool"].current == 1
    assert alloc.stats.inactive_split_bytes["small_pool"].current == 2 * MiB - 512


def test_small_requests_pack_a_2_mib_segment(alloc):
    blocks = [alloc.malloc(512 * KiB) for _ in range(4)]   # 4 x 512 KiB = the whole 2 MiB segment
    assert totals(alloc) == (2 * MiB, 2 * MiB)
    assert alloc.stats.segment["all"].current == 1
    # the 4th took the last 512 KiB whole: remaining 0 < kMinBlockSize -> no split
    assert alloc.small_blocks.blocks == []
    alloc.malloc(1)   # nothing cached: a second segment
    assert alloc.stats.segment["small_pool"].current == 2
    assert len(blocks) == 4


def test_one_mib_is_small_one_byte_more_is_large(alloc):
    alloc.malloc(MiB)   # rounded 1 MiB <= kSmallSize: small pool, 2 MiB segment
    assert totals(alloc) == (MiB, 2 * MiB)
    alloc.malloc(MiB + 1)   # rounded 1 MiB + 512: large pool, kLargeBuffer segment
    assert totals(alloc) == (2 * MiB + 512, 22 * MiB)
    assert alloc.stats.reserved_bytes["large_pool"].current == 20 * MiB


def test_ten_mib_boundary(alloc):
    alloc.malloc(10 * MiB - 512)   # < kMinLargeAlloc -> a 20 MiB segment, split (10 MiB + 512 left > 1 MiB)
    assert segment_sizes(alloc) == [20 * MiB]
    alloc.malloc(10 * MiB)         # best fit: the 10 MiB + 512 remainder; 512 left <= 1 MiB -> not split
    assert totals(alloc) == (20 * MiB, 20 * MiB)
    alloc.malloc(10 * MiB)         # nothing cached: get_allocation_size(10 MiB) = 10 MiB exactly
    alloc.malloc(10 * MiB + 1)     # rounded 10 MiB + 512 -> a 12 MiB segment
    assert segment_sizes(alloc) == [10 * MiB, 12 * MiB, 20 * MiB]
    assert totals(alloc) == (40 * MiB + 512, 42 * MiB)


@pytest.mark.parametrize("first, second, handed_out, cached", [
    # The second request is served from what the first left of its segment. should_split:
    # small pool: split when remaining >= kMinBlockSize
    (MiB, MiB - 512, MiB - 512, [512]),    # 512 bytes would remain: split off, cached
    (MiB, MiB, MiB, []),                   # nothing remains
    # large pool (9 MiB leaves 11 MiB of a 20 MiB segment): split when size < max_split_size and
    # remaining > kSmallSize (1 MiB)
    (9 * MiB, 10 * MiB - 512, 10 * MiB - 512, [MiB + 512]),   # 1 MiB + 512 would remain: split
    (9 * MiB, 10 * MiB, 11 * MiB, []),                        # exactly 1 MiB would remain: not split
    (9 * MiB, 10 * MiB + 1, 11 * MiB, []),                    # 1 MiB - 512 stays inside the block
])
def test_split_rules(alloc, first, second, handed_out, cached):
    alloc.malloc(first)
    block = alloc.malloc(second)
    assert block.size == handed_out
    assert [b.size for b in alloc.small_blocks.blocks + alloc.large_blocks.blocks] == cached
    assert alloc.stats.segment["all"].current == 1


def test_five_1000x1000_float32_fill_one_20_mib_segment(alloc):
    xs = [alloc.malloc(4_000_000) for _ in range(5)]
    # each rounds to 4,000,256 (< 10 MiB: large pool, one kLargeBuffer segment). The first four
    # are split off; the fifth finds 4,970,496 left, and 970,240 <= 1 MiB would remain: it gets it whole.
    assert [b.size for b in xs] == [4_000_256] * 4 + [4_970_496]
    assert totals(alloc) == (20 * MiB, 20 * MiB)
    assert alloc.stats.requested_bytes["all"].current == 20_000_000
    for b in xs:
        alloc.free(b)
    assert totals(alloc) == (0, 20 * MiB)   # free_block: cached, merged back into one block
    assert len(alloc.large_blocks.blocks) == 1
    alloc.empty_cache()
    assert totals(alloc) == (0, 0)


def test_best_fit_takes_the_smallest_block_that_fits(alloc):
    a, b, c, d = (alloc.malloc(n * MiB) for n in (2, 3, 4, 5))
    alloc.free(b)   # a 3 MiB hole after a
    alloc.free(d)   # d merges with the 6 MiB tail: 11 MiB free at the end
    e = alloc.malloc(5 * MiB // 2)
    # get_free_block: lower_bound by (stream, size) -> the 3 MiB hole; 0.5 MiB left <= 1 MiB: whole
    assert (e.ptr, e.size) == (a.ptr + 2 * MiB, 3 * MiB)
    assert c.allocated


def test_free_merges_with_free_neighbours(alloc):
    a, b, c = (alloc.malloc(n * MiB) for n in (2, 3, 4))
    base = a.ptr
    alloc.free(b)
    # free_block: b's neighbours a and c are allocated -> no merge; b is a split, inactive piece
    assert alloc.stats.inactive_split["large_pool"].current == 2   # b and the tail
    assert alloc.stats.inactive_split_bytes["large_pool"].current == 3 * MiB + 11 * MiB
    alloc.free(a)   # try_merge_blocks(a, b): [a b] -> one 5 MiB block at the segment's start
    assert [(blk.ptr - base, blk.size) for blk in alloc.large_blocks.blocks] == [(0, 5 * MiB), (9 * MiB, 11 * MiB)]
    alloc.free(c)   # merges both ways: the segment is one unsplit block again
    assert [(blk.ptr - base, blk.size) for blk in alloc.large_blocks.blocks] == [(0, 20 * MiB)]
    assert not alloc.large_blocks.blocks[0].is_split()
    assert alloc.stats.inactive_split["large_pool"].current == 0
    assert alloc.stats.inactive_split_bytes["large_pool"].current == 0


def test_reuse_after_free_makes_no_new_segment(alloc):
    alloc.free(alloc.malloc(3 * MiB))
    assert alloc.stats.num_device_alloc == 1
    block = alloc.malloc(3 * MiB)
    assert alloc.stats.num_device_alloc == 1   # served from the cache
    assert totals(alloc) == (3 * MiB, 20 * MiB)
    assert block.allocated


def test_blocks_are_reused_on_the_same_stream_only(alloc):
    alloc.free(alloc.malloc(3 * MiB, stream=0))
    other = alloc.malloc(3 * MiB, stream=7)   # BlockComparatorSize orders by stream first
    assert alloc.stats.segment["all"].current == 2
    alloc.free(other)
    alloc.malloc(3 * MiB, stream=0)
    alloc.malloc(3 * MiB, stream=7)
    assert alloc.stats.segment["all"].current == 2   # each stream found its own cached block


def test_empty_cache_keeps_segments_that_are_partly_in_use(alloc):
    a, b = alloc.malloc(2 * MiB), alloc.malloc(2 * MiB)
    x = alloc.malloc(100)
    alloc.free(a)
    alloc.empty_cache()   # release_cached_blocks -> release_blocks: only blocks with no prev and no next
    assert totals(alloc) == (2 * MiB + 512, 22 * MiB)
    alloc.free(x)
    alloc.empty_cache()
    assert totals(alloc) == (2 * MiB, 20 * MiB)
    alloc.free(b)
    alloc.empty_cache()
    assert totals(alloc) == (0, 0)
    assert alloc.stats.num_device_free == 2


# ---------------------------------------------------------------------------------------------
# max_split_size_mb: oversize blocks
# ---------------------------------------------------------------------------------------------
def test_oversize_blocks_are_not_split_nor_given_to_small_requests():
    a = with_settings("max_split_size_mb:20")
    a.free(a.malloc(30 * MiB))
    assert a.stats.oversize_segments.current == 1   # alloc_block: size >= max_split_size
    b = a.malloc(25 * MiB)
    # get_free_block: 25 MiB >= max_split_size and 30 MiB < 25 + max_non_split_rounding (20) MiB
    # -> reused; should_split: size >= max_split_size -> not split
    assert b.size == 30 * MiB and a.stats.segment["all"].current == 1
    assert a.stats.oversize_allocations.current == 1
    a.free(b)
    c = a.malloc(8 * MiB)   # 8 MiB < max_split_size and the block >= max_split_size: refused
    assert a.stats.segment["all"].current == 2
    assert c.size == 8 * MiB   # the new 20 MiB segment is itself oversize, yet 8 MiB < 20 MiB: split
    assert a.stats.oversize_segments.current == 2
    assert a.stats.oversize_allocations.current == 0


def test_max_non_split_rounding_limits_the_waste():
    a = with_settings("max_split_size_mb:20")
    a.free(a.malloc(46 * MiB))
    a.malloc(22 * MiB)   # get_free_block: 46 MiB >= 22 + 20 MiB: too wasteful, a new 22 MiB segment
    assert segment_sizes(a) == [22 * MiB, 46 * MiB]
    b = with_settings("max_split_size_mb:20,max_non_split_rounding_mb:30")
    b.free(b.malloc(46 * MiB))
    assert b.malloc(22 * MiB).size == 46 * MiB   # 46 < 22 + 30: reused whole


def test_max_split_size_is_reported_as_int64():
    # DeviceStats.max_split_size = static_cast<int64_t>(max_split_size()): SIZE_MAX reads -1
    assert ca.DeviceCachingAllocator(DeviceMemory(), AllocatorConfig()).stats.max_split_size == -1
    assert with_settings("max_split_size_mb:64").stats.max_split_size == 64 * MiB


# ---------------------------------------------------------------------------------------------
# When the device is full: retries and OutOfMemoryError
# ---------------------------------------------------------------------------------------------
def test_out_of_memory_message_and_counters():
    a = ca.DeviceCachingAllocator(DeviceMemory(capacity=30 * MiB), AllocatorConfig())
    a.malloc(20 * MiB)
    with pytest.raises(ca.OutOfMemoryError) as error:
        a.malloc(8 * MiB)   # needs a 20 MiB segment: 10 MiB free
    assert str(error.value) == (
        "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 30.00 MiB of which "
        "10.00 MiB is free. Of the allocated memory 20.00 MiB is allocated by PyTorch, and 0 bytes is reserved "
        "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html"
        "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)")
    assert isinstance(error.value, RuntimeError)
    # malloc: alloc_block fails, release_available_cached_blocks (no max_split_size) is skipped,
    # release_cached_blocks then alloc_block(isRetry=true) fails too -> one retry, one OOM
    assert (a.stats.num_alloc_retries, a.stats.num_ooms) == (1, 1)


def test_a_retry_after_freeing_cached_segments_succeeds():
    a = ca.DeviceCachingAllocator(DeviceMemory(capacity=40 * MiB), AllocatorConfig())
    a.free(a.malloc(30 * MiB))   # a cached, unsplit 30 MiB segment
    block = a.malloc(32 * MiB)   # 30 MiB is too small; 30 + 32 > 40 -> release it, retry
    assert block.size == 32 * MiB
    assert (a.stats.num_alloc_retries, a.stats.num_ooms, a.stats.num_device_free) == (1, 0, 1)
    assert a.stats.num_sync_all_streams == 1   # release_cached_blocks synchronizes first


def test_just_enough_oversize_blocks_are_freed_before_a_full_flush():
    config = AllocatorConfig()
    config.parse("max_split_size_mb:20")
    a = ca.DeviceCachingAllocator(DeviceMemory(capacity=100 * MiB), config)
    blocks = [a.malloc(n * MiB) for n in (30, 24, 22, 20)]
    for block in blocks[:3]:
        a.free(block)   # cached oversize blocks of 30, 24 and 22 MiB
    a.malloc(25 * MiB)
    # 96 + 25 > 100. get_free_block: 30 MiB >= 25 + 20 MiB? no -> reused whole! Nothing freed.
    assert a.stats.num_device_free == 0
    a.malloc(40 * MiB)
    # release_available_cached_blocks: no single cached block >= 40 MiB -> free the largest
    # oversize ones until they add up: 24 + 22 = 46 MiB; then alloc_block(isRetry=false) succeeds
    assert a.stats.num_device_free == 2 and a.stats.num_alloc_retries == 0
    assert segment_sizes(a) == [20 * MiB, 30 * MiB, 40 * MiB]


def test_memory_fraction_refuses_without_asking_the_device():
    class CountingMemory(DeviceMemory):
        calls = 0

        def malloc(self, size):
            CountingMemory.calls += 1
            return super().malloc(size)

    a = ca.DeviceCachingAllocator(CountingMemory(capacity=1000 * MiB), AllocatorConfig())
    a.set_memory_fraction(0.1)   # setMemoryFraction: allowed_memory_maximum = 0.1 * total = 100 MiB
    a.malloc(90 * MiB)
    with pytest.raises(ca.OutOfMemoryError, match=r"of which 910\.00 MiB is free\. 100\.00 MiB allowed; Of"):
        a.malloc(12 * MiB)   # alloc_block: 90 + 12 > 100 -> cudaErrorMemoryAllocation, no cudaMalloc
    assert CountingMemory.calls == 1
    a.set_memory_fraction(1.0)   # a fraction of 1 removes the limit
    a.malloc(12 * MiB)
    assert CountingMemory.calls == 2


def test_garbage_collection_frees_the_oldest_cached_segments():
    config = AllocatorConfig()
    config.parse("garbage_collection_threshold:0.5")
    a = ca.DeviceCachingAllocator(DeviceMemory(capacity=100 * MiB), config)
    a.set_memory_fraction(0.5)   # GC runs only with a fraction: threshold 0.5 * 50 MiB = 25 MiB
    a.free(a.malloc(12 * MiB))   # get_free_block calls: 1; cached at age base 1
    a.free(a.malloc(14 * MiB))   # calls: 2; 12 MiB too small; 26 MiB reserved; cached at base 2
    a.malloc(16 * MiB)           # calls: 3; ages 2 and 1, mean 1.5 -> the 12 MiB block goes
    assert segment_sizes(a) == [14 * MiB, 16 * MiB]
    plain = ca.DeviceCachingAllocator(DeviceMemory(capacity=100 * MiB), AllocatorConfig())
    plain.set_memory_fraction(0.5)
    plain.free(plain.malloc(12 * MiB))
    plain.free(plain.malloc(14 * MiB))
    plain.malloc(16 * MiB)
    assert segment_sizes(plain) == [12 * MiB, 14 * MiB, 16 * MiB]   # without GC all stay


def test_free_memory_callbacks_run_before_a_new_segment(alloc):
    held = alloc.malloc(3 * MiB)
    alloc.malloc(17 * MiB)   # the rest of the segment

    def release():
        alloc.free(held)
        return True

    alloc.free_memory_callbacks.append(release)
    alloc.malloc(3 * MiB)   # get_free_block misses, trigger_free_memory_callbacks frees, retry hits
    assert alloc.stats.segment["all"].current == 1


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------
def test_peaks_and_their_reset(alloc):
    alloc.free(alloc.malloc(30 * MiB))
    assert alloc.stats.allocated_bytes["all"].peak == 30 * MiB
    alloc.reset_peak_stats()   # reset_peak_stat: peak = current
    assert alloc.stats.allocated_bytes["all"].peak == 0
    assert alloc.stats.reserved_bytes["all"].peak == 30 * MiB
    alloc.malloc(4 * MiB)
    assert alloc.stats.allocated_bytes["all"].peak == 4 * MiB
    assert alloc.stats.allocated_bytes["all"].allocated == 34 * MiB
    alloc.reset_accumulated_stats()
    assert alloc.stats.allocated_bytes["all"].allocated == 0 and alloc.stats.num_device_alloc == 0


def torch_memory_stats_keys():
    """The key names of torch.cuda.memory_stats(), read from torch's own docstring.

    Two corrections, from the C++ that builds the dict (``torch/csrc/cuda/Module.cpp``,
    ``memoryStats``): the allocation count is stored as ``result["allocation"]`` although the
    docstring writes ``"allocated.{...}"`` (``memory_summary`` reads "allocation" too); and
    ``"reserved_bytes_by_private_pools"`` is a dict per CUDA-graph pool, empty without them, so it
    contributes no key.
    """
    names = set()
    for text in re.findall(r'``"([^"]+)"``', torch.cuda.memory_stats.__doc__):
        if not re.fullmatch(r"[a-z][a-z_]*(\.\{[a-z_,]+\})*", text) or text == "reserved_bytes_by_private_pools":
            continue
        parts = [p.strip("{}").split(",") for p in text.split(".")]
        keys = [""]
        for options in parts:
            keys = [f"{k}.{o}" if k else o for k in keys for o in options]
        names.update(keys)
    return {k.replace("allocated.", "allocation.", 1) if k.startswith("allocated.") else k for k in names}


def test_memory_stats_keys_are_torchs(fresh_cuda):
    keys = torch_memory_stats_keys()
    assert len(keys) == 9 * 3 * 4 + 2 * 4 + 7   # nine stats by pool and metric, two oversize stats, counters
    assert set(internals.cuda.memory_stats()) == keys
    assert list(internals.cuda.memory_stats()) == sorted(keys)   # an OrderedDict sorted by key, as torch's


def test_memory_summary_is_torchs_table(fresh_cuda, monkeypatch):
    x = internals.empty(3 * MiB, dtype=internals.uint8, device="cuda")
    y = internals.empty(100, dtype=internals.uint8, device="cuda")
    # torch's memory_summary, fed our statistics, must print exactly our table
    monkeypatch.setattr(torch.cuda.memory, "memory_stats", lambda device=None: internals.cuda.memory_stats(device))
    for abbreviated in (False, True):
        ours = internals.cuda.memory_summary(0, abbreviated=abbreviated)
        assert ours == torch.cuda.memory.memory_summary(0, abbreviated=abbreviated)
    assert "| Allocated memory      |   3072 KiB |   3072 KiB |   3072 KiB |      0 B   |" in ours
    del x, y


def test_memory_snapshot_layout(fresh_cuda):
    x = internals.empty(3 * MiB, dtype=internals.uint8, device="cuda")
    y = internals.empty(100, dtype=internals.uint8, device="cuda")
    snapshot = internals.cuda.memory_snapshot()
    # the keys of torch's segment and block dicts (torch/csrc/cuda/Module.cpp, segmentInfoToDict)
    segment_keys = {"device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
                    "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"}
    assert all(set(s) == segment_keys for s in snapshot)
    block_keys = {"address", "size", "requested_size", "state", "frames"}
    assert all(set(b) == block_keys for s in snapshot for b in s["blocks"])
    assert [s["address"] for s in snapshot] == sorted(s["address"] for s in snapshot)
    by_type = {s["segment_type"]: s for s in snapshot}
    assert [(b["size"], b["requested_size"], b["state"]) for b in by_type["large"]["blocks"]] == [
        (3 * MiB, 3 * MiB, "active_allocated"), (17 * MiB, 0, "inactive")]
    small = by_type["small"]
    assert (small["total_size"], small["allocated_size"], small["requested_size"]) == (2 * MiB, 512, 100)
    assert small["blocks"][0]["address"] == y.data_ptr() == small["address"]
    # torch's own snapshot tool reads it, and its accounting checks add up
    report = torch.cuda._memory_viz.segsum({"segments": snapshot})
    assert "segments: 2" in report and "total_reserved: 22.0MiB" in report
    del x, y


@pytest.mark.parametrize("size, text", [(0, "0 bytes"), (1024, "1024 bytes"), (1025, "1.00 KiB"),
                                        (MiB, "1024.00 KiB"), (20 * MiB, "20.00 MiB"), (GiB, "1024.00 MiB"),
                                        (16 * GiB, "16.00 GiB")])
def test_format_size(size, text):
    assert ca.format_size(size) == text   # format_size: <= 1024 bytes, <= 1 MiB in KiB, ...


# ---------------------------------------------------------------------------------------------
# Through tensors: storages hold blocks, and give them back when collected
# ---------------------------------------------------------------------------------------------
def test_tensors_allocate_through_the_caching_allocator(fresh_cuda):
    cuda = internals.cuda
    x = internals.zeros(10, 10, device="cuda")   # 400 bytes -> a 512-byte block, 2 MiB reserved
    assert (cuda.memory_allocated(), cuda.memory_reserved()) == (512, 2 * MiB)
    y = internals.empty(1000, 1000, device="cuda")   # 4,000,000 -> 4,000,256 in a 20 MiB segment
    assert (cuda.memory_allocated(), cuda.memory_reserved()) == (512 + 4_000_256, 22 * MiB)
    del x
    gc.collect()
    assert (cuda.memory_allocated(), cuda.memory_reserved()) == (4_000_256, 22 * MiB)
    del y
    gc.collect()
    assert (cuda.memory_allocated(), cuda.memory_reserved()) == (0, 22 * MiB)
    cuda.empty_cache()
    assert cuda.memory_reserved() == 0
    assert cuda.max_memory_allocated() == 4_000_768


def test_five_1000x1000_tensors(fresh_cuda):
    cuda = internals.cuda
    xs = [internals.empty(1000, 1000, device="cuda") for _ in range(5)]
    assert (cuda.memory_allocated(), cuda.memory_reserved()) == (20 * MiB, 20 * MiB)
    assert cuda.memory_stats()["requested_bytes.all.current"] == 5 * 4_000_000
    del xs
    gc.collect()
    assert (cuda.memory_allocated(), cuda.memory_reserved()) == (0, 20 * MiB)
    cuda.empty_cache()
    assert (cuda.memory_allocated(), cuda.memory_reserved()) == (0, 0)


def test_a_view_keeps_the_block(fresh_cuda):
    x = internals.empty(100, device="cuda")
    view = x[10:20]
    del x
    gc.collect()
    assert internals.cuda.memory_allocated() == 512   # the storage lives on in the view
    del view
    gc.collect()
    assert internals.cuda.memory_allocated() == 0


def test_storages_are_slices_of_one_segment_and_kernels_work_on_them(fresh_cuda):
    a = internals.tensor([1.0, 2.0, 3.0], device="cuda")
    b = internals.tensor([10.0, 20.0, 30.0], device="cuda")
    # consecutive 512-byte blocks of the same 2 MiB segment
    assert b.data_ptr() - a.data_ptr() == 512
    assert (a * 2 + b).tolist() == [12.0, 24.0, 36.0]
    (segment,) = internals.cuda.memory_snapshot()
    assert segment["address"] == a.data_ptr()


def test_zero_bytes_allocate_nothing(fresh_cuda):
    x = internals.empty(0, device="cuda")   # NativeCachingAllocator::allocate: size 0 -> no malloc
    assert (internals.cuda.memory_allocated(), internals.cuda.memory_reserved()) == (0, 0)
    assert x.numel() == 0


def test_out_of_memory_through_tensors(fresh_cuda):
    internals.cuda.set_device_capacity(4 * MiB)
    keep = internals.empty(MiB, dtype=internals.uint8, device="cuda")   # a 2 MiB small segment
    with pytest.raises(internals.cuda.OutOfMemoryError, match=r"^CUDA out of memory\. Tried to allocate 20\.00 MiB\. "
                       r"GPU 0 has a total capacity of 4\.00 MiB of which 2\.00 MiB is free\."):
        internals.empty(3 * MiB, dtype=internals.uint8, device="cuda")
    assert internals.OutOfMemoryError is internals.cuda.OutOfMemoryError
    assert internals.cuda.OutOfMemoryError.__mro__[1] is torch.cuda.OutOfMemoryError.__mro__[1] is RuntimeError
    assert internals.cuda.memory_stats()["num_ooms"] == 1
    assert internals.cuda.mem_get_info() == (2 * MiB, 4 * MiB)
    del keep


def test_set_per_process_memory_fraction(fresh_cuda):
    cuda = internals.cuda
    cuda.set_device_capacity(100 * MiB)
    cuda.set_per_process_memory_fraction(0.5)
    assert cuda.get_per_process_memory_fraction() == 0.5
    keep = internals.empty(40 * MiB, dtype=internals.uint8, device="cuda")
    with pytest.raises(cuda.OutOfMemoryError, match=r"50\.00 MiB allowed; "):
        internals.empty(12 * MiB, dtype=internals.uint8, device="cuda")
    with pytest.raises(TypeError, match="must be `float`"):
        cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        cuda.set_per_process_memory_fraction(1.5)
    del keep


def test_allocations_follow_the_current_stream(fresh_cuda):
    x = internals.empty(3 * MiB, dtype=internals.uint8, device="cuda")
    del x
    gc.collect()
    s = internals.cuda.Stream()
    with internals.cuda.stream(s):
        assert internals.cuda.current_stream() == s
        y = internals.empty(3 * MiB, dtype=internals.uint8, device="cuda")
    assert internals.cuda.current_stream() == internals.cuda.default_stream()
    assert internals.cuda.memory_reserved() == 40 * MiB   # the default stream's cached block is not used
    assert {seg["stream"] for seg in internals.cuda.memory_snapshot()} == {0, s.cuda_stream}
    del y


# ---------------------------------------------------------------------------------------------
# Settings: PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF / _set_allocator_settings
# ---------------------------------------------------------------------------------------------
def test_settings_string():
    config = AllocatorConfig()
    config.parse("max_split_size_mb:128, garbage_collection_threshold:0.6,expandable_segments:False,backend:native")
    assert (config.max_split_size, config.garbage_collection_threshold) == (128 * MiB, 0.6)
    config.parse("roundup_power2_divisions:2")   # unset settings return to their defaults
    assert config.max_split_size == allocator_config.SIZE_MAX and config.garbage_collection_threshold == 0


# The first six are parsed by c10/core/AllocatorConfig.cpp, which the CPU wheel has too:
# test_bad_settings_like_torch checks their classes against it.
SHARED_BAD_SETTINGS = [
    ("max_split_size_mb:10", ValueError, "max_split_size_mb too small, must be >= 20"),
    ("max_non_split_rounding_mb:10", ValueError, "max_non_split_rounding_mb too small, must be >= 20"),
    ("garbage_collection_threshold:1.5", ValueError, r"set it in \(0\.0, 1\.0\)"),
    ("roundup_power2_divisions:3", ValueError, "has to be power of 2"),
    ("roundup_power2_divisions:[3:2]", ValueError, "intervals have to be power of 2"),
    ("expandable_segments:yes", ValueError, "Expected 'True' or 'False'"),
]


@pytest.mark.parametrize("text, error, message", SHARED_BAD_SETTINGS + [
    ("max_spilt_size_mb:64", ValueError, "Unrecognized key 'max_spilt_size_mb' in CUDA allocator config."),
])
def test_bad_settings(text, error, message):
    with pytest.raises(error, match=message):
        AllocatorConfig().parse(text)


@pytest.mark.parametrize("text, error, message", SHARED_BAD_SETTINGS)
def test_bad_settings_like_torch(text, error, message):
    try:
        assert_same_error(lambda: AllocatorConfig().parse(text),
                          lambda: torch._C._accelerator_setAllocatorSettings(text))
    finally:
        torch._C._accelerator_setAllocatorSettings("")


def test_settings_from_the_environment(monkeypatch):
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    monkeypatch.setattr(allocator_config, "_config", None)
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "max_split_size_mb:64")
    assert allocator_config.get_config().max_split_size == 64 * MiB
    monkeypatch.setattr(allocator_config, "_config", None)
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:32")   # read first (CUDAAllocatorConfig)
    assert allocator_config.get_config().max_split_size == 32 * MiB


def test_set_allocator_settings_applies_at_once(fresh_cuda):
    internals.cuda.memory._set_allocator_settings("roundup_power2_divisions:4")
    x = internals.empty(1_200_000, dtype=internals.uint8, device="cuda")
    assert internals.cuda.memory_allocated() == 1_310_720
    del x


# ---------------------------------------------------------------------------------------------
# The shared allocation programs: hand-derived numbers, and torch's, recorded on a GPU
# ---------------------------------------------------------------------------------------------
def run_on_internals(program, device_total=16 * GiB):
    native = ca.cuda_allocator
    saved = native.device_allocator
    native.device_allocator = ca.DeviceCachingAllocator(DeviceMemory(capacity=device_total))
    try:
        return run_program(internals, program)
    finally:
        native.device_allocator = saved
        memory._set_allocator_settings("")
        streams._current.stream = streams._default


def numbers(states):
    return [(s["allocated"], s["reserved"]) for s in states]


def test_program_five_float_matrices():
    states = run_on_internals(PROGRAMS["five_float_matrices"])
    assert numbers(states) == [(4_000_256 * (i + 1), 20 * MiB) for i in range(4)] + [
        (20 * MiB, 20 * MiB), (0, 20 * MiB), (0, 0)]


def test_program_tiny_tensors():
    states = run_on_internals(PROGRAMS["tiny_tensors"])
    assert numbers(states) == [(512, 2 * MiB), (1024, 2 * MiB), (2048, 2 * MiB), (1536, 2 * MiB), (1024, 2 * MiB),
                               (0, 2 * MiB), (0, 0)]
    # del b leaves a hole between a and c; del a merges a with it (free_block / try_merge_blocks)
    assert [s["segments"][0][2] for s in states[3:5]] == [
        [[512, "active_allocated"], [512, "inactive"], [1024, "active_allocated"], [2 * MiB - 2048, "inactive"]],
        [[1024, "inactive"], [1024, "active_allocated"], [2 * MiB - 2048, "inactive"]]]


def test_program_memory_fraction_retry_and_oom():
    states = run_on_internals(PROGRAMS["memory_fraction_retry_and_oom"])
    assert [(s["allocated"], s["reserved"], s["num_alloc_retries"], s["num_ooms"]) for s in states] == [
        (60 * MiB, 90 * MiB, 0, 0),     # b's 30 MiB segment cached
        (100 * MiB, 100 * MiB, 1, 0),   # 90 + 40 > 100.5 -> release_cached_blocks, retry: 60 + 40
        (100 * MiB, 100 * MiB, 2, 1),   # 2 MiB wants a 20 MiB segment: nothing to free, OOM
        (0, 0, 2, 1)]


def test_program_oversize_release_on_oom():
    states = run_on_internals(PROGRAMS["oversize_release_on_oom"])
    assert [(s["allocated"], s["reserved"], s["num_alloc_retries"]) for s in states] == [
        (30 * MiB, 90 * MiB, 0), (70 * MiB, 70 * MiB, 0), (0, 0, 0)]


def test_every_program_runs_on_internals():
    for name, program in PROGRAMS.items():
        states = run_on_internals(program)
        assert states and all(s["allocated"] <= s["reserved"] for s in states), name
        assert (states[-1]["allocated"], states[-1]["reserved"]) == (0, 0), name


def test_replay_matches_the_gpu_recording():
    if not TRACE.exists():
        pytest.skip("no GPU recording yet: run `python scripts/record_allocator_trace.py` on a machine with a "
                    "CUDA GPU and commit tests/data/allocator_trace_cuda.json")
    trace = json.loads(TRACE.read_text())
    assert set(trace["programs"]) == set(PROGRAMS), "the programs changed since the recording: record again"
    for name, program in PROGRAMS.items():
        ours = run_on_internals(program, device_total=trace["device_total"])
        assert ours == trace["programs"][name], f"{name} differs from torch {trace['torch']} on {trace['gpu']}"


def test_the_current_stream_is_per_thread(fresh_cuda):
    """A thread inside ``with stream(s):`` leaves the others on the default stream, as c10's
    thread-local current stream does: their blocks are filed under the stream they ran on."""
    import threading
    s, inside, seen = internals.cuda.Stream(), threading.Event(), {}

    def on_s():
        with internals.cuda.stream(s):
            inside.set()
            seen["s"] = internals.cuda.current_stream()
            done.wait(5)

    done = threading.Event()
    thread = threading.Thread(target=on_s)
    thread.start()
    inside.wait(5)
    seen["main"] = internals.cuda.current_stream()
    x = internals.empty(3 * MiB, dtype=internals.uint8, device="cuda")
    done.set()
    thread.join(5)
    assert (seen["s"], seen["main"]) == (s, internals.cuda.default_stream())
    assert {seg["stream"] for seg in internals.cuda.memory_snapshot()} == {0}
    del x


def test_events_time_in_milliseconds_and_check_as_c10():
    """``Event``: recorded events are complete; ``elapsed_time`` needs timing on both and both
    recorded (c10's ``CUDAEvent`` checks, ValueErrors)."""
    start, end = internals.cuda.Event(enable_timing=True), internals.cuda.Event(enable_timing=True)
    with pytest.raises(ValueError, match="Both events must be recorded before calculating elapsed time"):
        start.elapsed_time(end)
    start.record()
    internals.ones(4, device="cuda").sum()
    end.record()
    end.synchronize()
    assert start.query() and end.query()
    assert 0.0 <= start.elapsed_time(end) < 60_000.0
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'"):
        internals.cuda.Event().elapsed_time(end)
