"""Forward-mode automatic differentiation's public API (``torch/autograd/forward_ad.py``).

Inside a ``dual_level``, ``make_dual(x, v)`` gives a tensor equal to ``x`` that carries the tangent
``v``; every operator with a forward formula (``result:`` in derivatives.yaml) gives its output
the tangent J v, and ``unpack_dual`` reads it back. Leaving the level drops every tangent.
"""
from typing import NamedTuple

from .._tensor_base import TensorBase
from . import forward_grad
from .grad_mode import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


def _level():
    return forward_grad.current_level()


def __getattr__(name):
    """``_current_level``, torch's module-level int (-1 outside any level), read live."""
    if name == "_current_level":
        return forward_grad.current_level()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def enter_dual_level():
    """Open a forward AD level and make it the current one; returns its index."""
    return forward_grad.enter_level()


def exit_dual_level(*, level=None):
    """Close ``level`` (the current one by default), dropping the tangents it holds."""
    forward_grad.exit_level(_level() if level is None else level)


def _check_floating(t, what):
    if not (t.is_floating_point() or t.is_complex()):
        raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient at ``level``."""
    if level is None:
        level = _level()
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_floating(tensor, "primal")
    _check_floating(tangent, "tangent")
    return forward_grad.make_dual(tensor, tangent, level)


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without the tangent) and the tangent, or None."""
    primal: TensorBase
    tangent: TensorBase | None


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of a dual tensor; outside any level, ``(tensor, None)``."""
    if level is None:
        level = _level()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(*forward_grad.unpack_dual(tensor, level))


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) entering a level on entry and leaving it on exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
