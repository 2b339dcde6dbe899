"""Functionalization: writes rewritten out of place, through views too (torch's
``FunctionalTensorWrapper.cpp``, ``FunctionalStorageImpl.cpp`` and ``ViewInverses``).

A graph with ``x.fill_(1)`` in it is not a list of formulas: a node's value depends on when it
is read. After this pass every node is computed once from its inputs and never changed, so a
backend may reorder, fuse or drop nodes freely.

torch functionalizes while tracing; this pass replays a traced graph in order and keeps torch's
bookkeeping, so the nodes it writes are the ones torch's tracer writes:

- every tensor is a *base* (it owns its memory) or a *view*: its base and the chain of view ops
  (``select``, ``slice``, ``view``...) that reach it from the base;
- each base has a current value (a node) and a generation, bumped by every write into it or
  into any of its views;
- ``op_(t)`` becomes its functional twin ``op(t)``. If ``t`` is a view, the new value goes back
  into the base at once: the intermediate views are replayed from the base, then each view's
  inverse (``select_scatter``, ``slice_scatter``, ``view`` back to the old shape...) is applied
  from the innermost out; then ``t`` itself is replayed from the new base;
- a view op reads its input as it is, stale or not (torch does not sync there); any other op
  first *syncs* each tensor it reads: a view older than its base's last write is replayed from
  the base -- and a new view counts as older than any write (its generation starts at 0);
- at the end the outputs are synced, and each input that was written gets ``copy_(input,
  new value)``, so the caller sees the write, as under eager execution.
"""
import operator

from ..._ops import ops
from ..._subclasses.fake_tensor import FakeTensorMode
from ..._tensor import Tensor
from ...utils._pytree import tree_leaves, tree_map
from ..graph import Node, _base_name

__all__ = ["functionalize"]

aten = ops.aten


# The functional twin of an in-place op where its name is not just the name without ``_``.
_TWINS = {"aten::fill_.Scalar": aten.fill.Scalar, "aten::fill_.Tensor": aten.fill.Tensor,
          "aten::zero_": aten.zero.default, "aten::copy_": aten.copy.default}


def _functional_twin(target):
    name = target.name()
    if name in _TWINS:
        return _TWINS[name]
    base, _, overload = name.split("::")[1].partition(".")
    return getattr(getattr(aten, base.rstrip("_")), overload or "default")


def _schema(target):
    return getattr(target, "_schema", None)


def _writes(target):
    """Which arguments the op writes: ``Tensor(a!)``."""
    schema = _schema(target)
    if schema is None:
        return []
    return [a for a in schema.arguments.flat_all if a.annotation is not None and a.annotation.is_write]


def _writes_first_argument(target):
    schema = _schema(target)
    args = schema.arguments.flat_positional if schema is not None else ()
    return bool(args) and args[0].annotation is not None and args[0].annotation.is_write


def _is_view(target):
    """A view returns an alias of its input: ``-> Tensor(a)``."""
    schema = _schema(target)
    return schema is not None and any(r.annotation is not None and not r.annotation.is_write
                                      for r in schema.returns)


_PREVIOUS = object()       # in an inverse's steps: the result of the step before


