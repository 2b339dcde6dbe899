"""Operators from ``native_functions.yaml`` into the dispatcher.

torch generates this step as C++ (``RegisterSchema.cpp``, ``RegisterCPU.cpp``, ...): one
``m.def(schema)`` per operator and one ``m.impl(name, kernel)`` per dispatch key, and the
BackendSelect kernels of the factories (``RegisterBackendSelect.cpp``). Here it runs at import
time, reading the same kind of file.
"""
from pathlib import Path

import yaml
from torchgen.model import FunctionSchema, SchemaKind

from . import dispatcher
from .backend_select import backend_select_kernel, needs_backend_select
from .native import kernel
from .native.structured import out_dtype_rule, structured_out

__all__ = ["NATIVE_FUNCTIONS", "native_function_entries", "register_native_functions"]

NATIVE_FUNCTIONS = Path(__file__).with_name("native_functions.yaml")


def native_function_entries(path=NATIVE_FUNCTIONS):
    """The YAML entries, each with the line of its ``- func:`` (for ``registered at`` messages)."""
    text = path.read_text()
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("- func:")]
    entries = yaml.safe_load(text)
    return list(zip(entries, lines))


def _dispatch(entry, functionals):
    """An entry's kernels, {keys: kernel}. An out= entry without kernels of its own gets the
    structured out kernel over its functional overload's (``native/structured.py``): under the
    same keys, except that a CompositeImplicitAutograd functional's is CompositeExplicitAutograd
    (the out kernel calls it below autograd, as one operator)."""
    if "dispatch" in entry:
        return {keys: kernel(name) for keys, name in entry["dispatch"].items()}
    schema = FunctionSchema.parse(entry["func"])
    if schema.kind() != SchemaKind.out:
        return {}
    functional = functionals[schema.signature()]
    base = str(schema.name.name.base)
    rule = out_dtype_rule(base, functional[0], entry.get("structured_inherits") == "TensorIteratorBase")
    outs = [a.name for a in schema.arguments.out]
    return {keys.replace("CompositeImplicitAutograd", "CompositeExplicitAutograd"):
            structured_out(base, kernel(name), outs, rule)
            for keys, name in functional[1].items() if "Sparse" not in keys}   # dense outs only


def register_native_functions():
    entries = native_function_entries()
    functionals = {}
    for entry, _ in entries:
        schema = FunctionSchema.parse(entry["func"])
        if schema.kind() == SchemaKind.functional and "dispatch" in entry:
            functionals.setdefault(schema.signature(), (schema, entry["dispatch"]))
    for entry, line in entries:
        op = dispatcher.define("aten", entry["func"], f"registered at internals/aten/native_functions.yaml:{line}")
        for keys, fn in _dispatch(entry, functionals).items():
            fn = dispatcher.KernelFunction(fn)
            for key in keys.split(","):
                dispatcher.impl(op.name, key.strip(), fn)
        if needs_backend_select(op.schema):
            dispatcher.impl(op.name, "BackendSelect", backend_select_kernel(op))
