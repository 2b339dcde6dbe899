"""The autograd graph: nodes, edges, saved variables (``torch/csrc/autograd/function.h``,
``edge.h``, ``saved_variable.cpp``, ``functions/accumulate_grad.h``).

A ``Node`` is the backward of one forward operation. Its *edges* (``next_functions``) point at
the nodes that produced the operation's inputs: ``(node, input_nr)``, where ``input_nr`` says
which of that node's inputs (= which output of the forward op) the gradient feeds. A leaf
tensor that requires grad is reached through an ``AccumulateGrad`` node, whose job is to add
the incoming gradient into ``leaf.grad``. Inputs that need no gradient get the edge
``(None, 0)``.

Each node takes a *sequence number* when created: the engine runs later nodes first.
"""
import itertools
import re
import sys
import threading
import weakref

from ..aten import dispatcher
from ..aten.native.sparse.sparse_tensor import new_sparse
from ..c10.grad_mode import _state as _grad_state
from ..c10.local_dispatch_key_set import below_ad_inplace_or_view
from ..c10.memory_format import contiguous_format
from ..c10.tensor_impl import sparse_coo, sparse_csr, strided
from ..utils._python_dispatch import _get_current_dispatch_mode, mode_detach
from . import anomaly_mode

__all__ = ["Node", "AccumulateGrad", "SavedVariable", "SavedVariableList", "saved_tensors_hooks", "RemovableHandle",
           "gradient_edge", "grad_accumulator", "set_history", "collect_next_edges", "ERR_BACKWARD_TWICE"]

UINT64_MAX = 2 ** 64 - 1     # AccumulateGrad's sequence number: it runs as soon as it is ready
_sequence = itertools.count()

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.")
ERR_SAVE_INFERENCE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
         "torch.autograd.set_detect_anomaly(True, check_nan=False).")
_HINT_ANOMALY = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
                 "variable in question was changed in there or anywhere later. Good luck!")


class RemovableHandle:
    """What ``register_hook`` returns: ``.remove()`` takes the hook out again."""

    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    # ``with module.register_forward_hook(f):`` keeps the hook for the block only (torch/utils/hooks.py)
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.remove()


class Node:
    """``torch::autograd::Node``. Subclasses implement ``apply(grads) -> grads`` (one per edge)."""
    __slots__ = ("_next_edges", "_seq", "_num_inputs", "_input_meta", "_pre_hooks", "_post_hooks",
                 "_tensor_pre_hooks", "_retains_grad", "_metadata", "__weakref__")

    def __init__(self, sequence_nr=None):
        # A node the engine must run at once (AccumulateGrad, an error node) is given UINT64_MAX
        # and, as torch's ``Node(sequence_nr)`` constructor, takes no number from the counter.
        self._seq = next(_sequence) if sequence_nr is None else sequence_nr
        self._next_edges = ()
        self._num_inputs = 1
        self._input_meta = [None]      # per input: (sizes, dtype, device) of the forward output it is the grad of
        self._pre_hooks = self._post_hooks = self._tensor_pre_hooks = self._retains_grad = None
        self._metadata = None
        if anomaly_mode.AnomalyMode.enabled:    # the forward stack, kept for the engine's warning
            anomaly_mode.store_stack(self.metadata, anomaly_mode.current_node())

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def next_functions(self):
        return tuple(e if e is not None else (None, 0) for e in self._next_edges)

    def _sequence_nr(self):
        return self._seq

    @property
    def metadata(self):
        """A dict the node keeps for its life (anomaly mode's stacks, or whatever the user puts in)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    _tensor_slots = ()           # slots holding SavedVariables (generated nodes list theirs)
    _exposed = {}                # "_saved_self" -> (slot, is a SavedVariable)

    def release_variables(self):
        """Free the saved tensors (after a backward without ``retain_graph``)."""
        for slot in self._tensor_slots:
            saved = getattr(self, slot, None)
            if saved is not None:
                saved.release()

    def __getattr__(self, name):
        # ``_saved_<name>``: what the formula saved, unpacked as torch's generated getters do.
        entry = type(self)._exposed.get(name)
        if entry is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        value = getattr(self, entry[0], None)
        return value.unpack(self) if entry[1] and value is not None else value

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(type(self)._exposed))

    # ------------------------------------------------------------------ hooks
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the node ran; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def _add_tensor_pre_hook(self, output_nr, fn):
        """A tensor's ``register_hook``: runs on that tensor's gradient, this node's input ``output_nr``."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def _tensor_hooks(self, input_nr):
        return self._tensor_pre_hooks.get(input_nr, ()) if self._tensor_pre_hooks else ()


