"""Anomaly detection for the autograd engine (``torch/autograd/anomaly_mode.py``,
``torch/csrc/autograd/anomaly_mode.cpp``, ``python_anomaly_mode.cpp``).

Two switches, process-wide as torch's (``AnomalyMode`` keeps them in static members, not per
thread). With anomaly mode on, every backward node made records the Python stack of the forward
call that made it in ``node.metadata['traceback_']``, and a node made while the engine runs another
(a double backward) records that one as ``metadata['parent_']``. When a node fails in backward, the
engine warns with those stacks before the error goes on; with ``check_nan`` on, a node whose output
holds a nan fails with torch's RuntimeError.
"""
import os
import threading
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "set_anomaly_enabled", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "store_stack", "print_stack"]

TRACE_KEY, PARENT_KEY = "traceback_", "parent_"


# The node this thread's engine is running (torch's ``NodeGuard`` over ``current_evaluating_node``).
_evaluating = threading.local()


def current_node():
    return getattr(_evaluating, "node", None)


def set_current_node(node):
    """Make ``node`` the one the engine runs (a node made meanwhile names it as its parent); return
    the one it replaces, for the engine to put back."""
    prev = getattr(_evaluating, "node", None)
    _evaluating.node = node
    return prev


class AnomalyMode:
    """``torch::autograd::AnomalyMode``: two process-wide flags."""
    enabled = False
    check_nan = True


def _check_bool(value, name, position):
    if type(value) is not bool:     # the binding parses a bool and nothing else; a keyword has no position
        where = f" (position {position})" if position else ""
        raise TypeError(f"set_anomaly_enabled(): argument '{name}'{where} must be bool, not {type(value).__name__}")


def set_anomaly_enabled(*args, **kwargs):
    """``torch.set_anomaly_enabled(enabled, check_nan=True)``: switch anomaly mode, and its nan check."""
    values = dict(zip(("enabled", "check_nan"), args))
    for position, name in enumerate(values, 1):
        _check_bool(values[name], name, position)
    for name, value in kwargs.items():
        _check_bool(value, name, None)
    values.update(kwargs)
    AnomalyMode.enabled, AnomalyMode.check_nan = values["enabled"], values.get("check_nan", True)


def is_anomaly_enabled():
    return AnomalyMode.enabled


def is_anomaly_check_nan_enabled():
    return AnomalyMode.check_nan


class detect_anomaly:
    """Anomaly mode on inside a ``with`` block, restored after. Like torch's, it warns once made
    and is a context manager only: calling it as a decorator raises TypeError."""

    def __init__(self, check_nan=True):
        self.prev, self.prev_check_nan = AnomalyMode.enabled, AnomalyMode.check_nan
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Switch anomaly mode at once (usable as a plain call); as a context manager, restored at exit."""

    def __init__(self, mode, check_nan=True):
        self.prev, self.prev_check_nan = AnomalyMode.enabled, AnomalyMode.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


# Files of the package that stand for torch's C++ (the dispatcher, the kernels, the generated
# autograd code): torch's stack ends where Python calls into C++, so these frames are cut off the end.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CPP_LAYERS = tuple(os.path.join(_PACKAGE, p) for p in (
    "aten", "c10", "autograd", "_generated", "_subclasses", "_tensor.py", "_tensor_base.py", "_ops.py",
    "_python_arg_parser.py", "_functional.py", "_C.py", "utils/_python_dispatch.py"))


def _in_cpp_layer(filename):
    return os.path.abspath(filename).startswith(_CPP_LAYERS)


def format_stack():
    """The stack of the running forward call as a list of strings (``torch.fx.traceback.format_stack``),
    without the package's frames that stand for torch's C++ at its end."""
    frames = traceback.extract_stack()[:-1]
    while frames and _in_cpp_layer(frames[-1].filename):
        frames.pop()
    return traceback.format_list(frames)


def store_stack(metadata, parent):
    """What a node made in anomaly mode keeps (``Node::Node`` calling ``store_stack`` and ``assign_parent``)."""
    metadata[TRACE_KEY] = format_stack()
    if parent is not None:
        metadata[PARENT_KEY] = parent


def print_stack(node):
    """Warn with the forward stack of the node that failed, then those of the nodes whose backward
    made it, parent after parent (``PyAnomalyMetadata::print_stack``)."""
    _warn_stack(node.metadata.get(TRACE_KEY), node.name(), False)
    parent = node.metadata.get(PARENT_KEY)
    while parent is not None:
        _warn_stack(parent.metadata.get(TRACE_KEY), parent.name(), True)
        parent = parent.metadata.get(PARENT_KEY)


def _warn_stack(stack, name, is_parent):
    """One warning, worded as torch's ``_print_stack``."""
    if stack is None:
        message = (f"Error detected in {name}. No forward pass information available. Enable detect anomaly "
                   "during forward pass for more information.")
    elif is_parent:
        message = (f"\n\nPrevious calculation was induced by {name}. Traceback of forward call that induced the "
                   f"previous calculation:\n{''.join(stack)}")
    else:
        message = f"Error detected in {name}. Traceback of forward call that caused the error:\n{''.join(stack)}"
    warnings.warn(message, UserWarning, stacklevel=5)
