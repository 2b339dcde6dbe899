"""``mark_dynamic`` and ``maybe_mark_dynamic`` (``torch/_dynamo/decorators.py``).

Both leave a note on the tensor itself, as torch's do (``_dynamo_dynamic_indices``,
``_dynamo_weak_dynamic_indices``); the compiler reads it when it traces a call with that tensor:
the marked dims are symbols from the first compile on, instead of after a recompile.
``mark_dynamic`` is strict: a marked dim that the trace pins to its one value (a guard
``Eq(s77, 3)``, from adding a tensor of static size 3) raises torch's
``ConstraintViolationError``. A size of 0 or 1 is exempt, as in torch: such a size is never
made a symbol, so the mark has nothing to hold, and the dim is static in silence (a later
size makes it dynamic as any other change does). ``maybe_mark_dynamic`` never raises.
"""

__all__ = ["mark_dynamic", "maybe_mark_dynamic"]


def _mark(t, index, attribute):
    if isinstance(index, (list, tuple)):
        for i in index:
            _mark(t, i, attribute)
        return
    if not isinstance(index, int):
        raise AssertionError(f"index must be an int, got {type(index).__name__}")
    marks = getattr(t, attribute, None)
    if marks is None:
        marks = set()
        setattr(t, attribute, marks)
    marks.add(index % max(t.dim(), 1))


def mark_dynamic(t, index, **kwargs):
    """Trace dim ``index`` (an int or a list of them) of ``t`` with a symbolic size; a trace
    that specializes it raises ConstraintViolationError."""
    _mark(t, index, "_dynamo_dynamic_indices")


def maybe_mark_dynamic(t, index):
    """As ``mark_dynamic``, and never an error if the dim is specialized after all."""
    _mark(t, index, "_dynamo_weak_dynamic_indices")


def strictly_marked_dims(t):
    """The dims of ``t`` that ``mark_dynamic`` marked: an error if the trace specializes them."""
    return set(getattr(t, "_dynamo_dynamic_indices", ()))


def marked_dims(t):
    """The dims of ``t`` marked dynamic, either way."""
    return strictly_marked_dims(t) | set(getattr(t, "_dynamo_weak_dynamic_indices", ()))
