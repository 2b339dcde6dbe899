"""``quantile``/``nanquantile`` (every interpolation), ``nanmedian`` (all elements and along a
dim) and ``unique_consecutive`` (with ``return_inverse``, ``return_counts``, ``dim``) against
torch: PyTorch's OpInfo samples (as given and non-contiguous), errors, grad_fn names and
gradients, and the CUDA kernels.

The values are compared bit for bit, but for quantile's interpolation: torch's ``lerp`` on the
two neighbours fuses its multiply-add in the vectorized loop and not in the scalar one, so its
last bit follows the CPU and the loop a row lands in (``LERP_ULPS``). Which index
``nanmedian`` returns among equal values, or in a row of NaN only, is an accident of
``std::nth_element`` (CONTRIBUTING.md: undefined); the cases below have one answer.
"""
import pytest
import torch
from helpers import (
    Adapter,
    assert_same,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    fn,
    opinfo_cases,
)

import internals

ADAPTERS = {
    "quantile": Adapter(fn("quantile"), "quantile", kwargs=("dim", "keepdim", "interpolation")),
    "nanquantile": Adapter(fn("nanquantile"), "nanquantile", kwargs=("dim", "keepdim", "interpolation")),
    "nanmedian": Adapter(fn("nanmedian"), "nanmedian", kwargs=("dim", "keepdim")),
    "unique_consecutive": Adapter(internals.unique_consecutive, "unique_consecutive",
                                  kwargs=("return_inverse", "return_counts", "dim")),
}
CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool, torch.float16))


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


NAN = float("nan")
LERP_ULPS = 4     # one rounding of the neighbours, counted in a result that can be smaller
ROWS = [[1.0, NAN, 3.0, 2.0], [4.0, 4.0, NAN, NAN], [5.0, 1.0, 2.0, 0.5]]
# inputs with many distinct values, made once by torch (both libraries read the same numbers)
WAVES = torch.arange(24.0).reshape(2, 3, 4).cos().tolist()
PROGRAMS = {
    **{f"quantile {mode}": lambda lib, mode=mode: lib.quantile(
        lib.tensor(ROWS).nan_to_num(), lib.tensor([0.0, 0.25, 0.5, 0.9, 1.0]), dim=1, keepdim=True,
        interpolation=mode) for mode in ("linear", "lower", "higher", "midpoint", "nearest")},
    **{f"nanquantile {mode}": lambda lib, mode=mode: lib.nanquantile(
        lib.tensor(ROWS), 0.4, dim=0, interpolation=mode) for mode in ("linear", "lower", "higher", "midpoint",
                                                                       "nearest")},
    "quantile of NaN is NaN": lambda lib: lib.quantile(lib.tensor(ROWS), 0.5, dim=1),
    "quantile over everything": lambda lib: lib.tensor(ROWS).nan_to_num().quantile(lib.tensor([0.1, 0.7])),
    "quantile keepdim over everything": lambda lib: lib.quantile(lib.tensor(ROWS).nan_to_num(), 0.3, keepdim=True),
    "quantile of a 3-d middle dim": lambda lib: lib.quantile(lib.tensor(WAVES),
                                                             lib.tensor([0.2, 0.6]), dim=1),
    "quantile of doubles": lambda lib: lib.quantile(lib.tensor(WAVES[1], dtype=lib.float64), 0.33),
    "quantile of a scalar": lambda lib: lib.quantile(lib.tensor(3.0), 0.5, dim=0),
    "nanquantile of NaN only": lambda lib: lib.nanquantile(lib.tensor([NAN, NAN]), 0.5),
    "quantile q out of range": lambda lib: lib.quantile(lib.ones(3), 1.5),
    "nanquantile q out of range": lambda lib: lib.nanquantile(lib.ones(3), -0.5),
    "quantile q tensor out of range": lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5, 1.5])),
    "quantile of integers": lambda lib: lib.quantile(lib.arange(3), 0.5),
    "quantile of half": lambda lib: lib.quantile(lib.ones(3, dtype=lib.float16), 0.5),
    "quantile interpolation": lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="cubic"),
    "quantile of nothing": lambda lib: lib.quantile(lib.ones(0), 0.5),
    "quantile q dtype": lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5], dtype=lib.float64)),
    "quantile q of 2 dims": lambda lib: lib.quantile(lib.ones(3), lib.ones(2, 2) * 0.5),
    "quantile dim": lambda lib: lib.quantile(lib.ones(3), 0.5, dim=2),
    "nanmedian": lambda lib: lib.nanmedian(lib.tensor(ROWS)),
    "nanmedian along a dim": lambda lib: lib.nanmedian(lib.tensor([[1.0, NAN, 3.0, 2.0], [5.0, 1.0, 2.0, 7.0]]), 1),
    "nanmedian keepdim": lambda lib: lib.tensor([[1.0, NAN], [NAN, NAN], [3.0, 2.0]]).nanmedian(0, keepdim=True),
    "nanmedian of integers": lambda lib: lib.nanmedian(lib.tensor([3, 1, 2, 4])),
    "nanmedian of NaN only": lambda lib: lib.nanmedian(lib.tensor([NAN, NAN, NAN])),
    "nanmedian of nothing": lambda lib: lib.nanmedian(lib.ones(0)),
    "nanmedian of an empty dim": lambda lib: lib.nanmedian(lib.ones(2, 0), 1),
    "nanmedian of bools": lambda lib: lib.nanmedian(lib.ones(2, dtype=lib.bool)),
    "nanmedian of bools along a dim": lambda lib: lib.nanmedian(lib.ones(2, dtype=lib.bool), 0),
    "nanmedian of a scalar": lambda lib: lib.nanmedian(lib.tensor(2.5), 0),
    "unique_consecutive": lambda lib: lib.unique_consecutive(lib.tensor([1, 1, 2, 2, 3, 1, 1, 2])),
    "unique_consecutive with all": lambda lib: lib.unique_consecutive(
        lib.tensor([[1, 1, 2], [2, 3, 3]]), return_inverse=True, return_counts=True),
    "unique_consecutive counts": lambda lib: lib.tensor([True, True, False, True]).unique_consecutive(
        return_counts=True),
    "unique_consecutive keeps NaN apart": lambda lib: lib.unique_consecutive(lib.tensor([NAN, NAN, 1.0, 1.0]),
                                                                             return_inverse=True),
    "unique_consecutive along dim 0": lambda lib: lib.unique_consecutive(
        lib.tensor([[1, 1], [1, 1], [2, 3], [1, 1]]), return_inverse=True, return_counts=True, dim=0),
    "unique_consecutive along dim 1": lambda lib: lib.unique_consecutive(
        lib.tensor([[1, 1, 2, 2], [3, 3, 4, 5]]), return_counts=True, dim=1),
    "unique_consecutive of a scalar": lambda lib: lib.unique_consecutive(lib.tensor(3.0), return_inverse=True,
                                                                         return_counts=True),
    "unique_consecutive of a scalar along dim 0": lambda lib: lib.unique_consecutive(lib.tensor(3.0), dim=0),
    "unique_consecutive dim": lambda lib: lib.unique_consecutive(lib.ones(3), dim=2),
    "unique_consecutive of nothing": lambda lib: lib.unique_consecutive(lib.ones(0), return_inverse=True,
                                                                        return_counts=True),
    "unique_consecutive of no slices": lambda lib: lib.unique_consecutive(lib.ones(0, 2), return_inverse=True,
                                                                          return_counts=True, dim=0),
    "unique_consecutive of empty slices": lambda lib: lib.unique_consecutive(lib.ones(2, 0), dim=0),
}


