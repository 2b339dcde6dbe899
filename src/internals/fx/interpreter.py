"""Interpreter and Transformer: a graph run node by node (``torch/fx/interpreter.py``).

A GraphModule runs its graph as generated Python. An Interpreter runs the same graph one node at
a time, calling a method named after each node's opcode (``placeholder``, ``get_attr``,
``call_function``, ``call_method``, ``call_module``, ``output``): a subclass overrides one of them
to watch or change what the program does (shape propagation, a profiler, an op swapped for
another). A Transformer is an Interpreter whose values are Proxies: running it records a new
graph, so the overridden methods rewrite the program, and ``transform`` returns it as a new
GraphModule.
"""
import inspect

from ..utils._pytree import tree_map
from ._symbolic_trace import Tracer
from .graph import Graph, Node
from .graph_module import GraphModule, _last_uses
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs ``module.graph`` (or ``graph``) node by node. With ``garbage_collect_values`` a value is
    dropped from ``env`` after its last reader ran, as the generated code does."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            self.user_to_last_uses = _last_uses(self.graph)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """The graph's output for ``args``. ``initial_env`` maps nodes to values already known: those
        nodes are not run (a partial evaluation)."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    _add_node_to_message(e, node)
                    if isinstance(e, KeyError):         # a KeyError would print its message quoted
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for used in self.user_to_last_uses.get(node, ()):
                    del self.env[used]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """``run`` with the arguments in a list the call empties, so the inputs can be freed early."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n):
        """The value of one node: its arguments read from ``env``, then the method of its opcode."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ---------------------------------------------------------------- one method per opcode
    def placeholder(self, target, args, kwargs):
        """The next positional input; a ``*args`` placeholder takes all that are left."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as stop:
            if args:
                return args[0]          # the parameter's default
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not "
                               "passed in!") from stop

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # ---------------------------------------------------------------- reading values
    def fetch_attr(self, target):
        """The module's attribute at dotted path ``target``."""
        atoms = target.split(".")
        value = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(value, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            value = getattr(value, atom)
        return value

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        """``args`` with every node replaced by its value in ``env``."""
        def load(a):
            if not isinstance(a, Node):
                return a
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run Graph.lint() to diagnose "
                                   "such issues")
            return self.env[a]
        return tree_map(load, args)




def _add_node_to_message(error, node):
    """Name the node that failed in the error's message, as fx's Interpreter does."""
    message = f"While executing {node.format_node()}"
    message = f"{error.args[0]}\n\n{message}" if error.args else message
    message += f"\nOriginal traceback:\n{node.stack_trace}"
    message += ("\nUse tlparse to see full graph. "
                "(https://github.com/pytorch/tlparse?tab=readme-ov-file#tlparse-parse-structured-pt2-logs)")
    error.args = (message, *error.args[1:])


class _TransformerTracer(Tracer):
    """Records into the Transformer's new graph; every module call stays one ``call_module`` node."""

    def __init__(self, graph, root):
        self.graph, self.root = graph, root
        self._constants, self._attr_proxies = {}, {}

    def is_leaf_module(self, m, module_qualified_name):
        return True


class Transformer(Interpreter):
    """An Interpreter that records a new graph (``transform`` returns it as a GraphModule): each
    method it runs adds the node it would have run, so an overridden method rewrites the program."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target, args, kwargs):
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        """The recorded program as a new GraphModule over the same module."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            out = self.new_graph.output(tree_map(lambda a: a.node if isinstance(a, Proxy) else a, result))
            out.meta.update(self.graph.nodes[-1].meta)
        for name, value in self.tracer._constants.items():     # tensors a rewrite put in the program
            setattr(self.module, name, value)
        return GraphModule(self.module, self.new_graph)
