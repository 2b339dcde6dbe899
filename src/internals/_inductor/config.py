"""Inductor's settings, as ``torch.compile(options=...)`` checks them (``torch/_inductor/config.py``,
``_TorchCompileInductorWrapper.apply_options`` in ``torch/__init__.py``).

The names and types are torch's own, read from the installed torch by
``scripts/inductor_options.py`` into ``internals/data/inductor_options.json``, so the check
needs no torch at run time. This backend acts on none of them: an option torch knows is
accepted and recorded (``CompiledFunction.options``), and changes nothing in the generated code.
"""
import functools
import json
from importlib.resources import files

__all__ = ["check_options", "known_options", "torch_version"]

_BUILTINS = {"bool": bool, "int": int, "float": float, "str": str, "tuple": tuple, "list": list, "dict": dict,
             "NoneType": type(None)}


@functools.cache
def _table():
    return json.loads(files("internals").joinpath("data", "inductor_options.json").read_text())


def torch_version():
    """The torch whose settings the table holds."""
    return _table()["torch_version"]


@functools.cache
def known_options():
    """{name: (checked type name or None, the default's type name)}, in torch's order."""
    return {name: (checked, default) for name, checked, default in _table()["options"]}


def check_options(options):
    """The options with ``-`` read as ``_``, each checked as torch checks it: an unknown name, or
    a value that is not an instance of a plain setting's type, is a RuntimeError with torch's
    message; a setting of a generic type (``list[str]``, ``int | None``) takes any value."""
    known, checked = known_options(), {}
    for key, value in (options or {}).items():
        name = key.replace("-", "_")
        if name not in known:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are {list(known)}")
        kind, default = known[name]
        if isinstance(kind, dict):      # an annotation torch keeps as text: isinstance refuses it
            raise TypeError("isinstance() arg 2 must be a type, a tuple of types, or a union")
        if kind is not None and not isinstance(value, _BUILTINS[kind]):
            raise RuntimeError(f"Unexpected type of attr {key}, got {type(value).__name__} should be {default}")
        checked[name] = value
    return checked
