"""CUDA streams, as far as the allocator needs them (``torch/cuda/streams.py``, ``c10/cuda/CUDAStream.h``).

The caching allocator files every block under the stream that was current when it was allocated,
and reuses a freed block only for a request on that same stream. Kernels here all run on Numba's
default stream, in order, so a stream is just a name for the allocator: ``Stream()`` makes a new
one, ``with internals.cuda.stream(s):`` makes it current, as in torch.
"""
import itertools
import threading
import time

from ..c10.device import device

__all__ = ["Stream", "Event", "current_stream", "default_stream", "stream", "StreamContext"]

_ids = itertools.count(1)   # 0 is the default stream (torch reports its cudaStream_t, null, as 0)


class Stream:
    def __init__(self, device=None, priority=0, *, _id=None):
        self.cuda_stream = next(_ids) if _id is None else _id
        self.priority = priority

    @property
    def device(self):
        return device("cuda", 0)

    def synchronize(self):
        """Work on every stream is already finished here: kernels run in order."""

    def wait_stream(self, other):
        pass

    def query(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self):
        return hash(self.cuda_stream)

    def __repr__(self):
        return f"<internals.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x}>"


_default = Stream(_id=0)


class _CurrentStream(threading.local):
    """The current stream is per thread, as c10's (``getCurrentCUDAStream`` reads a thread-local):
    one thread's ``with stream(s):`` leaves the others allocating on theirs."""
    stream = _default


_current = _CurrentStream()


def default_stream(device=None):
    return _default


def current_stream(device=None):
    return _current.stream


class StreamContext:
    """``with internals.cuda.stream(s):`` runs (and allocates) on ``s``, then restores the previous stream."""

    def __init__(self, s):
        self.stream = s

    def __enter__(self):
        self.previous, _current.stream = _current.stream, (self.stream or _current.stream)
        return self.stream

    def __exit__(self, *exc):
        _current.stream = self.previous


class Event:
    """A marker in a stream's work (``torch.cuda.Event``). Kernels here have finished when
    ``record`` returns (``synchronize`` first), so a recorded event is complete at once and its
    time is the host clock's; ``elapsed_time`` is in milliseconds, as CUDA's."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing, self.blocking, self.interprocess = enable_timing, blocking, interprocess
        self._time = None

    def record(self, stream=None):
        from . import synchronize  # a real cycle: internals.cuda imports this module
        synchronize()
        self._time = time.perf_counter()

    def wait(self, stream=None):
        """Work queued after this on ``stream`` waits for the event: here it already happened."""

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        """Milliseconds from this event to ``end_event``, with c10's ``CUDAEvent`` checks (the
        ValueErrors of ``TORCH_CHECK_VALUE``)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self):
        return f"<internals.cuda.Event {'recorded' if self._time is not None else 'uninitialized'}>"


def stream(s):
    return StreamContext(s)
