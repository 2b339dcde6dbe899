"""Differential tests of internals.optim against torch.optim (internals/optim; torch/optim/).
RMSprop's own trajectories and hyperparameter checks are at the end.

Both optimizers get the same starting parameters and, at every step, the same gradients (drawn
from a seeded torch generator and copied in with ``from_torch``); after each step the
parameters and the optimizer state must equal torch's, bit for bit. torch runs its single-tensor
loop (``foreach=False``), the one internals mirrors, operator for operator; with ``foreach=True``
on both sides, every optimizer but LBFGS and SparseAdam takes its multi-tensor step.
"""
import pytest
import torch
from helpers import (  # noqa: F401
    INF,
    NAN,
    SHAPES,
    STEPS,
    TOL,
    TORCH_DTYPES,
    Adapter,
    RoundedSqrt,
    assert_same,
    assert_same_error,
    check_opinfo_samples,
    compare_call,
    logging_modes,
    opinfo_cases,
    run_opinfo_samples,
    run_trajectory,
    set_grads,
    twin_params,
)

import internals

SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.05, momentum=0.5, weight_decay=0.01),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True),
]


@pytest.mark.parametrize("config", SGD_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_sgd_trajectory(config):
    ours, theirs = run_trajectory(lambda p: internals.optim.SGD(p, **config),
                                  lambda p: torch.optim.SGD(p, foreach=False, **config))
    if config.get("momentum"):
        for o, t in zip(ours.state.values(), theirs.state.values()):
            assert_same(o["momentum_buffer"], t["momentum_buffer"], **TOL)


ADAM_CONFIGS = [
    dict(),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, maximize=True, amsgrad=True, weight_decay=0.05),
    dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True, maximize=True),
]


@pytest.mark.parametrize("config", ADAM_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_adam_trajectory(config):
    ours, theirs = run_trajectory(lambda p: internals.optim.Adam(p, **config),
                                  lambda p: torch.optim.Adam(p, foreach=False, **config))
    for o, t in zip(ours.state.values(), theirs.state.values()):
        assert list(o) == list(t)
        for key in t:
            assert_same(o[key], t[key], **TOL)


@pytest.mark.parametrize("config", [dict(), dict(lr=0.01, weight_decay=0.05, amsgrad=True)],
                         ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_adamw_trajectory(config):
    ours, theirs = run_trajectory(lambda p: internals.optim.AdamW(p, **config),
                                  lambda p: torch.optim.AdamW(p, foreach=False, **config))
    for o, t in zip(ours.state.values(), theirs.state.values()):
        for key in t:
            assert_same(o[key], t[key], **TOL)


FOREACH_CASES = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd_momentum_dampening": ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=0.01)),
    "sgd_nesterov_maximize": ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)),
    "sgd_nesterov": ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    "adam_amsgrad_maximize": ("Adam", dict(lr=0.01, maximize=True, amsgrad=True, weight_decay=0.05)),
    "adamw_amsgrad_maximize": ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
}


@pytest.mark.parametrize("name, config", FOREACH_CASES.values(), ids=FOREACH_CASES)
def test_foreach_trajectory_is_torchs_foreach_trajectory(name, config):
    """``foreach=True`` on both sides: the multi-tensor steps, over the ``_foreach_*`` operators.
    On the CPU those loop over the per-tensor operators, so the bits are torch's (TOL: exact):
    the parameters, the state, and the gradients (SGD's Nesterov line adds into them in place)."""
    ours, theirs = run_trajectory(lambda p: getattr(internals.optim, name)(p, foreach=True, **config),
                                  lambda p: getattr(torch.optim, name)(p, foreach=True, **config), steps=5)
    for o, t in zip(ours.state.values(), theirs.state.values(), strict=True):
        assert list(o) == list(t)
        for key in t:
            assert_same(o[key], t[key], **TOL)
    for o, t in zip(ours.param_groups[0]["params"], theirs.param_groups[0]["params"], strict=True):
        assert_same(o.grad, t.grad, **TOL)


