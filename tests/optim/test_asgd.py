"""ASGD against torch's single-tensor loop, and its multi-tensor loop with foreach=True: the same
bits in the parameters, the running average and η, μ and the step count over a few steps, in
float32 and float64, before and after the averaging starts (t0); a tensor lr and complex
parameters; the state dict through torch's optimizer and back; bad hyper-parameters and the step's
refusals with torch's classes and messages."""
import pytest
import torch
from helpers import (
    TOL,
    assert_same,
    assert_same_error,
    assert_same_state,
    config_id,
    run_trajectory,
    run_trajectory_through_torch,
    set_grads,
    twin_params,
)

import internals

CONFIGS = [dict(), dict(lr=0.1, lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1, maximize=True)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_asgd_trajectory(config, dtype):
    ours, theirs = run_trajectory(lambda p: internals.optim.ASGD(p, **config),
                                  lambda p: torch.optim.ASGD(p, foreach=False, **config), steps=6, dtype=dtype)
    assert_same_state(ours, theirs, ["step", "eta", "mu", "ax"])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("config", CONFIGS + [dict(lr=0.05, weight_decay=0.1)], ids=config_id)
def test_foreach_trajectory_is_torchs_foreach_trajectory(config, dtype):
    """torch's multi-tensor loop takes η·(g + λ·p) off the parameter and computes the next η in
    float32 from the step tensor: its bits, not the single-tensor loop's (η alone differs there
    by a few float32 ulps, which moves a float64 parameter by millions of its ulps)."""
    ours, theirs = run_trajectory(lambda p: internals.optim.ASGD(p, foreach=True, **config),
                                  lambda p: torch.optim.ASGD(p, foreach=True, **config), steps=6, dtype=dtype)
    assert_same_state(ours, theirs, ["step", "eta", "mu", "ax"])


def test_tensor_learning_rate_follows_torch():
    ours, theirs = run_trajectory(lambda p: internals.optim.ASGD(p, lr=internals.tensor([0.2]), t0=1),
                                  lambda p: torch.optim.ASGD(p, lr=torch.tensor([0.2]), t0=1, foreach=False), steps=3)
    assert_same_state(ours, theirs, ["step", "eta", "mu", "ax"])


def test_complex_parameter_moves_as_pairs_of_reals():
    results = []
    for lib in (internals, torch):
        p = lib.nn.Parameter(lib.tensor([1 + 2j, -0.5 + 0.25j]))
        opt = lib.optim.ASGD([p], lr=0.1, t0=1, weight_decay=0.1)
        for k in range(3):
            p.grad = lib.tensor([0.5 - 1j, 2 + 0.5j]) * (k + 1)
            opt.step()
        results.append((p.detach(), opt.state[p]["ax"]))
    for ours, theirs in zip(*results):
        assert_same(ours, theirs, **TOL)


def test_state_dict_round_trips_through_torch():
    config = CONFIGS[1]
    run_trajectory_through_torch(lambda p, **kw: internals.optim.ASGD(p, **{**config, "foreach": False, **kw}),
                                 lambda p, **kw: torch.optim.ASGD(p, **{**config, "foreach": False, **kw}), steps=3)


@pytest.mark.parametrize("bad", [dict(lr=-1), dict(weight_decay=-0.5)], ids=config_id)
def test_bad_hyper_parameters(bad):
    ours, theirs = twin_params()
    err_ours, err_theirs = assert_same_error(lambda: internals.optim.ASGD(ours, **bad),
                                             lambda: torch.optim.ASGD(theirs, **bad))
    assert str(err_ours) == str(err_theirs)


@pytest.mark.parametrize("option", [dict(capturable=True), dict(foreach=True, differentiable=True),
                                    dict(foreach=True, capturable=True)], ids=config_id)
def test_step_refusals_match_torch(option):
    ours, theirs = twin_params()
    opt_ours, opt_theirs = internals.optim.ASGD(ours, **option), torch.optim.ASGD(theirs, **option)
    set_grads(ours, theirs, torch.Generator().manual_seed(0))
    err_ours, err_theirs = assert_same_error(opt_ours.step, opt_theirs.step)
    assert str(err_ours) == str(err_theirs)
    assert_same(ours[0], theirs[0], **TOL)


def test_sparse_gradient_is_refused():
    def run(lib):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        opt = lib.optim.ASGD(emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        opt.step()
    err_ours, err_theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(err_ours) == str(err_theirs)
