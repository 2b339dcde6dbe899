"""Chapter 4 exercise: a reduction loop (a row sum) written with Numba, checked against ``torch.sum``."""
import numpy as np

from ._runner import run_cases, seeded


def check_reduction_loop(fn, n=40, seed=0):
    """``fn(x) -> y``: ``x`` a 2-d float32 NumPy array (any strides), ``y`` its sums over dim 1,
    matching ``torch.sum(x, dim=1)`` to float32 accuracy."""
    import torch  # torch is heavy: only a check needs it
    rng = seeded(seed)
    np_rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        rows, cols = rng.randint(0, 9), rng.randint(0, 300)
        x = np_rng.standard_normal((rows, cols), dtype=np.float32)
        cases.append((x.T.copy().T if rng.random() < 0.3 else x,))

    def same(got, want):
        return got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-3)

    return run_cases("check_reduction_loop", lambda x: np.asarray(fn(x)), cases,
                     lambda x: torch.sum(torch.from_numpy(x), dim=1).numpy(), same)
