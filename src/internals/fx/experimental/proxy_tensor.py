"""make_fx: trace a function into a Graph of aten operators (``torch/fx/experimental/proxy_tensor.py``).

A TorchDispatchMode sees every operator call below autograd, so a mode that writes each call
down is a tracer. Two modes are stacked:

- ``ProxyTorchDispatchMode`` (on top) records ``func(args)`` as a graph node and remembers which
  node produced each tensor, so the next op can name its inputs;
- ``FakeTensorMode`` (below) answers the call with fake tensors, so the inputs' values are
  never used (a kernel that must read values to run at all runs on zero-filled stand-ins).

That is torch's ``make_fx(f, tracing_mode="fake")``. torch's default, ``tracing_mode="real"``,
runs every operator for real on the real inputs and records it on the way; the graphs are the
same for code that does not branch on values. This one always traces on fakes.

The function runs once, as Python, on fake inputs: its ``if``s and loops are decided on the
way and only the operators remain. Autograd runs above both modes, so a ``backward()`` inside
the function is traced too -- its ops are just more calls.
"""
import inspect
import operator

from ..._ops import ops
from ..._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from ..._tensor import Tensor
from ...nn.parameter import Parameter
from ...utils._python_dispatch import TorchDispatchMode
from ...utils._pytree import tree_map
from ..graph import Graph
from ..graph_module import GraphModule

__all__ = ["ProxyTorchDispatchMode", "make_fx"]

# ``lift_fresh`` may hand back its argument itself: fine once, in eager code, where the tensor
# is new; a graph runs again and again, so its node must make a new tensor each time. torch's
# ``proxy_call`` records ``lift_fresh_copy`` in its place.
_LIFT_FRESH_COPY = ops.aten.lift_fresh_copy.default


class ProxyTorchDispatchMode(TorchDispatchMode):
    """Writes each operator call into ``graph``; ops in ``decomposition_table`` are replaced by
    the calls their decomposition makes (traced in turn) instead of being recorded."""

    def __init__(self, graph, fake_mode, decomposition_table=None):
        self.graph, self.fake_mode = graph, fake_mode
        self.decompositions = {op.name(): fn for op, fn in (decomposition_table or {}).items()}
        self.constants = {}     # get_attr name -> the real tensor it names
        self._nodes = {}        # id(TensorImpl) -> (impl, node); the impl is kept so ids stay unique

    def track(self, t, node):
        """Remember that ``node`` made ``t``. Keyed by the TensorImpl, not the Tensor object: autograd
        hands a saved tensor back as a new object over the same impl."""
        self._nodes[id(t._impl)] = (t._impl, node)

    def node_of(self, value):
        """The node that made ``value`` (a tensor), or ``value`` itself (a number, a dtype...)."""
        if not isinstance(value, Tensor):
            return value
        hit = self._nodes.get(id(value._impl))
        if hit is None:         # a tensor the function closed over: a constant of the module
            if isinstance(value, FakeTensor):
                raise RuntimeError(f"make_fx met a fake tensor it did not make: {value!r}")
            node = self._constant(value)
            self.track(value, node)
            self.track(self.fake_mode.from_tensor(value), node)
            return node
        return hit[1]

    def _constant(self, t):
        prefix = "_param_constant" if isinstance(t, Parameter) else "_tensor_constant"
        name = f"{prefix}{sum(k.startswith(prefix) for k in self.constants)}"
        self.constants[name] = t
        node = self.graph.get_attr(name)
        node.meta["val"] = self.fake_mode.from_tensor(t)
        return node

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        decomposition = self.decompositions.get(func.name())
        if decomposition is not None:
            with self:          # the decomposition's own calls come back here, one by one
                return decomposition(*args, **kwargs)
        if func.name() == "aten::lift_fresh":   # a constant made by torch.tensor: copied per run
            func = _LIFT_FRESH_COPY
        node_args, node_kwargs = tree_map(self.node_of, args), tree_map(self.node_of, kwargs)
        try:
            out = func(*args, **kwargs)      # the mode below (fake tensors) computes the metadata
        except Exception as error:
            if not hasattr(error, "fake_call"):  # the innermost call that failed, for the compiler's message
                error.fake_call = f"call_function {func}(*{tuple(args)!r}, **{kwargs!r})"
            raise
        node = self.graph.call_function(func, node_args, node_kwargs)
        node.meta["val"] = out
        if isinstance(out, (tuple, list)):   # one getitem node per output, as fx writes them
            for i, o in enumerate(out):
                item = self.graph.call_function(operator.getitem, (node, i))
                item.meta["val"] = o
                if isinstance(o, Tensor):    # an output the call did not compute is None
                    self.track(o, item)
        else:
            self.track(out, node)
        return out


def make_fx(f, decomposition_table=None, tracing_mode="fake"):
    """``make_fx(f)(*args)`` runs ``f`` on fake twins of ``args`` and returns a GraphModule whose
    graph holds the aten operators ``f`` called, in order. ``tracing_mode`` is accepted for
    torch's signature (whose default is ``"real"``); tracing here is always on fake tensors."""
    if tracing_mode not in ("fake", "real", "symbolic"):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")

    def traced(*args):
        graph, fake_mode = Graph(), FakeTensorMode()
        proxy_mode = ProxyTorchDispatchMode(graph, fake_mode, decomposition_table)
        fake_args = []
        for name, a in zip(_placeholder_names(f, len(args)), args, strict=True):
            if isinstance(a, Tensor):
                fake = fake_mode.from_tensor(a)
                node = graph.placeholder(name)
                node.meta["val"] = fake
                proxy_mode.track(fake, node)
                a = fake
            fake_args.append(a)
        with fake_mode, proxy_mode:
            out = f(*fake_args)
        graph.output(tree_map(proxy_mode.node_of, out))
        return GraphModule(proxy_mode.constants, graph, getattr(f, "__name__", "f").strip("<>"))
    return traced


def _placeholder_names(f, n):
    """``x_1`` for a parameter ``x``, as make_fx names them (``arg0_1`` when no name is known)."""
    try:
        params = [p.name for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [f"{params[i]}_1" if i < len(params) else f"arg{i}_1" for i in range(n)]
