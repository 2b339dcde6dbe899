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

Steps 1 and 2 are one C++ call in torch, so no other Python thread runs between them. Here they
are two calls, and a thread switch can fall between them: a DataLoader worker's queue thread
pickling a batch (which shares its storage) while the worker's main thread ends the process would
leave the name behind. So naming a segment holds a lock, and a process about to exit takes that
lock for good (``close_naming``) before it goes.
"""
import itertools
import mmap
import os
import secrets
import threading
from _posixshmem import shm_open, shm_unlink

import numpy as np

__all__ = ["SharedMapping", "new_shared_fd", "map_shared_fd", "close_naming"]

_counter = itertools.count()
_naming = threading.Lock()      # held from shm_open to shm_unlink
# A child forked while another thread named a segment must not inherit the lock held.
os.register_at_fork(after_in_child=lambda: globals().update(_naming=threading.Lock()))


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
    with _naming:
        fd = shm_open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        mapping = SharedMapping(fd)     # closes the descriptor if anything below fails
        shm_unlink(name)
    os.ftruncate(fd, nbytes)
    return _bytes_of(fd, nbytes), mapping


def close_naming():
    """For a process about to end without joining its threads (``os._exit``): wait until no
    segment is between its name and its unlink, and name none after. A thread that tries then
    blocks until the process is gone, which removes it with nothing left in ``/dev/shm``."""
    _naming.acquire()


def map_shared_fd(fd, nbytes):
    """Map a segment another process sent (``SHAREDMEM | NOCREATE | KEEPFD | FROMFD``): the caller
    keeps its ``fd``; the mapping holds a duplicate."""
    mapping = SharedMapping(os.dup(fd))
    size = os.fstat(mapping.fd).st_size
    if size < nbytes:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from a shared memory segment of {size} bytes")
    return _bytes_of(mapping.fd, nbytes), mapping
