"""The autograd pieces torch writes by hand (``torch/csrc/autograd/VariableTypeManual.cpp``,
``VariableTypeUtils.h``, ``functions/tensor.cpp``).

- the guards and checks the generated kernels share (``check_inplace``, ``rebase_history``);
- ``CopySlices``: an in-place operation on a view changes its base too, so the base's history
  is rebased onto a node that routes the gradient of the modified slice through the in-place
  op's backward and passes the rest of the base's gradient through unchanged;
- ``copy_`` (``CopyBackwards``).
"""
from ..aten import dispatcher
from ..aten.fallbacks import check_out_no_requires_grad
from ..c10.dispatch_key import DispatchKey, DispatchKeySet
from ..c10.grad_mode import _state as _grad_mode
from ..c10.local_dispatch_key_set import below_autograd
from ..c10.memory_format import contiguous_format
from ..c10.sym import SymInt
from ..c10.tensor_impl import strided
from .forward_grad import LEVELS as _fw_levels
from .forward_grad import has_fw_grad, primal, set_fw_grad, tangents
from .functions_manual import TensorGeometry, zeros_like
from .generated.functions import AsStridedBackward0
from .graph import UINT64_MAX, Node, SavedVariable, _op_of, collect_next_edges, gradient_edge, set_history

__all__ = ["after_autograd", "as_int", "as_int_tuple", "strides_or_error", "check_complex_autograd", "check_inplace",
           "check_no_requires_grad",
           "check_out_no_requires_grad",
           "mark_view", "record_view_fn", "replays_views",
           "rebase_history", "refresh_view_grad_fn", "saved_inplace_result", "set_inplace_view_history",
           "CopySlices", "CopyBackwards",
           "register_manual_kernels"]

_AFTER_AUTOGRAD_BITS = (1 << int(DispatchKey.AutogradOther)) - 1
MULTI_OUTPUT_VIEW = -1     # _attr_version of an output of split/chunk: no in-place allowed
NO_GRAD_MODE = "no_grad_mode"   # _creation_meta of a view made under no_grad of a base that requires grad
IN_CUSTOM_FUNCTION = "in_custom_function"   # a custom Function's output that is a view (or an input returned)


def after_autograd(ks):
    """The keys below Autograd, to redispatch to (``ks & after_autograd_keyset``)."""
    return DispatchKeySet._from_bits(ks.bits & _AFTER_AUTOGRAD_BITS)


def as_int(value):
    """An ``int`` argument as saved: a 0-dim integer tensor standing for it becomes an int; a
    traced size (a SymInt) is saved as it is, as torch saves a SymInt, where ``int`` of it would
    guard on its example value (split's ``(s + 1) // 2`` pinned to 2)."""
    return value if isinstance(value, (int, list, tuple, SymInt)) else int(value)


def strides_or_error(t):
    """The strides a backward formula saves (``strides_or_error`` in ``FunctionsManual.cpp``): the
    input's, or none (``()``) for a sparse or compressed input, which has none to read (a
    compressed tensor refuses ``stride()``), and for an input that needs no gradient."""
    if not t._requires_grad or t.layout is not strided:
        return ()
    return t._impl.strides


def as_int_tuple(value):
    """An ``int[]`` argument as torch's ``_saved_`` attributes show it: a tuple (an int becomes one)."""
    if value is None:
        return None
    return (value,) if isinstance(value, int) else tuple(value)


# ---------------------------------------------------------------------- views and in-place
def mark_view(result):
    """Remember the version a differentiable view was made at: when it changes (an in-place op on
    the view or its base), the view's grad_fn is made anew from its base's history. A view made
    with grad mode off of a base that requires grad is remembered as such instead (torch's
    ``CreationMeta::NO_GRAD_MODE``): it requires grad through its base but has no grad_fn, so
    later ops treat it as a leaf, and writing it in place with grad mode on is refused."""
    if not _grad_mode.grad_enabled:
        if not isinstance(result, (list, tuple)) and result._base is not None and result._base._requires_grad:
            result._creation_meta = NO_GRAD_MODE
            result._requires_grad = True
        return
    if isinstance(result, (list, tuple)):
        for t in result:
            t._attr_version = MULTI_OUTPUT_VIEW
    elif result._base is not None:
        result._attr_version = result._impl.version_counter.version


