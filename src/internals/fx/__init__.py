"""A small torch.fx: graphs of operator calls (``torch/fx``).

``make_fx`` (in ``experimental.proxy_tensor``) records a function's aten operators into a
Graph; a GraphModule turns the graph back into runnable Python.
"""
from .graph import Graph, Node
from .graph_module import GraphModule

__all__ = ["Graph", "GraphModule", "Node"]
