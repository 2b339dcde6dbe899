"""GraphModule: a Graph turned back into Python code and run (``torch/fx/graph_module.py``).

fx does not interpret a graph node by node: it writes the graph out as the source of a
``forward`` function and compiles that with ``exec``. The same source is what
``print_readable`` shows, so what the reader sees is exactly what runs.
"""
import builtins
import math
import operator
import pathlib
import re
import textwrap
import warnings

import internals

from ..nn import Module
from .graph import Node, describe_value, public_name, target_name

__all__ = ["GraphModule"]


class GraphModule(Module):
    """A Module whose ``forward`` is ``graph`` written out as Python. ``root`` holds what the
    graph's ``get_attr`` and ``call_module`` nodes name: a dict of them, or a module they are
    copied from by dotted path (so ``state_dict`` has the root's keys for them, as in fx)."""

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        if type(self).__name__ != class_name:   # each GraphModule its own class, named as asked (fx's ``__new__``)
            self.__class__ = type(class_name, (type(self),), {})
        self.graph, self._class_name = graph, class_name
        # The graphs make_fx records (``root`` a dict of constants) are read in the book: their
        # long calls are wrapped to a page's width. A module traced symbolically keeps torch's
        # one line per node, so its ``code`` is torch's text.
        self._code_width = 87
        if isinstance(root, Module):
            self._code_width, self.training = math.inf, root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        else:
            for node in graph.nodes:        # fx refuses a graph naming what the dict lacks
                if node.op in ("get_attr", "call_module") and node.target not in root:
                    raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                       "provided in ``root``!")
            for name, value in root.items():
                setattr(self, name, value)
        self.recompile()

    def recompile(self):
        """Regenerate ``code`` from the graph (after a pass changed it) and compile it."""
        scope = {"internals": internals, "operator": operator, "inf": math.inf, "nan": math.nan,
                 "device": internals.device}
        self.code = python_code(self.graph, width=self._code_width, scope=scope)
        code = compile(self.code, f"<fx {self._class_name}>", "exec")
        exec(code, scope)  # noqa: S102 -- running its generated code is what a GraphModule does
        self._forward = scope["forward"]
        return self.code

    def forward(self, *args, **kwargs):
        return self._forward(self, *args, **kwargs)

    def __reduce__(self):
        """Pickled (and deep-copied) as its state without the compiled ``forward`` (code made by
        ``exec`` has no importable name): loading compiles the graph again, as fx's
        ``reduce_graph_module`` regenerates the code, into a plain ``GraphModule`` (fx's copy
        loses the traced class's name too)."""
        state = {k: v for k, v in self.__dict__.items() if k != "_forward"}
        return _rebuild_graph_module, (state,)

    def __str__(self):
        """The module's children, then its code, then a pointer to ``print_readable``, as fx's."""
        return (f"{Module.__repr__(self)}\n\n\n\n{self.code}    \n"
                "# To see more debug info, please use `graph_module.print_readable()`")

    def to_folder(self, folder, module_name="FxModule"):
        """Write the module out as a Python package to import as ``from <folder> import <module_name>``."""
        to_folder(self, folder, module_name)

    def print_readable(self, print_output=True):
        """The module as a class with its ``forward``, each line annotated with the value's dtype and
        shape (``f32[5, 4]``) as tracing found them."""
        text = f"class {self._class_name}(internals.nn.Module):\n" + textwrap.indent(
            python_code(self.graph, annotate=True, width=83), "    ")
        if print_output:
            print(text)
        return text


def _rebuild_graph_module(state):
    """A pickled GraphModule back: its state, its code compiled again."""
    gm = GraphModule.__new__(GraphModule)
    gm.__dict__.update(state, _class_name="GraphModule")
    gm.recompile()
    return gm


# The children ``to_folder`` writes as their repr, which rebuilds them (fx's ``safe_reprs``).
_SAFE_REPRS = ("Linear", "Conv1d", "Conv2d", "Conv3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d")

# What the generated code's scope holds, as import lines (fx's ``_custom_builtins``).
_SCOPE_IMPORTS = ("import internals", "import operator", "from math import inf", "from math import nan",
                  "from internals import device")


def _child_repr(child):
    """The repr that rebuilds ``child`` (the library's own Linear, Conv or BatchNorm), or None."""
    if type(child).__name__ in _SAFE_REPRS and type(child) is getattr(internals.nn, type(child).__name__, None):
        return repr(child)
    return None


