"""Adadelta against torch's single-tensor loop: the same parameters and gradients each step give
the same bits in the parameters, both running averages and the step counts over 20 steps; the
state dict loads into torch's optimizer and back (cast to each parameter's dtype as torch casts
it); bad hyper-parameters, capturable on CPU parameters and sparse gradients are refused with
torch's classes and messages."""
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

CONFIGS = [
    dict(),
    dict(lr=0.5, rho=0.7, eps=1e-4),
    dict(lr=0.1, weight_decay=0.1),
    dict(lr=0.3, rho=0.95, maximize=True, weight_decay=0.01),
    dict(lr=0.2, rho=0.0),
    dict(lr=0.2, rho=1.0),
]


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_adadelta_trajectory(config):
    ours, theirs = run_trajectory(lambda p: internals.optim.Adadelta(p, **config),
                                  lambda p: torch.optim.Adadelta(p, foreach=False, **config))
    assert_same_state(ours, theirs, ["step", "square_avg", "acc_delta"])


def test_tensor_learning_rate_follows_torch():
    lr = 0.25
    run_trajectory(lambda p: internals.optim.Adadelta(p, lr=internals.tensor([lr])),
                   lambda p: torch.optim.Adadelta(p, lr=torch.tensor([lr]), foreach=False), steps=5)


@pytest.mark.parametrize("config", [dict(lr=0.5, rho=0.8), dict(weight_decay=0.1, maximize=True)], ids=config_id)
def test_state_dict_round_trips_through_torch(config):
    """Five steps here, the state dict loaded into torch's optimizer, five steps there, and back:
    the parameters and state equal those of fifteen uninterrupted steps of torch's."""
    run_trajectory_through_torch(
        lambda p, **kw: internals.optim.Adadelta(p, **{**config, "foreach": False, **kw}),
        lambda p, **kw: torch.optim.Adadelta(p, **{**config, "foreach": False, **kw}))


def test_state_dict_matches_torch_and_casts_into_a_float64_parameter():
    ours, theirs = run_trajectory(lambda p: internals.optim.Adadelta(p, weight_decay=0.1, foreach=False),
                                  lambda p: torch.optim.Adadelta(p, weight_decay=0.1, foreach=False), steps=2)
    sd_ours, sd_theirs = ours.state_dict(), theirs.state_dict()
    assert sd_ours["param_groups"] == sd_theirs["param_groups"]
    for i, state in sd_theirs["state"].items():
        assert list(sd_ours["state"][i]) == list(state)
        for key, value in state.items():
            assert_same(sd_ours["state"][i][key], value, **TOL)
    dtypes = []
    for lib, sd in ((internals, sd_ours), (torch, sd_theirs)):
        params = [lib.nn.Parameter(lib.zeros(3, 4, dtype=lib.float64)), lib.nn.Parameter(lib.zeros(4))]
        opt = lib.optim.Adadelta(params)
        opt.load_state_dict(sd)
        dtypes.append([str(v.dtype).split(".")[-1] for s in opt.state.values() for v in s.values()])
    assert dtypes[0] == dtypes[1]


BAD = [dict(lr=-1), dict(rho=-0.1), dict(rho=1.5), dict(eps=-1), dict(weight_decay=-1)]


@pytest.mark.parametrize("bad", BAD, ids=config_id)
def test_bad_hyper_parameters(bad):
    ours, theirs = twin_params()
    err_ours, err_theirs = assert_same_error(lambda: internals.optim.Adadelta(ours, **bad),
                                             lambda: torch.optim.Adadelta(theirs, **bad))
    assert str(err_ours) == str(err_theirs)


def test_two_element_tensor_lr_is_refused():
    ours, theirs = twin_params()
    err_ours, err_theirs = assert_same_error(lambda: internals.optim.Adadelta(ours, lr=internals.ones(2)),
                                             lambda: torch.optim.Adadelta(theirs, lr=torch.ones(2)))
    assert str(err_ours) == str(err_theirs)


@pytest.mark.parametrize("option", [dict(capturable=True), dict(foreach=True, differentiable=True),
                                    dict(foreach=True, differentiable=True, capturable=True)], ids=config_id)
def test_step_refusals_match_torch(option):
    """capturable on CPU parameters (Adadelta's message lists no XLA); the multi-tensor step's
    refusal of differentiable, made before its capturable check."""
    ours, theirs = twin_params()
    opt_ours = internals.optim.Adadelta(ours, **option)
    opt_theirs = torch.optim.Adadelta(theirs, **option)
    set_grads(ours, theirs, torch.Generator().manual_seed(0))
    err_ours, err_theirs = assert_same_error(opt_ours.step, opt_theirs.step)
    assert str(err_ours) == str(err_theirs)
    assert_same(ours[0], theirs[0], **TOL)          # nothing moved


def test_sparse_gradient_is_refused():
    def run(lib):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        opt = lib.optim.Adadelta(emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        opt.step()
    err_ours, err_theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(err_ours) == str(err_theirs)
