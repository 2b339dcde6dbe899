"""Differential tests of ``nn.init`` against torch: same seed, same weights.

After ``manual_seed`` in both libraries (or with a seeded ``generator=``), each initialiser must
fill the tensor with exactly torch's values and leave the generators in the same state (the next
draw agrees). The draws themselves are the same on every CPU; trunc_normal_'s density sampler also
compares ``log`` of a uniform draw with a squared distance, a comparison that a last-place
difference in ``log`` could flip, which these seeds do not meet.
"""
import math
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error

import internals


def both(seed):
    internals.manual_seed(seed)
    torch.manual_seed(seed)


def same(ours, theirs):
    assert_same(ours, theirs, rtol=0, atol=0)


def next_draws_agree():
    same(internals.rand(5), torch.rand(5))


CASES = {
    "uniform_": ((7, 9), dict(a=-0.3, b=0.8)),
    "normal_": ((33,), dict(mean=1.0, std=0.5)),
    "trunc_normal_": ((40, 3), dict(std=0.02)),
    "trunc_normal_-narrow": ((17, 5), dict(mean=0.3, std=2.0, a=-0.5, b=0.5)),
    "trunc_normal_-one-sided": ((64,), dict(mean=0.0, std=1.0, a=1.5, b=4.0)),
    "trunc_normal_-far-tail": ((20,), dict(mean=0.0, std=1.0, a=3.0, b=3.5)),
    "xavier_uniform_": ((6, 4, 3, 3), dict(gain=math.sqrt(2.0))),
    "xavier_normal_": ((12, 8), dict()),
    "kaiming_uniform_": ((10, 4, 5), dict(a=math.sqrt(5))),
    "kaiming_uniform_-fan_out-relu": ((10, 4), dict(mode="Fan_Out", nonlinearity="relu")),
    "kaiming_normal_": ((9, 16), dict(mode="fan_out", nonlinearity="selu")),
    "sparse_": ((10, 6), dict(sparsity=0.3)),
    "sparse_-std": ((7, 4), dict(sparsity=0.5, std=1.5)),
}


@pytest.mark.filterwarnings("ignore:mean is more than 2 std")      # the far-tail case; compared below
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_init_draws_torch_values(case, dtype):
    shape, kwargs = CASES[case]
    name = case.split("-")[0]
    both(3)
    ours = getattr(internals.nn.init, name)(internals.empty(*shape, dtype=getattr(internals, dtype)), **kwargs)
    theirs = getattr(torch.nn.init, name)(torch.empty(*shape, dtype=getattr(torch, dtype)), **kwargs)
    same(ours, theirs)
    next_draws_agree()


@pytest.mark.parametrize("name, kwargs", [("trunc_normal_", dict(std=3.0)), ("xavier_uniform_", dict()),
                                          ("kaiming_normal_", dict()), ("uniform_", dict())])
def test_init_with_a_generator_leaves_the_default_one_alone(name, kwargs):
    both(5)
    ours = getattr(internals.nn.init, name)(internals.empty(8, 6), generator=internals.Generator().manual_seed(1),
                                            **kwargs)
    theirs = getattr(torch.nn.init, name)(torch.empty(8, 6), generator=torch.Generator().manual_seed(1), **kwargs)
    same(ours, theirs)
    next_draws_agree()


def test_init_leaves_autograd_out_and_returns_the_tensor():
    for lib in (internals, torch):
        w = lib.empty(4, 3, requires_grad=True)
        for name in ("trunc_normal_", "eye_", "sparse_", "uniform_"):
            args = (0.5,) if name == "sparse_" else ()
            assert getattr(lib.nn.init, name)(w, *args) is w
            assert w.grad_fn is None and w.requires_grad and w._version > 0


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (6, 2)])
def test_eye_equals_torch(shape):
    same(internals.nn.init.eye_(internals.full(shape, 7.0)), torch.nn.init.eye_(torch.full(shape, 7.0)))


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 2, 3, 4), 3), ((4, 6, 3, 3), 2),
                                           ((2, 3, 1, 2, 5), 1), ((5, 2, 3), 1)])