MULTI_TENSOR_CASES = {
    "rmsprop": ("RMSprop", dict(lr=0.01)),
    "rmsprop_centered_momentum": ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1,
                                                  maximize=True)),
    "rmsprop_momentum_decay": ("RMSprop", dict(lr=0.01, momentum=0.5, weight_decay=0.1)),
    "adagrad": ("Adagrad", dict(lr=0.1)),
    "adagrad_decays_maximize": ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, maximize=True,
                                                initial_accumulator_value=0.1)),
    "nadam_maximize": ("NAdam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    "nadam_decoupled": ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    "radam_maximize": ("RAdam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    "radam_decoupled_rectified_early": ("RAdam", dict(lr=0.01, betas=(0.9, 0.5), weight_decay=0.1,
                                                      decoupled_weight_decay=True)),
    "adamax": ("Adamax", dict(lr=0.01)),
    "adamax_decay_maximize": ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    "adadelta_decay_maximize": ("Adadelta", dict(lr=0.5, weight_decay=0.1, maximize=True, rho=0.8)),
    "rprop": ("Rprop", dict(lr=0.01)),
    "rprop_maximize": ("Rprop", dict(lr=0.01, maximize=True, etas=(0.3, 1.5), step_sizes=(1e-3, 1))),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name, config", MULTI_TENSOR_CASES.values(), ids=MULTI_TENSOR_CASES)
def test_multi_tensor_steps_are_torchs_bit_for_bit(name, config, dtype):
    """RMSprop, Adagrad, NAdam, RAdam, Adamax, Adadelta and Rprop with ``foreach=True`` take
    torch's ``_multi_tensor_*`` steps: parameters and state equal torch's ``foreach=True`` ones
    over six steps. (NAdam and RAdam order their arithmetic differently from their single-tensor
    loops: their foreach trajectories are a few ulps from those.)"""
    ours, theirs = run_trajectory(lambda p: getattr(internals.optim, name)(p, foreach=True, **config),
                                  lambda p: getattr(torch.optim, name)(p, foreach=True, **config), steps=6,
                                  dtype=dtype)
    for o, t in zip(ours.state.values(), theirs.state.values(), strict=True):
        assert list(o) == list(t)
        for key in t:
            assert_same(o[key], t[key], **TOL)


TRACED_STEPS = {
    "sgd_momentum": ("SGD", dict(lr=0.1, momentum=0.9)),
    "rmsprop_centered_momentum": ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    "adagrad_maximize": ("Adagrad", dict(lr=0.1, maximize=True)),
    "nadam": ("NAdam", dict(weight_decay=0.1)),
    "radam": ("RAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)),
    "adamax": ("Adamax", dict()),
    "adadelta": ("Adadelta", dict(maximize=True)),
    "rprop": ("Rprop", dict()),
    "adafactor": ("Adafactor", dict(weight_decay=0.1, maximize=True)),
    "adam": ("Adam", dict(amsgrad=True)),
    "asgd": ("ASGD", dict(weight_decay=0.1)),
}


@pytest.mark.parametrize("name, config", TRACED_STEPS.values(), ids=TRACED_STEPS)
def test_foreach_steps_call_the_foreach_operators(name, config):
    """The step a dispatch mode sees is made of ``_foreach_*`` calls, as torch's is, the same
    operators in the same order."""
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from internals.utils._python_dispatch import TorchDispatchMode

    def seen(lib, mode_class):
        params = [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3))]
        for p in params:
            p.grad = lib.ones(p.shape)
        opt = getattr(lib.optim, name)(params, foreach=True, **config)
        opt.step()
        names = []

        class Log(mode_class):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                names.append(str(func))
                return func(*args, **(kwargs or {}))
        with Log():
            opt.step()
        return names
    assert seen(internals, TorchDispatchMode) == seen(torch, TorchMode)


