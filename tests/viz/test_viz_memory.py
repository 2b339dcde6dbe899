"""The segment map (internals.viz.memory): one bar per segment, one rectangle per block, drawn to scale."""
import matplotlib
import pytest

import internals
from internals.cuda import caching_allocator as ca
from internals.cuda._device_memory import DeviceMemory
from internals.viz.memory import segment_map, segment_timeline

MiB = 1024**2
FREE = matplotlib.colors.to_rgba("#d9d9d9")


pytestmark = pytest.mark.usefixtures("close_figures")


@pytest.fixture
def fresh_cuda():
    native = ca.cuda_allocator
    saved = native.device_allocator
    native.device_allocator = ca.DeviceCachingAllocator(DeviceMemory(capacity=1024 * MiB))
    yield
    native.device_allocator = saved


def block(address, size, allocated):
    return {"address": address, "size": size, "requested_size": size if allocated else 0,
            "state": "active_allocated" if allocated else "inactive", "frames": []}


def segment(address, pool, *blocks):
    return {"address": address, "total_size": sum(b["size"] for b in blocks), "segment_type": pool,
            "blocks": list(blocks), "stream": 0}


# A small segment listed first (lower address): rows still put the large pool on top.
SNAPSHOT = [
    segment(1000, "small", block(1000, 512, True), block(1512, 2 * MiB - 512, False)),
    segment(9 * 10**8, "large", block(9 * 10**8, 4 * MiB, True), block(9 * 10**8 + 4 * MiB, 6 * MiB, False),
            block(9 * 10**8 + 10 * MiB, 10 * MiB, True)),
]


def rectangles(ax):
    blocks = [p for p in ax.patches if p.get_fill()]
    outlines = [p for p in ax.patches if not p.get_fill()]
    return blocks, outlines


def test_one_bar_per_segment_and_one_rectangle_per_block():
    ax = segment_map(SNAPSHOT)
    blocks, outlines = rectangles(ax)
    assert len(outlines) == 2 and len(blocks) == 5
    assert sorted(p.get_width() for p in outlines) == [2.0, 20.0]   # MiB, to scale
    assert ax.get_xlim() == (0.0, 20.0)
    labels = {tick.get_text(): y for tick, y in zip(ax.get_yticklabels(), ax.get_yticks())}
    assert labels == {"20.00 MiB\nlarge pool": 1, "2.00 MiB\nsmall pool": 0}   # the large pool on top


def test_blocks_sit_at_their_offsets_with_their_sizes():
    ax = segment_map(SNAPSHOT)
    blocks, _ = rectangles(ax)
    large = sorted((p.get_x(), p.get_width()) for p in blocks if p.get_y() > 0.5)   # the top row
    assert large == [(0.0, 4.0), (4.0, 6.0), (10.0, 10.0)]
    small = sorted((p.get_x(), p.get_width()) for p in blocks if p.get_y() < 0.5)
    # the 512-byte block is widened to 1% of the axis so that it shows; the free block keeps its size
    assert small == [(0.0, 0.2), (512 / MiB, 2 - 512 / MiB)]


def test_free_blocks_are_grey_and_each_allocation_has_its_own_colour():
    ax = segment_map(SNAPSHOT)
    blocks, _ = rectangles(ax)
    faces = [p.get_facecolor() for p in blocks]
    assert faces.count(FREE) == 2
    allocated = [f for f in faces if f != FREE]
    assert len(allocated) == 3 and len(set(allocated)) == 3


def test_labels_and_sizes_are_written_in_wide_blocks_and_no_address_is():
    ax = segment_map(SNAPSHOT, labels={9 * 10**8: "x"})
    texts = [t.get_text() for t in ax.texts]
    # every block wider than 8% of the axis, but not the 512-byte one
    assert sorted(texts) == ["10.00 MiB", "free\n2.00 MiB", "free\n6.00 MiB", "x\n4.00 MiB"]
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert legend == ["allocated block (a colour per allocation)", "free block, cached by the allocator",
                      "segment (one cudaMalloc)"]


def test_empty_snapshot_says_nothing_is_reserved():
    ax = segment_map([])
    assert len(ax.patches) == 0 and [t.get_text() for t in ax.texts] == ["no segments: nothing reserved"]


def test_draws_the_live_allocator_by_default(fresh_cuda):
    x = internals.empty(1000, 1000, device="cuda")       # 4,000,256 bytes of a 20 MiB segment
    y = internals.empty(1, device="cuda")                 # 512 bytes of a 2 MiB segment
    ax = segment_map(labels={x.data_ptr(): "x", y.data_ptr(): "y"})
    blocks, outlines = rectangles(ax)
    assert sorted(p.get_width() * MiB for p in outlines) == [2 * MiB, 20 * MiB]
    assert sorted(round(p.get_width() * MiB) for p in blocks if p.get_y() > 0.5) == [4_000_256, 20 * MiB - 4_000_256]
    assert "x\n3.81 MiB" in [t.get_text() for t in ax.texts]
    del x, y


def test_timeline_has_a_titled_panel_per_step_on_one_scale():
    later = [SNAPSHOT[1]]
    fig = segment_timeline([("both", SNAPSHOT), ("small freed", later), ("empty", [])])
    axes = fig.axes
    assert [ax.get_title(loc="left") for ax in axes] == ["both", "small freed", "empty"]
    assert {ax.get_xlim() for ax in axes} == {(0.0, 20.0)}
    assert [len(rectangles(ax)[1]) for ax in axes] == [2, 1, 0]
    assert len(fig.legends) == 1


def test_timeline_keeps_an_allocations_colour():
    names = {9 * 10**8: "x", 9 * 10**8 + 10 * MiB: "y"}
    moved = [segment(5, "large", block(5, 10 * MiB, True), block(5 + 10 * MiB, 10 * MiB, True))]
    fig = segment_timeline([("before", [SNAPSHOT[1]]), ("after", moved)],
                           labels=[names, {5: "y", 5 + 10 * MiB: "z"}])
    first, second = (rectangles(ax)[0] for ax in fig.axes)
    y_before = next(p for p in first if p.get_x() == 10.0).get_facecolor()
    y_after = next(p for p in second if p.get_x() == 0.0).get_facecolor()
    assert y_before == y_after
    assert len({p.get_facecolor() for p in first + second}) == 4   # x, y, z and the free grey


def test_timeline_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="2 label dicts for 1 steps"):
        segment_timeline([("a", SNAPSHOT)], labels=[{}, {}])
    with pytest.raises(ValueError, match="at least one"):
        segment_timeline([])


def test_memory_timeline_draws_a_band_per_allocation_and_the_reserved_line(fresh_cuda):
    from internals.cuda import memory
    from internals.viz.memory import active_allocations, memory_timeline
    memory._record_memory_history(max_entries=1000, skip_actions=["snapshot"])
    try:
        a = internals.empty(1000, device="cuda")
        b = internals.empty(3 * MiB, dtype=internals.uint8, device="cuda")
        del a
        trace = memory._snapshot()["device_traces"][0]
    finally:
        memory._record_memory_history(None)
    # segment_alloc, alloc a, segment_alloc, alloc b, free_requested a, free_completed a
    assert active_allocations(trace) == [[1, 5, 4000], [3, None, 3 * MiB]]
    ax = memory_timeline(trace, labels=["a", "b"])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "reserved"]
    (reserved,) = ax.get_lines()
    assert list(reserved.get_ydata()) == [2, 2, 22, 22, 22, 22, 22]   # MiB: small then large segment
    del b
