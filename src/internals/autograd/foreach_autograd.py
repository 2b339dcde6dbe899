"""Autograd of the multi-tensor operators, ``_foreach_*`` (torch generates it into
``VariableType``: ``gen_foreach_derivativeinfo`` in ``torchgen/api/autograd.py`` builds each
foreach operator's formulas from those of its per-element operator).

A functional foreach operator records **one** node for all its outputs, named ``Foreach`` + the
per-element operator's node + the overload (``_foreach_mul.List`` -> ``ForeachMulBackward0List``),
or by torch's own entry where its derivatives.yaml has one (``_foreach_norm.Scalar`` ->
``ForeachNormBackward0``). Its edges are those of every tensor argument in order, all of
``self`` first, then all of ``other``; a single tensor argument (``_foreach_mul.Tensor``'s
``other``) is one edge whose gradient sums those of every element.

Here the node is built from the per-element nodes themselves: with a gradient wanted, the
operator runs its per-element operator on each element through the dispatcher, which records
``MulBackward0`` & co. as for any call; :class:`ForeachBackward` then holds them, becomes the
outputs' ``grad_fn``, and routes output ``i``'s gradient through element ``i``'s node. (A
dispatch mode therefore sees the per-element calls when a gradient is recorded; with none it
sees the foreach operator, as in torch.) An in-place foreach operator records what its loop of
in-place per-element operators records, which is torch's result too: ``AddBackward1`` on each;
but ``maximum_``/``minimum_`` by tensors record ``maximum``'s and ``minimum``'s nodes, and those
torch has no formula for (``_foreach_copy_``, ``maximum_`` by numbers) a node that refuses on
each written tensor. A node's Python type is torch's: its own name for an entry of torch's
derivatives.yaml, ``CppFunction`` for one built from per-element formulas.
"""
from torchgen.model import SchemaKind

from ..aten import dispatcher
from ..aten.native.foreach_ops_kernels import PER_ELEMENT, per_element_calls
from ..aten.native.tensor_factories import wrap_scalar
from ..c10.grad_mode import _state as _grad_mode
from ..c10.local_dispatch_key_set import below_autograd
from .forward_grad import LEVELS as _fw_levels
from .forward_grad import check_no_fw_grad, has_fw_grad
from .graph import Node, collect_next_edges, gradient_edge, set_history
from .variable_type_manual import NotImplementedNode, after_autograd, check_inplace, rebase_history

__all__ = ["ForeachBackward", "register_foreach_autograd_kernels"]

# Nodes named by an entry of torch's derivatives.yaml for the foreach operator itself
# (numbered there as any operator's overloads are).
TORCH_ENTRIES = {
    "_foreach_div.List": "ForeachDivBackward0", "_foreach_pow.List": "ForeachPowBackward0",
    "_foreach_pow.ScalarList": "ForeachPowBackward1", "_foreach_pow.ScalarAndTensor": "ForeachPowBackward2",
    "_foreach_minimum.Scalar": "ForeachMinimumBackward0", "_foreach_minimum.ScalarList": "ForeachMinimumBackward1",
    "_foreach_maximum.Scalar": "ForeachMaximumBackward0", "_foreach_maximum.ScalarList": "ForeachMaximumBackward1",
    "_foreach_norm.Scalar": "ForeachNormBackward0", "_foreach_mm": "ForeachMmBackward0",
}
# The per-element operator whose formula torch differentiates, where it is not the one the
# kernel runs: maximum and minimum (their kernels run clamp_min and clamp_max, whose gradient
# at a tie goes all to ``self``; maximum's is split in two).
REFERENCE = {
    "_foreach_maximum.List": "maximum", "_foreach_minimum.List": "minimum",
    "_foreach_maximum.Scalar": "maximum", "_foreach_minimum.Scalar": "minimum",
    "_foreach_maximum.ScalarList": "maximum", "_foreach_minimum.ScalarList": "minimum",
}
# torch has no formula for these (the packed-scalars overloads, powsum, the functional copy):
# their outputs get a node that refuses, whose edges are the inputs that require grad only.
NOT_DIFFERENTIABLE = {"_foreach_addcmul.Tensor", "_foreach_addcdiv.Tensor", "_foreach_powsum.Scalar",
                      "_foreach_copy"}
# In-place ones torch has no formula for: each written tensor gets a node that refuses (named
# without the ``aten::`` of a functional one's). maximum_ and minimum_ by numbers are among them
# (torch's formulas for those are the functional foreach operators' own entries).
INPLACE_NOT_DIFFERENTIABLE = {"_foreach_addcmul_.Tensor", "_foreach_addcdiv_.Tensor", "_foreach_copy_",
                              "_foreach_maximum_.Scalar", "_foreach_maximum_.ScalarList",
                              "_foreach_minimum_.Scalar", "_foreach_minimum_.ScalarList"}
