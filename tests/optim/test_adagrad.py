"""Adagrad against torch's single-tensor loop: the same parameters and gradients each step give
the same bits in the parameters, the accumulators and the step counts; the constructor makes every
parameter's state (torch's does, so a fresh state dict lists it); bad hyper-parameters are refused
with torch's ValueError."""
import pytest
import torch
from helpers import TOL, assert_same, assert_same_error, run_trajectory, twin_params

import internals

CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, lr_decay=0.01),
    dict(lr=0.05, weight_decay=0.1, initial_accumulator_value=0.3),
    dict(lr=0.05, eps=1e-3, maximize=True),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_adagrad_trajectory(config):
    ours, theirs = run_trajectory(lambda p: internals.optim.Adagrad(p, **config),
                                  lambda p: torch.optim.Adagrad(p, foreach=False, **config))
    for o, t in zip(ours.state.values(), theirs.state.values()):
        assert_same(o["sum"], t["sum"], **TOL)
        assert_same(o["step"], t["step"], **TOL)


@pytest.mark.parametrize("lr", [[0.1], 0.1], ids=["one_element", "0_dim"])
def test_tensor_learning_rate_follows_torch(lr):
    """A tensor lr (one element, or 0-dim) with a decaying step size steps as torch's."""
    run_trajectory(lambda p: internals.optim.Adagrad(p, lr=internals.tensor(lr), lr_decay=0.3),
                   lambda p: torch.optim.Adagrad(p, lr=torch.tensor(lr), lr_decay=0.3, foreach=False), steps=4)


def test_a_tensor_learning_rate_that_requires_grad_is_refused_as_torch():
    """differentiable=True does not reach a tensor lr through Adagrad's step: torch's addcdiv_
    refuses it as its number argument, rather than silently dropping its gradient."""
    def step(lib):
        p = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        opt = lib.optim.Adagrad([p], lr=lib.tensor(0.1, requires_grad=True), differentiable=True)
        p.grad = lib.ones(2)
        opt.step()
    err_ours, err_theirs = assert_same_error(lambda: step(internals), lambda: step(torch))
    assert str(err_ours) == str(err_theirs)


def test_fresh_state_dict_lists_the_accumulators():
    ours, theirs = twin_params()
    ours = internals.optim.Adagrad(ours, initial_accumulator_value=0.5).state_dict()
    theirs = torch.optim.Adagrad(theirs, initial_accumulator_value=0.5).state_dict()
    assert sorted(ours["state"]) == sorted(theirs["state"]) == [0, 1]
    assert_same(ours["state"][1]["sum"], theirs["state"][1]["sum"], **TOL)
    assert ours["param_groups"] == theirs["param_groups"]


@pytest.mark.parametrize("bad", [dict(lr=-1), dict(lr_decay=-0.1), dict(weight_decay=-1),
                                 dict(initial_accumulator_value=-1), dict(eps=-1)])
def test_bad_hyper_parameters(bad):
    messages = []
    for lib in (torch, internals):
        with pytest.raises(ValueError) as info:
            lib.optim.Adagrad([lib.nn.Parameter(lib.zeros(2))], **bad)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
