"""Chapter 2 exercises: ``view``'s stride rule (``at::detail::computeStride``), the chapter's core
exercise (plug it in with ``internals.exercises.use_mine("view_strides", fn)``: every ``view`` and
``reshape`` then asks it), and broadcasting (``at::infer_size``)."""
import math

from ._runner import random_shape, run_cases, run_generated, seeded
from ._strategies import strided_views, view_targets


def check_view_strides(fn):
    """``fn(shape, strides, new_shape) -> tuple of strides`` for ``x.view(new_shape)`` of a tensor
    with this ``shape`` and ``strides``, or ``None`` where ``view`` must refuse (torch raises and
    asks for ``reshape``). Cases: transposed, sliced with steps, expanded (stride 0), size-0 and
    size-1 dims, 0-dim tensors."""
    import torch  # torch is heavy: only a check needs it
    from hypothesis import strategies as st  # hypothesis is heavy: only a checker needs it

    cases = strided_views().flatmap(lambda v: st.tuples(st.just(v[:2]), view_targets(math.prod(v[0]))))

    def check_one(case):
        (shape, strides), new_shape = case
        base = torch.empty_strided(shape, strides)
        try:
            torchs = tuple(base.view(new_shape).stride())
        except RuntimeError:
            torchs = None
        yours = fn(shape, strides, new_shape)
        yours = None if yours is None else tuple(yours)
        what = "refuses (None)" if torchs is None else f"gives strides {torchs}"
        assert yours == torchs, f"view {shape} with strides {strides} as {new_shape}: yours {yours}, torch {what}"
    return run_generated("check_view_strides", cases, check_one, max_examples=300)


def check_broadcast_shapes(fn, n=200, seed=0):
    """``fn(a, b) -> shape`` that both shapes broadcast to; it must raise where torch does."""
    import torch  # torch is heavy: only a check needs it
    rng = seeded(seed)
    cases = []
    for _ in range(n):
        a = random_shape(rng, max_dims=4, max_size=4)
        b = list(a[rng.randint(0, len(a)):])
        b = tuple(1 if rng.random() < 0.3 else (rng.randint(0, 4) if rng.random() < 0.15 else s) for s in b)
        b = random_shape(rng, max_dims=1, max_size=3, min_size=1) + b if rng.random() < 0.3 else b
        cases.append((a, b) if rng.random() < 0.5 else (b, a))
    return run_cases("check_broadcast_shapes", lambda a, b: tuple(fn(a, b)), cases,
                     lambda a, b: tuple(torch.broadcast_shapes(a, b)))
