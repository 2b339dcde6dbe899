"""Generate the Python bindings from ``native_functions.yaml`` (torch: ``tools/autograd/gen_python_functions.py``
with the templates ``python_variable_methods.cpp`` and ``python_torch_functions.cpp``).

Regenerate with ``python -m internals.codegen``. It writes, into ``_generated/``:

- ``python_variable_methods.py``: one function per operator name with the ``method`` variant
  (``x.add(y)``), attached to ``Tensor`` by ``_tensor.py``; and the operator dunders
  (``__add__``, ``__radd__``, ``__iadd__``, ``__eq__``, ...) over them.
- ``python_torch_functions.py``: one function per name with the ``function`` variant
  (``internals.add(x, y)``), exported by ``_functional.py``.

Each function holds a ``PythonArgParser`` (``_python_arg_parser.py``) with the Python signatures
of all overloads of its name, calls ``parse``, and on the index of the signature that matched
calls that overload through the dispatcher, each argument converted by the accessor its schema
type asks for. Between the two, as in torch's templates, it checks for ``__torch_function__``:
when an argument overrides it or a TorchFunctionMode is active, the call goes to
``handle_torch_function`` and never reaches the dispatcher. The Python signatures and their
order are torch's: they are made with torchgen's
own ``signature_from_schema`` and ordered with torchgen's ``sort_overloads`` (Tensor before Scalar,
int before int[], ...), so the strings in the generated files are the strings in torch's
generated C++.

Kernel *registration* is not generated: ``aten/register_native_functions.py`` reads the YAML at
import and registers each ``dispatch:`` entry (torch generates ``RegisterCPU.cpp`` and friends,
because C++ must be compiled; Python can read the YAML directly, and one reader is clearer than a
generated list of the same lines).

Like gen_autograd.py, this module imports no part of ``internals``.
"""
import dataclasses
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml
from torchgen.api.python import PythonSignature, signature_from_schema
from torchgen.model import FunctionSchema, SchemaKind
from torchgen.packaged.autograd.gen_python_functions import sort_overloads

PACKAGE = Path(__file__).resolve().parents[1]
NATIVE_FUNCTIONS = PACKAGE / "aten" / "native_functions.yaml"
GENERATED = PACKAGE / "_generated"

# The operator dunders (torch's python_variable_methods.cpp template, torch/_tensor.py): a
# TypeError becomes NotImplemented, so Python can try the other operand. The reflected ones
# that are not the same operator (__rsub__, __rpow__, __rtruediv__) are written in _tensor.py.
BINARY_DUNDERS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_",
    "__sub__": "sub", "__isub__": "sub_",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_",
    "__truediv__": "div", "__itruediv__": "div_",
    "__pow__": "pow", "__matmul__": "matmul",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    # the arithmetic and bitwise operators; torch declares __and__ & co. as operators of their own, computing the same
    "__ipow__": "pow_", "__floordiv__": "floor_divide", "__ifloordiv__": "floor_divide_",
    "__mod__": "remainder", "__imod__": "remainder_",
    "__and__": "bitwise_and", "__rand__": "bitwise_and", "__iand__": "bitwise_and_",
    "__or__": "bitwise_or", "__ror__": "bitwise_or", "__ior__": "bitwise_or_",
    "__xor__": "bitwise_xor", "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor_",
    "__lshift__": "__lshift__", "__ilshift__": "__ilshift__",
    "__rshift__": "__rshift__", "__irshift__": "__irshift__",
}

# The dunders torch binds under their own name (``__and__.Tensor`` is an operator of its own in
# its YAML; ``__eq__`` is bound by that name): an override receives ``Tensor.__and__``, not the
# method of the operator internals computes them with.
DUNDERS_SEEN_BY_NAME = {"__eq__", "__and__", "__iand__", "__or__", "__ior__", "__xor__", "__ixor__"}


@dataclass
class Overload:
    schema: FunctionSchema
    op: str                        # the operator the binding calls: "add.Tensor"
    signature: PythonSignature     # the name sort_overloads reads
    out: "Overload | None" = None  # its out= overload ("add.out"), called when out is given


