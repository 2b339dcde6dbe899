"""What each thread knows about ``__torch_function__``: the stack of TorchFunctionModes and
whether overrides are switched off (``aten/src/ATen/PythonTorchFunctionTLS.cpp``).

Every Python binding reads this state after parsing its arguments, so the question it asks
most -- is a mode active? -- is one attribute, ``tls.mode_enabled``, kept up to date by the
functions that change the stack or the state.
"""
import threading

__all__ = ["ENABLED", "SUBCLASSES_DISABLED", "ALL_DISABLED", "tls", "push_onto_stack", "pop_stack",
           "stack_len", "get_stack_at", "get_disabled_state", "set_disabled_state",
           "torch_function_enabled", "torch_function_mode_enabled"]

# torch's TorchFunctionDisabledState: subclass overrides on, off (``DisableTorchFunctionSubclass``),
# or overrides and modes both off (``DisableTorchFunction``).
ENABLED, SUBCLASSES_DISABLED, ALL_DISABLED = 0, 1, 2


class PythonTorchFunctionTLS(threading.local):
    def __init__(self):
        self.stack = []
        self.state = ENABLED
        self.mode_enabled = False       # a mode is on the stack and modes are not disabled

    def sync(self):
        self.mode_enabled = bool(self.stack) and self.state != ALL_DISABLED


tls = PythonTorchFunctionTLS()


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
