"""The allocator's recorded history: trace entries and stack traces, in torch's snapshot format.

Mirrors ``record_trace``, the ``alloc_trace`` ring buffer and ``maybeGatherContext`` of
``c10/cuda/CUDACachingAllocator.cpp``, and the Python frames torch gathers with
``torch/csrc/profiler/combined_traceback.cpp``. The entries are the dicts
``torch.cuda.memory._snapshot()`` returns under ``"device_traces"``, so torch's own reader,
``torch.cuda._memory_viz``, reads ours.
"""
import collections
import os
import sys
import time

# The package's own frames stand where torch's C++ frames stand: below the user's Python code.
LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# RecordContext in torch: how much stack to keep. Each level adds to the one before.
CONTEXT_LEVELS = {None: 0, "state": 1, "alloc": 2, "all": 3}
STATE, ALLOC, ALL = 1, 2, 3
ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
           "segment_unmap", "oom", "snapshot")


def gather_frames(library_frames):
    """The calling thread's Python stack, innermost frame first, as torch's ``Frame`` dicts.

    ``library_frames`` False keeps only frames outside the package (torch's ``stacks="python"``
    keeps the Python frames and leaves out the C++ ones of the library underneath).
    """
    frames, frame = [], sys._getframe(2)   # from the caller of gather()
    while frame is not None:
        filename = frame.f_code.co_filename
        if library_frames or not filename.startswith(LIBRARY):
            frames.append({"filename": filename, "line": frame.f_lineno, "name": frame.f_code.co_name})
        frame = frame.f_back
    return frames


class MemoryHistory:
    """What ``_record_memory_history`` switched on for one device allocator.

    ``enabled="all"`` keeps the last ``max_entries`` trace entries (a ring, as torch's);
    ``"state"`` keeps only the stacks of live blocks. ``context`` says which events carry a stack:
    ``"state"`` the live blocks, ``"alloc"`` also the alloc entries, ``"all"`` also the frees.
    The owning allocator holds its mutex around every call, so no lock of its own is needed.
    """

    def __init__(self):
        self.context = 0            # a CONTEXT_LEVELS value; 0: gather nothing
        self.recording = False      # append trace entries?
        self.skip = frozenset()
        self.library_frames = True  # stacks="all"
        self.entries = collections.deque(maxlen=1)

    def configure(self, enabled, context, stacks, max_entries, clear_history, skip_actions):
        """``recordHistory``: switch on, change or switch off what is kept."""
        if enabled not in (None, "state", "all"):
            raise ValueError(f"expected enabled to be None, 'state' or 'all', not {enabled!r}")
        if context not in CONTEXT_LEVELS:
            raise ValueError(f"expected context to be None, 'state', 'alloc' or 'all', not {context!r}")
        if stacks not in ("python", "all"):
            raise ValueError(f"expected stacks to be 'python' or 'all', not {stacks!r}")
        unknown = set(skip_actions or ()) - set(ACTIONS)
        if unknown:
            raise ValueError(f"unknown actions to skip: {sorted(unknown)}")
        self.context = CONTEXT_LEVELS[context] if enabled else 0
        self.recording = enabled == "all"
        self.skip = frozenset(skip_actions or ())
        self.library_frames = stacks == "all"
        kept = () if clear_history else self.entries
        self.entries = collections.deque(kept, maxlen=max_entries)

    def gather(self, level):
        """``maybeGatherContext``: a stack when ``context`` reaches ``level``, else None."""
        return gather_frames(self.library_frames) if self.context >= level else None

    def record(self, action, addr, size, stream, frames=None):
        """``record_trace``: append one entry (oldest entries drop out once the ring is full)."""
        if not self.recording or action in self.skip:
            return
        entry = {"action": action, "device_free" if action == "oom" else "addr": addr, "size": size,
                 "stream": stream, "time_us": time.time_ns() // 1000, "compile_context": "", "user_metadata": ""}
        if frames is not None and self.context >= ALLOC:
            entry["frames"] = frames
        self.entries.append(entry)

    def trace(self):
        """The entries, oldest first (``DeviceCachingAllocator::trace``)."""
        return list(self.entries)
