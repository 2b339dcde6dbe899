"""Graph and Node: a function as a list of operator calls (``torch/fx/graph.py``, ``torch/fx/node.py``).

A Graph is a straight line of Nodes. Each node is one of

- ``placeholder``: an input of the function,
- ``get_attr``: a tensor the function closed over (a parameter, a constant), kept on the module,
- ``call_function``: ``target(*args, **kwargs)``, where args may name earlier nodes,
- ``call_module`` / ``call_method``: ``self.<target>(*args)`` / ``args[0].<target>(*args[1:])``,
  as symbolic tracing records a layer's call and a Tensor method,
- ``output``: what the function returns.

There is no control flow: tracing ran the Python once, so every ``if`` was already decided.
"""
import builtins
import contextlib
import inspect
import keyword
import operator
import re
import sys

from ..c10.sym import is_symbolic
from ..utils._pytree import tree_leaves, tree_map

__all__ = ["Graph", "Node", "describe_value", "short_dtype"]

_BUILTINS = set(dir(builtins)) | set(keyword.kwlist)
_NAME = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")     # a name and its number: ``add_1``

_SHORT_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
                 "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8",
                 "complex64": "c64", "complex128": "c128"}


def short_dtype(dtype):
    """fx's short spelling of a dtype: ``f32`` for float32."""
    return _SHORT_DTYPES[str(dtype).rsplit(".", 1)[-1]]


def describe_value(value):
    """``f32[5, 4]`` for a tensor, ``(f32[5], f32[])`` for a tuple of them, ``Sym(zuf0)`` for a
    symbol, '' otherwise."""
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(describe_value(v) for v in value) + ")"
    if is_symbolic(value):
        return f"Sym({value})"
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"{short_dtype(value.dtype)}[{', '.join(map(str, value.shape))}]"
    return ""


class Node:
    """One instruction. ``meta['val']`` holds the fake tensor tracing computed for it."""

    def __init__(self, graph, name, op, target, args=(), kwargs=None):
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.meta = {}
        self.users = {}         # nodes that read this one (a dict used as an ordered set)
        self._args, self._kwargs = (), {}
        self._update_args_kwargs(tuple(args), dict(kwargs or {}))

    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, value):
        """Setting the arguments moves this node between its old and new inputs' users, as fx's
        ``Node.args`` setter does: code generation and dead-code elimination read the users."""
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self._update_args_kwargs(self._args, dict(value))

    def _update_args_kwargs(self, args, kwargs):
        """New arguments; an input still read keeps this node where it was among its users."""
        before = self.all_input_nodes
        self._args, self._kwargs = args, kwargs
        after = self.all_input_nodes
        for used in before:
            if used not in after:
                used.users.pop(self, None)
        for used in after:
            used.users.setdefault(self, None)

    @property
    def all_input_nodes(self):
        """The nodes this one reads, each once, in order (a property, as fx's)."""
        return list(dict.fromkeys(a for a in tree_leaves((self._args, self._kwargs)) if isinstance(a, Node)))

    def replace_input_with(self, old, new):
        """Read ``new`` wherever this node read ``old``."""
        def swap(a):
            return new if a is old else a
        self._update_args_kwargs(tree_map(swap, self._args), tree_map(swap, self._kwargs))

    def is_impure(self):
        """A node kept for what it does, not for what it returns (fx's ``Node.is_impure``): an
        input or the output; an operator that writes into an argument (``Tensor(a!)`` in its
        schema), an assertion or a ``setitem``; a module marked ``_is_impure``. A Tensor method
        is pure here, in-place ones too, as fx judges them."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            owner = getattr(self.graph, "owning_module", None)
            return owner is not None and getattr(owner.get_submodule(self.target), "_is_impure", False)
        return self.op == "call_function" and (_writes(self.target) or _side_effectful(self.target))

    def replace_all_uses_with(self, new):
        for user in list(self.users):
            user.replace_input_with(self, new)

    def prepend(self, x):
        """Move node ``x`` to just before this one (fx's ``Node.prepend``)."""
        nodes = self.graph.nodes
        nodes.remove(x)
        nodes.insert(nodes.index(self), x)

    def append(self, x):
        """Move node ``x`` to just after this one (fx's ``Node.append``)."""
        nodes = self.graph.nodes
        nodes.remove(x)
        nodes.insert(nodes.index(self) + 1, x)

    def format_node(self):
        """The node as fx's ``Graph.__str__`` lists it: ``%name : [users=n] = op[target=...](args)``."""
        if self.op == "output":
            return f"return {self.args[0]!r}"
        head = f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target_name(self.target)}]"
        if self.op == "placeholder" and self.args:
            return f"{head}(default={self.args[0]!r})"
        if self.op in ("placeholder", "get_attr"):
            return head
        return f"{head}(args = {_format(self.args, str)}, kwargs = {_format(self.kwargs, str)})"

    def __repr__(self):
        return self.name

    @property
    def stack_trace(self):
        """Where in the traced program the node came from, when tracing recorded it (else None)."""
        return self.meta.get("stack_trace")


