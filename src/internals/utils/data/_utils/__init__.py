"""The parts of a DataLoader that run in worker processes or watch them
(``torch/utils/data/_utils``)."""
import atexit

MP_STATUS_CHECK_INTERVAL = 5.0
"""Seconds between a worker's checks that its parent lives, and the main process's checks that its
workers do, while each waits on a queue."""

python_exit_status = False
"""True once the interpreter is exiting: workers are then left to the daemon clean-up."""


def _set_python_exit_flag():
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)
