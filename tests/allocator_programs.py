"""Allocation programs for the CUDA caching allocator, written once, run on torch and on internals.

``scripts/record_allocator_trace.py`` runs them through real torch on a GPU and stores the numbers
in ``tests/data/allocator_trace_cuda.json``; ``tests/cuda/test_caching_allocator.py`` replays them on
internals and requires the same numbers. A program takes the module (``torch`` or ``internals``)
and ``step(label)``, which records the allocator's state after each step.

Only ``empty`` tensors of bytes: no kernel runs, so the simulator handles sizes of many MiB.
"""
import gc

MiB = 1024 * 1024


def _bytes(torch, nbytes):
    return torch.empty(nbytes, dtype=torch.uint8, device="cuda")


def tiny_tensors(torch, step):
    """4 bytes take a 512-byte block of a new 2 MiB small segment; later small tensors share it."""
    a = torch.empty(1, device="cuda")   # one float32
    step("a: 4 bytes")
    b = _bytes(torch, 512)
    step("b: 512 bytes")
    c = _bytes(torch, 513)
    step("c: 513 bytes -> 1024")
    del b
    step("del b: a hole between a and c")
    del a
    step("del a: merges with the hole")
    del c
    step("del c: the segment is one free block")
    torch.cuda.empty_cache()
    step("empty_cache")


def one_mib_boundary(torch, step):
    """1 MiB is the largest small request; one byte more goes to the large pool (20 MiB segment)."""
    a = _bytes(torch, MiB)
    step("a: 1 MiB, small pool")
    b = _bytes(torch, MiB + 1)
    step("b: 1 MiB + 1, large pool")
    c = _bytes(torch, MiB)
    step("c: 1 MiB, the rest of a's segment")
    d = _bytes(torch, 512)
    step("d: 512 bytes, a second small segment")
    del a, b, c, d
    step("del all")
    torch.cuda.empty_cache()
    step("empty_cache")


