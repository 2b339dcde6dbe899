"""The switches of deterministic algorithms (``use_deterministic_algorithms`` and its kin in
``torch/__init__.py``; the flags are ATen's, in ``aten/context.py``).

On the CPU few operators are nondeterministic: torch refuses ``put_`` without ``accumulate`` (a
repeated index may be written in any order), and so does this package. The switch also changes the
memory ``empty`` hands out: filled with NaN (or the largest integer), so reading it before writing
gives the same result every run.
"""
import builtins

from .aten.context import global_context

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]


def _check_bool(value, name, position):
    if type(value) is not builtins.bool:        # the binding parses a bool and nothing else
        where = f" (position {position})" if position else ""
        raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{where} must be bool, "
                        f"not {type(value).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Operators must be deterministic: one that is not raises RuntimeError (with ``warn_only``, warns)."""
    _check_bool(mode, "mode", 1)
    _check_bool(warn_only, "warn_only", None)
    global_context().set_deterministic_algorithms(mode, warn_only)


def are_deterministic_algorithms_enabled():
    return global_context().deterministic_algorithms


def is_deterministic_algorithms_warn_only_enabled():
    return global_context().deterministic_algorithms_warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """The same switch by level: 0 (``default``) off, 1 (``warn``) warn only, 2 (``error``) raise."""
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    global_context().set_deterministic_algorithms(debug_mode != 0, debug_mode == 1)


def get_deterministic_debug_mode():
    context = global_context()
    if not context.deterministic_algorithms:
        return 0
    return 1 if context.deterministic_algorithms_warn_only else 2
