"""A log that records only while someone listens: the course's tracers (dispatcher, arg parser)."""
import contextlib

__all__ = ["TraceLog"]


class TraceLog:
    """``with log.recording() as entries:`` collects what ``log.add`` is given inside the block.

    Outside a block ``entries`` is None and ``add`` is a cheap no-op check, so a hot path can
    call it on every operation.
    """

    def __init__(self):
        self.entries = None

    def add(self, entry):
        if self.entries is not None:
            self.entries.append(entry)

    @contextlib.contextmanager
    def recording(self):
        saved, self.entries = self.entries, []
        try:
            yield self.entries
        finally:
            self.entries = saved
