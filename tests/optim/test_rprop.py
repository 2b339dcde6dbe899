"""Rprop against torch's single-tensor loop: the same parameters and gradients each step give the
same bits in the parameters, the per-element step sizes, the previous gradients and the step
counts over 20 steps (the step sizes grow while a sign holds, shrink and skip a move where it
flips, within their bounds); the state dict loads into torch's optimizer and back; bad etas, a
learning rate below zero, capturable on CPU parameters, differentiable with foreach and sparse
gradients are refused with torch's classes and messages."""
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
    dict(lr=0.1, etas=(0.3, 1.5)),
    dict(lr=0.05, step_sizes=(1e-3, 0.2)),
    dict(lr=0.01, etas=(0.6, 1.1), step_sizes=(0.005, 0.02), maximize=True),
    dict(lr=0.0),
]


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_rprop_trajectory(config):
    ours, theirs = run_trajectory(lambda p: internals.optim.Rprop(p, **config),
                                  lambda p: torch.optim.Rprop(p, foreach=False, **config))
    assert_same_state(ours, theirs, ["step", "prev", "step_size"])


def test_sign_flips_and_zero_gradients_as_torch():
    """Gradients that keep, flip and zero their signs element by element, so that every branch
    of the masked writes runs on each step."""
    results = []
    for lib in (internals, torch):
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5, 3.0]))
        opt = lib.optim.Rprop([p], lr=0.1, step_sizes=(0.01, 0.3))
        for grad in ([1.0, -1.0, 0.0, 2.0], [2.0, 1.0, 1.0, 0.0], [-1.0, 3.0, -0.5, -2.0],
                     [-0.5, -3.0, 0.0, 1.0], [4.0, 4.0, 4.0, 4.0]):
            p.grad = lib.tensor(grad)
            opt.step()
        state = opt.state[p]
        results.append([p.detach(), state["prev"], state["step_size"], state["step"]])
    for ours, theirs in zip(*results):
        assert_same(ours, theirs, **TOL)


def test_tensor_learning_rate_follows_torch():
    run_trajectory(lambda p: internals.optim.Rprop(p, lr=internals.tensor([0.05])),
                   lambda p: torch.optim.Rprop(p, lr=torch.tensor([0.05]), foreach=False), steps=5)


@pytest.mark.parametrize("config", [dict(lr=0.05, etas=(0.4, 1.3)), dict(step_sizes=(1e-4, 0.05), maximize=True)],
                         ids=config_id)
def test_state_dict_round_trips_through_torch(config):
    """The step sizes travel in the state: torch's optimizer loaded with them goes on where
    internals' stopped (its constructor's learning rate no longer matters), and back."""
    run_trajectory_through_torch(
        lambda p, **kw: internals.optim.Rprop(p, **{**config, "foreach": False, **kw}),
        lambda p, **kw: torch.optim.Rprop(p, **{**config, "foreach": False, **kw}))


def test_state_dict_matches_torch_and_casts_into_a_float64_parameter():
    ours, theirs = run_trajectory(lambda p: internals.optim.Rprop(p, foreach=False),
                                  lambda p: torch.optim.Rprop(p, foreach=False), steps=2)
    sd_ours, sd_theirs = ours.state_dict(), theirs.state_dict()
    assert sd_ours["param_groups"] == sd_theirs["param_groups"]
    dtypes = []
    for lib, sd in ((internals, sd_ours), (torch, sd_theirs)):
        params = [lib.nn.Parameter(lib.zeros(3, 4, dtype=lib.float64)), lib.nn.Parameter(lib.zeros(4))]
        opt = lib.optim.Rprop(params)
        opt.load_state_dict(sd)
        dtypes.append([str(v.dtype).split(".")[-1] for s in opt.state.values() for v in s.values()])
    assert dtypes[0] == dtypes[1]


BAD = [dict(lr=-1), dict(etas=(0.0, 1.2)), dict(etas=(1.0, 1.2)), dict(etas=(0.5, 1.0)), dict(etas=(0.5, 0.9))]


@pytest.mark.parametrize("bad", BAD, ids=config_id)
def test_bad_hyper_parameters(bad):
    ours, theirs = twin_params()
    err_ours, err_theirs = assert_same_error(lambda: internals.optim.Rprop(ours, **bad),
                                             lambda: torch.optim.Rprop(theirs, **bad))
    assert str(err_ours) == str(err_theirs)


def test_two_element_tensor_lr_is_refused():
    ours, theirs = twin_params()
    err_ours, err_theirs = assert_same_error(lambda: internals.optim.Rprop(ours, lr=internals.ones(2)),
                                             lambda: torch.optim.Rprop(theirs, lr=torch.ones(2)))
    assert str(err_ours) == str(err_theirs)


@pytest.mark.parametrize("option", [dict(capturable=True), dict(foreach=True, differentiable=True)], ids=config_id)
def test_step_refusals_match_torch(option):
    ours, theirs = twin_params()
    opt_ours = internals.optim.Rprop(ours, **option)
    opt_theirs = torch.optim.Rprop(theirs, **option)
    set_grads(ours, theirs, torch.Generator().manual_seed(0))
    err_ours, err_theirs = assert_same_error(opt_ours.step, opt_theirs.step)
    assert str(err_ours) == str(err_theirs)
    assert_same(ours[0], theirs[0], **TOL)          # nothing moved


def test_foreach_and_differentiable_without_gradients_is_a_no_op_as_torch():
    """torch's multi-tensor step returns before its differentiable check when no parameter has a
    gradient."""
    for lib in (internals, torch):
        p = lib.ones(3, requires_grad=True)
        lib.optim.Rprop([p], foreach=True, differentiable=True).step()


def test_sparse_gradient_is_refused():
    def run(lib):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        opt = lib.optim.Rprop(emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        opt.step()
    err_ours, err_theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(err_ours) == str(err_theirs)
