"""The errors ``internals.compile`` raises of its own (``torch/_dynamo/exc.py``).

Tracing runs every operator on fake tensors first, so a program that cannot run -- shapes that
do not broadcast, a view of the wrong size, tensors on two devices -- fails while it is being
compiled, before any data is touched. torch reports a RuntimeError met there as a
``TorchRuntimeError``, a RuntimeError subclass, whose message names the failing call and quotes
the original error; other classes (an IndexError, a TypeError) pass through unchanged, and so
does any error raised later, while the compiled code runs (a value out of range).
"""

__all__ = ["TorchDynamoException", "TorchRuntimeError", "fake_call_error"]


class TorchDynamoException(RuntimeError):
    """The base of the compiler's own errors."""


class TorchRuntimeError(TorchDynamoException):
    """A RuntimeError met while running the traced program on fake tensors."""

    def __init__(self, msg, real_stack=None):
        super().__init__(msg)
        self.msg, self.real_stack = msg, real_stack or []


def fake_call_error(call, error, user_stack=None):
    """A TorchRuntimeError for ``error``, raised by ``call`` (a description of the operation
    call) on fake tensors, worded as torch's ``get_fake_value`` words it; ``user_stack`` (a
    traceback.StackSummary) is quoted under "from user code", as torch quotes it."""
    msg = ("RuntimeError when making fake tensor call\n"
           f"  Explanation: Dynamo failed to run FX node with fake tensors: {call}: got {error!r}\n"
           "  Hint: Your code may result in an error when running in eager. Please double check that your "
           "code doesn't contain a similar error when actually running eager/uncompiled.\n")
    if user_stack:
        msg += "\nfrom user code:\n" + "".join(" " + line for line in user_stack.format())
    return TorchRuntimeError(msg, list(user_stack or []))