# Operators torch binds to no Python name (``SKIP_PYTHON_BINDINGS`` in torch's
# ``tools/autograd/gen_python_functions.py``): reached through a frontend method instead
# (``Tensor.to`` calls ``_to_copy``, ``x[1:3]`` calls ``slice.Tensor``, ``x[...]`` calls
# ``alias``, ``item()`` calls ``_local_scalar_dense``), or called by autograd only (torch's
# pattern ``.*_backward``), or by ``torch.tensor`` and the tracers (torch's ``lift.*``:
# ``lift_fresh``, ``lift_fresh_copy``). Entries with ``python_module: nn``, ``linalg`` or ``special``
# are bound in ``torch._C._nn``, ``torch._C._linalg`` and ``torch._C._special``, which internals does
# not have: ``nn.functional``, ``linalg`` and ``special`` call them (``F.linear``, ``linalg.inv``,
# ``special.expit``).
# The Scalar overloads of the arithmetic operators are for C++ callers (torch's
# ``SKIP_PYTHON_BINDINGS_SIGNATURES``): Python wraps a number into a tensor instead.
# The ``sym_*`` metadata reads are what ``x.shape`` and ``x.stride()`` already give Python;
# tracers record them as graph nodes. The COO factory's inner operators are reached through
# ``sparse_coo_tensor`` only (torch names neither in Python). ``_reshape_alias`` is ``reshape``'s
# view of a tensor that is not contiguous, ``_unsafe_view`` the view ``matmul`` and ``reshape``'s
# decompositions end with; the ``*_forward`` halves of a pair (``_cdist_forward``) are reached
# through their public function (torch's patterns ``.*_forward``). ``copy`` and ``index`` are
# torch's too (``x[idx]`` calls ``index.Tensor``); ``zero`` is generated from ``zero_`` in torch's
# YAML (``autogen``), which binds no name, as are the foreach ``out=`` forms and ``_foreach_copy``
# (the functional ``_foreach_copy_``, reached through ``torch.ops.aten``); ``unique_dim`` is bound
# but kept out of the ``torch`` namespace (``PRIVATE_OPS`` in ``torch/__init__.py``):
# ``torch.unique(x, dim=...)`` calls it. ``_index_put_impl``, the functional form of autograd's
# ``_index_put_impl_``, is generated in torch's YAML too (``autogen``) and binds no name.
SKIP_PYTHON_BINDINGS = {"_to_copy", "slice.Tensor", "alias", "_local_scalar_dense", "add.Scalar", "sub.Scalar",
                        "mul.Scalar", "div.Scalar", "div_.Scalar", "add_.Scalar", "sub_.Scalar", "mul_.Scalar",
                        "sym_size.int", "sym_numel", "sym_stride.int", "sym_storage_offset",
                        "_sparse_coo_tensor_unsafe", "_sparse_coo_tensor_with_dims_and_tensors", "_reshape_alias",
                        "_unsafe_view", "copy",
                        "index.Tensor", "index.Tensor_out", "zero", "unique_dim", "_foreach_copy",
                        "_foreach_max.out", "_foreach_powsum.Scalar_out", "_index_put_impl"}
PYTHON_MODULES = ("nn", "linalg", "special")
# Names whose binding is written by hand, in _tensor.py as in torch's python_variable_methods.cpp:
# ``set_`` takes a Storage, typed or untyped, and checks a typed one's dtype against the tensor's.
BOUND_BY_HAND = {"set_"}


def binds_no_python_name(schema_name):
    """Whether the operator ``schema_name`` (an ``OperatorName``) gets no generated Python binding."""
    return (str(schema_name) in SKIP_PYTHON_BINDINGS or str(schema_name.name) in BOUND_BY_HAND
            or schema_name.name.base.endswith(("_backward", "_forward")) or schema_name.name.base.startswith("lift"))


def load_overloads(path=NATIVE_FUNCTIONS):
    """(schema, variants, operator, category_override) for each YAML entry. ``category_override:
    factory`` makes an operator with tensor inputs a factory all the same (``linspace.Tensor_Tensor``):
    its Python binding takes ``dtype``, ``device``... and ``requires_grad`` as TensorOptions."""
    entries = [(e["func"], e.get("variants", "function"), e.get("category_override"))
               for e in yaml.safe_load(Path(path).read_text()) if e.get("python_module") not in PYTHON_MODULES]
    out = []
    for func, variants, category in entries:
        schema = FunctionSchema.parse(func)
        if binds_no_python_name(schema.name):
            continue
        out.append((schema, {v.strip() for v in variants.split(",")}, str(schema.name), category))
    return out


