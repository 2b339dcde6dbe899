"""Generate the autograd layer from ``derivatives.yaml`` (torch: ``tools/autograd/gen_autograd.py``,
``gen_autograd_functions.py``, ``gen_variable_type.py``, ``load_derivatives.py``).

Regenerate with ``python -m internals.codegen`` (or, if the package cannot be imported,
``python src/internals/codegen/gen_autograd.py``). It writes, into ``autograd/generated/``:

- ``functions.py``: one backward Node class per derivative entry (torch's ``Functions.h/.cpp``).
  Its name follows torch's rule: the operator's base name in CamelCase + ``Backward`` + a number
  telling overloads apart (``sum`` -> SumBackward0, ``sum.dim_IntList`` -> SumBackward1). torch
  numbers the overloads in the order of its own derivatives.yaml; ours is a subset of it, so the
  number is the entry's position among torch's entries of that name (read from the
  derivatives.yaml that torchgen ships), or among ours for operators torch does not list.
  What a formula uses is saved at forward time and shown as ``_saved_<name>``.
- ``variable_type.py``: one kernel per operator for the ``Autograd`` key (torch's
  ``VariableType_*.cpp``): record a node if an input requires grad, run the operator below
  autograd, attach the node to the outputs. In-place operators also check the leaf rule, save
  the original ``self`` if a formula needs it, and rebase the history of ``self``. When a forward
  AD level is active (one test of ``forward_grad.LEVELS``) and an input has a tangent, the kernel
  gives the outputs theirs from the entry's forward formula (``result:``, ``emit_fw_derivatives``),
  or refuses the tangent if the entry has none.

This module imports no part of ``internals``: it must run even when the generated files are
stale or broken. A test regenerates in memory and fails if the checked-in files differ.
"""
import ast
import functools
import itertools
import keyword
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torchgen
import yaml
from torchgen.model import FunctionSchema, SchemaKind

PACKAGE = Path(__file__).resolve().parents[1]
NATIVE_FUNCTIONS = PACKAGE / "aten" / "native_functions.yaml"
DERIVATIVES = PACKAGE / "autograd" / "derivatives.yaml"
GENERATED = PACKAGE / "autograd" / "generated"

# ``x.<property>()`` in a formula saves only that property of input x (load_derivatives.py's
# REPLACEMENTS): name suffix, the expression saved at forward time, shown as _saved_<name>?
PROPERTIES = {
    "sym_sizes": ("{}._impl.sizes", True),
    # torch saves ``strides_or_error(x)``: none for a sparse input (it has no strides to read) or
    # one that does not require grad
    "sym_strides": ("strides_or_error({})", True),
    "sym_numel": ("{}.numel()", True),
    "scalar_type": ("{}._impl.dtype", False),
    "options": ("({0}._impl.dtype, {0}._impl.device)", False),
    "layout": ("{}.layout", False),
    "sym_blocksize": ("{}._impl.blocksize", False),     # a BSR or BSC tensor's block, else None
}
PROPERTY_RE = re.compile(r"\b(\w+)\.(" + "|".join(PROPERTIES) + r")\(\)")
# ``to_args_sizes_symint(tensors)``, ``to_args_scalartypes(tensors)`` over a Tensor[] input: each
# tensor's sizes (dtypes), saved instead of the tensors: name suffix, expression saved.
LIST_PROPERTIES = {
    "to_args_sizes_symint": ("args_sizes", "[t._impl.sizes for t in {}]"),
    "to_args_scalartypes": ("args_scalartypes", "[t._impl.dtype for t in {}]"),
}
LIST_PROPERTY_RE = re.compile(r"\b(" + "|".join(LIST_PROPERTIES) + r")\((\w+)\)")
GEOMETRY_RE = re.compile(r"\bTensorGeometry\((\w+)\)")
# ``zeros_like(x)`` of an input or output saves only x's sizes, dtype and device, and makes
# contiguous zeros from them (load_derivatives.py's ``x_info``, a TypeAndSize): the zero gradient
# of a channels-last input is contiguous in torch, not laid out like the input.
ZEROS_LIKE_RE = re.compile(r"\bzeros_like\((\w+)\)")
NOT_A_FORMULA = {"name", "output_differentiability", "dispatch", "result"}

# The operators whose complex outputs may require grad (torch's GRADIENT_IMPLEMENTED_FOR_COMPLEX
# and its sparse additions, in gen_variable_type.py): any other operator with a derivative raises
# when a complex output of its functional form would require grad, as torch's kernels check
# (``throw_error_for_complex_autograd``); in-place forms are not checked, as torch's are not.
GRADIENT_IMPLEMENTED_FOR_COMPLEX = frozenset("""
    __radd__ __rmul__ _coalesce _conj _conj_physical _fft_c2c _fft_r2c _linalg_det _linalg_eigh _linalg_slogdet
    _linalg_solve_ex _linalg_svd _neg_view _reshape_alias _reshape_copy _sparse_addmm
    _sparse_coo_tensor_with_dims_and_tensors _sparse_sparse_matmul _to_copy _to_dense _unsafe_index
    _unsafe_index_put _unsafe_masked_index _unsafe_masked_index_put_accumulate _unsafe_view acos acosh add addbmm
    addcdiv addcmul addmm addmv addr alias alias_copy as_strided as_strided_copy as_strided_scatter asin asinh
    atan atanh baddbmm block_diag bmm cat channel_shuffle cholesky cholesky_inverse cholesky_solve chunk clone
    coalesce col2im complex conj_physical_ constant_pad_nd cos cosh cumprod cumsum cumulative_trapezoid diag
    diag_embed diagonal diagonal_backward diagonal_copy diagonal_scatter div dot eig eq_ exp exp2 expand
    expand_copy expm1 fill fill_ flip fliplr flipud gather im2col index index_add index_add_ index_copy index_fill
    index_put index_select inverse ldexp lerp linalg_cholesky linalg_cholesky_ex linalg_cross linalg_eig
    linalg_householder_product linalg_inv linalg_inv_ex linalg_lstsq linalg_lu linalg_lu_factor_ex linalg_lu_solve
    linalg_matrix_exp linalg_pinv linalg_qr linalg_solve linalg_solve_triangular linalg_vector_norm linear log
    log10 log1p log2 logaddexp logcumsumexp logsumexp lu lu_solve lu_unpack masked_fill masked_scatter
    masked_scatter_backward masked_select matrix_exp mean mm mul mv nanmean nansum narrow_copy ne_ neg nonzero
    ormqr outer permute permute_copy pixel_shuffle pixel_unshuffle polar pow prod put put_ reciprocal
    reflection_pad1d reflection_pad1d_backward reflection_pad2d reflection_pad2d_backward reflection_pad3d
    reflection_pad3d_backward renorm repeat replication_pad1d replication_pad1d_backward replication_pad2d
    replication_pad2d_backward replication_pad3d replication_pad3d_backward reshape reshape_as resize resize_as
    roll rot90 rsqrt rsub scatter scatter_add select select_backward sgn sigmoid sigmoid_backward sin sinc sinh
    slice slice_backward solve sparse_mask sparse_sampled_addmm split split_with_sizes split_with_sizes_backward
    sqrt squeeze squeeze_copy stack std_mean sub sum t t_copy take tan tanh tanh_backward to_sparse trace
    transpose transpose_copy trapezoid triangular_solve tril triu unbind unbind_copy unfold unfold_backward
    unfold_copy unsafe_split unsqueeze unsqueeze_copy values var_mean vdot view view_as view_as_complex view_copy
    where zero_
""".split())