# In-place ones whose elements torch records with another operator's formula than the kernel's:
# maximum_ and minimum_ by tensors (their kernels run clamp_min_ and clamp_max_).
INPLACE_REFERENCE = {"_foreach_maximum_.List": "maximum", "_foreach_minimum_.List": "minimum"}


class ForeachBackward(Node):
    """One foreach operator's node: element ``i``'s node turns output ``i``'s gradient into
    gradients for that element's inputs, which land on their edges (``slots``)."""
    __slots__ = ("_name", "parts", "slots")

    def __init__(self, name, parts, slots):
        super().__init__()
        self._name, self.parts, self.slots = name, parts, slots

    def name(self):
        return self._name

    def apply(self, grads):
        out = [None] * len(self._next_edges)
        for part, slots, grad in zip(self.parts, self.slots, grads):
            if part is None or grad is None:
                continue
            for slot, g in zip(slots, part.apply([grad])):
                if g is not None and self._next_edges[slot] is not None:
                    out[slot] = g if out[slot] is None else out[slot] + g
        return tuple(out)

    def release_variables(self):
        for part in self.parts:
            if part is not None:
                part.release_variables()


_NODE_TYPES = {}


def _node_type(name):
    """The Python type torch gives the node: one of the node's own name for an entry of its
    derivatives.yaml (``ForeachNormBackward0``), the generic ``CppFunction`` for a node torchgen
    builds from the per-element formulas (``ForeachAddBackward0List``)."""
    type_name = name if name in TORCH_ENTRIES.values() else "CppFunction"
    if type_name not in _NODE_TYPES:
        _NODE_TYPES[type_name] = type(type_name, (ForeachBackward,), {"__slots__": ()})
    return _NODE_TYPES[type_name]


def _tensor_arguments(schema, args):
    """The tensor arguments as edges are laid out: [(is a list, the value)], in schema order."""
    out = []
    for a, v in zip(schema.arguments.flat_positional, args):
        if str(a.type).startswith("Tensor"):
            out.append((str(a.type).endswith("[]"), v))
    return out


def _edges_and_slots(tensor_args, n):
    """The node's inputs (every tensor, lists flattened) and, per element, where each of its
    per-element node's edges lands among them."""
    inputs, columns = [], []
    for is_list, value in tensor_args:
        columns.append([len(inputs) + i for i in range(n)] if is_list else [len(inputs)] * n)
        inputs.extend(value if is_list else [value])
    return inputs, [tuple(column[i] for column in columns) for i in range(n)]


def _per_element(name, call, kwargs):
    """One element's call, with the operator whose gradient torch takes."""
    reference = REFERENCE.get(name)
    if reference is None or call[0]._impl.dtype.is_complex:     # torch's kernel refuses complex first
        return PER_ELEMENT[name](call, kwargs)
    other = call[1]
    return dispatcher.call(reference, call[0], other if hasattr(other, "_impl") else wrap_scalar(other))


def _check_differentiable_dtypes(results):
    """One node stands for every output, so each must be of a dtype autograd differentiates: an
    integer or bool output (``_foreach_add([x, ints], 1)`` with ``x`` requiring grad) is refused,
    as torch's generated foreach kernels refuse it; an operator with no formula is not checked."""
    for t in results:
        dtype = t._impl.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"Autograd not support dtype: {dtype.torch_name}")


def _functional_kernel(op):
    name = str(op.schema.name)

    def kernel(ks, *args, **kwargs):
        tensor_args = _tensor_arguments(op.schema, args)
        inputs = [t for is_list, v in tensor_args for t in (v if is_list else [v])]
        if not (_grad_mode.grad_enabled and any(t._requires_grad for t in inputs)):
            if _fw_levels and has_fw_grad(*inputs):
                return _with_tangents(op, args, kwargs, inputs)
            with below_autograd():
                return op.redispatch(after_autograd(ks), *args, **kwargs)
        if name in NOT_DIFFERENTIABLE:
            if _fw_levels:
                check_no_fw_grad(op.schema.name.name.base, *inputs)
            with below_autograd():
                results = op.redispatch(after_autograd(ks), *args, **kwargs)
            node = NotImplementedNode(f"aten::{op.schema.name.name}")
            node._next_edges = collect_next_edges(*(t for t in inputs if t._requires_grad))
            set_history(results, node)
            return results
        calls = per_element_calls(op.schema, args)
        results = tuple(_per_element(name, call, kwargs) for call in calls)
        _check_differentiable_dtypes(results)
        parts = [t._grad_fn if t._requires_grad else None for t in results]
        all_inputs, slots = _edges_and_slots(tensor_args, len(calls))
        first = next(p for p in parts if p is not None)
        overload = op.schema.name.overload_name
        node_name = TORCH_ENTRIES.get(name, f"Foreach{first.name()}{overload}")
        node = _node_type(node_name)(node_name, parts, slots)
        node._next_edges = collect_next_edges(*all_inputs)
        set_history(results, node)
        return results
    return kernel