def replays_views(t):
    """Whether the views of ``t`` keep the calls that made them, to be replayed later instead of an
    ``as_strided`` of the base: for a fake tensor, as torch keeps a view function for a tensor
    whose dispatch goes to Python (``ViewInfo::chain``; AOTAutograd traces such tensors), where
    its functionalization turns each replayed view back into the view and its ``*_scatter``."""
    return getattr(type(t), "_mode_wraps_results", False)


def record_view_fn(result, source, fn):
    """``result`` is the view ``fn(source)``: keep the replay from the root base, ``source``'s own
    replay then ``fn`` (a view of a view with none is reached by an as_strided, as torch's chain)."""
    if result._attr_version is None or result._attr_version == MULTI_OUTPUT_VIEW:
        return
    if source._base is None:
        result._view_fn = fn
        return
    before = source._view_fn or _as_strided_fn(source)
    result._view_fn = lambda base: fn(before(base))


def _as_strided_fn(view):
    impl = view._impl
    sizes, strides, offset = list(impl.sizes), list(impl.strides), impl.storage_offset
    return lambda base: base.as_strided(sizes, strides, offset)


def refresh_view_grad_fn(view):
    """The grad_fn of a view whose data changed in place: its view calls replayed from its base
    with grad mode on, where they were kept (``record_view_fn``), else an AsStridedBackward0 from
    its base."""
    base = view._base
    view._attr_version = view._impl.version_counter.version
    if base._requires_grad and view._view_fn is not None:
        # recorded even where grad mode is off (the engine's backward reaches here too), as torch's
        enabled, _grad_mode.grad_enabled = _grad_mode.grad_enabled, True
        try:
            replayed = view._view_fn(base)
        finally:
            _grad_mode.grad_enabled = enabled
        view._grad_fn, view._output_nr = replayed._grad_fn, replayed._output_nr
    elif base._requires_grad:
        node = AsStridedBackward0()
        node._next_edges = (gradient_edge(base),)
        node.self_geometry_ = TensorGeometry(base)
        impl = view._impl
        node.size_, node.stride_, node.storage_offset_ = impl.sizes, impl.strides, impl.storage_offset
        set_history(view, node)


ERR_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).")


def check_view_creation(t):
    """``handle_view_on_rebase``: a view made under no_grad may not be written while autograd records
    (it could not tell whether the write should reach the base's gradient)."""
    if t._creation_meta is NO_GRAD_MODE:
        raise RuntimeError(ERR_NO_GRAD_VIEW)
    if t._creation_meta is IN_CUSTOM_FUNCTION:
        raise RuntimeError(
            f"Output {t._output_nr} of {_op_of(t._grad_fn)} is a view and is being modified inplace. This view was "
            "created inside a custom Function (or because an input was returned as-is) and the autograd logic to "
            "handle view+inplace would override the custom backward associated with the custom Function, leading "
            "to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the "
            "custom Function.")


def check_no_requires_grad(t, name, fn_name):
    """An input without a formula may not require grad (``check_no_requires_grad``)."""
    if t is not None and t._requires_grad:
        raise RuntimeError(f"The function '{fn_name}' is not differentiable with respect to argument '{name}'. "
                           "This input cannot have requires_grad True.")


def check_complex_autograd(name, outputs):
    """An operator off torch's list of those differentiable at complex outputs may not give one
    that requires grad (``throw_error_for_complex_autograd``)."""
    for t in outputs if isinstance(outputs, (list, tuple)) else (outputs,):
        if t is not None and t._requires_grad and t._impl.dtype.is_complex:
            raise RuntimeError(f"{name} does not support automatic differentiation for outputs with complex dtype.")


