"""Where Numba keeps the package's compiled kernels on disk: by what the sources say, not where they lie.

Numba's own locator for ``NUMBA_CACHE_DIR`` (``numba/core/caching.py``,
``UserProvidedCacheLocator``) files a kernel under a hash of its source file's *absolute* folder,
so two checkouts of the same sources (a fresh clone, a git worktree, CI's copy) never share a
compiled loop: each compiles every kernel again, minutes of a test run. The locator here files the
package's own kernels under their folder's path *inside the package* (``aten/native/cpu``), and
stamps each with a hash of its file's bytes (older Numba stamps with the modification time, which a
clone renews). What else a kernel depends on (the files it calls into, Numba's version, the
settings that change its machine code) already keys the cache folder itself (``_cuda_env``), so a
checkout with other sources, or other settings, never meets these files.

Processes that share the cache (two pytest workers, two notebooks) also share the compiling: the
first to need a kernel compiles it while the other waits, then loads it (``compile_once``).
"""
import contextlib
import functools
import hashlib
import os
import time
from functools import lru_cache
from pathlib import Path

from numba.core import caching, config
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher

try:
    import fcntl
except ImportError:     # Windows: each process compiles what it lacks, as Numba does by itself
    fcntl = None

_PACKAGE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def _content_stamp(path, mtime_ns, size):
    """sha256 of the file's bytes (memoised per version of the file on disk)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# Numba renamed these when it made them public (0.6x): Colab may have either spelling.
_UserProvided = getattr(caching, "UserProvidedCacheLocator", None) or caching._UserProvidedCacheLocator
_Impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl


class PackageCacheLocator(_UserProvided):
    """``UserProvidedCacheLocator`` for the package's own files, keyed by package-relative paths."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        folder = Path(py_file).resolve().parent.relative_to(_PACKAGE.parent).as_posix()   # internals/aten/...
        name = f"{folder.rsplit('/', 1)[-1]}_{hashlib.sha1(folder.encode()).hexdigest()}"
        self._cache_path = os.path.join(config.CACHE_DIR, name)

    def get_source_stamp(self):
        st = os.stat(self._py_file)
        return _content_stamp(self._py_file, st.st_mtime_ns, st.st_size)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            Path(py_file).resolve().relative_to(_PACKAGE)
        except ValueError:      # not the package's (a reader's notebook, an exercise in a folder of its own)
            return None
        return super().from_function(py_func, py_file)


# The longest one process waits for another's compilation before compiling the kernel itself (the
# slowest kernel compiles in about 10 s on a busy 2-core machine; a wait this long means trouble).
_PATIENCE = 300.0


@contextlib.contextmanager
def _file_lock(path):
    """An exclusive ``flock`` on ``path``: held until the block ends, or the process does."""
    with open(path, "a") as handle:
        deadline = time.monotonic() + _PATIENCE
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    yield       # compile it here as well: the same machine code, either copy kept
                    return
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _lock_path(dispatcher, sig):
    """One lock file per kernel and signature. A kernel is named as Numba's cache names it: by its
    function, and by the values it closes over (every binary loop is one function, closed over its
    op number), so two processes compiling ``add`` and ``mul`` never wait on each other."""
    func = dispatcher.py_func
    cells = tuple(repr(cell.cell_contents) for cell in func.__closure__ or ())
    key = f"{func.__module__}.{func.__qualname__}:{func.__code__.co_firstlineno}|{cells}|{sig}".encode()
    folder = Path(config.CACHE_DIR) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / hashlib.sha1(key).hexdigest()


def compile_once(compile):
    """``Dispatcher.compile`` for the package's kernels, one process at a time per kernel and
    signature. Without it, two pytest workers that both meet ``add`` on float32 both compile it
    (a second or two each, for about 1,500 kernels); with it the second waits, and Numba's own
    first step, a look in the on-disk cache, then finds the first one's work.

    The file lock is taken inside Numba's compiler lock (a re-entrant lock per process), so
    two threads of one process never wait on each other's file lock; a kernel's callees compile
    inside its own compilation and take their locks after its own, so two processes never hold
    what the other waits for."""
    @functools.wraps(compile)
    def compile_shared(self, sig):
        locator = getattr(getattr(self._cache, "_impl", None), "locator", None)
        if fcntl is None or not isinstance(locator, PackageCacheLocator):
            return compile(self, sig)
        with global_compiler_lock, _file_lock(_lock_path(self, sig)):
            return compile(self, sig)
    compile_shared.wrapped = compile
    return compile_shared


def install():
    """Put the locator first in the list Numba's CPU cache tries (the CUDA kernels' cache, in the
    numba-cuda package, keeps its own list: without a GPU they run on the simulator, uncached),
    and share compilations between processes."""
    classes = _Impl._locator_classes
    if PackageCacheLocator not in classes:
        classes.insert(0, PackageCacheLocator)
    if not hasattr(Dispatcher.compile, "wrapped"):
        Dispatcher.compile = compile_once(Dispatcher.compile)