def _outcome(lib, program):
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 -- the class and message are what is compared
        return "error", type(exc).__name__, str(exc)
    return tuple(result) if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_everyday_calls_and_errors(name):
    """Values, dtypes, sizes and strides bit for bit, or torch's exception class and message."""
    ours, theirs = _outcome(internals, PROGRAMS[name]), _outcome(torch, PROGRAMS[name])
    if theirs[0] == "error":
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    interpolated = "quantile" in name and not any(mode in name for mode in ("lower", "higher", "nearest"))
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t, ulps=LERP_ULPS) if interpolated else assert_same(o, t, rtol=0, atol=0)


GRAD_CASES = {
    "nanmedian": lambda lib, x, t: lib.where(x > 2, lib.tensor(NAN, dtype=lib.float64), x * t).nanmedian(),
    "nanmedian of ties": lambda lib, x, t: (x * 0 + t).nanmedian(),
    "nanmedian along a dim": lambda lib, x, t: lib.where(x > 2, lib.tensor(NAN, dtype=lib.float64),
                                                         x * t).nanmedian(1).values,
    "quantile linear": lambda lib, x, t: lib.quantile(x * t, lib.tensor([0.2, 0.5], dtype=lib.float64), dim=1),
    "quantile midpoint": lambda lib, x, t: lib.quantile(x * t, 0.5, dim=0, interpolation="midpoint"),
    "quantile nearest": lambda lib, x, t: lib.quantile(x * t, 0.7, interpolation="nearest"),
    "nanquantile": lambda lib, x, t: lib.nanquantile(lib.where(x > 2, lib.tensor(NAN, dtype=lib.float64), x * t),
                                                     0.3, dim=1, keepdim=True),
    "vdot": lambda lib, x, t: lib.vdot((x * t).reshape(-1), x.reshape(-1)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


def test_unique_consecutive_has_no_derivative():
    for lib in (torch, internals):
        x = lib.tensor([1.0, 1.0, 2.0], requires_grad=True)
        out = lib.unique_consecutive(x)
        assert type(out.grad_fn).__name__ == "UniqueConsecutiveBackward0"
        with pytest.raises(NotImplementedError, match="the derivative for 'unique_consecutive' is not implemented"):
            out.sum().backward()


CUDA_PROGRAMS = {
    "nanmedian": lambda lib, d: lib.nanmedian(lib.tensor([[1.0, NAN, 3.0], [2.0, 5.0, 4.0]], device=d), 1),
    "quantile": lambda lib, d: (lib.quantile(lib.tensor(WAVES[0], device=d), 0.4, dim=1),),
    "unique_consecutive": lambda lib, d: lib.unique_consecutive(lib.tensor([1, 1, 2, 1], device=d),
                                                                return_inverse=True, return_counts=True),
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels(name):
    """The CUDA path (simulated here) gives torch's CPU answer."""
    ours, theirs = CUDA_PROGRAMS[name](internals, "cuda"), CUDA_PROGRAMS[name](torch, "cpu")
    for o, t in zip(ours, theirs, strict=True):
        assert o.device.type == "cuda"
        assert_same(o.cpu(), t, ulps=LERP_ULPS)
