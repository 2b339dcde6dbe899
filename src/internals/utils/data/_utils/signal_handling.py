"""Noticing a worker that dies (``torch/utils/data/_utils/signal_handling.py`` and the checks
torch writes in C++, ``torch/csrc/DataLoader.cpp``).

A worker killed by a signal, or one that exits with an error code, never puts anything on the
result queue; without a check the main process would wait forever. So the main process records
its workers' pids, and a SIGCHLD handler (run in the main thread whenever a child changes state)
looks at each of them with ``waitid(..., WNOWAIT)``: it peeks without reaping, so
``multiprocessing`` still collects the exit status itself. A dead worker becomes a RuntimeError,
which the iterator turns into "exited unexpectedly".

One difference from torch, on purpose: torch's handler raises wherever the main thread happens
to be (in user code, in another loader's clean-up). Here it raises only while a loader is
waiting for a batch; a death noticed at any other moment is reported by the check each wait
makes before it blocks.
"""
import contextlib
import os
import signal
import threading
import types

__all__ = ["_set_worker_pids", "_remove_worker_pids", "_error_if_any_worker_fails", "_set_SIGCHLD_handler"]

_worker_pids = {}           # id of a DataLoader iterator -> set of its workers' pids
_SIGCHLD_handler_set = False
_waiting = 0                # loaders now blocked on their result queue (in the main thread)


@contextlib.contextmanager
def waiting():
    """Around a loader's wait for a result: a worker's death may interrupt it."""
    global _waiting
    _waiting += 1
    try:
        yield
    finally:
        _waiting -= 1


def _set_worker_pids(key, pids):
    if key in _worker_pids:
        raise ValueError("_set_worker_pids should be called only once for each _BaseDataLoaderIter.")
    _worker_pids[key] = set(pids)


def _remove_worker_pids(key):
    if _worker_pids.pop(key, None) is None:
        raise ValueError(f"Cannot find worker information for _BaseDataLoaderIter with id {key}")


def _forget_pids(key, pids):
    """Workers already reported dead: a later SIGCHLD must not report them again."""
    _worker_pids.get(key, set()).difference_update(pids)


def _failure(pid, info):
    """torch's message for a worker that ended badly, or None if it exited cleanly."""
    if info.si_code == os.CLD_EXITED and info.si_status != 0:
        return (f"DataLoader worker (pid {pid}) exited unexpectedly with exit code {info.si_status}. Details are "
                "lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.")
    if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
        message = f"DataLoader worker (pid {pid}) is killed by signal: {signal.strsignal(info.si_status)}. "
        if info.si_status == signal.SIGBUS:
            message += ("It is possible that dataloader's workers are out of shared memory. Please try to raise "
                        "your shared memory limit.")
        return message
    return None


def _failure_of(process):
    """``_failure`` for a worker ``multiprocessing`` has already reaped (``waitid`` sees nothing
    then): read from its exit code, negative for a signal."""
    code = process.exitcode
    if not code:
        return None
    kind = os.CLD_KILLED if code < 0 else os.CLD_EXITED
    return _failure(process.pid, types.SimpleNamespace(si_code=kind, si_status=abs(code)))


def _error_if_any_worker_fails(key=None):
    """Raise for the first recorded worker (of the loader ``key``, or of any) that has died
    badly; its loader's pids are then forgotten, so one death is reported once."""
    for owner, pids in _worker_pids.items():
        if key is not None and owner != key:
            continue
        for pid in pids:
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:        # already reaped
                continue
            message = None if info is None else _failure(pid, info)
            if message is not None:
                pids.clear()
                raise RuntimeError(message)


def _set_SIGCHLD_handler():
    """Install the handler once, from the main thread only (Python runs handlers there), after
    any handler already installed, which it still calls."""
    global _SIGCHLD_handler_set
    if _SIGCHLD_handler_set or threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGCHLD)
    previous = previous if callable(previous) else None

    def handler(signum, frame):
        if _waiting:
            _error_if_any_worker_fails()
        if previous is not None:
            previous(signum, frame)

    signal.signal(signal.SIGCHLD, handler)
    _SIGCHLD_handler_set = True
