"""Chapter 1 exercise: the strides of a contiguous tensor (``c10::contiguous_strides``)."""
from ._runner import random_shape, run_cases, seeded


def check_contiguous_strides(fn, n=200, seed=0):
    """``fn(shape) -> tuple of strides`` for a contiguous (row-major) tensor of ``shape``, as
    ``torch.empty(shape).stride()`` gives them."""
    import torch  # torch is heavy: only a check needs it
    rng = seeded(seed)
    cases = [(random_shape(rng, max_dims=5, max_size=6),) for _ in range(n)]
    return run_cases("check_contiguous_strides", lambda s: tuple(fn(s)), cases,
                     lambda s: tuple(torch.empty(s).stride()))
