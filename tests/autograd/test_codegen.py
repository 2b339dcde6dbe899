"""The generated Python bindings: up to date with the YAML, covering every operator, and the
chapter 8 helpers that read torch's own files from the installed wheel."""
import ast
import inspect
from pathlib import Path

import pytest
import torch
import yaml
from torchgen.model import FunctionSchema, SchemaKind

import internals
from internals._generated import python_torch_functions, python_variable_methods
from internals._python_arg_parser import FunctionSignature, PythonArgParser
from internals.aten import dispatcher
from internals.aten.register_native_functions import native_function_entries
from internals.codegen import gen_python_functions as gen
from internals.codegen import torch_source

ENTRIES = [entry for entry, _ in native_function_entries()]


def test_generated_bindings_are_up_to_date():
    """The checked-in files are what ``python -m internals.codegen`` writes from today's YAML."""
    for name, text in gen.generate().items():
        assert (gen.GENERATED / name).read_text() == text, f"{name} is stale: run python -m internals.codegen"


def test_every_schema_parses_with_torchgen_and_is_torchs():
    """Each entry parses with torchgen, and where torch has the operator its schema is torch's."""
    theirs = {}
    path = torch_source.installed("torchgen/packaged/ATen/native/native_functions.yaml")
    for entry in yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        theirs[entry["func"].split("(")[0]] = FunctionSchema.parse(entry["func"])
        theirs.update(_functional_autogen(entry))
        theirs.update(_out_autogen(entry))
    for entry in ENTRIES:
        schema = FunctionSchema.parse(entry["func"])
        assert str(schema) == entry["func"]
        assert str(schema) == str(theirs[str(schema.name)])


def _functional_autogen(entry):
    """The functional operator torch generates from an in-place entry (``autogen: zero``): the
    in-place schema renamed, its ``(a!)`` annotations dropped."""
    name = entry["func"].split("(")[0]
    functional = name.replace("_.", ".").rstrip("_") if name.split(".")[0].endswith("_") else None
    if functional is None or functional not in str(entry.get("autogen", "")).replace(" ", "").split(","):
        return {}
    text = functional + entry["func"][len(name):].replace("(a!)", "")
    return {functional: FunctionSchema.parse(text)}


def _out_autogen(entry):
    """The out= operator torch generates from a functional entry (``autogen: lift_fresh_copy.out``),
    written by torchgen's own rule."""
    from torchgen.native_function_generation import functional_to_out_signature
    schema = FunctionSchema.parse(entry["func"])
    wanted = str(entry.get("autogen", "")).replace(" ", "").split(",")
    out_name = f"{schema.name}_out" if schema.name.overload_name else f"{schema.name}.out"   # .Scalar_out
    if out_name not in wanted or schema.kind() != SchemaKind.functional:
        return {}
    out = functional_to_out_signature(schema)
    return {str(out.name): out}


def test_every_operator_comes_from_the_yaml():
    aten = {name for name, op in dispatcher.operators.items() if op.namespace == "aten"}
    assert aten == {f"aten::{FunctionSchema.parse(e['func']).name}" for e in ENTRIES}


def test_every_variant_is_bound():
    """Each entry is reachable as a Tensor method / namespace function, as its variants say
    (except those torch binds to no Python name, or binds in ``torch._C._nn``/``_linalg``/``_special``,
    which stay unbound)."""
    def unbound(entry):
        return (gen.binds_no_python_name(FunctionSchema.parse(entry["func"]).name)
                or entry.get("python_module") in gen.PYTHON_MODULES)

    # mul.Scalar is unbound, but mul.Tensor binds the name ``mul``
    bound = {str(FunctionSchema.parse(e["func"]).name.name) for e in ENTRIES if not unbound(e)}
    for entry in ENTRIES:
        schema_name = FunctionSchema.parse(entry["func"]).name
        name = str(schema_name.name)
        if unbound(entry):
            if name not in bound:
                assert hasattr(internals.Tensor, name) == (name in gen.BOUND_BY_HAND)
                assert name not in python_torch_functions.FUNCTIONS
            continue
        variants = {v.strip() for v in entry.get("variants", "function").split(",")}
        # Written by hand around the binding (_functional.py, _tensor.py): cat/stack refusing an
        # empty list, nonzero's as_tuple, norm's string p, and split, meshgrid and atleast_*d (tensors
        # one by one), which torch writes in Python too (torch/functional.py, torch/_tensor.py).
        if "method" in variants and name not in ("nonzero", "norm", "split"):
            assert getattr(internals.Tensor, name) is python_variable_methods.METHODS[name]
        if "function" in variants and not name.startswith("__"):     # torch has no torch.__lshift__
            assert name in python_torch_functions.FUNCTIONS
            if name not in ("cat", "concat", "concatenate", "stack", "nonzero", "einsum", "norm", "split",
                            "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d", "tensordot", "cdist", "block_diag",
                            "cartesian_prod", "unique_consecutive", "chain_matmul"):   # _functional.py
                assert getattr(internals, name) is python_torch_functions.FUNCTIONS[name]


