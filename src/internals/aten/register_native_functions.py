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
from .native.structured import out_dtype_rule, structured_out, structured_variant

__all__ = ["NATIVE_FUNCTIONS", "native_function_entries", "register_native_functions"]

NATIVE_FUNCTIONS = Path(__file__).with_name("native_functions.yaml")
COMPRESSED_KEYS = "SparseCsrCPU, SparseCsrCUDA"


def native_function_entries(path=NATIVE_FUNCTIONS):
    """The YAML entries, each with the line of its ``- func:`` (for ``registered at`` messages)."""
    text = path.read_text()
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("- func:")]
    # libyaml's parser when PyYAML has it (it always has on Linux wheels): the same objects, parsed
    # several times faster, and every ``import internals`` parses this file.
    entries = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return list(zip(entries, lines))


def _dispatch(entry, schema, functionals, structured):
    """An entry's kernels, {keys: kernel}. An entry with ``structured_delegate: add.out`` gets
    the functional or in-place kernel derived from that structured out= kernel, under its keys
    (torchgen's ``structured_add_out_functional``), beside any ``dispatch:`` of its own. An out=
    entry without kernels of its own gets the structured out kernel over its functional
    overload's (``native/structured.py``): under the same keys, except that a
    CompositeImplicitAutograd functional's is CompositeExplicitAutograd (the out kernel calls it
    below autograd, as one operator). ``schema``: the entry's ``func``, parsed."""
    if "structured_delegate" in entry:
        out_keys, out_kernel = structured[entry["structured_delegate"]]
        derived = structured_variant(out_kernel, inplace=schema.kind() == SchemaKind.inplace)
        own = {keys: kernel(name) for keys, name in entry.get("dispatch", {}).items()}
        # torchgen also registers the derived kernel as the op's CompositeExplicitAutogradNonFunctional
        # default, which reaches the compressed layouts' keys: a CSR operand without a kernel of
        # its own runs the dense meta step, and its TensorIterator refuses the layout.
        if not any("SparseCsr" in keys for keys in own):
            own[COMPRESSED_KEYS] = derived
        return {out_keys: derived, **own}
    if "dispatch" in entry:
        return {keys: kernel(name) for keys, name in entry["dispatch"].items()}
    if schema.kind() != SchemaKind.out:
        return {}
    functional = functionals[schema.signature()]
    base = str(schema.name.name.base)
    rules = entry.get("out_rules", {})
    rule = out_dtype_rule(rules, functional[0], entry.get("structured_inherits") == "TensorIteratorBase")
    outs = [a.name for a in schema.arguments.out]
    return {keys.replace("CompositeImplicitAutograd", "CompositeExplicitAutograd"):
            structured_out(base, kernel(name), outs, rule, rules)
            for keys, name in functional[1].items() if "Sparse" not in keys}   # dense outs only


def _structured_kernels(entries, schemas):
    """{"add.out": (keys, kernel)}: the out= kernels of the ``structured: True`` entries."""
    structured = {}
    for (entry, _), schema in zip(entries, schemas):
        if entry.get("structured"):
            (keys, name), = entry["dispatch"].items()
            structured[str(schema.name)] = keys, kernel(name)
    return structured


def register_native_functions():
    entries = native_function_entries()
    # Each schema parsed once, for all the steps below: parsing is most of what registering costs,
    # and every ``import internals`` registers some five thousand operators.
    schemas = [FunctionSchema.parse(entry["func"]) for entry, _ in entries]
    functionals = {}
    for (entry, _), schema in zip(entries, schemas):
        if schema.kind() == SchemaKind.functional and "dispatch" in entry:
            functionals.setdefault(schema.signature(), (schema, entry["dispatch"]))
    structured = _structured_kernels(entries, schemas)
    for (entry, line), schema in zip(entries, schemas):
        op = dispatcher.define("aten", schema, f"registered at internals/aten/native_functions.yaml:{line}")
        for keys, fn in _dispatch(entry, schema, functionals, structured).items():
            fn = dispatcher.KernelFunction(fn)
            for key in keys.split(","):
                dispatcher.impl(op.name, key.strip(), fn)
        if needs_backend_select(op.schema):
            dispatcher.impl(op.name, "BackendSelect", backend_select_kernel(op))
