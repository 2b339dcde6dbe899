"""Thread-local autograd switches (``c10/core/GradMode.h``, ``c10/core/InferenceMode.h``).

They live in c10, below the dispatcher, because two things down here read them: autograd
kernels ask GradMode whether to record a graph, and a new TensorImpl asks InferenceMode
whether it is born an inference tensor (without the ADInplaceOrView and Autograd keys).
"""
import threading

__all__ = ["GradMode", "InferenceMode"]


class _State(threading.local):
    grad_enabled = True
    inference = False


_state = _State()


class GradMode:
    @staticmethod
    def is_enabled():
        return _state.grad_enabled

    @staticmethod
    def set_enabled(enabled):
        _state.grad_enabled = bool(enabled)


class InferenceMode:
    @staticmethod
    def is_enabled():
        return _state.inference

    @staticmethod
    def _set_enabled(enabled):
        _state.inference = bool(enabled)