# One lock for every leaf: a leaf's AccumulateGrad may be made afresh for each graph, so a lock per
# node would not stop two threads' check-then-set of the same ``.grad`` (torch keeps one node per leaf).
_accumulate_lock = threading.RLock()


class AccumulateGrad(Node):
    """The node of a leaf: adds the gradient into ``variable.grad`` (``accumulate_grad.h``)."""
    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(UINT64_MAX)
        self.variable = variable
        self._input_meta = [_meta(variable)]

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def _tensor_hooks(self, input_nr):
        # A leaf's hooks live on the tensor: its AccumulateGrad may be made afresh for each graph.
        return self.variable._backward_hooks or ()

    def apply(self, grads):
        with _accumulate_lock:      # torch locks here too: two backward passes may meet at one leaf
            only_engine_holds = _only_engine_holds(grads)      # first: an argument holds the grad
            self._accumulate(grads[0], only_engine_holds)
            for hook in list(self.variable._post_accumulate_grad_hooks or ()):
                _check_post_accumulate_result(hook(self.variable), self.variable)
        return ()

    def _accumulate(self, new_grad, only_engine_holds):
        var = self.variable
        if new_grad.is_sparse or (var.grad is not None and var.grad.is_sparse):
            self._accumulate_sparse(var, new_grad, not _grad_state.grad_enabled and only_engine_holds)
        elif var.grad is None:
            if not _grad_state.grad_enabled and only_engine_holds and _obeys_layout(new_grad, var):
                var.grad = new_grad.detach()     # nobody else can see it: take it, as torch does
            else:
                # The engine may hand the same gradient to several places (AddBackward0 passes
                # it through), the user may hold it: store a copy we own, detached unless a
                # graph of the grad is wanted.
                var.grad = (_clone_obey_contract(new_grad, var) if _grad_state.grad_enabled else
                            _detached_clone(new_grad, var))
        elif _grad_state.grad_enabled:
            var.grad = var.grad + new_grad       # out of place: keeps the graph of the old grad
        else:
            var.grad.add_(new_grad)


    @staticmethod
    def _accumulate_sparse(var, new_grad, taken):
        """A sparse gradient (embedding's with ``sparse=True``) is stored as a new sparse tensor
        over copies of its indices and values, or over the same ones where only the engine holds
        it (torch then rebuilds it with ``_sparse_coo_tensor_unsafe``, which calls it coalesced only
        below two entries); later ones are added, sparse to sparse, or the sparse one to a dense one."""
        if var.grad is None:
            indices, values = new_grad._indices(), new_grad._values()
            if not taken:
                indices, values = indices.clone(), values.clone()
            var.grad = new_sparse(tuple(new_grad.shape), indices.detach(), values.detach(),
                                  new_grad.is_coalesced() and not taken or values.shape[0] < 2)
        elif var.grad.is_sparse and not new_grad.is_sparse:
            var.grad = new_grad + var.grad
        else:
            var.grad = var.grad + new_grad


def _only_engine_holds(grads):
    """``new_grad.use_count() <= num_expected_refs``: the slot of the engine's input buffer
    ``grads`` (and ``getrefcount``'s argument) is the gradient's only reference. The engine drops
    its own as soon as it has passed a gradient on, so any other is a user's (a retained grad, a
    root's ``gradient=``, a tensor both AddBackward0's outputs share). Counted before any frame
    binds the gradient to a name: a tracer or debugger that reads frames' locals
    (``frame.f_locals``) keeps one more reference per name, which is not a user's."""
    return sys.getrefcount(grads[0]) <= 2


def _obeys_layout(grad, var):
    """``obeys_layout_contract``: a stolen grad must have the strides a clone would get."""
    g, v = grad._impl, var._impl
    if g.layout is not strided or v.layout is not strided:
        return False
    if not v.is_non_overlapping_and_dense():
        return g.is_contiguous()
    for size, g_stride, v_stride in zip(g.sizes, g.strides, v.strides):
        if size == 1:
            if g_stride == 0:       # a size-1 dim may have any stride but 0 (an expanded view)
                return False
        elif g_stride != v_stride:
            return False
    return True


