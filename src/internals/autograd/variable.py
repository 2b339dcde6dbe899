"""``Variable._execution_engine`` (``torch/autograd/variable.py``): the handle Python code uses to
reach the backward engine while it runs, here only for ``queue_callback``."""
from .engine import queue_callback


class ImperativeEngine:
    """The engine as Python sees it (``python_engine.cpp``'s ``THPEngine``)."""

    @staticmethod
    def queue_callback(callback):
        """Run ``callback`` after the running backward pass's last node."""
        queue_callback(callback)


class Variable:
    """What is left of the old ``Variable`` wrapper: the engine handle that DDP calls."""
    _execution_engine = ImperativeEngine()
