"""Chapter 3 exercise: how many elements of storage a view needs (``at::detail::computeStorageNbytes``
divided by the element size)."""
from ._runner import random_shape, run_cases, seeded


def check_storage_size(fn, n=200, seed=0):
    """``fn(shape, strides, offset) -> int``: the fewest storage elements a tensor with this
    geometry reaches into (0 for a tensor with no elements)."""
    import torch  # torch is heavy: only a check needs it
    rng = seeded(seed)
    cases = []
    for _ in range(n):
        shape = random_shape(rng, max_dims=4, max_size=4)
        strides = tuple(rng.randint(0, 12) for _ in shape)
        cases.append((shape, strides, rng.randint(0, 5)))

    def reference(shape, strides, offset):
        t = torch.empty_strided(shape, strides, dtype=torch.uint8)  # one byte per element
        return 0 if t.numel() == 0 else t.untyped_storage().nbytes() + offset

    return run_cases("check_storage_size", lambda *a: int(fn(*a)), cases, reference)