def _inverse(step, base, mutated):
    """The steps (target, args, kwargs) that put ``mutated``, a new value of the view ``step``
    of ``base``, back into ``base`` (``FunctionalInverses.cpp`` with views reapplied); each
    step's ``_PREVIOUS`` argument is the previous step's result. None where no inverse is
    written here."""
    target, args, kwargs, index = step
    name, shape = target.name(), list(base.meta["val"].shape)
    scatters = {"aten::select.int": aten.select_scatter.default, "aten::slice.Tensor": aten.slice_scatter.default,
                "aten::diagonal": aten.diagonal_scatter.default, "aten::as_strided": aten.as_strided_scatter.default}
    if name in scatters:
        return [(scatters[name], (base, mutated, *args), kwargs)]
    if index is not None:                       # one output of split or unbind
        return _output_inverse(name, args, kwargs, index, base, mutated, shape)
    if name in ("aten::view", "aten::_reshape_alias", "aten::alias"):
        return [(aten.view.default, (mutated, shape), {})]
    if name == "aten::view_as_real":     # ``view_as_real_inverse``: the pairs read back as complex numbers
        return [(aten.view_as_complex.default, (mutated,), {})]
    if name == "aten::view_as_complex":
        return [(aten.view_as_real.default, (mutated,), {})]
    if name in ("aten::t", "aten::transpose.int"):
        return [(target, (mutated, *args), kwargs)]
    if name == "aten::permute":
        dims = [d % len(shape) for d in args[0]]
        return [(target, (mutated, [dims.index(i) for i in range(len(dims))]), {})]
    if name == "aten::unsqueeze":
        return [(aten.squeeze.dim, (mutated, args[0]), {})]
    if name == "aten::squeeze.dim" and len(shape) > len(mutated.meta["val"].shape):
        return [(aten.unsqueeze.default, (mutated, args[0] % len(shape)), {})]
    if name == "aten::squeeze":         # ``unsqueeze_to``: each dim of size 1 put back, in order
        ones = [i for i, n in enumerate(shape) if n == 1]
        return [(aten.unsqueeze.default, (mutated if i == ones[0] else _PREVIOUS, i), {}) for i in ones] or None
    if name == "aten::unfold":
        _, size, step_ = args
        if size > step_:                # ``unfold_inverse``'s check: eager writes overlapping windows one after another
            raise NotImplementedError("functionalize: a write through unfold windows that overlap (size > step): "
                                      "its result depends on the order of the writes, and torch refuses it too")
        return [(aten.unfold_backward.default, (mutated, shape, *args), {})]
    if name == "aten::expand":
        return _expand_inverse(base, mutated, shape)
    return None


def _output_inverse(name, args, kwargs, index, base, mutated, shape):
    """``split_Tensor_inverse``, ``split_with_sizes_inverse`` (a ``slice_scatter`` of the piece's
    rows) and ``unbind_int_inverse`` (a ``select_scatter``)."""
    dim = kwargs.get("dim", args[1] if len(args) > 1 else 0) % len(shape)
    if name == "aten::unbind.int":
        dim = kwargs.get("dim", args[0] if args else 0) % len(shape)
        return [(aten.select_scatter.default, (base, mutated, dim, index), {})]
    if name == "aten::split.Tensor":
        start = args[0] * index
        end = min(start + args[0], shape[dim])
    elif name == "aten::split_with_sizes":
        start = sum(args[0][:index])
        end = start + args[0][index]
    else:
        return None
    return [(aten.slice_scatter.default, (base, mutated, dim, start, end), {})]


def _expand_inverse(base, mutated, shape):
    """``expand_inverse``: ``base + sum_to(mutated - base, base's sizes)``. A write through an
    expanded view lands on every copy of an element; torch keeps the sum of their changes."""
    sizes = list(mutated.meta["val"].shape)
    leading = len(sizes) - len(shape)
    dims = list(range(leading)) + [i for i in range(leading, len(sizes))
                                   if shape[i - leading] == 1 and sizes[i] != 1]
    steps = [(aten.sub.Tensor, (mutated, base), {})]
    if dims:
        steps.append((aten.sum.dim_IntList, (_PREVIOUS, dims, True), {}))
    if leading:
        steps.append((aten.view.default, (_PREVIOUS, shape), {}))
    return steps + [(aten.add.Tensor, (base, _PREVIOUS), {})]


class _Base:
    """One memory: its current value and the count of writes into it."""

    def __init__(self, value, placeholder=None, constant=False):
        self.value, self.generation, self.placeholder = value, 0, placeholder
        self.constant = constant    # a tensor the graph holds (get_attr): a write to it has no output


