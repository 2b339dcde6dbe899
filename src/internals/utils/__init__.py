"""Utilities (``torch/utils``): Python dispatch and pytree helpers, module backward hooks, and
``swap_tensors``, which exchanges the whole of two tensor objects while each keeps its identity."""
import copyreg
import gc
import weakref

__all__ = ["swap_tensors"]


def swap_tensors(t1, t2):
    """After the call ``t1`` is what ``t2`` was and the reverse (``torch/utils/__init__.py``):
    class, attributes, autograd metadata and the TensorImpl behind it, while every reference to
    ``t1`` (a module's, an optimizer's) still reaches the object ``t1``.

    A weak reference to either tensor would be left pointing at the other content, so one refuses
    the swap, as torch's does. A leaf whose gradient accumulator a graph already holds gets that
    accumulator poisoned: a backward through it would write into the swapped object. A tensor
    that other parts of the library hold (a view's base, a tensor saved for backward) is refused,
    as torch refuses one whose TensorImpl has more owners than its Python object and its
    AccumulateGrad (``_use_count``)."""
    for name, t in (("t1", t1), ("t2", t2)):
        if weakref.getweakrefs(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    slots = _slot_names(type(t1))
    for t in (t1, t2):      # torch asks each for its ``_use_count`` after comparing the slots
        if not hasattr(t, "_impl"):
            raise AttributeError(f"'{type(t).__name__}' object has no attribute '_use_count'")
    if slots != _slot_names(type(t2)):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    _check_use_count(t1, "t1")
    _check_use_count(t2, "t2")
    for t in (t1, t2):
        _poison_live_accumulator(t)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in slots:
        _swap_slot(t1, t2, slot)
    # An AccumulateGrad here names the Python object it writes into, where torch's names the
    # TensorImpl: after the swap each object makes its own afresh.
    t1._grad_accumulator = t2._grad_accumulator = None


def _use_count(t):
    """How many owners torch's TensorImpl behind ``t`` would have: the Python object, each live
    view (a view keeps its base), a tensor whose ``.grad`` it is, each SavedVariable that keeps
    ``t`` itself (an input to a recorded op), and the AccumulateGrad a graph keeps alive. Other
    Python references share the one Python object, so they are not counted, as in torch."""
    from ..autograd.graph import SavedVariable  # aten's kernels import this package: a real cycle

    count = 1
    for holder in gc.get_referrers(t):
        if isinstance(holder, SavedVariable):
            count += holder.data is t
        elif getattr(holder, "_impl", None) is not None:
            count += (getattr(holder, "_base", None) is t) + (getattr(holder, "_grad", None) is t)
    ref = getattr(t, "_grad_accumulator", None)
    return count + (ref is not None and ref() is not None)


def _check_use_count(t, name):
    """torch's ``check_use_count``: beyond its Python object, a tensor may have one owner only, the
    AccumulateGrad of a leaf (whose node is then poisoned); asking a leaf that has no live
    AccumulateGrad for its gradient edge makes one, which is an owner too."""
    from ..autograd.graph import gradient_edge  # aten's kernels import this package: a real cycle

    count = _use_count(t)
    if count <= 1:
        return
    if count == 2 and t._grad_fn is None:
        if not t._requires_grad:
            raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                               "gradients")
        edge = gradient_edge(t)
        if edge is not None and _use_count(t) == 2:
            return
    raise RuntimeError(f"Expected use_count of {name} to be 1 or 2 with an AccumulateGrad node but got {count} "
                       "make sure you are not holding references to the tensor in other places.")


def _slot_names(cls):
    """The slots of ``cls`` and its bases (the TensorBase slots hold the TensorImpl and the
    autograd metadata, which torch swaps in C++)."""
    return set(copyreg._slotnames(cls))


def _swap_slot(t1, t2, slot):
    has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
    v1, v2 = getattr(t1, slot, None), getattr(t2, slot, None)
    for t, has, value in ((t1, has2, v2), (t2, has1, v1)):
        if has:
            setattr(t, slot, value)
        elif hasattr(t, slot):
            delattr(t, slot)


def _poison(grad_outputs):
    raise RuntimeError(
        "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you try "
        "to run backward on a tensor that was swapped. For a module m with "
        "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the device or dtype "
        "of the module (e.g. `m.cpu()` or `m.half()`) between running forward and backward. To resolve this, "
        "please only change the device/dtype before running forward (or after both forward and backward).")


def _poison_live_accumulator(t):
    """A graph recorded before the swap reaches this leaf through its AccumulateGrad: make that node
    raise if a backward ever runs it."""
    from ..autograd.graph import grad_accumulator  # aten's kernels import this package: a real cycle

    ref = getattr(t, "_grad_accumulator", None)
    if ref is not None and ref() is not None and t._grad_fn is None:
        grad_accumulator(t).register_prehook(_poison)