def _output_names(schema):
    """The outputs' names in formulas: their own, else ``result``, or ``result0``, ``result1``, ...
    when there are several (as in torch's derivatives.yaml)."""
    returns = schema.returns
    if len(returns) == 1:
        return [returns[0].name or "result"]
    return [r.name or f"result{i}" for i, r in enumerate(returns)]


# torch's conv1d/2d/3d and transposed forms split a complex convolution into three real ones
# (``complex_convolution``), so its ``convolution`` never meets a complex output; the package's
# convolution kernel takes complex tensors itself, and keeps its gradient for them
_COMPLEX_THROUGH_OWN_KERNEL = frozenset({"convolution"})


def _complex_outputs_checked(schema, inplace):
    """Whether the kernel refuses complex outputs that require grad: a functional operator off
    the list, with no ``Tensor[]`` result (torch's check passes over ``std::vector`` returns)."""
    base = schema.name.name.base
    return not (inplace or base in GRADIENT_IMPLEMENTED_FOR_COMPLEX or base in _COMPLEX_THROUGH_OWN_KERNEL
                or any(r.type.is_list_like() for r in schema.returns))


def _uses(formula, name):
    return re.search(rf"(?<![.\w]){name}\b", formula) is not None


def _op_prefix(base):
    """``add`` -> ``AddBackward``, ``nll_loss_forward`` -> ``NllLossBackward`` (``_create_op_prefix``)."""
    return ("".join(p.title() for p in base.split("_")) + "Backward").replace("ForwardBackward", "Backward")


def _inplace_name(schema):
    """``zero`` -> ``zero_``, ``fill.Scalar`` -> ``fill_.Scalar``."""
    overload = schema.name.overload_name
    return f"{schema.name.name.base}_" + (f".{overload}" if overload else "")


@functools.lru_cache(maxsize=1)
def _torch_node_numbers():
    """Schema name -> node name, for the entries of torch's own derivatives.yaml (read once: an
    operator added at run time, ``codegen/operator_from_yaml.py``, asks again)."""
    path = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"
    counter, names = Counter(), {}
    for entry in yaml.safe_load(path.read_text()):
        body = entry.get("dispatch", {}).get("Default", entry)
        if not any(k not in NOT_A_FORMULA and v != "non_differentiable" for k, v in body.items()):
            continue                     # no input has a derivative: torch makes no node
        schema_name = entry["name"].split("(")[0]
        base = schema_name.split(".")[0]
        prefix = _op_prefix(base[:-1] if base.endswith("_") and not base.endswith("__") else base)
        names[schema_name] = f"{prefix}{counter[prefix]}"
        counter[prefix] += 1
    return names


def _view_of_copy(name):
    """``transpose.int`` for ``transpose_copy.int``: the view whose node a view-copy operator's
    node is named after (None for any other operator)."""
    base = str(name.name.base)
    if not base.endswith("_copy"):
        return None
    return base[:-5] + (f".{name.overload_name}" if name.overload_name else "")


@dataclass
class Saved:
    name: str          # the slot is name + "_"; the formula's local variable is name
    expr: str          # what to save, at forward time
    tensor: bool       # a SavedVariable (unpacked with version checks) or a plain value
    is_list: bool = False    # a Tensor?[] kept as a SavedVariableList (index's indices)
    is_output: bool = False
    exposed: bool = True
    users: set = field(default_factory=set)   # the edges whose formula needs it


@dataclass
class Derivative:
    schema: FunctionSchema
    node: str
    formulas: dict              # differentiable input -> formula (formulas rewritten to saved names)
    edges: list                 # differentiable inputs, in schema order: the node's next_functions
    saved: dict                 # name -> Saved
    differentiable_outputs: list
    natives: list = field(default_factory=list)   # native function schemas it covers
    list_edges: tuple = ()      # differentiable inputs that are Tensor[] (cat's tensors)
    groups: dict = field(default_factory=dict)   # input -> the inputs one formula serves with it
    named: frozenset = frozenset()   # every input the entry names, non_differentiable ones included
    forward: dict = field(default_factory=dict)   # output -> forward formula (its tangent), Python


def _yaml_entries(path, text):
    """A YAML file's entries, or those of ``text`` (a snippet of entries) when it is given."""
    return yaml.safe_load(Path(path).read_text() if text is None else text) or []