def _clone_obey_contract(grad, var):
    """``clone_obey_contract``: a copy with the leaf's strides where the leaf is dense (so a
    permuted gradient is stored in the leaf's layout), else a contiguous one; the copy is a
    ``copy_`` into a ``new_empty_strided`` buffer, so a grad of the grad hangs off CopyBackwards.
    A COO or CSR gradient is cloned as it is (``accumulateGrad``'s sparse branch); a CSC, BSR or
    BSC one takes the dense path, as in torch, and refuses to say whether it is contiguous."""
    layout = grad._impl.layout
    if layout is sparse_csr or layout is sparse_coo:
        return dispatcher.call("clone", grad)
    if layout is not strided:
        grad._impl.is_contiguous()          # raises: "Sparse CSC tensors do not have is_contiguous"
    if var._impl.is_non_overlapping_and_dense():
        out = dispatcher.call("new_empty_strided", grad, list(var.shape), list(var.stride()))
        return dispatcher.call("copy_", out, grad)
    return dispatcher.call("clone", grad, memory_format=contiguous_format)


def _detached_clone(grad, var):
    with below_ad_inplace_or_view():
        out = _clone_obey_contract(grad, var)
    return out


def _meta(t):
    impl = t._impl
    return impl.sizes, impl.dtype, impl.device


def grad_accumulator(t):
    """The leaf's AccumulateGrad, made on first use and kept only while a graph holds it."""
    ref = t._grad_accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_accumulator = weakref.ref(acc)
    return acc


def gradient_edge(t):
    """Where a gradient for ``t`` goes: its grad_fn's input, its AccumulateGrad, or nowhere."""
    if t._attr_version is not None and t._attr_version != t._impl.version_counter.version and t._attr_version >= 0:
        from .variable_type_manual import refresh_view_grad_fn  # variable_type_manual imports graph: a real cycle
        refresh_view_grad_fn(t)          # a view changed in place since its grad_fn was made
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad and t._creation_meta is None:
        return (grad_accumulator(t), 0)
    return None     # a view made under no_grad requires grad through its base only: no accumulator


def collect_next_edges(*tensors):
    """The edges of a new node, one per differentiable input (``collect_next_edges``)."""
    return tuple(gradient_edge(t) if t is not None and t._requires_grad else None for t in tensors)


def set_history(outputs, node):
    """Make ``node`` the grad_fn of ``outputs`` (a tensor or a sequence), recording each one's metadata."""
    if not isinstance(outputs, (list, tuple)):
        outputs = (outputs,)
    node._num_inputs = len(outputs)
    node._input_meta = [None] * len(outputs)
    for i, t in enumerate(outputs):
        if t is not None and (t._impl.dtype.is_floating_point or t._impl.dtype.is_complex):
            t._grad_fn = node
            t._output_nr = i
            t._requires_grad = True
            node._input_meta[i] = _meta(t)


def _op_of(node):
    """torch's ``Node::forward_op_name``: ``ExpBackward0`` -> ``Exp``, ``ClampBackward1`` -> ``Clamp1``."""
    return re.sub(r"Backward(\d*)$", lambda m: "" if m[1] in ("", "0") else m[1], node.name())


class _SavedTensorsHooks(threading.local):
    def __init__(self):
        self.stack = []


_hooks = _SavedTensorsHooks()