def grouped(method, path=NATIVE_FUNCTIONS):
    """Python name -> its overloads in the order the parser tries them. An ``out=`` overload
    (``add.out``) is paired with the functional one of the same signature (``add.Tensor``): one
    Python signature, with ``Tensor out=None``, serves both (torchgen's ``group_overloads`` and
    ``PythonSignatureGroup.from_pairs``)."""
    groups, outs = defaultdict(list), {}
    for schema, variants, op, category in load_overloads(path):
        if ("method" if method else "function") not in variants:
            continue
        if not method and str(schema.name.name).startswith("__"):
            continue            # ``__lshift__`` & co. are Tensor dunders only, never ``torch.__lshift__``
        ps = signature_from_schema(schema, category_override=category, method=method)
        overload = Overload(schema, op, ps)
        if schema.kind() == SchemaKind.out:
            outs[schema.signature()] = overload
        else:
            groups[str(schema.name.name)].append(overload)
    for overloads in groups.values():
        for o in overloads:
            out = outs.pop(o.schema.signature(), None)
            if out is not None:
                # the out overload's signature, with the functional one's TensorOptions
                o.signature = dataclasses.replace(out.signature, tensor_options_args=o.signature.tensor_options_args)
                o.out = out
    if outs:
        raise ValueError(f"out= overloads with no functional overload: {sorted(str(s) for s in outs)}")
    return {name: list(sort_overloads(overloads)) for name, overloads in sorted(groups.items())}


# ---------------------------------------------------------------------- one binding
def accessor(type_str):
    """The PythonArgs accessor that converts an argument to its schema type (torch's
    ``_r.tensor(i)``, ``_r.scalar(i)``, ``_r.intlist(i)``, ``_r.toInt64(i)``, ...)."""
    base = type_str.rstrip("?")
    if base == "Tensor":
        return "tensor"
    if base == "Scalar":
        return "scalar"
    if base == "float":
        return "to_double"
    if base == "int":
        return "to_int64"
    if base == "SymInt":
        return "to_symint"
    if base.startswith(("int[", "SymInt[")):
        return "intlist"
    if base == "Scalar[]":
        return "scalarlist"
    if base == "bool":
        return "to_bool"
    if base == "ScalarType":
        return "scalartype"
    if base == "Device":
        return "device"
    return "value"


# torch's default_init expressions, as the arguments after the index of the accessor ``*_with_default``.
DEFAULT_INITS = {"torch::tensors::get_default_device()": "", "at::kLong": ", int64"}

# The TensorOptions a factory's out= call checks against ``out`` (torch's ``check_out_type_matches``).
_OPTIONS = {"dtype": "ScalarType?", "layout": "Layout?", "device": "Device?"}


def dispatch_call(overload, method, signature=None, keywords=True):
    """``_ops["add.Tensor"](self, _r.tensor(0), alpha=_r.scalar(1))``: the operator's handle,
    found by name on each call (a ``Library`` may replace it), then called (``at::_ops::add_Tensor::call``).

    An operator with TensorOptions gets a ``requires_grad`` keyword in Python that its schema
    lacks: it is called through ``_factory(requires_grad, ...)``, as torch's binding calls the
    ``torch::`` variable factory that sets it after the call. Its out= overload is called through
    ``_factory_out``, which checks the options given against ``out`` first.
    ``signature`` is the Python signature parsed, when it is not the overload's own (an out=
    overload parsed by its functional pair's signature). ``keywords=False`` leaves out the
    keyword-only arguments other than ``out`` (see ``returns``)."""
    signature = signature or overload.signature
    index = {a.name: i for i, a in enumerate(signature.arguments())}
    arguments = overload.schema.arguments
    exprs = []
    for a in arguments.flat_positional:
        exprs.append("self" if method and a.name == "self" else f"_r.{accessor(str(a.type))}({index[a.name]})")
    # torch's binding fills in some defaults itself (``deviceWithDefault``): a factory's device
    # (not a ``*_like``/``new_*`` function's, which takes its input's), randint's int64 dtype.
    with_default = {a.name: DEFAULT_INITS[a.default_init] for a in signature.arguments()
                    if getattr(a, "default_init", None)}
    for a in arguments.flat_kwarg_only if keywords or "requires_grad" in index else ():
        if a.name in with_default:
            exprs.append(f"{a.name}=_r.{accessor(str(a.type))}_with_default({index[a.name]}{with_default[a.name]})")
        else:
            exprs.append(f"{a.name}=_r.{accessor(str(a.type))}({index[a.name]})")
    outputs = arguments.out
    if outputs:
        at = signature.output_idx()
        single = "tensorlist" if outputs[0].type.is_list_like() else "tensor"    # split_copy's out=[...]
        exprs += ([f"{outputs[0].name}=_r.{single}({at})"] if len(outputs) == 1 else
                  [f"{a.name}=_r.tensorlist({at})[{i}]" for i, a in enumerate(outputs)])
    if "requires_grad" in index:
        options = ", ".join(f"_r.{accessor(type_)}({index[name]})" for name, type_ in _OPTIONS.items())
        requires_grad = f"_r.to_bool({index['requires_grad']})"
        if outputs:
            return f"_factory_out({requires_grad}, ({options}), {overload.op!r}, {', '.join(exprs)})"
        return f"_factory({requires_grad}, {overload.op!r}, {', '.join(exprs)})"
    call = f"_ops[{overload.op!r}]({', '.join(exprs)})"
    if len(outputs) > 1:            # out=(values, indices) comes back as torch.return_types.max_out,
        # its fields the schema's names of the returns (aminmax_out's min and max)
        fields = tuple(r.name for r in overload.schema.returns)
        return f"_return_type({str(overload.schema.name.name) + '_out'!r}, {fields!r})(*{call})"
    returns = overload.schema.returns
    if len(returns) > 1 and all(r.name for r in returns):
        # max(x, 0) is torch.return_types.max whoever computed it: a dispatch mode's plain tuple too
        fields = tuple(r.name for r in returns)
        return f"_as_return_type({str(overload.schema.name.name)!r}, {fields!r}, {call})"
    return call