def test_foreach_left_unset_takes_the_multi_tensor_step_on_a_gpu_only():
    """``foreach=None``: torch's ``_default_to_fused_or_foreach`` picks the multi-tensor step when
    every parameter is on a GPU (the simulated one here), and the single-tensor loop on the CPU
    (as torch's CPU wheel does: its trace there has no ``_foreach_*`` call)."""
    from internals.utils._python_dispatch import TorchDispatchMode

    def foreach_calls(device):
        param = internals.nn.Parameter(internals.ones(2, device=device))
        param.grad = internals.ones(2, device=device)
        names = []

        class Log(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                names.append(str(func))
                return func(*args, **(kwargs or {}))
        with Log():
            internals.optim.RMSprop([param]).step()
        return [n for n in names if "_foreach_" in n]
    assert foreach_calls("cpu") == []
    assert "aten._foreach_addcdiv_.Scalar" in foreach_calls("cuda")


def test_adam_on_cuda_matches_torch_cpu():
    """The same update code runs on internals' cuda tensors (simulated here: three steps)."""
    run_trajectory(lambda p: internals.optim.Adam(p, lr=0.01),
                   lambda p: torch.optim.Adam(p, lr=0.01, foreach=False), device="cuda", steps=3)


def test_parameter_without_grad_is_skipped():
    ours, theirs = twin_params()
    opt_ours, opt_theirs = internals.optim.Adam(ours, lr=0.1), torch.optim.Adam(theirs, lr=0.1, foreach=False)
    theirs[0].grad = torch.ones(theirs[0].shape)
    ours[0].grad = internals.from_torch(theirs[0].grad)
    opt_ours.step()
    with RoundedSqrt():
        opt_theirs.step()
    for o, t in zip(ours, theirs):
        assert_same(o, t, **TOL)
    assert len(opt_ours.state) == len(opt_theirs.state) == 1


def test_state_dict_matches_torch():
    ours, theirs = run_trajectory(lambda p: internals.optim.Adam([{"params": p[:1]}, {"params": p[1:], "lr": 0.5}],
                                                                 amsgrad=True, foreach=False),
                                  lambda p: torch.optim.Adam([{"params": p[:1]}, {"params": p[1:], "lr": 0.5}],
                                                             amsgrad=True, foreach=False), steps=2)
    sd_ours, sd_theirs = ours.state_dict(), theirs.state_dict()
    assert sd_ours["param_groups"] == sd_theirs["param_groups"]
    assert sd_ours["state"].keys() == sd_theirs["state"].keys()
    for i, state in sd_theirs["state"].items():
        assert list(sd_ours["state"][i]) == list(state)
        for key, value in state.items():
            assert_same(sd_ours["state"][i][key], value, **TOL)


def test_load_state_dict_resumes_the_trajectory():
    """Save after 5 steps, load into a fresh optimizer over the same parameters, go on: the
    result equals torch's uninterrupted 10 steps."""
    ours, theirs = twin_params()
    torch_opt = torch.optim.SGD(theirs, lr=0.05, momentum=0.9, foreach=False)
    opt = internals.optim.SGD(ours, lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(3)
    for step in range(10):
        if step == 5:
            saved = opt.state_dict()
            opt = internals.optim.SGD(ours, lr=1.0)
            opt.load_state_dict(saved)
            assert opt.param_groups[0]["lr"] == 0.05
        set_grads(ours, theirs, g)
        opt.step()
        torch_opt.step()
    for o, t in zip(ours, theirs):
        assert_same(o, t, **TOL)


def _load_into_a_second_optimizer(lib, first_names, second_names, tensor_lr):
    """A state dict of one SGD loaded into another, whose group has a scheduler's ``initial_lr``
    and differs in names; a scheduler then steps the second one's (tensor) lr in place."""
    def params(named):
        p = lib.ones(2, requires_grad=True)
        return [("w", p)] if named else [p]
    lr = lib.tensor(0.1) if tensor_lr else 0.1
    first = lib.optim.SGD(params(first_names), lr=lr, momentum=0.9)
    second = lib.optim.SGD(params(second_names), lr=lib.tensor(0.5) if tensor_lr else 0.5)
    lib.optim.lr_scheduler.StepLR(second, 1)
    second.load_state_dict(first.state_dict())
    keys = list(second.param_groups[0])
    lib.optim.lr_scheduler.StepLR(second, 1, gamma=0.5).step()
    return keys, [float(o.param_groups[0]["lr"]) for o in (first, second)], list(second.state_dict()["param_groups"][0])


@pytest.mark.parametrize("first_names, second_names, tensor_lr",
                         [(False, False, True), (True, False, False), (False, True, False), (True, True, True)])
def test_load_state_dict_replaces_each_group_by_a_copy_of_the_saved_one(first_names, second_names, tensor_lr):
    """The loaded groups are deep copies of the saved ones, keys in the saved order: a key the
    checkpoint lacks (``initial_lr``) goes, names stay when the checkpoint has none, and a tensor
    lr stepped in place by a scheduler leaves the saving optimizer's lr alone."""
    ours = _load_into_a_second_optimizer(internals, first_names, second_names, tensor_lr)
    assert ours == _load_into_a_second_optimizer(torch, first_names, second_names, tensor_lr)


def test_zero_grad():
    for set_to_none in (True, False):
        ours, theirs = twin_params()
        set_grads(ours, theirs, torch.Generator().manual_seed(0))
        internals.optim.SGD(ours, lr=0.1).zero_grad(set_to_none=set_to_none)
        torch.optim.SGD(theirs, lr=0.1).zero_grad(set_to_none=set_to_none)
        for o, t in zip(ours, theirs):
            if set_to_none:
                assert o.grad is None and t.grad is None
            else:
                assert_same(o.grad, t.grad)


def test_repr_matches_torch():
    ours, theirs = twin_params()
    assert repr(internals.optim.SGD(ours, lr=0.1, momentum=0.9)) == repr(torch.optim.SGD(theirs, lr=0.1, momentum=0.9))
    assert repr(internals.optim.Adam(ours)) == repr(torch.optim.Adam(theirs))
    ours, theirs = ([{"params": ps[:1]}, {"params": ps[1:], "lr": 2}] for ps in (ours, theirs))   # blank line between
    assert repr(internals.optim.SGD(ours, lr=0.1)) == repr(torch.optim.SGD(theirs, lr=0.1))


@pytest.mark.parametrize("make", [
    lambda nn, optim, p: optim.SGD([], lr=0.1),
    lambda nn, optim, p: optim.SGD(p[0], lr=0.1),
    lambda nn, optim, p: optim.SGD([{"params": p}, {"params": p[:1]}], lr=0.1),
    lambda nn, optim, p: optim.SGD([p[0] * 2], lr=0.1),
    lambda nn, optim, p: optim.SGD(p, lr=-1),
    lambda nn, optim, p: optim.SGD(p, lr=0.1, momentum=-0.5),
    lambda nn, optim, p: optim.SGD(p, lr=0.1, weight_decay=-1),
    lambda nn, optim, p: optim.SGD(p, lr=0.1, nesterov=True),
    lambda nn, optim, p: optim.Adam(p, lr=-1),
    lambda nn, optim, p: optim.Adam(p, eps=-1),
    lambda nn, optim, p: optim.Adam(p, betas=(1.0, 0.9)),
    lambda nn, optim, p: optim.Adam(p, betas=(0.9, -0.1)),
    lambda nn, optim, p: optim.Adam(p, weight_decay=-1),
])
def test_constructor_errors_match_torch(make):
    ours, theirs = twin_params()
    err_ours, err_theirs = assert_same_error(lambda: make(internals.nn, internals.optim, ours),
                                             lambda: make(torch.nn, torch.optim, theirs))
    assert str(err_ours) == str(err_theirs)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "Adadelta", "Rprop"])