def to_folder(gm, folder, module_name="FxModule"):
    """Write ``gm`` out as a package: ``module.py`` with a class ``module_name`` whose ``__init__``
    rebuilds the children and loads ``state_dict.pt``, and whose ``forward`` is ``gm.code``. A
    child whose repr does not rebuild it is saved whole, pickled, to ``<name>.pt`` and loaded back
    from there (``weights_only=False``: its class is imported by name), with fx's warning naming
    those children."""
    folder = pathlib.Path(folder)
    folder.mkdir(exist_ok=True)
    internals.save(gm.state_dict(), folder / "state_dict.pt")
    tab = " " * 4
    lines = ["", *_SCOPE_IMPORTS, "", "from internals.nn import *",
             f"class {module_name}(internals.nn.Module):", f"{tab}def __init__(self):", f"{tab * 2}super().__init__()"]
    pickled = []
    for name, child in gm.named_children():
        text = _child_repr(child)
        if text is None:
            internals.save(child, folder / f"{name}.pt")
            pickled.append(name)
            shown = repr(child).replace("\r", " ").replace("\n", " ")
            load = f"internals.load(r'{folder / f'{name}.pt'}', weights_only=False)"
            lines.append(f"{tab * 2}setattr(self, '{name}', {load}) # {shown}")
        else:
            lines.append(f"{tab * 2}setattr(self, '{name}', {text})")
    for name, buffer in gm._buffers.items():
        if buffer is not None:
            lines.append(f"{tab * 2}self.register_buffer('{name}', internals.empty({list(buffer.shape)}, "
                         f"dtype={_internals_source(buffer.dtype)}))")
    for name, param in gm._parameters.items():
        if param is not None:
            lines.append(f"{tab * 2}setattr(self, '{name}', internals.nn.Parameter(internals.empty("
                         f"{list(param.shape)}, dtype={_internals_source(param.dtype)})))")
    lines.append(f"{tab * 2}self.load_state_dict(internals.load(r'{folder}/state_dict.pt'))")
    (folder / "module.py").write_text("\n".join(lines) + "\n" + textwrap.indent(gm.code, tab) + "\n")
    (folder / "__init__.py").write_text("from .module import *")
    if pickled:
        warnings.warn("Was not able to save the following children modules as reprs -"
                      f"saved as pickled files instead: {pickled}", stacklevel=1)


def _copy_attr(source, dest, target):
    """Put ``source``'s attribute at dotted ``target`` on ``dest`` at the same path, with plain
    Modules standing in for the modules on the way (fx's ``_copy_attr``)."""
    *path, name = target.split(".")
    for item in path:
        source = getattr(source, item)
        if item not in dest._modules:
            dest.add_module(item, Module())
        dest = dest._modules[item]
    value = getattr(source, name)
    if isinstance(value, internals.Tensor) and not isinstance(value, internals.nn.Parameter):
        dest.register_buffer(name, value)       # a buffer or a traced constant: kept in the state dict
    else:
        setattr(dest, name, value)


def _format_target(base, target):
    """``self.layers.0`` as Python: ``getattr(self.layers, "0")`` where a step is no identifier."""
    for item in target.split("."):
        base = f"{base}.{item}" if item.isidentifier() else f'getattr({base}, "{item}")'
    return base


def python_code(graph, annotate=False, width=87, scope=None):
    """The source of ``forward(self, <placeholders>)``: one assignment per node. Functions that are
    neither the library's nor Python's operators are added to ``scope`` by name."""
    scope = {} if scope is None else scope
    params = [n.target + (f" = {_source(n.args[0])}" if n.args else "") for n in graph.nodes if n.op == "placeholder"]
    if annotate:
        params = [f'{n.name}: "{describe_value(n.meta.get("val"))}"' for n in graph.nodes if n.op == "placeholder"]
    lines = _wrapped("def forward(", ["self"] + params, width, close="):")
    last_uses = _last_uses(graph)
    for node in graph.nodes:
        freed = last_uses.get(node, []) + ([node] if not node.users else [])
        free = ";  " + " = ".join([n.name for n in freed] + ["None"]) if freed else ""
        if node.op == "placeholder" and node.name != node.target.lstrip("*"):
            lines.append(f"    {node.name} = {node.target.lstrip('*')}")     # ``input_1 = input``, ``_args = args``
        elif node.op == "get_attr":
            lines.append(f"    {node.name} = {_format_target('self', node.target)}{free}")
        elif node.op == "call_module":
            callee = _format_target("self", node.target)
            lines.append(f"    {node.name} = {callee}({', '.join(_call_args(node))}){free}")
        elif node.op == "call_method":
            rest = [_source(a) for a in node.args[1:]] + [f"{k} = {_source(v)}" for k, v in node.kwargs.items()]
            lines.append(f"    {node.name} = {_source(node.args[0])}.{node.target}({', '.join(rest)}){free}")
        elif node.op == "call_function" and node.target is getattr and len(node.args) == 2 \
                and isinstance(node.args[1], str) and node.args[1].isidentifier():
            lines.append(f"    {node.name} = {_source(node.args[0])}.{node.args[1]}{free}")
        elif node.op == "call_function":
            note = describe_value(node.meta.get("val")) if annotate else ""
            lhs = f'{node.name}: "{note}"' if note else node.name
            infix = _PYTHON_OPERATORS.get(node.target)
            if infix is not None:       # ``a * 2.0``, ``out[0]``: Python's own syntax, as fx prints them
                lines.append(f"    {lhs} = {infix.format(*(_source(a) for a in node.args))}{free}")
            else:       # printed for reading, wrapped narrower where the freeing would overrun the width
                callee = _callee(node.target, scope, graph)
                call = _wrapped(f"    {lhs} = {callee}(", _call_args(node), width)
                if annotate and free and len(call[-1] + free) > width:
                    call = _wrapped(f"    {lhs} = {callee}(", _call_args(node), width - len(free))
                lines += call[:-1] + [call[-1] + free]
        elif node.op == "output":
            lines.append(f"    return {_source(node.args[0])}")
    return "\n".join(lines) + "\n"