def returns(overload, method, indent, signature=None):
    """The binding's ``return`` of one overload's call.

    C++ passes every argument on; a Python keyword argument costs something at each layer it
    crosses (the dispatcher, autograd, the redispatch, the kernel: about a tenth of a
    microsecond each). So a call that gave no keywords at all -- none of the keyword-only
    arguments, then -- is passed on without them, and each kernel's own default applies: the
    schema's (``test_codegen`` checks every kernel's). This is also how torch shows a call to
    Python (``__torch_dispatch__``): keyword arguments left at their defaults are left out."""
    call = dispatch_call(overload, method, signature)
    if str(overload.schema.name).startswith("_foreach_") and overload.schema.kind() == SchemaKind.inplace:
        # an in-place foreach operator returns nothing; its binding returns the list it was given
        # (torch's gen_python_functions.py does so for these alone)
        return [f"{indent}{call}", f"{indent}return _r.tensorlist(0)"]
    short = dispatch_call(overload, method, signature, keywords=False)
    if short == call:
        return [f"{indent}return {call}"]
    return [f"{indent}if not kwargs:", f"{indent}    return {short}", f"{indent}return {call}"]


def schema_comment(overload):
    note = "" if overload.op == str(overload.schema.name) else f"  (internals: aten::{overload.op})"
    return f"# aten::{overload.schema}{note}"


def binding_name(name):
    """The binding's Python function: torch's C++ name, ``THPVariable_sum`` (never a builtin's name)."""
    return f"THPVariable_{name}"


def gen_binding(name, overloads, method, shortcut=False):
    """The binding of Python name ``name``; ``shortcut``: a method that first tries
    ``exact_tensor_method_call``."""
    params = "self, *args, **kwargs" if method else "*args, **kwargs"
    if method and len(overloads) == 1 and not overloads[0].signature.arguments(skip_outputs=True):
        # no arguments besides self: no parsing (torch's METH_NOARGS), only self to check
        return "\n".join([f"def {binding_name(name)}(self):", f"    {schema_comment(overloads[0])}",
                          "    if check_has_torch_function(self):",
                          f"        return handle_torch_function_method(self, {name!r})",
                          f"    return {dispatch_call(overloads[0], method)}"])
    parser = f"_{name}_parser"
    lines = [f"{parser} = PythonArgParser(["]
    lines += [f"    {o.signature.signature_str(symint=True)!r}," for o in overloads]
    # torch_api: the Tensor class (None: the registered one) or this file's function table
    handle = ("_r, self, args, kwargs, None, 'internals.Tensor'" if method
              else "_r, None, args, kwargs, FUNCTIONS, 'internals'")
    lines += ["])", "", "", f"def {binding_name(name)}({params}):",
              *(exact_tensor_method_call(overloads[0]) if shortcut else ()),
              f"    _r = {parser}.parse(args, kwargs{', self' if method else ''})",
              "    if _r.has_torch_function:",
              f"        return handle_torch_function({handle})"]
    for i, o in enumerate(overloads):
        last = i == len(overloads) - 1
        indent = "    " if last or len(overloads) == 1 else "        "
        if not last:
            lines.append(f"    if _r.idx == {i}:")
        if o.out is not None:           # torch's PY_VARIABLE_OUT: the functional call when out is None
            lines.append(f"{indent}if _r.is_none({o.signature.output_idx()}):")
            lines.append(f"{indent}    {schema_comment(o)}")
            lines += returns(o, method, indent + "    ", o.signature)
            lines.append(f"{indent}{schema_comment(o.out)}")
            lines.append(f"{indent}return {dispatch_call(o.out, method, o.signature)}")
            continue
        lines.append(f"{indent}{schema_comment(o)}")
        lines += returns(o, method, indent)
    return "\n".join(lines)