def load_derivatives(path=DERIVATIVES, *, text=None):
    """One :class:`Derivative` per entry of ``derivatives.yaml`` (or of ``text``, a snippet in
    its format): the node's name, the formulas, the values to save (``load_derivatives.py``)."""
    torch_names = _torch_node_numbers()
    own_counter = Counter()
    infos = []
    for entry in _yaml_entries(path, text):
        schema = FunctionSchema.parse(entry["name"])
        args = {a.name: a for a in schema.arguments.flat_all}
        outputs = _output_names(schema)
        formulas, groups = _split_formulas(entry, outputs)
        for k in formulas:
            if k not in args:
                raise ValueError(f"{entry['name']}: '{k}' is not an argument")
        edges = [a for a in args if a in formulas and formulas[a] != "non_differentiable"]
        schema_name = str(schema.name)
        prefix = _op_prefix(schema.name.name.base)
        if not edges:
            node = None     # nothing differentiable (eq's bool result): no node, no Autograd kernel
        elif schema_name in torch_names:
            node = torch_names[schema_name]
        elif _view_of_copy(schema.name) in torch_names:
            node = torch_names[_view_of_copy(schema.name)] + "_copy"    # torch's view_copy nodes: the view's, renamed
        elif _inplace_name(schema) in torch_names:
            node = torch_names[_inplace_name(schema)]   # a functional op torch generates from an in-place one
        else:
            node = f"{prefix}{own_counter[prefix]}"
            own_counter[prefix] += 1
        saved = {}
        rewritten = {}
        for i, arg in enumerate(edges):
            formula = formulas[arg]

            def prop(m, saved=saved, i=i):
                name = f"{m.group(1)}_{m.group(2)}"
                expr, exposed = PROPERTIES[m.group(2)]
                saved.setdefault(name, Saved(name, expr.format(m.group(1)), False, exposed=exposed)).users.add(i)
                return name

            def geometry(m, saved=saved, i=i):
                name = f"{m.group(1)}_geometry"
                saved.setdefault(name, Saved(name, f"TensorGeometry({m.group(1)})", False, exposed=False)).users.add(i)
                return name

            def list_prop(m, saved=saved, i=i):
                suffix, expr = LIST_PROPERTIES[m.group(1)]
                name = f"{m.group(2)}_{suffix}"
                saved.setdefault(name, Saved(name, expr.format(m.group(2)), False, exposed=False)).users.add(i)
                return name

            def type_and_size(m, saved=saved, i=i, args=args, outputs=outputs):
                if m.group(1) not in args and m.group(1) not in outputs:
                    return m.group(0)           # zeros_like(grad): the incoming gradient's layout
                name = f"{m.group(1)}_info"
                saved.setdefault(name, Saved(name, f"TypeAndSize({m.group(1)})", False, exposed=False)).users.add(i)
                return f"{name}.zeros()"

            formula = GEOMETRY_RE.sub(geometry, PROPERTY_RE.sub(prop, LIST_PROPERTY_RE.sub(list_prop, formula)))
            formula = ZEROS_LIKE_RE.sub(type_and_size, formula)
            for name, a in args.items():
                if _uses(formula, name):
                    is_list = a.type.is_tensor_like() and a.type.is_list_like()
                    saved.setdefault(name, Saved(name, name, a.type.is_tensor_like(), is_list)).users.add(i)
            for name in outputs:
                if _uses(formula, name):
                    saved.setdefault(name, Saved(name, name, True, is_output=True)).users.add(i)
            rewritten[arg] = formula
        differentiable = entry.get("output_differentiability", [True] * len(outputs))
        list_edges = tuple(a for a in edges if args[a].type.is_list_like())
        if list_edges and len(edges) > 1:
            raise ValueError(f"{entry['name']}: a Tensor[] input must be the only differentiable one")
        forward = _forward_formulas(entry, schema, outputs, edges, formulas)
        infos.append(Derivative(schema, node, rewritten, edges, saved, differentiable, list_edges=list_edges,
                                groups=groups, named=frozenset(formulas), forward=forward))
    return infos


def _split_formulas(entry, outputs=()):
    """Input -> formula, and input -> its group: one formula may serve several inputs, as
    ``input, weight, bias: convolution_backward(...)`` does, computing a tuple of gradients at once
    (with ``grad_input_mask`` saying which of them are needed). A key naming an output is that
    output's forward formula, not a gradient."""
    formulas, groups = {}, {}
    for key, formula in entry.items():
        names = tuple(n.strip() for n in key.split(","))
        if key in NOT_A_FORMULA or all(n in outputs for n in names):
            continue
        for name in names:
            formulas[name] = formula
            if len(names) > 1:
                groups[name] = names
    return formulas, groups


# ---------------------------------------------------------------------- forward formulas
def _forward_formulas(entry, schema, outputs, edges, formulas):
    """Output -> the Python formula of its tangent (``load_derivatives.py``'s forward derivatives):
    ``result:`` names the only output, a key naming an output names that one. In a formula,
    ``x_p`` is input x's value, ``x_t`` its tangent (zeros where it has none), an output's name its
    value."""
    forward = {}
    for key, formula in entry.items():
        names = [n.strip() for n in key.split(",")]
        if key == "result" or (key in outputs and key not in formulas):
            output = outputs[0] if key == "result" else key
            forward[output] = _expand_forward(str(formula), schema, edges, formulas)
        elif len(names) > 1 and all(n in outputs for n in names):
            # ``U, S, Vh: linalg_svd_jvp(...)``: one call gives the tangents of several outputs, in
            # order; each output reads its item (the kernel makes the call once, _hoisted_groups)
            expanded = _expand_forward(str(formula), schema, edges, formulas)
            forward.update({n: f"({expanded})[{i}]" for i, n in enumerate(names)})
    return forward


