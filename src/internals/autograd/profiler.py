"""``record_function``: a labelled range for the profiler (``torch/autograd/profiler.py`` and
``torch/csrc/autograd/record_function_ops.cpp``).

Entering the range calls the operator ``profiler::_record_function_enter_new``, and leaving it
``profiler::_record_function_exit``: operators of their own namespace, with no tensor argument,
so a ``TorchDispatchMode`` sees both (torch's optimizers wrap ``step`` and ``zero_grad`` in one,
which is why they show up in an operator log). Their kernels tell the dispatcher's observers (the
profiler) that the range starts and ends: the profiler shows the label as one event, with the
operators called inside it nested under it.
"""
import functools

from .._ops import ops
from ..aten import dispatcher

__all__ = ["record_function", "register_record_function_ops"]


class _RecordFunction:
    """The handle ``_record_function_enter_new`` returns (torch's ``PythonRecordFunction``, a
    TorchScript custom class): the observers' tokens, until ``_record_function_exit`` ends them."""
    __slots__ = ("name", "tokens")

    def __init__(self, name, tokens):
        self.name, self.tokens = name, tokens

    def __repr__(self):
        return "ScriptObject <__torch__.torch.classes.profiler._RecordFunction>"


def _record_function_enter_new(name, args=None):
    return _RecordFunction(name, dispatcher.start_range(name))


def _record_function_exit(record):
    dispatcher.end_range(record.tokens)


def register_record_function_ops():
    """``TORCH_LIBRARY_FRAGMENT(profiler, m)``: both operators, with composite kernels (with no
    tensor argument, a call has no backend key: the dispatcher's Undefined entry runs them)."""
    kernels = {
        "_record_function_enter_new(str name, str? args=None) -> __torch__.torch.classes.profiler._RecordFunction":
            _record_function_enter_new,
        "_record_function_exit._RecordFunction(__torch__.torch.classes.profiler._RecordFunction record) -> ()":
            _record_function_exit,
    }
    for schema, fn in kernels.items():
        op = dispatcher.define("profiler", schema)
        dispatcher.impl(op.name, "CompositeExplicitAutograd", dispatcher.KernelFunction(fn))


class record_function:
    """``with record_function("label"):`` (or as a decorator): the block is one range, named
    ``label``, in the profiler; its enter and exit are operator calls, as in torch."""

    def __init__(self, name, args=None):
        self.name, self.args, self.record = name, args, None

    def __enter__(self):
        self.record = ops.profiler._record_function_enter_new(self.name, self.args)
        return self

    def __exit__(self, exc_type, exc, traceback):
        ops.profiler._record_function_exit._RecordFunction(self.record)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped
