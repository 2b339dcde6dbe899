"""Adamax, NAdam and RAdam against torch's single-tensor loops: the same parameters and gradients
each step give the same bits in the parameters and every state tensor, in float32 and float64,
over every option their constructors take (weight decay plain and decoupled, NAdam's momentum
decay, maximize, a tensor lr, complex parameters, a differentiable step); the state dict loads
into torch's optimizer and back; a group added later starts its own state; bad hyper-parameters,
capturable on CPU parameters, foreach with differentiable and sparse gradients are refused with
torch's classes and messages."""
import pytest
import torch
from helpers import (
    TOL,
    assert_same,
    assert_same_error,
    assert_same_result_or_error,
    assert_same_state,
    config_id,
    run_trajectory,
    run_trajectory_through_torch,
    set_grads,
    twin_params,
)

import internals

STEPS = 6
STATE_KEYS = {"Adamax": ["step", "exp_avg", "exp_inf"], "NAdam": ["step", "mu_product", "exp_avg", "exp_avg_sq"],
              "RAdam": ["step", "exp_avg", "exp_avg_sq"]}
CONFIGS = {
    "Adamax": [dict(), dict(lr=0.1, betas=(0.5, 0.7), eps=1e-3, weight_decay=0.1, maximize=True)],
    "NAdam": [dict(), dict(lr=0.1, betas=(0.5, 0.7), weight_decay=0.1, momentum_decay=0.3, maximize=True),
              dict(lr=0.1, weight_decay=0.2, decoupled_weight_decay=True)],
    # RAdam's first steps are plain momentum (ρ_t ≤ 5); betas (0.5, 0.6) leave them at once
    "RAdam": [dict(), dict(lr=0.1, betas=(0.5, 0.6), weight_decay=0.1, maximize=True),
              dict(lr=0.1, betas=(0.8, 0.6), weight_decay=0.2, decoupled_weight_decay=True)],
}
CASES = [(name, config) for name, configs in CONFIGS.items() for config in configs]


def _ids(case):
    return f"{case[0]}-{config_id(case[1])}" if isinstance(case, tuple) else None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_trajectory_equals_torch(case, dtype):
    name, config = case
    ours, theirs = run_trajectory(lambda p: getattr(internals.optim, name)(p, **config),
                                  lambda p: getattr(torch.optim, name)(p, foreach=False, **config),
                                  steps=STEPS, dtype=dtype)
    assert_same_state(ours, theirs, STATE_KEYS[name])


@pytest.mark.parametrize("name", CONFIGS)
def test_tensor_learning_rate_follows_torch(name):
    run_trajectory(lambda p: getattr(internals.optim, name)(p, lr=internals.tensor([0.05])),
                   lambda p: getattr(torch.optim, name)(p, lr=torch.tensor([0.05]), foreach=False), steps=3)


@pytest.mark.parametrize("name", CONFIGS)
def test_complex_parameter_moves_as_pairs_of_reals(name):
    """A complex parameter is stepped through real views, as torch steps it."""
    results = []
    for lib in (internals, torch):
        p = lib.nn.Parameter(lib.tensor([1 + 2j, -0.5 + 0.25j, 3 - 1j]))
        opt = getattr(lib.optim, name)([p], lr=0.1, weight_decay=0.1)
        for k in range(3):
            p.grad = lib.tensor([0.5 - 1j, 2 + 0.5j, -1 + 1j]) * (k + 1)
            opt.step()
        results.append(p.detach())
    assert_same(results[0], results[1], ulps=2)


@pytest.mark.parametrize("lr_is_a_tensor", [True, False], ids=["tensor_lr", "float_lr"])
@pytest.mark.parametrize("name", CONFIGS)
def test_differentiable_step_as_torch(name, lr_is_a_tensor):
    """differentiable=True: the step's graph carries a later loss's gradient to the parameters
    before it (and to a tensor lr), or fails as torch's does: Adamax hands a tensor lr to
    ``addcdiv_``'s number, and its in-place maximum, like NAdam's in-place product of momenta
    under a tensor lr, overwrites what the graph saved."""
    def program(lib):
        lr = lib.tensor(0.1, dtype=lib.float64, requires_grad=True) if lr_is_a_tensor else 0.1
        w = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        p = w.clone()
        opt = getattr(lib.optim, name)([p], lr=lr, betas=(0.5, 0.6), differentiable=True)
        for k in range(2):
            p.grad = lib.tensor([0.3, -0.2, 0.7], dtype=lib.float64) * (k + 1)
            opt.step()
        return lib.autograd.grad((p * p).sum(), (lr, w) if lr_is_a_tensor else (w,))
    assert_same_result_or_error(program, tol=dict(rtol=1e-14, atol=1e-14))


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[6]], ids=_ids)
def test_state_dict_round_trips_through_torch(case):
    """Five steps here, the state dict loaded into torch's optimizer, five steps there, and back:
    the parameters and state equal those of fifteen uninterrupted steps of torch's."""
    name, config = case
    run_trajectory_through_torch(
        lambda p, **kw: getattr(internals.optim, name)(p, **{**config, "foreach": False, **kw}),
        lambda p, **kw: getattr(torch.optim, name)(p, **{**config, "foreach": False, **kw}), legs=3, steps=3)


@pytest.mark.parametrize("name", CONFIGS)
def test_state_dict_equals_torchs_and_a_group_added_later_steps_as_torch(name):
    ours, theirs = run_trajectory(lambda p: getattr(internals.optim, name)(p[:1], foreach=False),
                                  lambda p: getattr(torch.optim, name)(p[:1], foreach=False), steps=2)
    sd_ours, sd_theirs = ours.state_dict(), theirs.state_dict()
    assert sd_ours["param_groups"] == sd_theirs["param_groups"]
    for i, state in sd_theirs["state"].items():
        assert list(sd_ours["state"][i]) == list(state)
        for key, value in state.items():
            assert_same(sd_ours["state"][i][key], value, **TOL)
    # a new group with its own lr: its parameters start with fresh state, the old group carries on
    for opt, lib in ((ours, internals), (theirs, torch)):
        opt.add_param_group({"params": [lib.nn.Parameter(lib.arange(4.0) / 3)], "lr": 0.2})
        g = torch.Generator().manual_seed(3)
        for _ in range(2):
            for group in opt.param_groups:
                for p in group["params"]:
                    p.grad = lib.from_torch(torch.randn(p.shape, generator=g)) if lib is internals else \
                        torch.randn(p.shape, generator=g)
            opt.step()
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
    assert_same_state(ours, theirs, STATE_KEYS[name])


BAD = [dict(lr=-1), dict(eps=-1), dict(betas=(1.0, 0.9)), dict(betas=(0.9, -0.1)), dict(weight_decay=-1),
       dict(lr=[0.1, 0.2])]


@pytest.mark.parametrize(("name", "bad"), [(name, bad) for name in CONFIGS for bad in BAD]
                         + [("NAdam", dict(momentum_decay=-1))],
                         ids=lambda v: v if isinstance(v, str) else config_id(v))
def test_bad_hyper_parameters(name, bad):
    ours, theirs = twin_params()

    def kwargs(lib):        # a list stands for a tensor of that library (a two-element lr)
        return {k: lib.tensor(v) if isinstance(v, list) else v for k, v in bad.items()}
    err_ours, err_theirs = assert_same_error(lambda: getattr(internals.optim, name)(ours, **kwargs(internals)),
                                             lambda: getattr(torch.optim, name)(theirs, **kwargs(torch)))
    assert str(err_ours) == str(err_theirs)


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("option", [dict(capturable=True), dict(foreach=True, differentiable=True),
                                    dict(foreach=True, capturable=True)], ids=config_id)
def test_step_refusals_match_torch(name, option):
    """capturable on CPU parameters (the multi-tensor step's message lists no XLA); the
    multi-tensor step's refusal of differentiable."""
    ours, theirs = twin_params()
    opt_ours = getattr(internals.optim, name)(ours, **option)
    opt_theirs = getattr(torch.optim, name)(theirs, **option)
    set_grads(ours, theirs, torch.Generator().manual_seed(0))
    err_ours, err_theirs = assert_same_error(opt_ours.step, opt_theirs.step)
    assert str(err_ours) == str(err_theirs)
    assert_same(ours[0], theirs[0], **TOL)          # nothing moved


@pytest.mark.parametrize("name", CONFIGS)
def test_sparse_gradient_is_refused(name):
    def run(lib):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        opt = getattr(lib.optim, name)(emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        opt.step()
    err_ours, err_theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(err_ours) == str(err_theirs)