def _expand_forward(formula, schema, edges, formulas):
    """torch's two shorthands, then the property calls a formula may read (``x.sym_sizes()``)."""
    if formula == "auto_element_wise":
        formula = _auto_element_wise(schema, edges, formulas)
    elif formula == "auto_linear":
        formula = _auto_linear(schema, edges)
    return PROPERTY_RE.sub(lambda m: PROPERTIES[m.group(2)][0].format(m.group(1)), formula)


def _auto_element_wise(schema, edges, formulas):
    """The backward formula applied to the tangent: ``grad`` becomes ``x_t.conj()``, the input
    ``x`` its value ``x_p``, and the whole is conjugated (an elementwise op's Jacobian is diagonal)."""
    if len(edges) != 1:
        raise ValueError(f"{schema.name}: auto_element_wise needs a single differentiable input")
    arg = edges[0]
    formula = re.sub(r"(?<![.\w])grad\b", f"{arg}_t.conj()", formulas[arg])
    formula = re.sub(rf"(?<![.\w]){arg}\b", f"{arg}_p", formula)
    return f"({formula}).conj()"


def _auto_linear(schema, edges):
    """The operator itself applied to the tangents of its differentiable inputs (a linear op)."""
    args = [f"{_ident(a.name)}_t" if a.name in edges else _ident(a.name) for a in schema.arguments.flat_positional]
    if schema.arguments.flat_kwarg_only:
        args.append("**kwargs")
    return f"dispatcher.call({str(schema.name)!r}, {', '.join(args)})"


def match_natives(infos, path=NATIVE_FUNCTIONS, *, text=None):
    """Attach each native function (of the file, or of ``text``, a snippet in its format) to its
    own entry, else to the entry with its signature (so exp_ uses exp's entry); t_ has an entry of
    its own (TBackward1), though its signature is t's. A CompositeImplicitAutograd operator takes
    no other's entry: it is differentiated through the operators it calls (conj_physical, whose
    signature is conj_physical_'s, calls _conj_physical). Returns the schemas left unmatched."""
    by_name = {str(info.schema.name): info for info in infos}
    by_signature = {}
    for info in infos:
        by_signature.setdefault(info.schema.signature(), info)
    unmatched = []
    for entry in _yaml_entries(path, text):
        schema = FunctionSchema.parse(entry["func"])
        composite = "CompositeImplicitAutograd" in (entry.get("dispatch") or {})
        info = by_name.get(str(schema.name)) or (None if composite else by_signature.get(schema.signature()))
        if info is not None:
            info.natives.append(schema)
        else:
            unmatched.append(schema)
    return unmatched