def gen_dunder(dunder, name, overloads):
    """An operator dunder (``__add__``): the method binding of ``name`` with its one operand, a
    TypeError turned into NotImplemented (torch's ``TypeError_to_NotImplemented_``), so that
    Python can try the other operand's method. The binding's body is written out inside the
    ``try``, not called: ``a + b`` then costs no frame more than ``a.add(b)``."""
    head = f"def {binding_name(name)}(self, *args, **kwargs):\n"
    binding = gen_binding(name, overloads, True)
    assert head in binding, f"{name}: a dunder's operator takes arguments besides self"
    body = binding.split(head)[1].split("\n")
    if dunder in DUNDERS_SEEN_BY_NAME:
        asking = "        return handle_torch_function(_r, self, args, kwargs, None, 'internals.Tensor')"
        body[body.index(asking)] = (
            "        return _parsing.handle_torch_function_no_python_arg_parser(\n"
            f"                _r.overloaded_args or [], (self, other), None, {dunder!r}, _parsing._Tensor.{dunder},\n"
            "                'internals.Tensor')")
    return "\n".join([f"def {dunder}(self, other):",
                      "    args, kwargs = (other,), {}",
                      "    try:",
                      *exact_tensors_call(overloads[0]),
                      *wrapped_number_call(name, overloads[0]),
                      *("    " + line for line in body),
                      "    except TypeError:",
                      "        return NotImplemented"])


def exact_tensors_call(overload):
    """A dunder's call for two tensors of the exact Tensor class, made without the parser: its
    answer is known then (the first signature, which takes a Tensor, no ``__torch_function__`` to
    ask), unless a function mode is on or the parser's trace listens, which the test checks. The
    parse is most of what a one-element ``a + b`` costs beyond torch's; torch's C++ parser needs no
    such shortcut. Empty when the first signature could refuse a tensor, or take more."""
    signature = overload.signature
    first, *rest = signature.input_args
    if (str(first.type) != "Tensor" or signature.tensor_options_args
            or any(a.default is None for a in (*rest, *signature.input_kwargs))):
        return []
    call = dispatch_call(overload, True, keywords=False).replace("_r.tensor(0)", "other")
    if "_r." in call:
        return []
    return ["        if (type(self) is _parsing._Tensor and type(other) is _parsing._Tensor",
            *_unobserved("                "),
            f"            return {call}"]


def _unobserved(indent):
    """The shortcuts' last two conditions, each line after ``indent``: the parser's trace is off
    and no function mode is on (``_tf.any_mode_enabled()`` written out, as the parser writes it:
    a frame less)."""
    return [f"{indent}and _parsing._trace_log.entries is None",
            f"{indent}and not (_tf.threads_with_mode[0] and _tf.tls.mode_enabled)):"]


def wrapped_number_call(name, overload):
    """A dunder's call for an exact tensor and a Python int or float (``x * 2``), made without the
    parser where the parser takes a number for the Tensor operand (torch's
    ``should_allow_numbers_as_tensors``: ``add``, ``mul``, ...): its answer is then the first
    signature with the number wrapped, as ``PythonArgs.tensor`` wraps it. (``pow`` takes a
    number as a Scalar, another signature: no such call.)"""
    from .._python_arg_parser import NUMBERS_AS_TENSORS  # the parser's own set, read when generating
    if name not in NUMBERS_AS_TENSORS or not exact_tensors_call(overload):
        return []
    call = dispatch_call(overload, True, keywords=False).replace("_r.tensor(0)", "_parsing.wrap_scalar(other)")
    return ["        if ((type(other) is float or type(other) is int) and type(self) is _parsing._Tensor",
            *_unobserved("                "),
            f"            return {call}"]


