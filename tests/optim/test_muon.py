"""Muon against torch's single-tensor loop: a tall and a wide matrix over a few steps in float32 and
float64, with and without Nesterov momentum, both lr adjustments, fewer Newton–Schulz steps; the
momentum buffers and the state dict; the refusals (bad hyper-parameters, a parameter that is not a
matrix, complex parameters, sparse gradients) with torch's classes and messages. The
orthogonalisation runs in bfloat16 matrix products whose float32 sums the CPU may group its own
way, so the parameters are compared within 4 ulps of each one's largest value."""
import pytest
import torch
from helpers import assert_same, assert_same_error, assert_within_ulps_of_largest, config_id

import internals

ULPS = 4
CONFIGS = [dict(lr=0.02), dict(lr=0.05, nesterov=False, adjust_lr_fn="match_rms_adamw", weight_decay=0.3),
           dict(lr=0.05, momentum=0.5, ns_steps=3, adjust_lr_fn="original", eps=1e-3)]


def _twins(dtype):
    g = torch.Generator().manual_seed(0)
    theirs = [torch.nn.Parameter(torch.randn(*s, generator=g, dtype=dtype)) for s in ((5, 2), (3, 4))]
    return [internals.nn.Parameter(internals.from_torch(p.detach())) for p in theirs], theirs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_muon_trajectory(config, dtype):
    ours, theirs = _twins(dtype)
    opt_ours, opt_theirs = internals.optim.Muon(ours, **config), torch.optim.Muon(theirs, **config)
    g = torch.Generator().manual_seed(1)
    for _ in range(4):
        for o, t in zip(ours, theirs):
            t.grad = torch.randn(t.shape, generator=g, dtype=dtype)
            o.grad = internals.from_torch(t.grad)
        opt_ours.step()
        opt_theirs.step()
        for o, t in zip(ours, theirs):
            assert_within_ulps_of_largest(o, t, ULPS)
    for o, t in zip(ours, theirs):
        assert_same(opt_ours.state[o]["momentum_buffer"], opt_theirs.state[t]["momentum_buffer"])
    sd_ours, sd_theirs = opt_ours.state_dict(), opt_theirs.state_dict()
    assert sd_ours["param_groups"] == sd_theirs["param_groups"]
    assert [list(s) for s in sd_ours["state"].values()] == [list(s) for s in sd_theirs["state"].values()]


BAD = {
    "negative_lr": lambda L, p: L.optim.Muon(p, lr=-1.0),
    "negative_momentum": lambda L, p: L.optim.Muon(p, momentum=-0.1),
    "negative_weight_decay": lambda L, p: L.optim.Muon(p, weight_decay=-0.1),
    "adjust_lr_fn": lambda L, p: L.optim.Muon(p, adjust_lr_fn="spectral"),
    "vector": lambda L, p: L.optim.Muon([L.nn.Parameter(L.ones(3))]),
    "complex": lambda L, p: _step(L, L.nn.Parameter(L.ones(2, 2, dtype=L.complex64))),
    "ns_steps": lambda L, p: _step(L, p[0], ns_steps=100),
    "coefficients": lambda L, p: _step(L, p[0], ns_coefficients=(1.0, 2.0)),
    "sparse": lambda L, p: _sparse(L),
}


def _step(L, p, **kw):
    opt = L.optim.Muon([p], **kw)
    p.grad = L.ones_like(p)
    opt.step()


def _sparse(L):
    emb = L.nn.Embedding(4, 2, sparse=True)
    opt = L.optim.Muon(emb.parameters())
    emb(L.tensor([1, 2])).sum().backward()
    opt.step()


@pytest.mark.parametrize("name", BAD)
def test_refusals_equal_torchs(name):
    ours, theirs = _twins(torch.float32)
    err_ours, err_theirs = assert_same_error(lambda: BAD[name](internals, ours), lambda: BAD[name](torch, theirs))
    # the shape prints as each library's Size
    assert str(err_ours).replace("internals.Size", "torch.Size") == str(err_theirs)