@functools.cache
def view_names(path=NATIVE_FUNCTIONS):
    """The names of the view operators (an output that aliases ``self`` without writing it): the
    in-place operator of such a name (``t_``, ``unsqueeze_``) is an in-place view operator, torch's
    ``inplace_view`` tag. Read when first asked, not at import: the tests import this module,
    and every pytest worker would parse the whole file for it while collecting."""
    names = set()
    # libyaml's parser where PyYAML has it: the same entries, faster.
    for entry in yaml.load(Path(path).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        schema = FunctionSchema.parse(entry["func"])
        if any(r.annotation is not None and not r.annotation.is_write for r in schema.returns):
            names.add(schema.name.name.base)
    return frozenset(names)


# ---------------------------------------------------------------------- functions.py
def _indent(lines, n):
    return [(" " * n + line) if line else "" for line in lines]


def _local_setup(info, names, n):
    """Lines unpacking the saved values a formula uses into locals of the same names."""
    out = []
    for name in names:
        s = info.saved[name]
        out.append(f"{name} = node.{name}_.unpack(node)" if s.tensor else f"{name} = node.{name}_")
    return _indent(out, n)


def _grad_name(info, arg):
    """The local holding ``arg``'s gradient: grad_<arg>, or d_<arg> where that is the name of a
    saved argument (sigmoid_backward's ``output`` next to its saved ``grad_output``)."""
    return f"d_{arg}" if f"grad_{arg}" in info.saved else f"grad_{arg}"


def gen_node(info):
    saved = list(info.saved.values())
    lines = [f"class {info.node}(Node):",
             f'    """``{info.schema}``"""']
    lines.append(f"    __slots__ = {tuple(s.name + '_' for s in saved)!r}")
    lines.append(f"    _tensor_slots = {tuple(s.name + '_' for s in saved if s.tensor)!r}")
    exposed = {f"_saved_{s.name}": (s.name + "_", s.tensor) for s in saved if s.exposed}
    lines.append(f"    _exposed = {exposed!r}")
    lines.append("")
    lines.append("    def apply(node, grads):")
    uses_grads = any(_uses(f, "grads") for f in info.formulas.values())
    if not uses_grads and any(_uses(f, "grad") for f in info.formulas.values()):
        lines.append("        grad = grads[0]")       # poisson's zeros_like(self) reads no gradient
    if len(info.edges) == 1:
        arg = info.edges[0]
        lines += _local_setup(info, [s.name for s in saved], 8)
        if arg in info.list_edges:          # a Tensor[] input: one gradient per tensor of the list
            lines.append(f"        return tuple({info.formulas[arg]})")
        else:
            lines.append(f"        return ({info.formulas[arg]},)")
    else:
        lines.append("        edges = node._next_edges")
        # What is always saved is unpacked first, as torch's apply does (a saved output's unpack
        # is a detach a mode sees); what only one edge needs, under that edge.
        always = [s.name for s in saved if not _need(info, s)]
        lines += _local_setup(info, always, 8)
        results = [_grad_name(info, arg) for arg in info.edges]
        # The formulas run in the sorted order of their keys, as torch's load_derivatives.py reads
        # them (``sorted(defn.keys())``): div's ``other`` before ``self``, mm's ``mat2`` before ``self``.
        order = sorted(enumerate(info.edges), key=lambda e: ", ".join(info.groups.get(e[1], (e[1],))))
        for i, arg in order:
            group = info.groups.get(arg)
            if group is None:
                lines.append(f"        {_grad_name(info, arg)} = None")
                lines.append(f"        if edges[{i}] is not None:")
                lines += _local_setup(info, [s.name for s in saved if i in s.users and s.name not in always], 12)
                lines.append(f"            {_grad_name(info, arg)} = {info.formulas[arg]}")
            elif arg == group[0]:
                lines += _group_lines(info, group, [s for s in saved if s.name not in always])
        lines.append(f"        return {', '.join(results)}")
    return "\n".join(lines)


def _group_lines(info, group, saved):
    """One formula for several inputs: run it once if any of their edges exists."""
    at = [info.edges.index(a) for a in group]
    mask = ", ".join(f"edges[{i}] is not None" for i in at)
    return [f"        {' = '.join(_grad_name(info, a) for a in group)} = None",
            f"        grad_input_mask = [{mask}]",
            "        if any(grad_input_mask):",
            *_local_setup(info, [s.name for s in saved if set(at) & s.users], 12),
            f"            {', '.join(_grad_name(info, a) for a in group)} = {info.formulas[group[0]]}"]


FUNCTIONS_HEADER = '''"""Backward nodes, one per entry of autograd/derivatives.yaml (torch's generated Functions.cpp).

GENERATED by internals/codegen/gen_autograd.py from autograd/derivatives.yaml: do not edit.
Regenerate with ``python -m internals.codegen``.
"""
{helpers}
from ..graph import Node

'''


@functools.cache
def _manual_helpers():
    """The names ``functions_manual`` exports (its ``__all__`` lists), read without importing it."""
    tree = ast.parse((Path(__file__).parents[1] / "autograd" / "functions_manual.py").read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                names.update(ast.literal_eval(node.value))
    return names


def _import(module, names, comment=""):
    """``from module import (a, b, ...)`` of the names the generated code uses, one per line."""
    lines = "".join(f"    {n},\n" for n in sorted(names))
    return f"from {module} import ({comment}\n{lines})"


def _used(body, candidates):
    code = re.sub(r'"""[\s\S]*?"""', "", body)    # a node's docstring quotes its schema, which calls nothing
    return set(re.findall(r"\b[A-Za-z_]\w*\b", code)) & set(candidates)


def gen_functions(infos):
    """One class per node name: a functional op torch generates from an in-place one (``zero``
    from ``zero_``) shares the in-place op's node, as it shares its formula."""
    first, seen = [], {None}
    for info in infos:
        if info.node not in seen:
            seen.add(info.node)
            first.append(info)
    names = [info.node for info in first]
    body = "\n\n\n".join(gen_node(info) for info in first)
    helpers = _import("..functions_manual", _used(body, _manual_helpers()), "  # the helpers the formulas call")
    return FUNCTIONS_HEADER.format(helpers=helpers) + f"__all__ = {names!r}\n\n\n" + body + "\n"


# ---------------------------------------------------------------------- variable_type.py
def _py_default(default):
    if default and default.startswith("[") and default != "[]":       # a list default as a tuple: ``dims=[0,1]``
        items = [i.strip() for i in default[1:-1].split(",")]
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
    return {"[]": "()", "true": "True", "false": "False", "Mean": "1"}.get(default, default)   # at::Reduction::Mean


def _kernel_name(schema):
    return str(schema.name).replace(".", "_")


def _ident(name):
    """A schema argument's name as a Python parameter (``from`` is a keyword: ``from_``)."""
    return name + "_" if keyword.iskeyword(name) else name


def gen_out_kernel(schema):
    """The Autograd kernel of an out= function (``add.out``): no graph, and an error if a tensor
    requires grad (torch's ``is_out_fn`` branch of ``emit_body``); then the operator below."""
    positional = schema.arguments.flat_positional
    params = ["ks"] + [_ident(a.name) if a.default is None else f"{_ident(a.name)}={_py_default(a.default)}"
                       for a in positional] + ["**kwargs"]
    tensors = [_ident(a.name) for a in positional if a.type.is_tensor_like()]
    tensors += [f"kwargs.get({a.name!r})" for a in (*schema.arguments.flat_kwarg_only, *schema.arguments.out)
                if a.type.is_tensor_like()]
    call_args = ", ".join([_ident(a.name) for a in positional] + ["**kwargs"])
    name = _kernel_name(schema)
    lines = [f"def {name}({', '.join(params)}):",
             f"    check_out_no_requires_grad({schema.name.name.base!r}, {', '.join(tensors)})",
             "    if _fw_levels:",
             f"        check_out_no_fw_grad({schema.name.name.base + '_out'!r}, {', '.join(tensors)})",
             "    with below_autograd():",
             f"        return OPS[{str(schema.name)!r}].redispatch(after_autograd(ks), {call_args})"]
    return name, "\n".join(lines)


def gen_kernel(info, schema):
    """The Autograd kernel of one native function."""
    if schema.kind() == SchemaKind.out:
        return gen_out_kernel(schema)
    positional = schema.arguments.flat_positional
    kwonly = schema.arguments.flat_kwarg_only
    params = ["ks"] + [_ident(a.name) if a.default is None else f"{_ident(a.name)}={_py_default(a.default)}"
                       for a in positional]
    if kwonly:
        params.append("**kwargs")
    call_args = ", ".join(_ident(a.name) for a in positional) + (", **kwargs" if kwonly else "")
    inplace = schema.kind() == SchemaKind.inplace
    is_view = any(a.annotation is not None and not a.annotation.is_write for a in positional) and not inplace
    diff_inputs = info.edges
    optional = {a.name for a in positional if a.type.is_nullable()}
    name = _kernel_name(schema)
    lines = [f"def {name}({', '.join(params)}):", *_no_requires_grad_checks(info, schema),
             *_no_forward_checks(info, schema), "    grad_fn = None",
             f"    if _grad_mode.grad_enabled and {_any_requires_grad(diff_inputs, info.list_edges, optional)}:"]
    if inplace:
        lines.append("        check_inplace(self)")
    lines.append(f"        grad_fn = {info.node}()")
    conditional = any(_need(info, s) for s in info.saved.values())
    edge_args = ", ".join(f"*{a}" if a in info.list_edges else a for a in diff_inputs)
    lines.append(f"        {'edges = ' if conditional else ''}grad_fn._next_edges = collect_next_edges({edge_args})")
    for s in info.saved.values():
        if s.is_output:
            continue
        if s.name in (a.name for a in kwonly):
            default = _py_default(next(a.default for a in kwonly if a.name == s.name))
            value = f"kwargs.get({s.name!r}, {default})"
            if s.tensor:        # a keyword-only tensor (the fused attention's mask) is saved as any tensor
                value = f"SavedVariable({value}, False)"
        elif s.tensor:
            original = inplace and s.name == "self"      # the value before the op overwrites it
            value = (f"SavedVariableList({s.expr})" if s.is_list
                     else f"SavedVariable({'self.clone()' if original else s.expr}, False)")
        else:
            value = s.expr
            arg = next((a for a in positional if a.name == s.name), None)
            if arg is not None and str(arg.type).startswith(("int[", "SymInt[")):
                value = f"as_int_tuple({value})"
            elif arg is not None and str(arg.type) in ("int", "SymInt"):
                value = f"as_int({value})"
        cond = _need(info, s)
        if cond:
            lines.append(f"        if {cond}:")
            lines.append(f"            grad_fn.{s.name}_ = {value}")
        else:
            lines.append(f"        grad_fn.{s.name}_ = {value}")
    lines += _original_self_lines(info, inplace)
    guard = "below_autograd" if inplace else "below_ad_inplace_or_view"
    lines += [f"    excluded = enter_{guard}()",
              "    try:",
              f"        result = OPS[{str(schema.name)!r}].redispatch(after_autograd(ks), {call_args})",
              "    finally:",
              "        tls.excluded = excluded"]
    if is_view:
        lines.append("    mark_view(result)")
        if len(schema.returns) == 1 and str(schema.returns[0].type) == "Tensor":
            replay = ", ".join(["_v"] + [_ident(a.name) for a in positional[1:]]) + (", **kwargs" if kwonly else "")
            lines += ["    if replays_views(self):",
                      f"        record_view_fn(result, self, lambda _v: dispatcher.call({str(schema.name)!r}, "
                      f"{replay}))"]
    lines.append("    if grad_fn is not None:")
    outputs = _output_names(info.schema)
    if inplace and schema.name.name.base in view_names():
        lines.append("        set_inplace_view_history(self, grad_fn)")
    elif inplace:
        lines.append("        rebase_history(self, grad_fn)")
    elif len(outputs) > 1:
        diff = [o for o, d in zip(outputs, info.differentiable_outputs) if d]
        lines.append(f"        set_history(({', '.join(f'result[{outputs.index(o)}]' for o in diff)},), grad_fn)")
    else:
        lines.append("        set_history(result, grad_fn)")
    if _complex_outputs_checked(schema, inplace):
        diff = [o for o, d in zip(outputs, info.differentiable_outputs) if d] if len(outputs) > 1 else outputs
        outs = "result" if len(outputs) == 1 else f"({', '.join(f'result[{outputs.index(o)}]' for o in diff)},)"
        lines.append(f"        check_complex_autograd({schema.name.name.base!r}, {outs})")
    for s in info.saved.values():
        if s.is_output:
            value = "self" if inplace else ("result" if len(outputs) == 1 else f"result[{outputs.index(s.name)}]")
            cond = _need(info, s)
            if cond:
                lines.append(f"        if {cond}:")
            saved = "saved_inplace_result(self)" if inplace else f"SavedVariable({value}, True)"
            lines.append(f"{'    ' if cond else ''}        grad_fn.{s.name}_ = {saved}")
    lines += _forward_lines(info, schema, inplace)
    lines.append("    return result")
    return name, "\n".join(lines)


def _forward_inputs(info):
    return ", ".join(_ident(a) for a in info.edges)


def _no_forward_checks(info, schema):
    """An entry with no forward formula: a tangent on a differentiable input is an error, raised
    before the operator runs (torch's ``TORCH_CHECK_NOT_IMPLEMENTED(!isFwGradDefined(...))``)."""
    if info.forward or not info.edges:
        return []
    name = str(schema.name.name)
    return ["    if _fw_levels:", f"        check_no_fw_grad({name!r}, {_forward_inputs(info)})"]


def _uses_original_self(info):
    return any(_uses(f, "self_p") or _uses(f, "original_self_p") for f in info.forward.values())


def _original_self_lines(info, inplace):
    """An in-place op overwrites ``self``: a formula reading its value reads a copy made before."""
    if not (inplace and _uses_original_self(info)):
        return []
    return ["    fw_original_self = None",
            f"    if _fw_levels and has_fw_grad({_forward_inputs(info)}):",
            "        fw_original_self = primal(self).clone()"]


def _forward_lines(info, schema, inplace):
    """Give the outputs their tangents when an input has one (``emit_fw_derivatives``). The
    formulas read the inputs' and outputs' values through tangent-free handles (``x_p``), so the
    operations they run record no tangents of their own."""
    if not info.forward:
        return []
    outputs = _output_names(info.schema)
    formulas = {o: _rename_outputs(f, outputs) for o, f in info.forward.items()}
    body = " ".join(formulas.values())
    lines = [f"        {a}_p = {'fw_original_self' if inplace and a == 'self' else f'primal({_ident(a)})'}"
             for a in _args_used(schema, body, "_p")]
    if inplace and _uses(body, "original_self_p"):
        lines.append("        original_self_p = fw_original_self")
    tangent_args = _args_used(schema, body, "_t")
    for a in schema.arguments.flat_kwarg_only:
        if _uses(body, a.name):
            lines.append(f"        {a.name} = kwargs.get({a.name!r}, {_py_default(a.default)})")
    for i, o in enumerate(outputs):
        if _uses(body, f"fwp_{o}"):
            value = "self" if inplace else ("result" if len(outputs) == 1 else f"result[{i}]")
            lines.append(f"        fwp_{o} = primal({value})")
    targets = {o: "self" if inplace else ("result" if len(outputs) == 1 else f"result[{outputs.index(o)}]")
               for o in formulas}
    suffix = ", inplace=True" if inplace else ""
    variants = _zero_tangent_variants(formulas, tangent_args, info.list_edges)
    if variants:
        names, args = ", ".join(a + "_t" for a in tangent_args), ", ".join(tangent_args)
        lines.append(f"        {names} = tangents({args}, zeros=False)")
        for i, (missing, reduced) in enumerate(variants.items()):
            test = " and ".join(f"{a}_t is {'' if a in missing else 'not '}None" for a in tangent_args)
            lines.append(f"        {'elif' if i else 'if'} {test}:")
            zeros = ", ".join(_ident(a) for a in missing)       # promoted as their zeros would promote it
            lines += [f"            set_fw_grad({targets[o]}, promoted({f}, {zeros}){suffix})"
                      for o, f in reduced.items()]
        lines.append("        else:")
        lines.append(f"            {names} = tangents({args})")
        lines += [f"            set_fw_grad({targets[o]}, {f}{suffix})" for o, f in formulas.items()]
    else:
        if tangent_args:
            names = ", ".join(a + "_t" for a in tangent_args) + ("," if len(tangent_args) == 1 else "")
            lines.append(f"        {names} = tangents({', '.join(tangent_args)})")
        hoisted, formulas = _hoisted_groups(formulas)
        lines += [f"        {name} = {call}" for name, call in hoisted.items()]
        lines += [f"        set_fw_grad({targets[o]}, {f}{suffix})" for o, f in formulas.items()]
    return [f"    if _fw_levels and has_fw_grad({_forward_inputs(info)}):", *lines]


def _hoisted_groups(formulas):
    """Formulas that index one call's result (``(f(...))[0]``, ``(f(...))[1]``): the call made once,
    into ``fw_tangents`` (``fw_tangents1``, ... for more calls), and each output reading its item."""
    items = {}
    for o, f in formulas.items():
        node = ast.parse(f, mode="eval").body
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, int):
            items[o] = (ast.unparse(node.value), node.slice.value)
    counts = Counter(call for call, _ in items.values())
    calls = [call for call, n in counts.items() if n > 1]
    hoisted = {f"fw_tangents{i or ''}": call for i, call in enumerate(calls)}
    names = {call: name for name, call in hoisted.items()}
    return hoisted, {o: f"{names[items[o][0]]}[{items[o][1]}]" if o in items and items[o][0] in names else f
                     for o, f in formulas.items()}


# torch passes an input without a tangent to a formula as an efficient zero tensor (ZeroTensor), so
# a term it multiplies vanishes even where the other factor is inf or nan. For the formulas of two
# or three tangents, the kernel has a variant per set of missing tangents with their terms removed.
_ZERO = object()
_ZERO_RECEIVER = {"conj", "neg", "mm", "bmm", "mv", "dot", "outer", "matmul", "mul", "div", "t", "transpose",
                  "sum", "clone", "reshape", "view", "expand", "to"}       # zero.f(...) is zero
_ZERO_ARGUMENT = {"mm", "bmm", "mv", "dot", "outer", "matmul", "mul"}       # x.f(zero) is zero
_ZERO_FIRST_ARGUMENT = {"maybe_multiply"}                                    # f(zero, ...) is zero


def _zero_tangent_variants(formulas, tangent_args, list_edges):
    """Missing inputs -> {output: formula without their tangents}, for each set of them that
    leaves one, or None when a formula keeps a term the rules above cannot remove (all of them
    then read zeros)."""
    if not 2 <= len(tangent_args) <= 3 or set(tangent_args) & set(list_edges):
        return None
    variants = {}
    for count in range(1, len(tangent_args)):
        for missing in itertools.combinations(tangent_args, count):
            variants[missing] = {}
            for o, formula in formulas.items():
                reduced = ast.parse(formula, mode="eval").body
                for name in missing:
                    reduced = _without(reduced, f"{name}_t") if reduced is not _ZERO else _ZERO
                if reduced is None or reduced is _ZERO:
                    return None
                variants[missing][o] = ast.unparse(reduced)
    return variants


def _without(node, name):
    """``node`` with the tangent ``name`` taken as zero: _ZERO if the whole is, None if it cannot tell."""
    if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
        return node
    if isinstance(node, ast.Name):
        return _ZERO
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _without(node.operand, name)
        return operand if operand in (_ZERO, None) else ast.UnaryOp(ast.USub(), operand)
    if isinstance(node, ast.BinOp):
        return _binop_without(node, name)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _call_without(node, name)
    return None


def _binop_without(node, name):
    left, right = _without(node.left, name), _without(node.right, name)
    if left is None or right is None:
        return None
    if isinstance(node.op, ast.Mult):
        return _ZERO if _ZERO in (left, right) else ast.BinOp(left, node.op, right)
    if isinstance(node.op, ast.Div):
        return _ZERO if left is _ZERO else (None if right is _ZERO else ast.BinOp(left, node.op, right))
    if isinstance(node.op, (ast.Add, ast.Sub)):
        if right is _ZERO:
            return left
        if left is _ZERO:
            return right if isinstance(node.op, ast.Add) else ast.UnaryOp(ast.USub(), right)
        return ast.BinOp(left, node.op, right)
    return None


def _call_without(node, name):
    """A method call on a zero tangent, a product with one, or a helper scaling one."""
    func = node.func
    is_helper = isinstance(func.value, ast.Name) and func.value.id == "manual"
    if is_helper:
        first = _without(node.args[0], name) if node.args else None
        if func.attr in _ZERO_FIRST_ARGUMENT and first is _ZERO:
            return _ZERO
        return None
    receiver = _without(func.value, name)
    if receiver is _ZERO and func.attr in _ZERO_RECEIVER:
        return _ZERO
    if receiver is not None and receiver is not _ZERO and func.attr in _ZERO_ARGUMENT and node.args:
        if _without(node.args[0], name) is _ZERO:
            return _ZERO
    return None


def _rename_outputs(formula, outputs):
    """An output's name in a formula reads its value, held in ``fwp_<name>`` (``result`` is the
    kernel's own variable)."""
    for o in outputs:
        formula = re.sub(rf"(?<![.\w]){o}\b", f"fwp_{o}", formula)
    # the helpers of functions_manual through its module: a kernel may bear a helper's name
    return re.sub(rf"(?<![.\w])({'|'.join(sorted(_manual_helpers()))})\b(?=\()", r"manual.\1", formula)


def _args_used(schema, body, suffix):
    """The tensor inputs the formulas read as ``<name><suffix>`` (their values or tangents)."""
    return [a.name for a in schema.arguments.flat_positional
            if a.type.is_tensor_like() and _uses(body, a.name + suffix)]


def _no_requires_grad_checks(info, schema):
    """torch's ``emit_check_no_requires_grad``: a tensor input the entry does not name has no
    formula, so with grad mode on it may not require grad (rather than get no gradient)."""
    unnamed = [a.name for a in schema.arguments.flat_positional
               if a.type.is_tensor_like() and not a.type.is_list_like() and a.name not in info.named
               and a.name != "output"]
    if not unnamed:
        return []
    checks = [f"        check_no_requires_grad({_ident(n)}, {n!r}, {schema.name.name.base!r})" for n in unnamed]
    return ["    if _grad_mode.grad_enabled:", *checks]


def _any_requires_grad(names, list_names=(), optional=()):
    if list_names:
        return f"any(t._requires_grad for t in {names[0]})"
    test = " or ".join(f"({n} is not None and {n}._requires_grad)" if n in optional else f"{n}._requires_grad"
                       for n in names)
    return f"({test})" if len(names) > 1 else test


def _need(info, saved):
    """The condition under which a saved value is saved: the one edge whose formula uses it exists
    (torch's ``guard_for``). torch guards only an input tensor that a single formula, for a single
    input, of an operator with several differentiable inputs uses, and never an output or the
    saved values of a ``*_backward`` operator: those are always saved (a mode sees the ``detach``)."""
    if (saved.is_output or not saved.tensor or saved.is_list or len(saved.users) != 1 or len(info.edges) <= 1
            or "backward" in info.schema.name.name.base):
        return ""
    return f"edges[{next(iter(saved.users))}] is not None"


VARIABLE_TYPE_HEADER = '''"""Autograd kernels, one per differentiable operator (torch's generated VariableType_*.cpp).

GENERATED by internals/codegen/gen_autograd.py from autograd/derivatives.yaml and
aten/native_functions.yaml: do not edit. Regenerate with ``python -m internals.codegen``.

Each kernel records a node when grad mode is on and an input requires grad, then runs the
operator below autograd: with the Autograd and ADInplaceOrView keys excluded for a functional
operator (``AutoDispatchBelowADInplaceOrView``), with only Autograd excluded for an in-place one
(``AutoDispatchBelowAutograd``), whose ADInplaceOrView kernel must still bump the version.
"""
from ...aten import dispatcher
from ...c10.grad_mode import _state as _grad_mode
from ...c10.local_dispatch_key_set import below_autograd, enter_below_ad_inplace_or_view, enter_below_autograd, tls
from ..graph import SavedVariable, SavedVariableList, collect_next_edges, set_history
from .. import functions_manual as manual
from ..forward_grad import LEVELS as _fw_levels
from ..forward_grad import (check_no_fw_grad, check_out_no_fw_grad, has_fw_grad, primal, promoted, set_fw_grad,
                            tangents)
from ..variable_type_manual import (after_autograd, as_int, as_int_tuple, check_complex_autograd, check_inplace,
                                    check_no_requires_grad, check_out_no_requires_grad, strides_or_error,
                                    mark_view, rebase_history, record_view_fn, replays_views, saved_inplace_result,
                                    set_inplace_view_history)
{nodes}

'''


def gen_variable_type(infos):
    kernels = []
    for info in infos:
        if info.node is None:       # an entry that only says its operator is not differentiable:
            continue                # the Autograd key falls through, as torch generates no kernel
        for schema in info.natives:
            kernels.append((str(schema.name), *gen_kernel(info, schema)))
    ops = "\n".join(f"    {name!r}: dispatcher.find({name!r})," for name, _, _ in kernels)
    table = "\n".join(f"    {name!r}: {fn}," for name, fn, _ in kernels)
    body = "\n\n\n".join(code for _, _, code in kernels)
    nodes = _import(".functions", _used(body, [info.node for info in infos]))
    manual = _used(body, ["TensorGeometry", "TypeAndSize"])
    if manual:
        nodes = f"from ..functions_manual import {', '.join(sorted(manual))}\n" + nodes
    return (VARIABLE_TYPE_HEADER.format(nodes=nodes) + "OPS = {\n" + ops + "\n}\n\n\n" + body +
            "\n\n\nKERNELS = {\n" + table + "\n}\n\n\n"
            "def register_autograd_kernels():\n"
            "    for name, fn in KERNELS.items():\n"
            "        dispatcher.impl(name, \"Autograd\", dispatcher.KernelFunction(fn, with_keyset=True))\n")


# ---------------------------------------------------------------------- driver
def generate():
    """The generated files' contents: {file name: text}."""
    infos = load_derivatives()
    match_natives(infos)
    return {"functions.py": gen_functions(infos), "variable_type.py": gen_variable_type(infos),
            "__init__.py": '"""Generated by internals/codegen/gen_autograd.py: do not edit."""\n'}


def main(argv=None):
    for name, text in generate().items():
        (GENERATED / name).write_text(text)
        print(f"wrote {GENERATED / name}")


if __name__ == "__main__":
    main(sys.argv[1:])
