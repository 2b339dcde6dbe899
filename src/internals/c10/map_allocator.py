"""Bytes in shared memory, reached through a file descriptor (``aten/src/ATen/MapAllocator.cpp``).

torch's ``file_descriptor`` sharing strategy, the Linux default, in three steps:

1. ``shm_open`` a fresh name under ``/dev/shm`` (``/torch_<pid>_<random>_<counter>`` there,
   ``/internals_...`` here), size it with ``ftruncate`` and ``mmap`` it;
2. ``shm_unlink`` the name at once: the segment now lives only as long as some process holds an
   open descriptor or a mapping of it, so no name is ever left behind in ``/dev/shm``, even when a
   process is killed;
3. keep the descriptor open (torch's ``ALLOCATOR_MAPPED_KEEPFD``): it is what gets sent to another
   process, which maps the same pages from its own duplicate.

A mapping is released when the storage holding it dies: the NumPy array over the ``mmap`` goes,
then the ``mmap`` (``munmap``), and the descriptor is closed with it.
"""
import itertools
import mmap
import os
import secrets
from _posixshmem import shm_open, shm_unlink

import numpy as np

__all__ = ["SharedMapping", "new_shared_fd", "map_shared_fd"]

_counter = itertools.count()


class SharedMapping:
    """What a shared storage holds beside its bytes: the descriptor of its segment."""

    __slots__ = ("fd",)

    def __init__(self, fd):
        self.fd = fd

    def __del__(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _bytes_of(fd, nbytes):
    """The segment's pages as a NumPy byte array (which keeps the ``mmap`` alive). An empty
    segment cannot be mapped: it gets an empty array and keeps its descriptor."""
    if nbytes == 0:
        return np.empty(0, dtype=np.uint8)
    return np.frombuffer(mmap.mmap(fd, nbytes), dtype=np.uint8)


def new_shared_fd(nbytes):
    """A new anonymous segment of ``nbytes`` (``MapAllocator`` with ``SHAREDMEM | EXCLUSIVE |
    KEEPFD | UNLINK``): its bytes and the mapping that owns its descriptor."""
    name = f"/internals_{os.getpid()}_{secrets.randbits(32)}_{next(_counter)}"
    fd = shm_open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    mapping = SharedMapping(fd)     # closes the descriptor if anything below fails
    shm_unlink(name)
    os.ftruncate(fd, nbytes)
    return _bytes_of(fd, nbytes), mapping


def map_shared_fd(fd, nbytes):
    """Map a segment another process sent (``SHAREDMEM | NOCREATE | KEEPFD | FROMFD``): the caller
    keeps its ``fd``; the mapping holds a duplicate."""
    mapping = SharedMapping(os.dup(fd))
    size = os.fstat(mapping.fd).st_size
    if size < nbytes:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from a shared memory segment of {size} bytes")
    return _bytes_of(mapping.fd, nbytes), mapping