def check_inplace(t):
    """May ``t`` be written in place while autograd records? (``check_inplace`` in VariableTypeUtils.h)"""
    check_view_creation(t)
    if t._attr_version is not None:
        if t._attr_version == MULTI_OUTPUT_VIEW and t._grad_fn is not None:
            raise RuntimeError(
                f"Output {t._output_nr} of {_op_of(t._grad_fn)} is a view and is being modified inplace. This view is "
                "the output of a function that returns multiple views. Such functions do not allow the output views "
                "to be modified inplace. You should replace the inplace operation by an out-of-place one.")
        base = t._base
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    elif t._grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def rebase_history(t, fn):
    """``t`` was modified in place by the op whose backward is ``fn``: make ``fn`` its history, or, for
    a view, make CopySlices(fn) its base's history (``rebase_history`` in VariableTypeUtils.h)."""
    if t._attr_version is not None and t._attr_version != MULTI_OUTPUT_VIEW:
        base = t._base
        set_history(base, CopySlices(base, t, fn))
        refresh_view_grad_fn(t)
    else:
        set_history(t, fn)


def set_inplace_view_history(t, fn):
    """An in-place view operator (``t_``, ``unsqueeze_``) changes only ``t``'s geometry, no data:
    ``fn`` becomes ``t``'s own history, with no CopySlices, and a view's recorded version moves on
    with it, so its grad_fn is not remade as an AsStridedBackward0 (torch's codegen calls
    ``set_history`` for these, and ``set_gradient_edge`` updates a view's attr_version)."""
    set_history(t, fn)
    if t._attr_version is not None and t._attr_version != MULTI_OUTPUT_VIEW:
        t._attr_version = t._impl.version_counter.version


def saved_inplace_result(t):
    """The result of an in-place op, saved for its backward. On a view, the view's history is now
    CopySlices' (through its base), not the op's node: keep the tensor with that history, as
    torch does for ``is_inplace_on_view``, so a double backward follows the right graph."""
    on_view = t._attr_version is not None and t._attr_version != MULTI_OUTPUT_VIEW
    return SavedVariable(t, not on_view)


class CopySlices(Node):
    """The backward of an in-place op on a view, seen from the base (``functions/tensor.cpp``)."""
    __slots__ = ("base_sizes", "base_strides", "base_offset", "view_sizes", "view_strides", "view_offset", "fn",
                 "real_view", "view_fn")

    def name(self):
        return "torch::autograd::CopySlices"

    def __init__(self, base, view, fn):
        super().__init__()
        b, v = base._impl, view._impl
        self.base_sizes, self.base_strides, self.base_offset = b.sizes, b.strides, b.storage_offset
        self.view_sizes, self.view_strides, self.view_offset = v.sizes, v.strides, v.storage_offset
        # a real view of a complex base (real, imag, view_as_real) counts its geometry in real
        # elements: torch replays such a view with its view function, here with view_as_real
        self.real_view = b.dtype.is_complex and not v.dtype.is_complex
        if self.real_view:
            self.base_offset *= 2
        self.fn = fn
        self.view_fn = view._view_fn
        self._next_edges = (gradient_edge(base),) + tuple(fn._next_edges[1:])

    def apply(self, grads):
        grad = grads[0]
        result = dispatcher.call("new_empty_strided", grad, list(self.base_sizes), list(self.base_strides))
        result.copy_(grad)
        if self.view_fn is not None:     # the view's own calls, replayed (torch's view_fn)
            grad_slice = self.view_fn(result)
        else:
            target = dispatcher.call("view_as_real", result) if self.real_view else result
            grad_slice = target.as_strided(self.view_sizes, self.view_strides, self.view_offset - self.base_offset)
        # a fresh row-major copy, as torch's clone(MemoryFormat::Contiguous): the in-place op's
        # backward sees (and may hand on as a gradient) contiguous strides, even where a size-1
        # dimension of the view keeps the base's stride
        res = self.fn.apply([grad_slice.clone(memory_format=contiguous_format)])
        if res[0] is not None:
            grad_slice.copy_(res[0])
        else:
            grad_slice.fill_(0)           # the view's old values did not matter to the result
        return (result,) + tuple(res[1:])

    def release_variables(self):
        self.fn.release_variables()


