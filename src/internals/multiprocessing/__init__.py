"""``torch.multiprocessing``: Python's ``multiprocessing``, with tensors that travel through
shared memory (see :mod:`.reductions`).

Everything ``multiprocessing`` offers is here under the same names (``Queue``, ``Pipe``,
``Process``, ``get_context``, ...); importing this package registers the tensor reductions, so
a tensor put on any of them is sent as a handle to its storage, not as its bytes. The start
method is Python's default (``fork`` on Linux, as torch leaves it).
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403  the same namespace as torch.multiprocessing

from .reductions import init_reductions

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           *multiprocessing.__all__]

_SHARING_STRATEGY = "file_descriptor"


def get_all_sharing_strategies():
    """torch has two on Linux; this package implements the default one, ``file_descriptor``
    (``file_system``, a named segment plus a manager process that unlinks it, is not here)."""
    return {_SHARING_STRATEGY}


def get_sharing_strategy():
    return _SHARING_STRATEGY


def set_sharing_strategy(new_strategy):
    """torch asserts the name is one of its strategies; its other one is not built here."""
    if new_strategy == "file_system":
        raise NotImplementedError("internals shares tensors by file descriptor only")
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError


init_reductions()
