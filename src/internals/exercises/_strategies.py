"""Adversarial cases the checkers draw: sizes of 0 and 1, broadcast (stride 0) dims, transposes,
slices with steps, storage offsets. hypothesis shrinks a failing case to a small one."""
import functools
import math

from ..c10.tensor_impl import contiguous_strides

__all__ = ["sizes", "strided_views", "view_targets"]


def sizes(max_dims=5, max_size=6):
    """Shapes whose dims are often 0 or 1: the sizes where stride rules have their exceptions."""
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it
    dim = st.one_of(st.sampled_from([0, 1, 1, 2]), st.integers(0, max_size))
    return st.lists(dim, min_size=0, max_size=max_dims).map(tuple)


def _apply(draw, st, shape, strides, offset):
    """One view step over (shape, strides, offset): a transpose, a slice with a step, an expand of
    a size-1 dim, or an unsqueeze, as ``view``'s callers meet them."""
    n = len(shape)
    # transposes and slices most often: the steps after which a view can be impossible
    step = draw(st.sampled_from(["transpose", "transpose", "slice", "slice", "expand", "unsqueeze", "unsqueeze",
                                 "narrow_to_zero"]))
    shape, strides = list(shape), list(strides)
    if step == "transpose" and n >= 2:
        i, j = draw(st.permutations(range(n)))[:2]
        shape[i], shape[j] = shape[j], shape[i]
        strides[i], strides[j] = strides[j], strides[i]
    elif step == "slice" and n >= 1:
        d = draw(st.integers(0, n - 1))
        if shape[d] > 0:
            start = draw(st.integers(0, shape[d] - 1))
            every = draw(st.integers(1, 3))
            offset += start * strides[d]
            shape[d] = len(range(start, shape[d], every))
            strides[d] *= every
    elif step == "expand" and 1 in shape:
        d = shape.index(1)
        shape[d], strides[d] = draw(st.integers(0, 3)), 0
    elif step == "unsqueeze":
        d = draw(st.integers(0, n))
        shape.insert(d, 1)
        strides.insert(d, draw(st.sampled_from([1, 7, 0])))      # a size-1 dim's stride is free
    elif step == "narrow_to_zero" and n >= 1:
        shape[draw(st.integers(0, n - 1))] = 0
    return tuple(shape), tuple(strides), offset


def strided_views(max_dims=4, max_size=4, max_steps=3, min_steps=1):
    """(shape, strides, offset) reached from a contiguous tensor by a few view steps."""
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it


    # mostly dims of 2 or more, where a transpose or a step leaves dims that no longer merge
    dims = st.lists(st.sampled_from([0, 1, 1] + [n for n in range(2, max_size + 1) for _ in range(3)]),
                    min_size=0, max_size=max_dims).map(tuple)

    @st.composite
    def build(draw):
        shape = draw(dims)
        strides, offset = contiguous_strides(shape), 0
        for _ in range(draw(st.integers(min_steps, max_steps))):
            shape, strides, offset = _apply(draw, st, shape, strides, offset)
        return shape, strides, offset
    return build()


def view_targets(numel):
    """New shapes with ``numel`` elements, with size-1 dims sprinkled in (and zeros when empty)."""
    return _view_targets()(numel)


@functools.cache
def _view_targets():
    """``view_targets``' strategy, made once: ``st.composite`` reads its function's source each
    time it decorates one, which cost more than drawing when it ran for every drawn view."""
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it

    @st.composite
    def build(draw, numel):
        new, rest = [], numel
        if numel == 0:
            new = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 3)))] + [0]
        else:
            while rest > 1 and len(new) < 4:
                divisor = draw(st.sampled_from([k for k in range(2, rest + 1) if rest % k == 0]))
                new.append(divisor)
                rest //= divisor
            if rest > 1:
                new.append(rest)
        for _ in range(draw(st.integers(0, 2))):
            new.insert(draw(st.integers(0, len(new))), 1)
        new = draw(st.permutations(new))
        assert math.prod(new) == numel
        return tuple(new)
    return build