class CopyBackwards(Node):
    """``copy_``: self's old values are gone (zero gradient); src gets the gradient, summed to its
    shape and cast to its dtype by the engine."""
    __slots__ = ()

    def name(self):
        return "torch::autograd::CopyBackwards"

    def apply(self, grads):
        grad, edges = grads[0], self._next_edges
        return (zeros_like(grad) if edges[0] is not None else None, grad if edges[1] is not None else None)


def copy_(ks, self, src, non_blocking=False):
    grad_fn = None
    if _grad_mode.grad_enabled and (self._requires_grad or src._requires_grad):
        check_inplace(self)
        grad_fn = CopyBackwards()
        grad_fn._next_edges = collect_next_edges(self, src)
    with below_autograd():
        result = _COPY.redispatch(after_autograd(ks), self, src, non_blocking)
    if grad_fn is not None:
        rebase_history(self, grad_fn)
    if _fw_levels and has_fw_grad(self, src):
        set_fw_grad(self, _copy_tangent(self, src), inplace=True)
    return result


def _copy_tangent(self, src):
    """copy_'s tangent: src's, broadcast and cast to self's (``self_t.copy_(src_t)``)."""
    (src_t,) = tangents(src)
    tangent = dispatcher.call("zeros_like", primal(self))
    dispatcher.call("copy_", tangent, src_t)
    return tangent