def test_capturable_on_cpu_params_fails_at_step_as_torch(name):
    """capturable keeps the step count on the device for CUDA graphs: torch accepts the flag when
    the optimizer is made, then its step asserts that the parameters are on such a device."""
    ours, theirs = twin_params()
    opt_ours = getattr(internals.optim, name)(ours, capturable=True)
    opt_theirs = getattr(torch.optim, name)(theirs, capturable=True)
    set_grads(ours, theirs, torch.Generator().manual_seed(0))
    err_ours, err_theirs = assert_same_error(opt_ours.step, opt_theirs.step)
    assert str(err_ours) == str(err_theirs)
    assert_same(ours[0], theirs[0])         # nothing updated
    assert opt_ours.state_dict()["param_groups"][0]["capturable"] is True


def _complex_trajectory(lib, name, kwargs, steps=4):
    """A complex64 parameter beside a real one, stepped with fixed gradients (no autograd: the
    gradients are assigned, as a complex model's backward would leave them)."""
    gen = torch.Generator().manual_seed(0)
    values = [torch.randn(3, 2, dtype=torch.complex64, generator=gen), torch.randn(2, generator=gen)]
    grads = [[torch.randn(3, 2, dtype=torch.complex64, generator=gen), torch.randn(2, generator=gen)]
             for _ in range(steps)]
    move = (lambda t: t.clone()) if lib is torch else internals.from_torch
    params = [move(v) for v in values]
    optimizer = getattr(lib.optim, name)(params, **kwargs)
    for step in grads:
        for p, g in zip(params, step):
            p.grad = move(g)
        if lib is torch:
            with RoundedSqrt():     # MKL's sqrt, an ulp off on some CPUs: see ``RoundedSqrt``
                optimizer.step()
        else:
            optimizer.step()
    return [p if lib is torch else p.to_torch() for p in params]


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.1)), ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.1, amsgrad=True)), ("RMSprop", dict(lr=0.1)),
    ("RMSprop", dict(lr=0.1, momentum=0.5, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.1)), ("Rprop", dict(lr=0.1, maximize=True))])
