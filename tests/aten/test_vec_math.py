"""exp_f32, the vectorizable exp of the generated CPU kernels, against the correctly rounded e**x."""
import numpy as np
import pytest
from numba import njit, prange

from internals._inductor.vec_math import exp_f32


@njit(parallel=True)
def _exp_all(out, x):
    for i in prange(x.size):
        out[i] = exp_f32(x[i])


def exp(x):
    out = np.empty_like(x)
    _exp_all(out, x)
    return out


def test_within_one_ulp_over_the_whole_float32_range():
    x = np.linspace(-103.9, 88.72, 3_000_001, dtype=np.float32)
    got, exact = exp(x).astype(np.float64), np.exp(x.astype(np.float64))
    normal = exact >= np.finfo(np.float32).tiny
    ulps = np.abs(got - exact)[normal] / np.spacing(exact[normal].astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 1.0
    # below the normal range the result is a subnormal (or 0): off by at most one subnormal step
    assert np.abs(got - exact)[~normal].max() <= np.finfo(np.float32).smallest_subnormal


@pytest.mark.parametrize("x, want", [
    (np.nan, np.nan), (np.inf, np.inf), (-np.inf, 0.0), (0.0, 1.0), (-0.0, 1.0), (88.7229, np.inf),
    (88.72, np.float32(np.exp(np.float64(np.float32(88.72))))), (-104.0, 0.0), (-1000.0, 0.0), (1e-30, 1.0)])
def test_special_values(x, want):
    got = exp(np.array([x], dtype=np.float32))[0]
    np.testing.assert_array_equal(got, np.float32(want))


def test_agrees_with_torch_exp_to_one_ulp():
    torch = pytest.importorskip("torch")
    x = torch.randn(100_000) * 30
    want = torch.exp(x).numpy()
    got = exp(x.numpy())
    finite = np.isfinite(want) & (want > 0)
    assert (np.abs(got[finite] - want[finite]) <= np.spacing(want[finite])).all()
