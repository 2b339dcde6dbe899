"""A small torch.fx: graphs of operator calls (``torch/fx``).

``symbolic_trace`` records a module's ``forward`` as the calls its source spells (layers,
methods, functions) into a Graph; ``make_fx`` (in ``experimental.proxy_tensor``) records the
aten operators a function reaches. A GraphModule turns either graph back into runnable Python.
An ``Interpreter`` runs a graph node by node instead, a ``Transformer`` rewrites one as it runs
it, and ``replace_pattern`` swaps every copy of one small program for another.
"""
from . import subgraph_rewriter
from ._symbolic_trace import Tracer, symbolic_trace, wrap
from .graph import Graph, Node
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .proxy import Proxy, TraceError
from .subgraph_rewriter import replace_pattern

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "TraceError", "Tracer", "Transformer",
           "replace_pattern", "subgraph_rewriter", "symbolic_trace", "wrap"]
