"""What each thread knows about ``__torch_function__``: the stack of TorchFunctionModes and
whether overrides are switched off (``aten/src/ATen/PythonTorchFunctionTLS.cpp``).

Every Python binding reads this state after parsing its arguments, so the question it asks
most -- is a mode active? -- is one attribute, ``tls.mode_enabled``, kept up to date by the
functions that change the stack or the state.
"""
import threading

__all__ = ["ENABLED", "SUBCLASSES_DISABLED", "ALL_DISABLED", "tls", "push_onto_stack", "pop_stack",
           "stack_len", "get_stack_at", "get_disabled_state", "set_disabled_state",
           "torch_function_enabled", "torch_function_mode_enabled", "threads_with_mode", "any_mode_enabled"]

# torch's TorchFunctionDisabledState: subclass overrides on, off (``DisableTorchFunctionSubclass``),
# or overrides and modes both off (``DisableTorchFunction``).
ENABLED, SUBCLASSES_DISABLED, ALL_DISABLED = 0, 1, 2


# How many threads have a mode enabled now. A binding tests this count before the thread-local
# flag (``any_mode_enabled()``, written out where every call passes), which costs about ten times
# a list item to read: the count is 0 unless some thread has pushed a mode.
threads_with_mode = [0]
_count_lock = threading.Lock()


class PythonTorchFunctionTLS(threading.local):
    def __init__(self):
        self.stack = []
        self.state = ENABLED
        self.mode_enabled = False       # a mode is on the stack and modes are not disabled

    def sync(self):
        enabled = bool(self.stack) and self.state != ALL_DISABLED
        if enabled and not self.mode_enabled:
            _count_threads_with_mode(+1)        # counted before the flag is set,
            self.mode_enabled = True
        elif self.mode_enabled and not enabled:
            self.mode_enabled = False
            _count_threads_with_mode(-1)        # and uncounted after it is cleared


def _count_threads_with_mode(change):
    # (A thread that ends with a mode still pushed stays counted: later calls only ask their own
    # flag, which is correct, if slower.)
    with _count_lock:
        threads_with_mode[0] += change


tls = PythonTorchFunctionTLS()


def any_mode_enabled():
    """Whether this thread has a TorchFunctionMode enabled (``tls.mode_enabled``, asked cheaply)."""
    return threads_with_mode[0] != 0 and tls.mode_enabled


def push_onto_stack(mode):
    tls.stack.append(mode)
    tls.sync()


def pop_stack():
    if not tls.stack:
        raise RuntimeError("trying to pop from empty mode stack")
    mode = tls.stack.pop()
    tls.sync()
    return mode


def stack_len():
    return len(tls.stack)


def get_stack_at(i):
    return tls.stack[i]


def get_disabled_state():
    return tls.state


def set_disabled_state(state):
    tls.state = state
    tls.sync()


def torch_function_enabled():
    """Whether a tensor subclass's ``__torch_function__`` is consulted (``torch_function_enabled``)."""
    return tls.state == ENABLED


def torch_function_mode_enabled():
    return tls.mode_enabled