# Where the library's public functions live, as torch's: ``internals.relu``,
# ``internals.nn.functional.relu``, ...
PUBLIC_NAMESPACES = ("internals", "internals.nn.functional", "internals.special", "internals.linalg",
                     "internals.fft")


def public_name(fn):
    """``internals.nn.functional.relu``: where a library function is reached from, or None."""
    name = getattr(fn, "__name__", None)
    for namespace in PUBLIC_NAMESPACES:
        if name and getattr(sys.modules.get(namespace), name, None) is fn:
            return f"{namespace}.{name}"
    return None


def target_name(target):
    """``aten.add.Tensor`` for an operator, ``operator.getitem`` for a Python operator,
    ``internals.relu`` for a library function, ``module.name`` for another (fx's qualified name)."""
    if isinstance(target, str) or hasattr(target, "_schema"):
        return str(target)
    if getattr(target, "__module__", None) == "_operator":
        return f"operator.{target.__name__}"
    if getattr(builtins, getattr(target, "__name__", ""), None) is target:
        return f"builtins.{target.__name__}"
    return public_name(target) or f"{target.__module__}.{target.__qualname__}"


def _format(value, text=repr):
    """An argument as the graph prints it: nodes as ``%name``, strings bare in ``Graph.__str__``
    (``text=str``, as fx's ``_format_arg``), quoted in ``print_tabular``."""
    if isinstance(value, Node):
        return f"%{value.name}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_format(v, text) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_format(v, text) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_format(v, text)}" for k, v in value.items()) + "}"
    return text(value) if isinstance(value, str) else repr(value)


