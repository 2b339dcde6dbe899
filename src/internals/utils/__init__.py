"""Utilities (``torch/utils``): Python dispatch and pytree helpers, module backward hooks, and
``swap_tensors``, which exchanges the whole of two tensor objects while each keeps its identity."""
import copyreg
import weakref

__all__ = ["swap_tensors"]


def swap_tensors(t1, t2):
    """After the call ``t1`` is what ``t2`` was and the reverse (``torch/utils/__init__.py``):
    class, attributes, autograd metadata and the TensorImpl behind it, while every reference to
    ``t1`` (a module's, an optimizer's) still reaches the object ``t1``.

    A weak reference to either tensor would be left pointing at the other content, so one refuses
    the swap, as torch's does. A leaf whose gradient accumulator a graph already holds gets that
    accumulator poisoned: a backward through it would write into the swapped object. Torch also
    refuses tensors its C++ side holds more references to (a view's base, a saved tensor); those
    counts have no equivalent here, so that check is not made."""
    for name, t in (("t1", t1), ("t2", t2)):
        if weakref.getweakrefs(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    slots = _slot_names(type(t1))
    if slots != _slot_names(type(t2)):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t in (t1, t2):
        _poison_live_accumulator(t)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in slots:
        _swap_slot(t1, t2, slot)
    # An AccumulateGrad here names the Python object it writes into, where torch's names the
    # TensorImpl: after the swap each object makes its own afresh.
    t1._grad_accumulator = t2._grad_accumulator = None


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
