"""Adafactor against torch's single-tensor loop: parameters and factored second moments over a few
steps in float32 and float64, for a matrix (row and column factors), a batch of matrices and a
vector (a whole variance), every constructor option; the state dict through torch's optimizer and
back; bad hyper-parameters, complex parameters and sparse gradients refused with torch's classes
and messages. The step sizes come from norms (sums of squares) whose rounding depends on how the
CPU groups the sums, so the values are compared within a few units in the last place."""
import pytest
import torch
from helpers import (
    assert_same,
    assert_same_error,
    config_id,
    run_trajectory,
    run_trajectory_through_torch,
    twin_params,
)

import internals

ULPS = dict(ulps=8)
CONFIGS = [dict(), dict(lr=0.1, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=1.5, weight_decay=0.1, maximize=True)]


def assert_same_factors(ours, theirs):
    for o, t in zip(ours.state.values(), theirs.state.values(), strict=True):
        assert list(o) == list(t)
        for key in t:
            assert_same(o[key], t[key], **ULPS)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_adafactor_trajectory(config, dtype):
    ours, theirs = run_trajectory(lambda p: internals.optim.Adafactor(p, **config),
                                  lambda p: torch.optim.Adafactor(p, foreach=False, **config), steps=6,
                                  dtype=dtype, tol=ULPS)
    assert_same_factors(ours, theirs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_adafactor_foreach_trajectory(config, dtype):
    """``foreach=True``: torch's ``_multi_tensor_adafactor``, matrices and vectors in separate
    groups, the update scaled before it is added (the loop adds it with ``alpha``)."""
    ours, theirs = run_trajectory(lambda p: internals.optim.Adafactor(p, foreach=True, **config),
                                  lambda p: torch.optim.Adafactor(p, foreach=True, **config), steps=6,
                                  dtype=dtype, tol=ULPS)
    assert_same_factors(ours, theirs)


def test_a_batch_of_matrices_keeps_factors_per_matrix_and_a_tensor_lr_follows_torch():
    results = []
    for lib in (internals, torch):
        g = torch.Generator().manual_seed(2)
        p = lib.nn.Parameter(lib.from_torch(torch.randn(2, 3, 4, generator=g)) if lib is internals
                             else torch.randn(2, 3, 4, generator=g))
        opt = lib.optim.Adafactor([p], lr=lib.tensor([0.05]))
        for _ in range(3):
            grad = torch.randn(2, 3, 4, generator=g)
            p.grad = lib.from_torch(grad) if lib is internals else grad
            opt.step()
        results.append((p.detach(), opt.state[p]["row_var"], opt.state[p]["col_var"]))
    for ours, theirs in zip(*results):
        assert_same(ours, theirs, **ULPS)


def test_state_dict_round_trips_through_torch():
    config = CONFIGS[1]
    run_trajectory_through_torch(lambda p, **kw: internals.optim.Adafactor(p, **{**config, "foreach": False, **kw}),
                                 lambda p, **kw: torch.optim.Adafactor(p, **{**config, "foreach": False, **kw}),
                                 steps=3, tol=ULPS)


BAD = [dict(lr=-1), dict(beta2_decay=0.5), dict(eps=(-1, 1e-3)), dict(eps=(None, -1)), dict(d=0.5),
       dict(weight_decay=-1)]


@pytest.mark.parametrize("bad", BAD, ids=config_id)
def test_bad_hyper_parameters(bad):
    ours, theirs = twin_params()
    err_ours, err_theirs = assert_same_error(lambda: internals.optim.Adafactor(ours, **bad),
                                             lambda: torch.optim.Adafactor(theirs, **bad))
    assert str(err_ours) == str(err_theirs)


@pytest.mark.parametrize("case", ["complex", "sparse"])
def test_complex_parameters_and_sparse_gradients_are_refused(case):
    def run(lib):
        if case == "complex":
            p = lib.nn.Parameter(lib.tensor([1 + 1j, 2 - 1j]))
            p.grad = lib.ones_like(p)
            opt = lib.optim.Adafactor([p])
        else:
            emb = lib.nn.Embedding(4, 2, sparse=True)
            opt = lib.optim.Adafactor(emb.parameters())
            emb(lib.tensor([1, 2])).sum().backward()
        opt.step()
    err_ours, err_theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(err_ours) == str(err_theirs)