def test_complex_parameters_follow_torchs_trajectory(name, kwargs):
    """torch updates a complex parameter through ``view_as_real``: Adam's and RMSprop's squares and
    roots act on each part (Adam refused complex moments; RMSprop squared the complex gradient)."""
    for ours, theirs in zip(_complex_trajectory(internals, name, kwargs), _complex_trajectory(torch, name, kwargs)):
        assert ours.dtype == theirs.dtype and torch.equal(ours, theirs)


# ---------------------------------------------------------------------------------- RMSprop
RMSPROP_CONFIGS = [
    dict(), dict(lr=0.01, alpha=0.9), dict(lr=0.01, momentum=0.9), dict(lr=0.01, centered=True),
    dict(lr=0.01, weight_decay=0.1, momentum=0.5, centered=True, maximize=True), dict(lr=0.001, eps=1e-3),
]


@pytest.mark.parametrize("config", RMSPROP_CONFIGS,
                         ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_rmsprop_trajectory(config):
    """Twenty steps of the same gradients: parameters and state (in torch's key order) equal torch's."""
    ours, theirs = run_trajectory(lambda p: internals.optim.RMSprop(p, **config),
                                  lambda p: torch.optim.RMSprop(p, foreach=False, **config))
    assert ours.param_groups[0].keys() == theirs.param_groups[0].keys()
    for o, t in zip(ours.state.values(), theirs.state.values()):
        assert list(o) == list(t)
        for key in t:
            assert_same(o[key], t[key], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bad", [dict(lr=-1), dict(eps=-1), dict(momentum=-1), dict(weight_decay=-1), dict(alpha=-1)])
def test_rmsprop_refuses_bad_hyperparameters(bad):
    ours, theirs = assert_same_error(lambda: internals.optim.RMSprop([internals.ones(2, requires_grad=True)], **bad),
                                     lambda: torch.optim.RMSprop([torch.ones(2, requires_grad=True)], **bad))
    assert str(ours) == str(theirs)
