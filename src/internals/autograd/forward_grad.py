"""Forward gradients (tangents) kept on tensors, per forward AD level (torch's
``autograd/forward_grad.h``/``.cpp`` and the forward-grad parts of ``autograd_meta.cpp``).

A tensor's tangents live on the tensor itself, in the ``_fw_grads`` slot: a dict level -> tangent,
left unset on a tensor that never had one (so making a tensor costs nothing more). Each level
remembers the tensors it gave a tangent to, and takes the tangents back when it exits.

Levels are global, as torch's are: a level entered in one thread is seen by every thread. torch
allows one level at a time ("Nested forward mode AD is not supported at the moment").

The generated Autograd kernels test ``LEVELS`` (a module-level list, empty when no level is
active) before anything else, so forward AD costs one truthiness test when it is not in use.
"""
import threading
import weakref

from ..aten import dispatcher
from ..c10.scalar_type import result_type
from .graph import AccumulateGrad, gradient_edge

__all__ = ["LEVELS", "enter_level", "exit_level", "current_level", "fw_grad", "set_fw_grad", "has_fw_grad",
           "primal", "tangents", "promoted", "check_no_fw_grad", "check_out_no_fw_grad", "make_dual", "unpack_dual"]

LEVELS = []         # the active levels' tensor registries, oldest first (at most one)
_LOCK = threading.Lock()


# ---------------------------------------------------------------------- levels
def enter_level():
    """Open the next level and return its index (``ForwardADLevel::get_next_idx``)."""
    with _LOCK:
        if LEVELS:
            raise RuntimeError("Nested forward mode AD is not supported at the moment")
        LEVELS.append(weakref.WeakValueDictionary())
        return len(LEVELS) - 1


def exit_level(level):
    """Close ``level``, the newest, dropping every tangent it holds (``ForwardADLevel::release_idx``)."""
    with _LOCK:
        if level + 1 != len(LEVELS):
            raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                               "This is not supported.")
        if level < 0:
            raise RuntimeError("Dual level must be a positive number.")
        tensors = LEVELS.pop()
    for t in list(tensors.values()):
        grads = getattr(t, "_fw_grads", None)
        if grads:
            grads.pop(level, None)


def current_level():
    return len(LEVELS) - 1


# ---------------------------------------------------------------------- reading and writing tangents
def fw_grad(t, level=0):
    """``t``'s tangent at ``level``, or None. A view with none of its own whose base has one gets,
    made once, the same view of the base's tangent (``AutogradMeta::fw_grad``'s lazy view)."""
    grads = getattr(t, "_fw_grads", None)
    if grads is not None and level in grads:
        return grads[level]         # None for a dual's unpacked primal: it has none by construction
    base = t._base
    if base is None or level >= len(LEVELS):
        return None
    base_grad = fw_grad(base, level)
    if base_grad is None:
        return None
    view = _view_like(base_grad, t)
    _store(t, view, level)
    return view


def has_fw_grad(*tensors):
    """Does any of ``tensors`` (None allowed, and lists of tensors) have a tangent at level 0?"""
    for t in tensors:
        if isinstance(t, (list, tuple)):
            if has_fw_grad(*t):
                return True
        elif t is not None and hasattr(t, "_impl") and fw_grad(t) is not None:
            return True
    return False


def _store(t, tangent, level):
    """Keep ``tangent`` on ``t`` and register ``t`` with the level (under the lock: two threads
    may write tangents of one tensor at once)."""
    with _LOCK:
        if level >= len(LEVELS):
            return          # another thread closed the level meanwhile: its tangents are gone
        grads = getattr(t, "_fw_grads", None)
        if grads is None:
            grads = t._fw_grads = {}
        grads[level] = tangent
        LEVELS[level][id(t)] = t


def _view_like(base_tangent, view):
    """The view of ``base_tangent`` that ``view`` is of its base (torch's as_strided fallback)."""
    impl = view._impl
    return dispatcher.call("as_strided", base_tangent, impl.sizes, impl.strides, impl.storage_offset)


def _same_meta(a, b):
    """Same sizes, strides, offset and storage size (``utils::has_same_meta``)."""
    ia, ib = a._impl, b._impl
    return (ia.sizes == ib.sizes and ia.strides == ib.strides and ia.storage_offset == ib.storage_offset
            and ia.storage.nbytes() // ia.dtype.itemsize == ib.storage.nbytes() // ib.dtype.itemsize)


def _laid_out_like(tangent, t):
    """``tangent``'s values in a fresh tensor with ``t``'s layout: a view, at t's strides and
    offset, of zeros as long as t's storage (``_new_zeros_with_same_feature_meta``)."""
    impl = t._impl
    length = impl.storage.nbytes() // impl.dtype.itemsize
    flat = dispatcher.call("zeros", [length], dtype=tangent._impl.dtype, device=tangent._impl.device)
    view = dispatcher.call("as_strided", flat, impl.sizes, impl.strides, impl.storage_offset)
    dispatcher.call("copy_", view, tangent)
    return view


def set_fw_grad(t, tangent, level=0, inplace=False):
    """Give ``t`` the tangent ``tangent`` (``AutogradMeta::set_fw_grad``); a tangent of another
    layout than ``t``'s is copied into one of t's layout."""
    if tangent is None:
        return
    if isinstance(t, (list, tuple)):       # split, unbind: one tangent per output
        for out, out_tangent in zip(t, tangent):
            set_fw_grad(out, out_tangent, level, inplace)
        return
    dtype = t._impl.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        return              # an integer or bool output is not differentiable: it takes no tangent
    if fw_grad(tangent, level) is not None:
        # a formula that read a dual input itself, not its primal (binary_cross_entropy_with_logits'
        # weight): its tangent would carry a tangent of its own
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{level} "
                           "is not supported.")
    if inplace:
        tangent = _written_tangent(t, tangent, level)
        if tangent is None:
            return
    elif not _same_meta(tangent, t):
        tangent = _laid_out_like(tangent, t)
    _store(t, tangent, level)


