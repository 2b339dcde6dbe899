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
in-place per-element operators records, which is torch's result too: ``AddBackward1`` on each.
"""
from torchgen.model import SchemaKind

from ..aten import dispatcher
from ..aten.native.foreach_ops_kernels import PER_ELEMENT, per_element_calls
from ..aten.native.tensor_factories import wrap_scalar
from ..c10.grad_mode import _state as _grad_mode
from ..c10.local_dispatch_key_set import below_autograd
from .graph import Node, collect_next_edges, set_history
from .variable_type_manual import NotImplementedNode, after_autograd

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
    if reference is None:
        return PER_ELEMENT[name](call, kwargs)
    other = call[1]
    return dispatcher.call(reference, call[0], other if hasattr(other, "_impl") else wrap_scalar(other))


def _functional_kernel(op):
    name = str(op.schema.name)

    def kernel(ks, *args, **kwargs):
        tensor_args = _tensor_arguments(op.schema, args)
        inputs = [t for is_list, v in tensor_args for t in (v if is_list else [v])]
        if not (_grad_mode.grad_enabled and any(t._requires_grad for t in inputs)):
            with below_autograd():
                return op.redispatch(after_autograd(ks), *args, **kwargs)
        if name in NOT_DIFFERENTIABLE:
            with below_autograd():
                results = op.redispatch(after_autograd(ks), *args, **kwargs)
            node = NotImplementedNode(f"aten::{op.schema.name.name}")
            node._next_edges = collect_next_edges(*(t for t in inputs if t._requires_grad))
            set_history(results, node)
            return results
        calls = per_element_calls(op.schema, args)
        results = tuple(_per_element(name, call, kwargs) for call in calls)
        parts = [t._grad_fn if t._requires_grad else None for t in results]
        all_inputs, slots = _edges_and_slots(tensor_args, len(calls))
        first = next(p for p in parts if p is not None)
        overload = op.schema.name.overload_name
        node = ForeachBackward(TORCH_ENTRIES.get(name, f"Foreach{first.name()}{overload}"), parts, slots)
        node._next_edges = collect_next_edges(*all_inputs)
        set_history(results, node)
        return results
    return kernel


def _inplace_kernel(op):
    """With a gradient wanted, the loop runs above autograd: each per-element in-place call
    checks its tensor (a leaf that requires grad is refused) and records its own node."""
    name = str(op.schema.name)

    def kernel(ks, *args, **kwargs):
        tensors = [t for is_list, v in _tensor_arguments(op.schema, args) for t in (v if is_list else [v])]
        if _grad_mode.grad_enabled and any(t._requires_grad for t in tensors):
            for call in per_element_calls(op.schema, args):
                PER_ELEMENT[name](call, kwargs)
            return None
        with below_autograd():
            return op.redispatch(after_autograd(ks), *args, **kwargs)
    return kernel


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
