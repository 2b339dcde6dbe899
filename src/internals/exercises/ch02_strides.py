"""Chapter 2 exercises: ``view``'s stride rule (``at::detail::computeStride``) and broadcasting
(``at::infer_size``)."""
import math

from ._runner import random_shape, run_cases, seeded


def _strided_case(rng, torch):
    """A shape and strides made by transposing and slicing a contiguous tensor, and a new shape
    with the same number of elements."""
    t = torch.empty(random_shape(rng, max_dims=4, max_size=4, min_size=1))
    if t.dim() >= 2 and rng.random() < 0.5:
        d0, d1 = rng.sample(range(t.dim()), 2)
        t = t.transpose(d0, d1)
    if t.dim() >= 1 and rng.random() < 0.3:
        d = rng.randrange(t.dim())
        t = t.narrow(d, 0, max(1, t.shape[d] - 1))
    numel, new = t.numel(), []
    rest = numel
    while rest > 1 and len(new) < 4:
        divisors = [k for k in range(2, rest + 1) if rest % k == 0]
        k = rng.choice(divisors)
        new.append(k)
        rest //= k
    if rest > 1:
        new.append(rest)
    rng.shuffle(new)
    if rng.random() < 0.2:
        new.insert(rng.randint(0, len(new)), 1)
    assert math.prod(new) == numel
    return tuple(t.shape), tuple(t.stride()), tuple(new)


def check_view_strides(fn, n=200, seed=0):
    """``fn(shape, strides, new_shape) -> tuple of strides``, or ``None`` where ``view`` must
    refuse (torch raises and asks for ``reshape``)."""
    import torch  # torch is heavy: only a check needs it
    rng = seeded(seed)
    cases = [_strided_case(rng, torch) for _ in range(n)]

    def reference(shape, strides, new_shape):
        try:
            return tuple(torch.empty_strided(shape, strides).view(new_shape).stride())
        except RuntimeError:
            return None

    return run_cases("check_view_strides", lambda *a: None if (r := fn(*a)) is None else tuple(r), cases,
                     reference)


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