def _written_tangent(t, tangent, level):
    """An in-place op's new tangent for ``t``: written into the existing one (None is returned:
    nothing more to store); on a view whose base has none, the base first gets zeros and the
    view's tangent becomes the same view of them, so the base sees the write."""
    grads = getattr(t, "_fw_grads", None)
    if grads is not None and level in grads and grads[level] is None:
        del grads[level]        # an unpacked primal written in place: it may take a tangent now
    existing = fw_grad(t, level)
    if existing is not None:
        if existing is not tangent:
            dispatcher.call("copy_", existing, tangent)
        return None
    if t._base is None:
        return tangent
    base_tangent = dispatcher.call("zeros_like", t._base, dtype=tangent._impl.dtype)
    _store(t._base, base_tangent, level)
    view = _view_like(base_tangent, t)
    dispatcher.call("copy_", view, tangent)
    return view


# ---------------------------------------------------------------------- what the formulas read
def primal(t):
    """``t`` without its tangent, for a formula to read (``_fw_primal``): a second handle on the
    same TensorImpl, so operations on it record no tangent, with ``t``'s place in the autograd
    graph, so a tangent's own gradient reaches ``t``'s inputs. None stays None."""
    if t is None or not hasattr(t, "_impl"):
        return t
    if isinstance(t, (list, tuple)):
        return [primal(x) for x in t]
    alias = type(t)._from_impl(t._impl)
    edge = gradient_edge(t) if t._requires_grad else None
    if edge is not None:
        alias._requires_grad = True
        if isinstance(edge[0], AccumulateGrad):
            alias._grad_accumulator = _Held(edge[0])     # gradients of the leaf go to the leaf's .grad
        else:
            alias._grad_fn, alias._output_nr = edge
    return alias


class _Held:
    """A strong reference called like the weak one a tensor keeps of its AccumulateGrad."""
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __call__(self):
        return self.node


def tangents(*tensors, zeros=True):
    """Each input's tangent, zeros where it has none (torch's efficient zero tensor; None with
    ``zeros=False``) and None for an absent optional input; a list input gives a list of them."""
    out = []
    for t in tensors:
        if isinstance(t, (list, tuple)):
            out.append(list(tangents(*t, zeros=zeros)))
        elif t is None or not hasattr(t, "_impl"):
            out.append(None)
        else:
            found = fw_grad(t)
            if found is None and zeros:
                found = dispatcher.call("zeros_like", primal(t))
            out.append(found)
    return tuple(out)


def promoted(tangent, *missing):
    """A tangent computed without the terms of inputs that have none, in the dtype their zeros
    would have given it: torch's zero tangents take part in type promotion (a float32 dual plus
    a float64 tensor has a float64 tangent)."""
    dtype = result_type(tangent, *(m for m in missing if m is not None and hasattr(m, "_impl")))
    return tangent if dtype is tangent._impl.dtype else tangent.to(dtype)


FILE_AN_ISSUE = ("Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?"
                 "template=feature-request.yml so that we can prioritize its implementation or submit a PR "
                 "adding the implementation to derivatives.yaml")


def check_no_fw_grad(name, *tensors):
    """An operator with no forward formula may not see a tangent (``TORCH_CHECK_NOT_IMPLEMENTED``)."""
    if has_fw_grad(*tensors):
        raise NotImplementedError(f"Trying to use forward AD with {name} that does not support it because it has "
                                  f"not been implemented yet.\n{FILE_AN_ISSUE}")


def check_out_no_fw_grad(name, *tensors):
    """An out= operator takes no tangent: its output is the caller's tensor."""
    if LEVELS and has_fw_grad(*tensors):
        raise NotImplementedError(f"Trying to use forward AD with {name} that does not support it because it is "
                                  "an out= function")


# ---------------------------------------------------------------------- dual tensors
def make_dual(tensor, tangent, level):
    """A view of ``tensor`` carrying ``tangent`` at ``level`` (``_make_dual`` in VariableTypeManual.cpp)."""
    if level < 0 or level >= len(LEVELS):
        raise RuntimeError("Invalid level given to _make_dual")
    if fw_grad(tensor, level) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {level} is not supported.")
    if fw_grad(tangent, level) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{level} "
                           "is not supported.")
    if tangent._impl.sizes != tensor._impl.sizes:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor._impl.sizes)} while the "
                           f"given forward gradient is of size {list(tangent._impl.sizes)}.")
    dual = dispatcher.call("view", tensor, list(tensor._impl.sizes))     # torch's dual is a view (ViewBackward0)
    set_fw_grad(dual, tangent, level)
    return dual


def unpack_dual(tensor, level):
    """``(primal, tangent)``: a view of ``tensor`` without the tangent, and the tangent as it is."""
    if level < 0 or level >= len(LEVELS):
        # a tensor with no tangent unpacks at any level; a dual one only at its own
        if any(fw_grad(tensor, active) is not None for active in range(len(LEVELS))):
            raise RuntimeError("Invalid level given to _fw_primal")
        return dispatcher.call("alias", tensor), None
    tangent = fw_grad(tensor, level)
    view = dispatcher.call("alias", tensor)
    _store(view, None, level)       # the alias op gave it the tangent's alias: the primal has none
    return view, tangent
