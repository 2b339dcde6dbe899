"""``torch.distributions``' Normal, Bernoulli, Categorical and Uniform against torch: from one seed
the same samples (each class draws through the random operator torch's does), the same
log-probabilities, entropies and moments, the same reparametrised gradients, and the same
argument and value checks."""
import pytest
import torch
from helpers import assert_same

import internals


def _build(lib, name):
    D, t = lib.distributions, lib.tensor
    loc = t([0.5, -1.0, 2.0], requires_grad=True)
    return {
        "normal": lambda: (D.Normal(loc, t([1.5, 0.2, 3.0])), t([0.1, 0.2, -4.0]), loc),
        "normal_of_numbers": lambda: (D.Normal(0.0, 2.0), t(1.5), None),
        "bernoulli_probs": lambda: (D.Bernoulli(probs=t([0.3, 0.9, 0.5])), t([1.0, 0.0, 1.0]), None),
        "bernoulli_logits": lambda: (D.Bernoulli(logits=loc * 2), t([1.0, 0.0, 1.0]), loc),
        "categorical_probs": lambda: (D.Categorical(probs=t([[1.0, 2.0, 1.0], [0.5, 0.0, 3.0]])), t([2, 0]), None),
        "categorical_logits": lambda: (D.Categorical(logits=loc.expand(2, 3) * t([[1.0], [-2.0]])), t([1, 2]), loc),
        "uniform": lambda: (D.Uniform(loc, loc + t([1.0, 2.0, 0.5])), loc.detach() + 0.25, loc),
    }[name]()


def _observe(lib, name):
    lib.manual_seed(0)
    dist, value, param = _build(lib, name)
    seen = [dist.sample(), dist.sample((4, 2)), dist.log_prob(value), dist.entropy()]
    if not isinstance(dist, lib.distributions.Categorical):
        seen += [dist.mean, dist.stddev, dist.variance]
    if param is not None:
        target = dist.rsample((3,)).sum() if dist.has_rsample else dist.log_prob(value).sum()
        seen.append(lib.autograd.grad(target + dist.entropy().sum(), param)[0])
    return seen


@pytest.mark.parametrize("name", ["normal", "normal_of_numbers", "bernoulli_probs", "bernoulli_logits",
                                  "categorical_probs", "categorical_logits", "uniform"])
def test_same_seed_same_numbers(name):
    theirs, ours = _observe(torch, name), _observe(internals, name)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t, exact_layout=False, rtol=2e-7, atol=2e-7)


def test_shapes_and_repr():
    for lib in (torch, internals):
        d = lib.distributions.Categorical(logits=lib.zeros(4, 3))
        assert (tuple(d.batch_shape), tuple(d.event_shape), tuple(d.sample((5,)).shape)) == ((4,), (), (5, 4))
    ours = internals.distributions.Normal(internals.zeros(2), internals.ones(2))
    assert repr(ours).replace("internals.", "torch.") == repr(torch.distributions.Normal(torch.zeros(2), torch.ones(2)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.distributions.Normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
    lambda lib: lib.distributions.Normal(lib.zeros(2), lib.ones(2)).log_prob(lib.zeros(3)),
    lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([0.5, 1.5])),
    lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([0.5]), logits=lib.tensor([0.0])),
    lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([0.5])).log_prob(lib.tensor([0.5])),
    lambda lib: lib.distributions.Categorical(probs=lib.tensor(1.0)),
    lambda lib: lib.distributions.Categorical(logits=lib.zeros(3)).log_prob(lib.tensor(3)),
    lambda lib: lib.distributions.Uniform(lib.ones(2), lib.zeros(2)),
    lambda lib: lib.distributions.Uniform(0.0, 1.0).log_prob(lib.tensor(2.0)),
], ids=["negative_scale", "value_shape", "probs_above_one", "both_parametrisations", "value_outside_support",
        "zero_dim_probs", "class_out_of_range", "low_above_high", "uniform_value_outside"])
def test_checks_match_torch(call, monkeypatch):
    # torch.compile's first use in a process (dynamo's TorchPatcher) turns torch's argument
    # validation off for good; these are the checks of the default, __debug__, setting
    monkeypatch.setattr(torch.distributions.Distribution, "_validate_args", __debug__)
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(internals)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value).replace("internals.", "torch.") == str(theirs.value)   # Size prints its module


def test_validation_can_be_turned_off():
    for lib in (torch, internals):
        d = lib.distributions.Normal(lib.zeros(1), lib.tensor([-1.0]), validate_args=False)
        assert d.scale.item() == -1.0