def test_dirac_equals_torch(shape, groups):
    same(internals.nn.init.dirac_(internals.full(shape, 2.0), groups),
         torch.nn.init.dirac_(torch.full(shape, 2.0), groups))


@pytest.mark.parametrize("args", [("conv_transpose2d",), ("selu",), ("conv1d",), ("leaky_relu", 2),
                                  ("leaky_relu", 0.0)])
def test_calculate_gain_equals_torch(args):
    ours, theirs = internals.nn.init.calculate_gain(*args), torch.nn.init.calculate_gain(*args)
    assert ours == theirs and type(ours) is type(theirs)


ERRORS = [
    lambda lib: lib.nn.init.eye_(lib.empty(2, 2, 2)),
    lambda lib: lib.nn.init.dirac_(lib.empty(2, 2)),
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 2, 3), groups=2),
    lambda lib: lib.nn.init.sparse_(lib.empty(3), 0.1),
    lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3)),
    lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 2), mode="fan_avg"),
    lambda lib: lib.nn.init.calculate_gain("leaky_relu", True),
]


@pytest.mark.parametrize("call", ERRORS, ids=["eye-3d", "dirac-2d", "dirac-groups", "sparse-1d", "xavier-1d",
                                              "kaiming-mode", "gain-bool"])
def test_errors_equal_torch(call):
    ours, theirs = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(ours) == str(theirs)


def caught(fn):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in got]


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.init.trunc_normal_(lib.empty(3), mean=5.0, std=1.0),
    lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(0, 3)),
    lambda lib: lib.nn.init.kaiming_normal_(lib.empty(2, 0)),
    lambda lib: lib.nn.init.xavier_normal(lib.empty(2, 3)),
    lambda lib: lib.nn.init.constant(lib.empty(2, 3), 1.0),
], ids=["trunc-far-mean", "kaiming-uniform-empty", "kaiming-normal-empty", "deprecated-xavier", "deprecated-constant"])
def test_warnings_equal_torch(call):
    both(2)
    ours, theirs = caught(lambda: call(internals)), caught(lambda: call(torch))
    assert ours == theirs and ours


def test_deprecated_names_draw_as_the_new_ones():
    both(4)
    with pytest.warns(FutureWarning):
        ours = internals.nn.init.kaiming_uniform(internals.empty(5, 4))
    with pytest.warns(FutureWarning):
        theirs = torch.nn.init.kaiming_uniform(torch.empty(5, 4))
    same(ours, theirs)


def test_public_names_equal_torch():
    assert internals.nn.init.__all__ == torch.nn.init.__all__
    assert all(callable(getattr(internals.nn.init, name)) for name in internals.nn.init.__all__)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (2, 3, 4), (6, 2, 2), (1, 7)], ids=str)
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_orthogonal_matches_torch(shape, dtype):
    """The same normal draws, then LAPACK's QR in both (within a few ulps of the entries' scale,
    1/sqrt(rows)), the signs set alike; Q is orthogonal; the generators end in the same state."""
    both(7)
    ours = internals.nn.init.orthogonal_(internals.empty(shape, dtype=getattr(internals, dtype)), gain=1.5)
    theirs = torch.nn.init.orthogonal_(torch.empty(shape, dtype=getattr(torch, dtype)), gain=1.5)
    tol = 1e-6 if dtype == "float32" else 1e-14
    assert_same(ours, theirs, rtol=0, atol=tol)
    flat = ours.to_torch().reshape(shape[0], -1) / 1.5
    small = flat if shape[0] <= flat.shape[1] else flat.t()
    torch.testing.assert_close(small @ small.t(), torch.eye(small.shape[0], dtype=small.dtype), atol=10 * tol,
                               rtol=0)
    next_draws_agree()


@pytest.mark.parametrize("call", [lambda lib: lib.nn.init.orthogonal_(lib.empty(3)),
                                  lambda lib: lib.nn.init.orthogonal(lib.empty(3))], ids=["1d", "deprecated_1d"])
def test_orthogonal_errors_equal_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(lambda: call(internals), lambda: call(torch))