def test_every_bound_name_is_one_torch_binds():
    """The generated functions and methods are torch's names only: an operator torch keeps out of
    Python (``_unsafe_view``, ``_cdist_forward``) has no ``internals`` name either."""
    assert sorted(set(python_torch_functions.FUNCTIONS) - set(dir(torch))) == []
    assert sorted(set(python_variable_methods.METHODS) - set(dir(torch.Tensor))) == []


def test_no_hand_written_method_shadows_an_operator():
    tree = ast.parse(Path(internals._tensor.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    hand = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert hand & set(python_variable_methods.METHODS) == {"split"}    # Python in torch/_tensor.py too


def test_signature_strings_round_trip():
    """Each generated signature string parses into parameters that are the schema's Python arguments."""
    for method in (True, False):
        for name, overloads in gen.grouped(method).items():
            for o in overloads:
                sig = FunctionSignature(o.signature.signature_str(symint=True), 0)
                assert sig.name == name
                args = o.signature.arguments()
                # ``self`` is ``input`` in Python, but where it is a number or a list (``_foreach_*``)
                assert [p.name for p in sig.params] == [a.name if a.name != "self" or str(a.type) == "Scalar"
                                                        or str(a.type).endswith("[]") else "input" for a in args]
                # keyword-only: the schema's, requires_grad (a factory's Python-only argument), and
                # the outputs of the name's out= overload as it names them (``out``, ``grad_input``)
                kwonly = {k.name for k in o.schema.arguments.flat_kwarg_only} | {"requires_grad", "out"}
                if o.out is not None:
                    kwonly |= {a.name for a in o.out.schema.arguments.out}
                assert [p.keyword_only for p in sig.params] == [a.name in kwonly for a in args]


def test_every_kernel_takes_its_schema_arguments():
    """The bindings pass every schema argument (keyword-only ones and outputs by name): each kernel
    takes them."""
    for op in dispatcher.operators.values():
        if op.namespace != "aten":
            continue
        positional = [None] * len(op.schema.arguments.flat_positional)
        kwonly = {a.name: None for a in (*op.schema.arguments.flat_kwarg_only, *op.schema.arguments.out)}
        for _key, kernel in op.kernels.items():
            if kernel.boxed or kernel.fallthrough:
                continue
            args = [None] + positional if kernel.with_keyset else positional
            inspect.signature(kernel.fn).bind(*args, **kwonly)


def _python_value(default):
    """A schema default as Python sees it (None, True, 1, 'none'); None for a name such as ``long``."""
    try:
        return ast.literal_eval(default)
    except ValueError:
        return None


def test_every_kernel_defaults_its_keyword_only_arguments_as_the_schema():
    """A call given no keywords reaches the kernels without the keyword-only arguments
    (``gen_python_functions.returns``): so each kernel's default must be the schema's."""
    checked = 0
    for op in dispatcher.operators.values():
        arguments = op.schema.arguments if op.namespace == "aten" else None
        if arguments is None or arguments.tensor_options is not None:     # factories pass every option
            continue
        defaults = {a.name: a.default for a in arguments.flat_kwarg_only if a.default is not None}
        for key, kernel in op.kernels.items():
            if kernel.boxed or kernel.fallthrough:
                continue
            params = inspect.signature(kernel.fn).parameters
            if any(p.kind is p.VAR_KEYWORD for p in params.values()):
                continue                    # passes keywords on as it got them (autograd kernels)
            for name, default in defaults.items():
                assert params[name].default == _python_value(default), (op.name, key, name)
                checked += 1
    assert checked > 100


def test_a_call_without_keywords_passes_no_keyword_on():
    """``x + y`` reaches the dispatcher without ``alpha``; ``x.add(y, alpha=1)`` with it."""
    x = internals.ones(2)
    recorded = []
    handle = dispatcher.aten_ops["add.Tensor"]
    original = handle.redispatch

    def spy(key_set, *args, **kwargs):
        recorded.append(kwargs)
        return original(key_set, *args, **kwargs)
    handle.redispatch = spy
    try:
        x + x
        x.add(x, alpha=1)
        internals.add(x, x)
    finally:
        del handle.redispatch
    assert recorded == [{}, {"alpha": 1}, {}]


def test_adding_an_operator_is_a_yaml_entry_and_a_kernel(tmp_path):
    """A new entry in a copy of the YAML: its binding is generated, and called as a method once the
    operator is defined and its kernel registered."""
    path = tmp_path / "native_functions.yaml"
    path.write_text(gen.NATIVE_FUNCTIONS.read_text() + "\n- func: square_plus(Tensor self, *, Scalar c=0) -> Tensor\n"
                    "  variants: function, method\n  dispatch:\n    CPU: square_plus\n")
    overloads = gen.grouped(True, path)["square_plus"]
    code = gen.gen_binding("square_plus", overloads, method=True)
    assert "'square_plus(*, Scalar c=0)'" in code
    assert "def THPVariable_square_plus" in gen.gen_functions(path)
    namespace = {"PythonArgParser": PythonArgParser, "_ops": dispatcher.aten_ops}
    exec(code, namespace)
    op = dispatcher.define("aten", "square_plus(Tensor self, *, Scalar c=0) -> Tensor")
    try:
        dispatcher.impl(op.name, "CPU", dispatcher.KernelFunction(lambda self, c=0: self * self + c))
        x = internals.arange(3.0)
        assert namespace["THPVariable_square_plus"](x, c=1).tolist() == [1.0, 2.0, 5.0]
        with pytest.raises(TypeError, match=r"square_plus\(\) takes 0 positional arguments but 1 was given"):
            namespace["THPVariable_square_plus"](x, 1)
    finally:        # the kernel, then the schema: nothing of the operator is left for later tests
        dispatcher.deregister(op.name, "CPU")
        dispatcher.deregister(op.name)


# ---------------------------------------------------------------------- chapter 8's reads of torch's files
def test_reads_of_torchs_files():
    entry = torch_source.native_function("add.Tensor")
    assert entry.startswith("- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert "structured_delegate: add.out" in entry and "variants: function, method" in entry
    formula = yaml.safe_load(torch_source.derivative("add.Tensor"))[0]
    assert formula["self"] == "handle_r_to_c(self.scalar_type(), grad)"
    fields = dict((name, type_) for type_, name in torch_source.tensor_impl_fields())
    for name in ("storage_", "sizes_and_strides_", "storage_offset_", "numel_", "data_type_", "device_opt_",
                 "key_set_", "version_counter_", "autograd_meta_", "is_wrapped_number_"):
        assert name in fields
    assert fields["storage_offset_"] == "int64_t" and fields["key_set_"] == "DispatchKeySet"
    keys = torch_source.dispatch_keys()
    ours = ["BackendSelect", "Python", "ADInplaceOrView", "AutogradOther", "AutocastCPU", "AutocastCUDA",
            "PythonTLSSnapshot"]
    assert [k for k in keys if k in ours] == ours          # internals' keys keep torch's order
    import torch
    assert torch_source.source_url("c10/core/TensorImpl.h") == \
        f"https://github.com/pytorch/pytorch/blob/{torch.version.git_version}/c10/core/TensorImpl.h"
    for path in torch_source.SOURCES:
        assert torch_source.installed(path).is_file()


def test_a_kernel_that_raises_puts_the_excluded_keys_back():
    """The generated kernels enter ``AutoDispatchBelowADInplaceOrView`` (or ``BelowAutograd``) and
    restore the thread's excluded keys in ``finally``: an operator that raises below autograd
    leaves them as they were, and the next call on the thread still records a graph."""
    from internals.c10.local_dispatch_key_set import tls

    before = tls.excluded
    x = internals.ones(2, requires_grad=True)
    for bad in (lambda: x + internals.ones(3), lambda: x.detach().add_(internals.ones(3))):
        with pytest.raises(RuntimeError):
            bad()
        assert tls.excluded == before
    assert (x * 2).grad_fn.name() == "MulBackward0"


def test_metadata_only_execution_is_seen_by_its_own_thread_only():
    """Kernels ask a count of open ``meta_execution`` blocks before their thread's flag: a block
    open on one thread leaves another thread's kernels computing values, and the count closes."""
    import threading

    from internals.aten import empty_tensor

    values, entered, done = [], threading.Event(), threading.Event()

    def other_thread():
        entered.wait()
        values.append((internals.ones(2) + 1).tolist())
        done.set()

    worker = threading.Thread(target=other_thread)
    worker.start()
    with empty_tensor.meta_execution():
        entered.set()
        done.wait()
        assert empty_tensor.is_meta_execution()
    worker.join()
    assert values == [[2.0, 2.0]]
    assert empty_tensor._meta_blocks[0] == 0 and not empty_tensor.is_meta_execution()