# ---------------------------------------------------------------------- resize_ and set_
def resize_(ks, self, size, *, memory_format=None):
    """A tensor autograd tracks may not change its size (``VariableType::resize_``)."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    with below_autograd():
        return _RESIZE.redispatch(after_autograd(ks), self, size, memory_format=memory_format)


class NotImplementedNode(Node):
    """The grad_fn of an output whose operator has no derivative (``functions/basic_ops.h``):
    backward through it raises. Its sequence number is UINT64_MAX, as torch's ``Error`` node's:
    the engine runs it before any other ready node, so its error is the one a backward meets."""
    __slots__ = ("forward_fn",)

    def __init__(self, forward_fn):
        super().__init__(UINT64_MAX)
        self.forward_fn = forward_fn

    def name(self):
        return "torch::autograd::NotImplemented"

    def __repr__(self):
        return f"<NotImplemented object at {hex(id(self))}>"

    def apply(self, grads):
        raise RuntimeError(f"derivative for {self.forward_fn} is not implemented")


# torch's Python type of this node is named NotImplemented (``type(y.grad_fn).__name__``); the
# class cannot be defined under that name without hiding Python's builtin NotImplemented.
NotImplementedNode.__name__ = NotImplementedNode.__qualname__ = "NotImplemented"


def _differentiable_input(a):
    """A tensor argument the node links to: floating or complex, and not a Python number the
    binding wrapped (``remainder(2.0, x)``'s 2.0; ``scatter``'s index is an integer tensor)."""
    return (hasattr(a, "_requires_grad") and not a._impl.is_wrapped_number
            and (a._impl.dtype.is_floating_point or a._impl.dtype.is_complex))


def _not_implemented_kernel(op, forward_fn, in_place, requiring_grad_only=False):
    """torch generates these for an operator with no formula (``set_``, ``heaviside``): an output
    made while autograd records gets a grad_fn that refuses backward; a leaf that requires grad
    may not be modified in place. torch's fallback for a kernel with no Autograd entry at all
    (``autograd_not_implemented_fallback.cpp``) links only the inputs that require grad."""
    def kernel(ks, *args, **kwargs):
        inputs = tuple(a for a in args if _differentiable_input(a))
        if _fw_levels and has_fw_grad(*inputs):
            raise NotImplementedError(f"Trying to use forward AD with {forward_fn} that does not support it.")
        if requiring_grad_only:
            inputs = tuple(t for t in inputs if t._requires_grad)
        grad_fn = None
        if _grad_mode.grad_enabled and any(t._requires_grad for t in inputs):
            if in_place:
                check_inplace(args[0])
            grad_fn = NotImplementedNode(forward_fn)
            grad_fn._next_edges = collect_next_edges(*inputs)
        with below_autograd():
            result = op.redispatch(after_autograd(ks), *args, **kwargs)
        if grad_fn is not None:
            (rebase_history if in_place else set_history)(result, grad_fn)
        return result
    return kernel


_COPY = _RESIZE = None
# Operators with a floating result and no formula in torch's derivatives.yaml: torch's generated
# kernel gives them a NotImplemented node and refuses a tangent (detach_copy: detach's formula is none)
_NO_FORMULA = ("heaviside", "heaviside_", "detach_copy", "floor_divide", "floor_divide.Scalar",
               "floor_divide_.Tensor", "floor_divide_.Scalar", "remainder.Scalar_Tensor", "scatter.reduce",
               "scatter_.reduce", "scatter.value_reduce", "scatter_.value_reduce")
SET_OVERLOADS = ("set_", "set_.source_Storage", "set_.source_Storage_storage_offset", "set_.source_Tensor")


def register_manual_kernels():
    global _COPY, _RESIZE
    from .foreach_autograd import register_foreach_autograd_kernels  # it imports this module: a cycle
    from .generated.variable_type import register_autograd_kernels  # the generated kernels import it: a cycle
    register_autograd_kernels()
    register_foreach_autograd_kernels()
    _COPY, _RESIZE = dispatcher.find("copy_"), dispatcher.find("resize_")
    dispatcher.impl("copy_", "Autograd", dispatcher.KernelFunction(copy_, with_keyset=True))
    dispatcher.impl("resize_", "Autograd", dispatcher.KernelFunction(resize_, with_keyset=True))
    for name in SET_OVERLOADS:
        kernel = _not_implemented_kernel(dispatcher.find(name), "set_", in_place=True)
        dispatcher.impl(name, "Autograd", dispatcher.KernelFunction(kernel, with_keyset=True))
    for name in _NO_FORMULA:
        base = name.split(".")[0]
        kernel = _not_implemented_kernel(dispatcher.find(name), f"aten::{base}", in_place=base.endswith("_"))
        dispatcher.impl(name, "Autograd", dispatcher.KernelFunction(kernel, with_keyset=True))
    # EmbeddingBag's per-sample-weights gradient, made differentiable by create_graph: torch has
    # no formula for it, so a second derivative through it raises
    name = "_embedding_bag_per_sample_weights_backward"
    kernel = _not_implemented_kernel(dispatcher.find(name), f"aten::{name}", False, requiring_grad_only=True)
    dispatcher.impl(name, "Autograd", dispatcher.KernelFunction(kernel, with_keyset=True))
    # the fused CPU attention's backward operator: no formula in torch either, so gradients made
    # with create_graph end in a node that refuses a second backward
    name = "_scaled_dot_product_flash_attention_for_cpu_backward"
    kernel = _not_implemented_kernel(dispatcher.find(name), f"aten::{name}", False)
    dispatcher.impl(name, "Autograd", dispatcher.KernelFunction(kernel, with_keyset=True))
    # oneDNN's LSTM layer backward: torch's entry for it has no formula, so the operator called on
    # inputs that require grad gets a node that refuses (its message names it without aten::)
    name = "mkldnn_rnn_layer_backward"
    kernel = _not_implemented_kernel(dispatcher.find(name), name, False)
    dispatcher.impl(name, "Autograd", dispatcher.KernelFunction(kernel, with_keyset=True))
    # LDL^T's factoring and solving: no derivative in torch, which reaches them through its
    # fallback for operators without one (only the inputs that require grad get an edge);
    # so are the loss gradients torch has no formula for: a gradient taken with create_graph ends
    # in a NotImplemented node
    for name in ("linalg_ldl_factor_ex", "linalg_ldl_solve", "multi_margin_loss_backward",
                 "multilabel_margin_loss_backward", "_ctc_loss_backward"):
        kernel = _not_implemented_kernel(dispatcher.find(name), f"aten::{name}", False, requiring_grad_only=True)
        dispatcher.impl(name, "Autograd", dispatcher.KernelFunction(kernel, with_keyset=True))
