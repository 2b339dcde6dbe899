"""The allocator's recorded history (``_record_memory_history`` / ``_snapshot``) in torch's format.

No GPU here, so torch's own trace can't be recorded to compare with. What is checked instead:
the entries have the keys and the rules of ``CUDACachingAllocator.cpp`` (which size each action
carries, which stack), torch's reader ``torch.cuda._memory_viz`` reads the snapshot, and replaying
the trace from an empty allocator rebuilds exactly the segments and live blocks of the snapshot.
"""
import pickle

import pytest
import torch
from allocator_programs import PROGRAMS, run_program  # noqa: E402
from helpers import in_threads  # noqa: E402

import internals
from internals.cuda import caching_allocator as ca
from internals.cuda import memory, streams
from internals.cuda._device_memory import DeviceMemory

MiB, GiB = 1024**2, 1024**3
TRACE_KEYS = {"action", "addr", "size", "stream", "time_us", "compile_context", "user_metadata"}


@pytest.fixture
def recording():
    """A fresh allocator (4 GiB simulated device) recording everything; the old one back afterwards."""
    native = ca.cuda_allocator
    saved = native.device_allocator
    native.device_allocator = ca.DeviceCachingAllocator(DeviceMemory(capacity=4 * GiB))
    memory._record_memory_history(max_entries=100_000)
    yield native.device_allocator
    native.device_allocator = saved
    memory._set_allocator_settings("")
    streams._current.stream = streams._default


def replay(trace):
    """Segments (address -> size) and live blocks (address -> requested size) after ``trace``."""
    segments, live = {}, {}
    for e in trace:
        action = e["action"]
        if action == "segment_alloc":
            segments[e["addr"]] = e["size"]
        elif action == "segment_free":
            assert segments.pop(e["addr"]) == e["size"]
        elif action == "alloc":
            assert any(a <= e["addr"] < a + s for a, s in segments.items()), "alloc outside every segment"
            live[e["addr"]] = e["size"]
        elif action == "free_completed":
            assert live.pop(e["addr"]) == e["size"]
    return segments, live


def snapshot_state(snapshot):
    segments = {s["address"]: s["total_size"] for s in snapshot["segments"]}
    live = {b["address"]: b["requested_size"] for s in snapshot["segments"] for b in s["blocks"]
            if b["state"] == "active_allocated"}
    return segments, live


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_replaying_the_trace_rebuilds_the_snapshot(recording, name):
    kept = []

    def program(torch_module, step):
        PROGRAMS[name](torch_module, step)
        kept.append(memory._snapshot())   # taken before the program's tensors are gone

    run_program(internals, program)
    snapshot = kept[0]
    trace = snapshot["device_traces"][0]
    assert trace and all(TRACE_KEYS | {"frames"} >= set(e) >= TRACE_KEYS for e in trace if e["action"] != "oom")
    assert replay(trace) == snapshot_state(snapshot)
    assert "TOTAL MEM" in torch.cuda._memory_viz.trace(snapshot)   # torch's reader takes ours


def test_each_action_carries_torchs_size(recording):
    x = internals.empty(1000, device="cuda")             # 4000 bytes -> a 4096-byte block
    del x
    internals.cuda.empty_cache()
    trace = memory._snapshot()["device_traces"][0]
    assert [(e["action"], e["size"]) for e in trace] == [
        ("segment_alloc", 2 * MiB), ("alloc", 4000), ("free_requested", 4000), ("free_completed", 4000),
        ("segment_free", 2 * MiB), ("snapshot", 0)]        # alloc/free: the requested size; snapshot: active bytes
    alloc = trace[1]
    assert trace[0]["addr"] == alloc["addr"] == trace[2]["addr"] and alloc["stream"] == 0


def test_oom_entry_names_device_free_and_the_rounded_size(recording):
    memory.set_per_process_memory_fraction(0.5)
    with pytest.raises(internals.cuda.OutOfMemoryError):
        internals.empty(3 * GiB, dtype=internals.uint8, device="cuda")
    (oom,) = [e for e in memory._snapshot()["device_traces"][0] if e["action"] == "oom"]
    assert oom["size"] == 3 * GiB and "addr" not in oom and oom["device_free"] == 4 * GiB
    memory.set_per_process_memory_fraction(1.0)