class _Alias:
    """A tensor of the program: the base it lives in, the view steps from that base, and the
    node holding its value as of ``generation``."""

    def __init__(self, base, chain, value, generation):
        self.base, self.chain, self.value, self.generation = base, chain, value, generation


class _Functionalizer:
    def __init__(self, gm):
        self.gm, self.graph = gm, gm.graph
        self.aliases = {}           # original node -> _Alias
        self.here = None            # new nodes go before this one
        self.fake_mode = FakeTensorMode()

    def emit(self, target, args, kwargs=None):
        """A new node before ``self.here``, its fake value computed from its inputs' fakes."""
        kwargs = kwargs or {}
        node = self.graph.call_function(target, args, kwargs)
        self.graph.nodes.remove(node)
        self.graph.nodes.insert(self.graph.nodes.index(self.here), node)
        fakes = tree_map(lambda a: a.meta["val"] if isinstance(a, Node) else a, (args, kwargs))
        with self.fake_mode:
            node.meta["val"] = target(*fakes[0], **fakes[1])
        if "partitioner_tag" in self.here.meta:
            node.meta["partitioner_tag"] = self.here.meta["partitioner_tag"]
        return node

    def replay(self, value, chain):
        """The view chain replayed from ``value``; the node of each step's input, then the last."""
        values = [value]
        for target, args, kwargs, index in chain:
            value = self.emit(target, (value, *args), kwargs)
            if not isinstance(value.meta["val"], Tensor):
                # split, unbind: torch's tracer reads every output of the list, then takes one
                outputs = [self.emit(operator.getitem, (value, i)) for i in range(len(value.meta["val"]))]
                value = value if index is None else outputs[index]
            values.append(value)
        return values

    def sync(self, node):
        """The node holding ``node``'s current value: replayed from its base if a write made it stale."""
        alias = self.aliases.get(node)
        if alias is None:
            return node
        if alias.generation != alias.base.generation:
            alias.value, alias.generation = self.replay(alias.base.value, alias.chain)[-1], alias.base.generation
        return alias.value

    def run(self):
        self.restart_names()
        for node in list(self.graph.nodes):
            self.here = node
            if node.op == "placeholder" and isinstance(node.meta.get("val"), Tensor):
                self.aliases[node] = _Alias(_Base(node, node), [], node, 0)
            elif node.op == "get_attr":
                self.aliases[node] = _Alias(_Base(node, constant=True), [], node, 0)
            elif node.op == "call_function":
                self.call(node)
            elif node.op == "output":
                self.finish(node)
        self.gm.recompile()
        return self.gm

    def restart_names(self):
        """The operators' nodes named again as this pass meets or makes them, which is the order
        torch's tracer, functionalizing as it goes, creates them in: the functional twin of the
        forward's ``mul_`` is ``mul`` and the backward's product ``mul_1``, as in torch's graphs.
        The inputs, constants and output keep their names."""
        self.graph._names, self.graph._base_count = set(), {}
        for node in self.graph.nodes:
            if node.op != "call_function":
                node.name = self.graph._unique_name(node.name)

    def rename(self, node):
        node.name = self.graph._unique_name(_base_name(node.target))

    def call(self, node):
        target = node.target
        if target is operator.getitem:
            return self.getitem(node)
        if _is_view(target):
            return self.view(node)
        first = node.args[0] if node.args else None
        # in argument order, each once, as torch's wrappers sync their tensors when unwrapped
        for arg in dict.fromkeys(a for a in node.all_input_nodes if a in self.aliases):
            node.replace_input_with(arg, self.sync(arg))
        if _writes_first_argument(target) and len(_writes(target)) == 1:
            return self.write(node, first)
        self.rename(node)
        if _writes(target):
            raise NotImplementedError(f"functionalize: {node.name} ({target.name()}) writes into an argument "
                                      "other than its first (out=): not rewritten here")
        if isinstance(node.meta.get("val"), Tensor):
            self.aliases[node] = _Alias(_Base(node), [], node, 0)

    def view(self, node):
        """A view of whatever its input holds now, stale or not (no sync), one step longer. A
        multi-output view (split, unbind) is a step without an output yet: its getitem picks one."""
        self.rename(node)
        source = self.aliases.get(node.args[0])
        if source is None:
            return
        node.replace_input_with(node.args[0], source.value)
        step = (node.target, tuple(node.args[1:]), dict(node.kwargs), None)
        # generation 0, as a new FunctionalTensorWrapper view's: once its memory has been written,
        # a view is replayed from the base at its first sync however fresh its input was
        self.aliases[node] = _Alias(source.base, source.chain + [step], node, 0)

    def getitem(self, node):
        self.rename(node)
        parent = self.aliases.get(node.args[0])
        if parent is not None and _is_view(node.args[0].target):
            *chain, (target, args, kwargs, _) = parent.chain
            step = (target, args, kwargs, node.args[1])
            self.aliases[node] = _Alias(parent.base, [*chain, step], node, 0)
        elif isinstance(node.meta.get("val"), Tensor):
            self.aliases[node] = _Alias(_Base(node), [], node, 0)

    def write(self, node, written):
        """``op_(t, ...)`` -> ``op(t, ...)``, the new value put back into ``t``'s base; ``written``
        is ``t``'s node as the program made it (``node`` already reads its synced value)."""
        alias = self.aliases[written]
        new = self.emit(_functional_twin(node.target), node.args, node.kwargs)
        if "user_call" in node.meta:        # the call of the user's code that wrote (``explain``)
            new.meta["user_call"] = node.meta["user_call"]
        base = alias.base
        if alias.chain:
            base.value = self.scatter(base.value, alias.chain, new)
            base.generation += 1
            alias.value, alias.generation = self.replay(base.value, alias.chain)[-1], base.generation
        else:
            base.value, base.generation = new, base.generation + 1
            alias.value, alias.generation = new, base.generation
        node.replace_all_uses_with(written)    # the op returns ``t``: its readers read ``t``, synced
        self.graph.erase_node(node)

    def scatter(self, base_value, chain, new):
        """``apply_update``: the intermediate views replayed from the base, then the inverses."""
        values = self.replay(base_value, chain[:-1])
        for step, base in zip(reversed(chain), reversed(values), strict=True):
            inverse = _inverse(step, base, new)
            if inverse is None:
                raise NotImplementedError(f"functionalize: no inverse here for a write through "
                                          f"{step[0].name()}")
            for target, args, kwargs in inverse:
                new = self.emit(target, tuple(new if a is _PREVIOUS else a for a in args), kwargs)
        return new

    def finish(self, output):
        """Outputs synced in their order (each once), then each written input copied back
        (``_propagate_functional_input_mutation``)."""
        for arg in dict.fromkeys(a for a in tree_leaves(output.args) if isinstance(a, Node) and a in self.aliases):
            output.replace_input_with(arg, self.sync(arg))
        for original, alias in list(self.aliases.items()):
            base = alias.base
            if base.constant and base.generation:
                # a closed-over tensor written in place: no input to copy the value back into,
                # so the graph would lose the write (torch lifts such a tensor to an input)
                raise NotImplementedError(f"functionalize: {original.name} is a tensor the graph holds as a "
                                          "constant and a write changes it: not rewritten here")
            if original is base.placeholder and alias.chain == [] and base.generation:
                self.emit(aten.copy_.default, (original, base.value))


def functionalize(gm):
    """Rewrite ``gm``'s writes out of place, in place in ``gm``; regenerate its code. Views made
    stale by a write are replayed as torch's tracer replays them, dead or not: call
    ``gm.graph.eliminate_dead_code()`` to drop the unused ones."""
    return _Functionalizer(gm).run()