def _last_uses(graph):
    """{node: the values whose last reader it is}, as fx's ``delete_unused_values`` finds them:
    the generated code sets each to None on that line (``add = ...;  mul = None``), so a value
    is freed as soon as nothing later needs it. A node nobody reads (a ``copy_`` kept for what
    it writes) is freed on its own line; what the output returns is never freed."""
    seen, last = set(), {}
    for node in reversed(graph.nodes):
        for used in dict.fromkeys(node.all_input_nodes):
            if used not in seen:
                seen.add(used)
                last.setdefault(node, []).append(used)
    return last


# fx's ``magic_methods`` (``torch/fx/graph.py``): a node calling one of these Python operators
# is written with the operator's syntax, not as ``operator.mul(a, 2.0)``.
_PYTHON_OPERATORS = {getattr(operator, name): text for name, text in (
    ("add", "{} + {}"), ("sub", "{} - {}"), ("mul", "{} * {}"), ("floordiv", "{} // {}"),
    ("truediv", "{} / {}"), ("mod", "{} % {}"), ("pow", "{} ** {}"), ("lshift", "{} << {}"),
    ("rshift", "{} >> {}"), ("and_", "{} & {}"), ("or_", "{} | {}"), ("xor", "{} ^ {}"),
    ("getitem", "{}[{}]"), ("matmul", "{} @ {}"), ("eq", "{} == {}"), ("ne", "{} != {}"),
    ("lt", "{} < {}"), ("gt", "{} > {}"), ("le", "{} <= {}"), ("ge", "{} >= {}"), ("pos", "+{}"),
    ("neg", "-{}"), ("invert", "~{}"))}


def _callee(target, scope, graph):
    if getattr(target, "__module__", None) == "_operator":     # ``abs``: no syntax of its own in fx's list
        scope[f"_operator_{target.__name__}"] = target          # a global named as fx names it
        return f"_operator_{target.__name__}"
    if hasattr(target, "_schema"):          # an aten operator (make_fx's graphs)
        return f"internals.ops.{target_name(target)}"
    name, module = getattr(target, "__name__", None), getattr(target, "__module__", None) or ""
    if module.split(".")[0] == "internals":     # the library's own: reached through ``internals``
        return public_name(target) or f"{module}.{target.__qualname__}"
    if getattr(builtins, name or "", None) is target:
        return name
    # Another function (the reader's, ``math.sqrt``): a global of the generated code named after
    # its qualified name (``math_sqrt``) and apart from the values, as fx names it.
    name = re.sub("[^0-9a-zA-Z_]+", "_", f"{module}.{name}" if module else name)
    global_name, i, taken = name, 0, {n.name for n in graph.nodes}
    while scope.get(global_name, target) is not target or global_name in taken:
        i += 1
        global_name = f"{name}_{i}"
    scope[global_name] = target
    return global_name


def _call_args(node):
    return [_source(a) for a in node.args] + [f"{k} = {_source(v)}" for k, v in node.kwargs.items()]


def _wrapped(head, args, width, close=")"):
    """``head`` + args + ``close``, on one line if it fits, else with the args wrapped under the head."""
    line = head + ", ".join(args) + close
    if len(line) <= width:
        return [line]
    indent = " " * 8
    lines = [head]
    if len(head) > width and " = " in head:     # a long name and callee: the callee on a line of its own
        target, callee = head.split(" = ", 1)
        lines = [target + " = \\", indent + callee.lstrip()]
    body = textwrap.wrap(", ".join(args) + close, width - len(indent), break_long_words=False,
                         break_on_hyphens=False)
    return lines + [indent + b for b in body]


def _source(value):
    """``value`` as Python source: nodes by name, internals' objects by their public names."""
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        return "(" + ", ".join(_source(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_source(v) for v in value) + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)          # inf, -inf, nan: names the module's scope defines, as fx's does
    module = type(value).__module__ or ""
    if module.startswith("internals"):
        return _internals_source(value)
    return repr(value)


def _internals_source(value):
    """dtypes print as ``internals.float32``, memory formats as ``internals.preserve_format`` (their
    repr says ``torch.``, as torch's do); a device as ``device(type='cpu')``."""
    text = repr(value)
    if text.startswith("internals."):
        return text
    if type(value).__name__ == "memory_format":
        return f"internals.{value.name}"
    if type(value).__name__ == "device":
        return repr(value)          # device(type='cpu'): a name the module's scope defines, as fx's does
    raise NotImplementedError(f"fx cannot write {type(value).__name__} {text} as source")