def _snapshot(t):
    """A copy of ``t``'s values that keeps its place in the graph (its gradient edge): what a
    formula reads of ``self`` once ``self`` has been written (torch saves ``original_self``)."""
    edge = gradient_edge(t) if t._requires_grad else None
    with below_autograd():
        copy = dispatcher.call("clone", t)
    if edge is not None:
        copy._grad_fn, copy._output_nr, copy._requires_grad = edge[0], edge[1], True
    return copy


def _inplace_without_formula(op, ks, args, kwargs):
    """The loop below autograd; then each written tensor gets a node of its own that refuses,
    with edges to that tensor (before the write) and to every tensor of the other arguments,
    those that need no gradient included, as torch's generated loop makes them."""
    for t in args[0]:
        check_inplace(t)
    others = [t for is_list, v in _tensor_arguments(op.schema, args)[1:] for t in (v if is_list else [v])]
    edges = [collect_next_edges(t, *others) for t in args[0]]
    with below_autograd():
        op.redispatch(after_autograd(ks), *args, **kwargs)
    for t, element_edges in zip(args[0], edges):
        node = NotImplementedNode(op.schema.name.name.base + "_")
        node._next_edges = element_edges
        rebase_history(t, node)


def _inplace_by_reference(op, ks, args, kwargs, reference):
    """Each element's node is the reference operator's, made from a snapshot of ``self`` before
    the kernel writes it; then each written tensor takes its element's node as its history."""
    calls = per_element_calls(op.schema, args)
    for call in calls:
        check_inplace(call[0])
    nodes = [dispatcher.call(reference, _snapshot(call[0]), call[1])._grad_fn for call in calls]
    with below_autograd():
        op.redispatch(after_autograd(ks), *args, **kwargs)
    for call, node in zip(calls, nodes):
        if node is not None:
            rebase_history(call[0], node)


def _inplace_kernel(op):
    """With a gradient wanted, the loop runs above autograd: each per-element in-place call
    checks its tensor (a leaf that requires grad is refused) and records its own node."""
    name = str(op.schema.name)

    def kernel(ks, *args, **kwargs):
        tensors = [t for is_list, v in _tensor_arguments(op.schema, args) for t in (v if is_list else [v])]
        if _fw_levels and has_fw_grad(*tensors) and not (
                _grad_mode.grad_enabled and any(t._requires_grad for t in tensors)):
            return _with_tangents(op, args, kwargs, tensors)
        if _grad_mode.grad_enabled and any(t._requires_grad for t in tensors):
            if name in INPLACE_NOT_DIFFERENTIABLE and _fw_levels:
                check_no_fw_grad(str(op.schema.name.name), *tensors)
            if name in INPLACE_NOT_DIFFERENTIABLE:
                return _inplace_without_formula(op, ks, args, kwargs)
            if name in INPLACE_REFERENCE:
                return _inplace_by_reference(op, ks, args, kwargs, INPLACE_REFERENCE[name])
            for call in per_element_calls(op.schema, args):
                PER_ELEMENT[name](call, kwargs)
            return None
        with below_autograd():
            return op.redispatch(after_autograd(ks), *args, **kwargs)
    return kernel


def _with_tangents(op, args, kwargs, tensors):
    """Forward AD with no gradient recorded: the loop of per-element calls, each of which gives
    its output (or its written tensor) the tangent its own formula computes; an operator torch
    has no formula for refuses the tangent."""
    name = str(op.schema.name)
    if name in NOT_DIFFERENTIABLE or name in INPLACE_NOT_DIFFERENTIABLE:
        check_no_fw_grad(str(op.schema.name.name), *tensors)
    calls = per_element_calls(op.schema, args)
    if not op.schema.returns:
        for call in calls:
            PER_ELEMENT[name](call, kwargs)
        return None
    return tuple(_per_element(name, call, kwargs) for call in calls)


def _out_kernel(op):
    """An ``out=`` form records nothing, and refuses no input that requires grad (torch's
    generated ``out=`` foreach forms have no autograd check)."""
    def kernel(ks, *args, **kwargs):
        with below_autograd():
            return op.redispatch(after_autograd(ks), *args, **kwargs)
    return kernel


def register_foreach_autograd_kernels():
    """The Autograd kernel of every foreach operator of ``native_functions.yaml``."""
    for name, op in list(dispatcher.operators.items()):
        if name.startswith("aten::_foreach_") and op.schema is not None:
            make = _functional_kernel if op.schema.returns else _inplace_kernel
            if op.schema.kind() == SchemaKind.out:
                make = _out_kernel
            dispatcher.impl(name, "Autograd", dispatcher.KernelFunction(make(op), with_keyset=True))
