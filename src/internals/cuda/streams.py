"""CUDA streams, as far as the allocator needs them (``torch/cuda/streams.py``, ``c10/cuda/CUDAStream.h``).

The caching allocator files every block under the stream that was current when it was allocated,
and reuses a freed block only for a request on that same stream. Kernels here all run on Numba's
default stream, in order, so a stream is just a name for the allocator: ``Stream()`` makes a new
one, ``with internals.cuda.stream(s):`` makes it current, as in torch.
"""
import itertools

from ..c10.device import device

__all__ = ["Stream", "current_stream", "default_stream", "stream", "StreamContext"]

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
_current = _default


def default_stream(device=None):
    return _default


def current_stream(device=None):
    return _current


class StreamContext:
    """``with internals.cuda.stream(s):`` runs (and allocates) on ``s``, then restores the previous stream."""

    def __init__(self, s):
        self.stream = s

    def __enter__(self):
        global _current
        self.previous, _current = _current, (self.stream or _current)
        return self.stream

    def __exit__(self, *exc):
        global _current
        _current = self.previous


def stream(s):
    return StreamContext(s)