def make_tensor():
    return internals.empty(10, device="cuda")


def test_context_levels_decide_which_events_carry_a_stack(recording):
    def actions_with_frames():
        x = make_tensor()
        del x
        snap = memory._snapshot()
        return [(e["action"], "frames" in e) for e in snap["device_traces"][0] if e["action"] != "snapshot"]

    memory._record_memory_history(context="alloc", clear_history=True)
    # the free's own stack is kept only with context="all"; free_completed falls back to the alloc's
    assert actions_with_frames() == [("segment_alloc", True), ("alloc", True), ("free_requested", False),
                                     ("free_completed", True)]
    memory._record_memory_history(context="state", clear_history=True)
    assert actions_with_frames() == [("alloc", False), ("free_requested", False), ("free_completed", False)]
    memory._record_memory_history(enabled="state", clear_history=True)
    keep = make_tensor()
    (block,) = [b for s in memory._snapshot()["segments"] for b in s["blocks"] if b["state"] == "active_allocated"]
    assert memory._snapshot()["device_traces"] == [[]]
    assert "make_tensor" in [f["name"] for f in block["frames"]]   # "state": live blocks still know their stack
    del keep


def test_stacks_python_leaves_out_the_package_frames(recording):
    memory._record_memory_history(stacks="python", clear_history=True)
    x = make_tensor()
    alloc = [e for e in memory._snapshot()["device_traces"][0] if e["action"] == "alloc"][0]
    assert alloc["frames"][0] == {"filename": __file__, "line": make_tensor.__code__.co_firstlineno + 1,
                                  "name": "make_tensor"}
    memory._record_memory_history(stacks="all", clear_history=True)
    y = make_tensor()
    alloc = [e for e in memory._snapshot()["device_traces"][0] if e["action"] == "alloc"][0]
    assert alloc["frames"][0]["name"] == "malloc" and "internals" in alloc["frames"][0]["filename"]
    del x, y


def test_ring_keeps_the_last_max_entries_and_skip_actions(recording):
    memory._record_memory_history(max_entries=3, clear_history=True, skip_actions=["free_requested"])
    for _ in range(4):
        x = make_tensor()
        del x
    trace = memory._snapshot()["device_traces"][0]
    assert [e["action"] for e in trace] == ["alloc", "free_completed", "snapshot"]   # _snapshot notes itself
    memory._record_memory_history(None)
    x = make_tensor()
    assert memory._snapshot()["device_traces"][0] == trace   # off: nothing more is recorded, nothing lost
    del x


@pytest.mark.parametrize("kwargs, message", [
    ({"enabled": "yes"}, "enabled"), ({"context": "some"}, "context"), ({"stacks": "cpp"}, "stacks"),
    ({"skip_actions": ["malloc"]}, "unknown actions")])
def test_bad_arguments_raise_value_error(recording, kwargs, message):
    with pytest.raises(ValueError, match=message):
        memory._record_memory_history(**kwargs)


def test_dump_snapshot_is_a_pickle_torchs_reader_takes(recording, tmp_path):
    keep = [internals.empty(n, dtype=internals.uint8, device="cuda") for n in (100, 3 * MiB)]
    path = tmp_path / "snapshot.pickle"
    memory._dump_snapshot(str(path))
    snapshot = pickle.loads(path.read_bytes())
    assert set(snapshot) == {"segments", "device_traces"}
    summary = torch.cuda._memory_viz.segsum(snapshot)
    assert "2 segments" in summary.lower() or "segment" in summary.lower()
    del keep


def test_threads_record_a_consistent_history(recording):
    def work(_):
        for n in range(60):
            x = internals.empty(1 + 1000 * (n % 7), dtype=internals.uint8, device="cuda")
            del x
    assert in_threads(work) == []   # four threads at a short switch interval, so a missing lock would show
    snapshot = memory._snapshot()
    trace = snapshot["device_traces"][0]
    assert sum(e["action"] == "alloc" for e in trace) == 240
    assert replay(trace) == snapshot_state(snapshot)