class Graph:
    """The nodes in execution order, with unique names (``add``, ``add_1``, ...) as fx gives them."""

    def __init__(self):
        self.nodes = []
        self._names, self._base_count = set(), {}
        self._insert_before = None      # where new nodes go: before this node, or at the end

    def _unique_name(self, candidate):
        """``add``, then ``add_1``...; a Python builtin's name is never used bare (``sum_1``), so the
        generated code can still call ``sum``; what is no identifier becomes one (``*args`` ->
        ``_args``, a Sequential's child ``0`` -> ``_0``), as fx's ``_Namespace.create_name``."""
        match = _NAME.match(candidate)
        if match is None:
            candidate = re.sub("[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _NAME.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._names:
            num = self._base_count.get(base, 0)
            if candidate in _BUILTINS:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._names:
            num += 1
            candidate = f"{base}_{num}"
        self._names.add(candidate)
        self._base_count[base] = num
        return candidate

    def create_node(self, op, target, args=(), kwargs=None, name=None):
        node = Node(self, self._unique_name(name or _base_name(target)), op, target, args, kwargs)
        if self._insert_before is None:
            self.nodes.append(node)
        else:
            self.nodes.insert(self.nodes.index(self._insert_before), node)
        return node

    @contextlib.contextmanager
    def inserting_before(self, node):
        """New nodes go just before ``node`` while the block runs (fx's ``Graph.inserting_before``)."""
        prev, self._insert_before = self._insert_before, node
        try:
            yield
        finally:
            self._insert_before = prev

    @contextlib.contextmanager
    def inserting_after(self, node):
        """New nodes go just after ``node``, each after the one made before it."""
        index = self.nodes.index(node) + 1
        prev = self._insert_before
        self._insert_before = self.nodes[index] if index < len(self.nodes) else None
        try:
            yield
        finally:
            self._insert_before = prev

    def node_copy(self, node, arg_transform=lambda n: n):
        """A copy of ``node`` (of another graph) made here, its node arguments passed through
        ``arg_transform``; it keeps the name where that is free (fx's ``Graph.node_copy``)."""
        def transform(a):
            return arg_transform(a) if isinstance(a, Node) else a
        copy = self.create_node(node.op, node.target, tree_map(transform, node.args), tree_map(transform, node.kwargs),
                                node.name)
        copy.meta = dict(node.meta)
        return copy

    def graph_copy(self, g, val_map):
        """Copy the nodes of graph ``g`` here, but those ``val_map`` already maps (to nodes of this
        graph); return what ``g``'s output returns, as nodes of this graph (fx's ``Graph.graph_copy``)."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                return tree_map(lambda a: val_map[a] if isinstance(a, Node) else a, node.args[0])
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def placeholder(self, name, default_value=inspect.Parameter.empty):
        """An input; a default value is kept as the node's one argument, as fx keeps it."""
        args = () if default_value is inspect.Parameter.empty else (default_value,)
        return self.create_node("placeholder", name, args, name=name)

    def get_attr(self, name):
        return self.create_node("get_attr", name)

    def call_module(self, name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", name, args or (), kwargs)

    def call_method(self, name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", name, args or (), kwargs)

    def call_function(self, target, args=None, kwargs=None, type_expr=None, name=None):
        """A call of ``target``; ``name`` is where its unique name starts from (fx's)."""
        return self.create_node("call_function", target, args or (), kwargs, name)

    def output(self, value):
        return self.create_node("output", "output", (value,), name="output")

    def erase_node(self, node):
        if node.users:
            raise RuntimeError(f"Tried to erase Node {node.name} but it still had {len(node.users)} users in the graph")
        for used in node.all_input_nodes:
            used.users.pop(node, None)
        self.nodes.remove(node)

    def eliminate_dead_code(self):
        """Drop the nodes nobody reads, except those kept for their effect (``is_impure``): after
        functionalize the only writes left are the ``copy_`` nodes that put new values into
        written inputs. Whether anything was dropped (fx's ``Graph.eliminate_dead_code``)."""
        changed = False
        for node in reversed(list(self.nodes)):
            if not node.users and not node.is_impure():
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check what fx's ``Graph.lint`` checks: every node belongs to this graph, reads only nodes
        defined before it, has a unique name, and the users lists agree with the arguments."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this Graph!")
            if node.op not in ("placeholder", "get_attr", "call_function", "call_module", "call_method", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for used in node.all_input_nodes:
                if used not in seen:
                    raise RuntimeError(f"Argument '{used}' of Node '{node}' was used before it has been defined! "
                                       "Please check that Nodes in the graph are topologically ordered")
                if node not in used.users:
                    raise RuntimeError(f"Node {node} reads {used} but is not among its users")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)

    def call_targets(self):
        """The operators the graph calls, in order, as strings: ``['aten.t.default', ...]``."""
        return [target_name(n.target) for n in self.nodes if n.op == "call_function"]

    def __str__(self):
        return "\n".join(["graph():"] + ["    " + n.format_node() for n in self.nodes])

    def print_tabular(self, width=87):
        """One row per node: opcode, name, target, args (``Graph.print_tabular``), cut to ``width``."""
        rows = [("opcode", "name", "target", "args")]
        rows += [(n.op, n.name, target_name(n.target), _format(n.args)) for n in self.nodes]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        lines = []
        for i, row in enumerate(rows):
            line = "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3]
            lines.append(line if len(line) <= width else line[:width - 3] + "...")
            if i == 0:
                lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 4)
        print("\n".join(lines))


def _base_name(target):
    """A node's name before numbering: the operator's name without namespace or overload."""
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, str):         # a module's path or a method's name: ``layers.0`` -> ``layers_0``
        return target.replace(".", "_")
    packet = getattr(target, "overloadpacket", None)
    return packet.__name__ if packet is not None else getattr(target, "__name__", str(target))


def _side_effectful(target):
    """Calls fx never drops though nobody reads them (its ``_side_effectful_functions``): the
    assertion a ``concrete_args`` value leaves, and ``operator.setitem``."""
    from ._symbolic_trace import _assert, _assert_is_none  # a real cycle: _symbolic_trace imports graph
    return target in (operator.setitem, _assert, _assert_is_none)


def _writes(target):
    """Whether the operator writes into an argument (``Tensor(a!)`` in its schema)."""
    schema = getattr(target, "_schema", None)
    return schema is not None and any(a.annotation is not None and a.annotation.is_write
                                      for a in schema.arguments.flat_all)
