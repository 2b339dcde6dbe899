"""Operators from ``native_functions.yaml`` into the dispatcher.

torch generates this step as C++ (``RegisterSchema.cpp``, ``RegisterCPU.cpp``, ...): one
``m.def(schema)`` per operator and one ``m.impl(name, kernel)`` per dispatch key, and the
BackendSelect kernels of the factories (``RegisterBackendSelect.cpp``). Here it runs at import
time, reading the same kind of file.
"""
from pathlib import Path

import yaml

from . import dispatcher
from .backend_select import backend_select_kernel, needs_backend_select
from .native import kernel

__all__ = ["NATIVE_FUNCTIONS", "native_function_entries", "register_native_functions"]

NATIVE_FUNCTIONS = Path(__file__).with_name("native_functions.yaml")


def native_function_entries(path=NATIVE_FUNCTIONS):
    """The YAML entries, each with the line of its ``- func:`` (for ``registered at`` messages)."""
    text = path.read_text()
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("- func:")]
    entries = yaml.safe_load(text)
    return list(zip(entries, lines))


def register_native_functions():
    for entry, line in native_function_entries():
        op = dispatcher.define("aten", entry["func"], f"registered at internals/aten/native_functions.yaml:{line}")
        for keys, name in entry.get("dispatch", {}).items():
            fn = dispatcher.KernelFunction(kernel(name))
            for key in keys.split(","):
                dispatcher.impl(op.name, key.strip(), fn)
        if needs_backend_select(op.schema):
            dispatcher.impl(op.name, "BackendSelect", backend_select_kernel(op))