def exact_tensor_method_call(overload):
    """A binary operator's method given one tensor of the exact Tensor class and nothing else
    (``y.add_(x)``): the call ``exact_tensors_call`` makes for its dunder, made without the
    parser on the same conditions. Empty where the dunder has no such call."""
    if not exact_tensors_call(overload):
        return []
    call = dispatch_call(overload, True, keywords=False).replace("_r.tensor(0)", "args[0]")
    return ["    if (not kwargs and len(args) == 1 and type(self) is _parsing._Tensor",
            "            and type(args[0]) is _parsing._Tensor",
            *_unobserved("            "),
            f"        return {call}"]


# ---------------------------------------------------------------------- the files
HEADER = '''"""{what}

GENERATED by internals/codegen/gen_python_functions.py from aten/native_functions.yaml: do not edit.
Regenerate with ``python -m internals.codegen``.
"""
from .._python_arg_parser import PythonArgParser, handle_torch_function, named{extra}
from ..aten.dispatcher import aten_ops as _ops

'''


def gen_methods(path=NATIVE_FUNCTIONS):
    groups = grouped(True, path)
    head = HEADER.format(what="Tensor methods, one per operator name with the ``method`` variant (torch's generated "
                              "python_variable_methods.cpp).",
                         extra=", handle_torch_function_method")
    head += "from .. import _python_arg_parser as _parsing   # its Tensor class is set at import, later\n"
    head += "from .._disable_torch_function import check_has_torch_function\n"
    head += "from ..aten import python_torch_function_tls as _tf\n"
    head += "from ..autograd.variable_factories import variable_factory as _factory\n"   # new_zeros, ...
    head += "from ..return_types import as_return_type as _as_return_type\n"
    operators = set(BINARY_DUNDERS.values())     # their methods get the dunders' shortcut
    body = "\n\n\n".join(gen_binding(name, overloads, True, name in operators) for name, overloads in groups.items())
    # An operator named as a dunder (``__lshift__``) is bound once, as its dunder
    table = [f"    {name!r}: {binding_name(name)}," for name in groups if name not in BINARY_DUNDERS]
    dunders = [(d, op) for d, op in BINARY_DUNDERS.items() if op in groups]
    body += "".join("\n\n\n" + gen_dunder(d, op, groups[op]) for d, op in dunders)
    table += [f"    {d!r}: {d}," for d, _ in dunders]
    return (head + "\n" + body + "\n\n\n"
            "# The method table (torch's ``variable_methods``): what internals attaches to TensorBase.\n"
            "METHODS = named({\n" + "\n".join(table) + "\n})\n")


def gen_functions(path=NATIVE_FUNCTIONS):
    groups = grouped(False, path)
    head = HEADER.format(what="Namespace functions (``internals.add``), one per operator name with the ``function`` "
                              "variant (torch's generated python_torch_functions.cpp).", extra="")
    head += ("from ..autograd.variable_factories import out_variable_factory as _factory_out\n"
             "from ..autograd.variable_factories import variable_factory as _factory\n"
             "from ..c10.scalar_type import int64  # randint's and randperm's default dtype\n"
             "from ..return_types import as_return_type as _as_return_type\n"
             "from ..return_types import return_type as _return_type\n")
    body = "\n\n\n".join(gen_binding(name, overloads, False) for name, overloads in groups.items())
    # An operator named as a dunder (``__lshift__``) is bound once, as its dunder
    table = [f"    {name!r}: {binding_name(name)}," for name in groups if name not in BINARY_DUNDERS]
    return (head + "\n" + body + "\n\n\n"
            "# The function table (torch's ``torch_functions``): what internals puts in its namespace.\n"
            "FUNCTIONS = named({\n" + "\n".join(table) + "\n})\n")


def generate(path=NATIVE_FUNCTIONS):
    """The generated files' contents: {file name: text}."""
    return {"python_variable_methods.py": gen_methods(path), "python_torch_functions.py": gen_functions(path),
            "__init__.py": '"""Generated by internals/codegen/gen_python_functions.py: do not edit."""\n'}


def main(argv=None):
    GENERATED.mkdir(exist_ok=True)
    for name, text in generate().items():
        (GENERATED / name).write_text(text)
        print(f"wrote {GENERATED / name}")


if __name__ == "__main__":
    main(sys.argv[1:])