class saved_tensors_hooks:
    """While active, each tensor autograd saves for backward is given to ``pack_hook``, whose
    result is kept instead of the tensor; backward gets the tensor back from ``unpack_hook``
    (``torch.autograd.graph.saved_tensors_hooks``). Thread-local, innermost pair wins. This is
    how non-reentrant checkpointing keeps no activations: it packs each into a number."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _hooks.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _hooks.stack.pop()


class SavedVariable:
    """A tensor kept for backward, with the version it had when saved (``saved_variable.cpp``).

    An output of the node itself is kept without its grad_fn, which would point back at the
    node (a reference cycle); ``unpack(node)`` puts it back. Under ``saved_tensors_hooks`` the
    tensor is not kept at all, only what the pack hook made of it: then no version can be
    checked at unpack (torch does not check either).
    """
    __slots__ = ("data", "version", "output_nr", "is_output", "requires_grad", "packed", "unpack_hook",
                 "history")

    def __init__(self, t, is_output):
        self.data = self.unpack_hook = self.history = None
        if t is None:
            self.version = -1       # saved "no tensor": unpacks to None until released
            return
        if t._impl.is_inference():
            raise RuntimeError(ERR_SAVE_INFERENCE)      # it has no version counter to check later
        self.version = t._impl.version_counter.version
        # An output with no history (a leaf, as layer norm's mean) is kept itself, as an input is
        # (torch's ``saved_original_``): only outputs with a grad_fn are kept without it.
        self.is_output = is_output and t._grad_fn is not None
        self.requires_grad = t._requires_grad
        self.output_nr = t._output_nr
        data = tensor_data(t) if self.is_output else t
        if _hooks.stack:
            pack_hook, self.unpack_hook = _hooks.stack[-1]
            if not self.is_output:
                self.history = _input_history(t)
            enabled, _grad_state.grad_enabled = _grad_state.grad_enabled, False    # packing is not recorded
            try:
                self.packed = pack_hook(data)
            finally:
                _grad_state.grad_enabled = enabled
        else:
            self.data = data

    def unpack(self, node):
        if self.unpack_hook is not None:
            return self._with_history(self.unpack_hook(self.packed), node)
        data = self.data
        if data is None:
            if self.version is None:
                raise RuntimeError(ERR_BACKWARD_TWICE)
            return None
        current = data._impl.version_counter.version
        if current != self.version:
            what = f"[{data._type_name()} [{', '.join(str(s) for s in data._impl.sizes)}]]"
            # an input is kept itself, so torch names what produced it *now* (the in-place op);
            # an output is kept without grad_fn, so the node that saved it is named, unless the
            # output had no history (integer indices): then nothing is named
            producer = (node if self.requires_grad else None) if self.is_output else data._grad_fn
            if producer is not None:
                what += f", which is output {self.output_nr} of {_op_of(producer)},"
            raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                               f"inplace operation: {what} is at version {current}; expected version "
                               f"{self.version} instead. "
                               f"{_HINT_ANOMALY if anomaly_mode.AnomalyMode.enabled else _HINT}")
        return self._with_history(data, node)

    def _with_history(self, data, node):
        """A saved output gets its node back as grad_fn (``make_variable``: a new handle); an input
        kept through hooks gets the input's own place in the graph back, its grad_fn or its
        leaf's AccumulateGrad, so that a gradient of the gradient (``create_graph=True``) reaches
        what the input was made from, as torch's ``SavedVariable::unpack`` does."""
        if not self.is_output and self.unpack_hook is None:
            return data             # the input itself was kept (torch's ``saved_original_``)
        out = tensor_data(data)
        if self.is_output and self.requires_grad:
            out._grad_fn, out._output_nr, out._requires_grad = node, self.output_nr, True
        elif self.history is not None:
            grad_fn, accumulator = self.history
            if grad_fn is not None:
                out._grad_fn, out._output_nr = grad_fn, self.output_nr
            else:
                out._grad_accumulator = accumulator     # a weak reference: the graph holds the node
            out._requires_grad = True
        return out

    def release(self):
        self.data = self.unpack_hook = self.packed = self.history = None
        self.version = None


def _input_history(t):
    """(grad_fn, None) for an input with history, (None, weak reference to its AccumulateGrad) for
    a leaf that requires grad, None for a tensor outside the graph (``save_metadata``)."""
    if t._grad_fn is not None:
        return t._grad_fn, None
    if t._requires_grad and t._creation_meta is None:
        grad_accumulator(t)
        return None, t._grad_accumulator
    return None


class SavedVariableList:
    """A ``Tensor?[]`` kept for backward, one SavedVariable per tensor (the ``std::vector<SavedVariable>``
    torch's generated nodes keep, as ``IndexBackward0::indices_``): each is version-checked at unpack,
    and once released the list raises as a released tensor does."""
    __slots__ = ("items",)

    def __init__(self, tensors):
        self.items = [None if t is None else SavedVariable(t, False) for t in tensors]

    def unpack(self, node):
        if self.items is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return tuple(None if s is None else s.unpack(node) for s in self.items)

    def release(self):
        self.items = None


def tensor_data(t):
    """A new handle on ``t``'s TensorImpl with no autograd history (``VariableHooks::tensor_data``).

    torch makes it with ``TensorImpl::shallow_copy_and_detach``, which hands the job to the
    dispatch mode on top of the stack when one is active: that is why a mode sees an
    ``aten.detach`` each time autograd saves or unpacks an output.
    """
    if _get_current_dispatch_mode() is not None:
        return mode_detach(t)
    return type(t)._from_impl(t._impl)


def _check_post_accumulate_result(result, variable):
    """A post-accumulate hook returns None, or (as ``p.add_(...)`` does) the tensor it was given;
    anything else is refused as torch refuses it: a non-tensor with a TypeError, another tensor
    with a RuntimeError."""
    if result is None or result is variable:
        return
    if not hasattr(result, "grad_fn"):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
