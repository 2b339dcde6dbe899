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
"""
import hashlib
import os
from functools import lru_cache
from pathlib import Path

from numba.core import caching, config

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


def install():
    """Put the locator first in the list Numba's CPU cache tries (the CUDA kernels' cache, in the
    numba-cuda package, keeps its own list: without a GPU they run on the simulator, uncached)."""
    classes = _Impl._locator_classes
    if PackageCacheLocator not in classes:
        classes.insert(0, PackageCacheLocator)