def large_segments(torch, step):
    """Below 10 MiB a request shares a 20 MiB segment; from 10 MiB it gets its own, rounded to 2 MiB."""
    a = _bytes(torch, 10 * MiB - 512)
    step("a: 10 MiB - 512, a 20 MiB segment")
    b = _bytes(torch, 10 * MiB)
    step("b: 10 MiB, the rest of a's segment (no split: 512 left)")
    c = _bytes(torch, 10 * MiB)
    step("c: 10 MiB, a 10 MiB segment")
    d = _bytes(torch, 10 * MiB + 1)
    step("d: 10 MiB + 1, a 12 MiB segment, split")
    e = _bytes(torch, 3 * MiB // 2)
    step("e: 1.5 MiB, d's remainder whole")
    del a, b, c, d, e
    step("del all")
    torch.cuda.empty_cache()
    step("empty_cache")


def splits_and_merges(torch, step):
    """Blocks cut from one 20 MiB segment; freed ones merge with free neighbours; best fit wins."""
    a = _bytes(torch, 2 * MiB)
    b = _bytes(torch, 3 * MiB)
    c = _bytes(torch, 4 * MiB)
    step("a, b, c: 2, 3, 4 MiB from one segment")
    del b
    step("del b: a 3 MiB hole")
    d = _bytes(torch, 3 * MiB)
    step("d: 3 MiB, the hole exactly")
    del d
    f = _bytes(torch, 5 * MiB // 2)
    step("f: 2.5 MiB, the 3 MiB hole whole")
    del f, a
    step("del f, a: 5 MiB free at the front")
    e = _bytes(torch, 5 * MiB)
    step("e: 5 MiB, the merged block")
    del c
    step("del c: merges with the tail")
    del e
    step("del e: the segment is whole again")
    torch.cuda.empty_cache()
    step("empty_cache")


def empty_cache_split_segment(torch, step):
    """empty_cache frees only segments that are entirely free."""
    a = _bytes(torch, 2 * MiB)
    b = _bytes(torch, 2 * MiB)
    x = _bytes(torch, 100)
    step("a, b: one large segment; x: one small")
    del a
    torch.cuda.empty_cache()
    step("del a, empty_cache: both segments stay")
    del x
    torch.cuda.empty_cache()
    step("del x, empty_cache: the small segment goes")
    del b
    torch.cuda.empty_cache()
    step("del b, empty_cache: nothing left")


def five_float_matrices(torch, step):
    """Five 1000 x 1000 float32 tensors (4,000,000 bytes each): allocated vs reserved."""
    xs = []
    for i in range(5):
        xs.append(torch.empty(1000, 1000, device="cuda"))
        step(f"x{i}")
    del xs
    step("del all")
    torch.cuda.empty_cache()
    step("empty_cache")


def streams(torch, step):
    """A block freed on one stream is reused on that stream only."""
    s = torch.cuda.Stream()
    a = _bytes(torch, 3 * MiB)
    del a
    step("a: 3 MiB on the default stream, freed")
    with torch.cuda.stream(s):
        b = _bytes(torch, 3 * MiB)
    step("b: 3 MiB on another stream, a new segment")
    del b
    c = _bytes(torch, 3 * MiB)
    step("c: 3 MiB on the default stream, a's block again")
    del c
    torch.cuda.empty_cache()
    step("empty_cache")


def peaks(torch, step):
    """Peaks keep the high-water mark until reset_peak_memory_stats."""
    a = _bytes(torch, 30 * MiB)
    del a
    step("a: 30 MiB, freed")
    torch.cuda.reset_peak_memory_stats()
    step("reset_peak_memory_stats")
    b = _bytes(torch, 4 * MiB)
    step("b: 4 MiB, cut from the cached 30 MiB")
    del b
    torch.cuda.empty_cache()
    step("empty_cache")


def memory_fraction_retry_and_oom(torch, step):
    """With ~100 MiB allowed: a retry after freeing cached segments, then an out-of-memory error."""
    total = torch.cuda.mem_get_info()[1]
    torch.cuda.set_per_process_memory_fraction((100 * MiB + MiB // 2) / total)
    try:
        a = _bytes(torch, 60 * MiB)
        b = _bytes(torch, 30 * MiB)
        del b
        step("a: 60 MiB; b: 30 MiB, freed and cached")
        c = _bytes(torch, 40 * MiB)
        step("c: 40 MiB, after freeing the cached 30 MiB and retrying")
        try:
            _bytes(torch, 2 * MiB)
        except torch.cuda.OutOfMemoryError:
            step("2 MiB more: out of memory")
        del a, c
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    torch.cuda.empty_cache()
    step("empty_cache")


def roundup_power2_divisions(torch, step):
    """roundup_power2_divisions rounds up to steps between powers of two instead of to 512 bytes."""
    torch.cuda.memory._set_allocator_settings("roundup_power2_divisions:4")
    try:
        a = _bytes(torch, 1_200_000)
        b = _bytes(torch, 5000)
        c = _bytes(torch, 600)
        step("divisions 4: 1,200,000 / 5000 / 600 bytes")
        del a, b, c
        torch.cuda.empty_cache()
        torch.cuda.memory._set_allocator_settings("roundup_power2_divisions:[1:2,2:4,>:8]")
        a = _bytes(torch, 1_200_000)
        b = _bytes(torch, 3_000_000)
        c = _bytes(torch, 5_000_000)
        step("divisions [1:2,2:4,>:8]: 1.2 / 3 / 5 MB")
        del a, b, c
    finally:
        torch.cuda.memory._set_allocator_settings("")
    torch.cuda.empty_cache()
    step("empty_cache")


def oversize_blocks(torch, step):
    """max_split_size_mb:20: oversize blocks are not split and not given to small requests."""
    torch.cuda.memory._set_allocator_settings("max_split_size_mb:20")
    try:
        a = _bytes(torch, 30 * MiB)
        del a
        step("a: 30 MiB, an oversize segment, freed")
        b = _bytes(torch, 25 * MiB)
        step("b: 25 MiB gets the whole 30 MiB block")
        del b
        c = _bytes(torch, 8 * MiB)
        step("c: 8 MiB may not take it: a new 20 MiB segment")
        d = _bytes(torch, 8 * MiB)
        e = _bytes(torch, 3 * MiB)
        step("d: 8 MiB, e: 3 MiB, from c's segment")
        del c, d, e
        f = _bytes(torch, 50 * MiB)
        step("f: 50 MiB, a new segment")
        del f
    finally:
        torch.cuda.memory._set_allocator_settings("")
    torch.cuda.empty_cache()
    step("empty_cache")


def oversize_release_on_oom(torch, step):
    """Out of room, the allocator frees just enough cached oversize blocks before a full flush."""
    torch.cuda.memory._set_allocator_settings("max_split_size_mb:20")
    total = torch.cuda.mem_get_info()[1]
    torch.cuda.set_per_process_memory_fraction((100 * MiB + MiB // 2) / total)
    try:
        a = _bytes(torch, 30 * MiB)
        b = _bytes(torch, 30 * MiB)
        c = _bytes(torch, 30 * MiB)
        del a, b
        step("three 30 MiB oversize segments, two freed")
        d = _bytes(torch, 40 * MiB)
        step("d: 40 MiB, after freeing both cached 30 MiB blocks")
        del c, d
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.memory._set_allocator_settings("")
    torch.cuda.empty_cache()
    step("empty_cache")


PROGRAMS = {f.__name__: f for f in (
    tiny_tensors, one_mib_boundary, large_segments, splits_and_merges, empty_cache_split_segment,
    five_float_matrices, streams, peaks, memory_fraction_retry_and_oom, roundup_power2_divisions,
    oversize_blocks, oversize_release_on_oom)}


def state(torch, label):
    """What is compared: totals, peaks, counters, and every segment's blocks (sizes and states).

    No gc.collect() here: a storage is freed by reference counting the moment its last tensor goes,
    in torch and in internals alike (a full collection per step would cost ~1 s with torch loaded).
    """
    stats = torch.cuda.memory_stats()
    segments = sorted([s["segment_type"], s["total_size"], [[b["size"], b["state"]] for b in s["blocks"]]]
                      for s in torch.cuda.memory_snapshot())
    return {"step": label, "allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(),
            "max_allocated": torch.cuda.max_memory_allocated(), "max_reserved": torch.cuda.max_memory_reserved(),
            "num_alloc_retries": stats["num_alloc_retries"], "num_ooms": stats["num_ooms"], "segments": segments}


def run_program(torch, program):
    """Run one program from an empty cache with fresh peaks and counters; its states, step by step."""
    if torch.cuda.memory_allocated():
        gc.collect()   # a tensor of an earlier program may wait in a reference cycle
    torch.cuda.empty_cache()
    if torch.cuda.memory_allocated() or torch.cuda.memory_reserved():
        raise RuntimeError("the allocator must be empty before a program runs")
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.reset_accumulated_memory_stats()
    states = []
    program(torch, lambda label: states.append(state(torch, label)))
    return states
