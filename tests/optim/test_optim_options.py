"""Optimizer arguments and checkpoints against torch: named_parameters() pairs, foreach=/fused=,
a set of parameters, a tensor learning rate, and a state dict loaded into a model of another
dtype (the state cast to each parameter's dtype, as torch casts it)."""
import numpy as np
import pytest
import torch

import internals

# Two steps through a product whose sums group differently on each CPU path (and on each seed's
# weights) move parameters of size ~1 by a few units in the last place of 1, so the comparison
# is absolute: 5e-7 was the widest gap over 300 seeds on one machine.
TRAJECTORY = dict(rtol=1e-6, atol=2e-6)


def _models(dtype_i=internals.float32, dtype_t=torch.float32):
    internals.manual_seed(0)      # the weights must not hang on which tests ran first on a worker
    ours, theirs = internals.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    theirs.load_state_dict({k: v.to_torch() for k, v in ours.state_dict().items()})
    return ours.to(dtype_i), theirs.to(dtype_t)


def _train(lib, model, opt, steps=2):
    x = lib.ones(4, 3, dtype=next(model.parameters()).dtype)
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_named_parameters_pairs_match_torch(name):
    ours, theirs = _models()
    kw = dict(lr=0.1, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.1)
    opt_i = getattr(internals.optim, name)(ours.named_parameters(), **kw)
    opt_t = getattr(torch.optim, name)(theirs.named_parameters(), **kw)
    assert opt_i.param_groups[0]["param_names"] == opt_t.param_groups[0]["param_names"]
    _train(internals, ours, opt_i)
    _train(torch, theirs, opt_t)
    assert opt_i.state_dict()["param_groups"][0]["param_names"] == opt_t.state_dict()["param_groups"][0]["param_names"]
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(a.detach().to_torch().numpy(), b.detach().numpy(), **TRAJECTORY)


@pytest.mark.parametrize("name", ["SGD", "Adam"])
@pytest.mark.parametrize("option", [dict(foreach=True), dict(fused=True), dict(foreach=False, fused=False)],
                         ids=["foreach", "fused", "both_off"])
def test_foreach_and_fused_are_accepted_and_change_no_value(name, option):
    ours, theirs = _models()
    opt_i = getattr(internals.optim, name)(ours.parameters(), lr=0.1, **option)
    opt_t = getattr(torch.optim, name)(theirs.parameters(), lr=0.1, **option)
    _train(internals, ours, opt_i)
    _train(torch, theirs, opt_t)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(a.detach().to_torch().numpy(), b.detach().numpy(), **TRAJECTORY)


BAD = {
    "fused_and_foreach": lambda lib, p: lib.optim.SGD(p, lr=0.1, fused=True, foreach=True),
    "set_in_a_group": lambda lib, p: lib.optim.SGD([{"params": set(p)}], lr=0.1),
    "two_element_lr_sgd": lambda lib, p: lib.optim.SGD(p, lr=lib.tensor([0.1, 0.2])),
    "two_element_lr_adam": lambda lib, p: lib.optim.Adam(p, lr=lib.tensor([0.1, 0.2])),
    "two_element_lr_rmsprop": lambda lib, p: lib.optim.RMSprop(p, lr=lib.tensor([0.1, 0.2])),
    "some_names_missing": lambda lib, p: lib.optim.SGD([("w", p[0]), p[1]], lr=0.1),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torch_classes(name):
    ours, theirs = _models()
    with pytest.raises(Exception) as t:
        BAD[name](torch, list(theirs.parameters()))
    with pytest.raises(type(t.value)) as o:
        BAD[name](internals, list(ours.parameters()))
    assert str(o.value) == str(t.value)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_float32_state_loads_into_a_float64_model(name):
    kw = dict(lr=0.1, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.1)
    results = []
    for lib, (m32, _), dtype in ((internals, _models(), internals.float64), (torch, _models()[::-1], torch.float64)):
        opt = getattr(lib.optim, name)(m32.parameters(), **kw)
        _train(lib, m32, opt, steps=1)
        m64 = m32.to(dtype) if lib is torch else m32.to(dtype)
        opt64 = getattr(lib.optim, name)(m64.parameters(), **kw)
        opt64.load_state_dict(opt.state_dict())
        _train(lib, m64, opt64, steps=1)
        state = opt64.state[next(m64.parameters())]
        results.append({k: str(v.dtype).split(".")[-1] for k, v in state.items() if k != "step"})
    assert results[0] == results[1]


def _dtype(value):
    return str(value.dtype).split(".")[-1] if value is not None else None


OLD_CHECKPOINTS = [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True), "nesterov"),
                   ("Adam", dict(lr=0.1, amsgrad=True), "amsgrad"),
                   ("AdamW", dict(lr=0.1, maximize=True), "decoupled_weight_decay"),
                   ("NAdam", dict(lr=0.1, decoupled_weight_decay=True), "decoupled_weight_decay"),
                   ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5), "centered"),
                   ("Adagrad", dict(lr=0.1, maximize=True), "maximize"),
                   ("ASGD", dict(lr=0.1, t0=1), "maximize"),
                   ("Adafactor", dict(lr=0.1), "foreach")]


@pytest.mark.parametrize("name, kw, dropped", OLD_CHECKPOINTS, ids=[c[0] for c in OLD_CHECKPOINTS])
def test_a_checkpoint_older_than_an_option_or_tensor_steps_loads_as_torchs(name, kw, dropped):
    """A checkpoint from before an option existed (its groups lack the key) and before step
    counts were tensors (Python numbers): torch's ``__setstate__`` gives the group the option's
    old default, not the value the new optimizer was built with, and makes the numbers float32
    tensors; the optimizer then steps on from there. A key no ``__setstate__`` names (lr) stays
    missing in both."""
    results = []
    for lib, (model, _) in ((internals, _models()), (torch, _models()[::-1])):
        opt = getattr(lib.optim, name)(model.parameters(), **kw)
        _train(lib, model, opt, steps=1)
        saved = opt.state_dict()
        for group in saved["param_groups"]:
            del group[dropped]
        for state in saved["state"].values():
            state.update({k: v.item() for k, v in state.items() if k in ("step", "eta", "mu", "mu_product")})
        opt = getattr(lib.optim, name)(model.parameters(), **kw)
        opt.load_state_dict(saved)
        _train(lib, model, opt, steps=1)
        states = [{k: (_dtype(v), v.tolist() if k in ("step", "eta", "mu", "mu_product") else None)
                   for k, v in s.items()} for s in opt.state.values()]
        results.append(([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups],
                        states, [p.detach().tolist() for p in model.parameters()]))
        saved["param_groups"][0].pop("lr")
        opt.load_state_dict(saved)
        results[-1] += ("lr" in opt.param_groups[0],)
    assert results[0][:2] == results[1][:2] and results[0][3] == results[1][3]
    np.testing.assert_allclose(np.array(results[0][2][0]), np.array(results[1][2][0]), **TRAJECTORY)
