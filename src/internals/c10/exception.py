"""``TORCH_WARN_ONCE`` (``c10/util/Exception.h``): a warning that each place gives once per process.

torch keeps a static flag at each place that warns; here each place names itself with a key, and
one set of the keys that have warned, under a lock, stands for those flags: two threads reaching
a place at once give one warning between them.
"""
import threading
import warnings

__all__ = ["warn_once", "reset_warn_once"]

_lock = threading.Lock()
_warned = set()


def warn_once(site, message, category=UserWarning, stacklevel=1):
    """``warnings.warn(message, category, stacklevel)`` the first time place ``site`` (any hashable
    key) asks in this process, and nothing after: ``stacklevel`` counts from the caller, as
    ``warnings.warn`` counts from its own. Returns whether it warned now."""
    with _lock:
        if site in _warned:
            return False
        _warned.add(site)
    warnings.warn(message, category, stacklevel=stacklevel + 1)
    return True


def reset_warn_once(site=None):
    """Let ``site`` warn again (every place when None): what a test does to see a warning that an
    earlier test in the same process already gave."""
    with _lock:
        if site is None:
            _warned.clear()
        else:
            _warned.discard(site)
