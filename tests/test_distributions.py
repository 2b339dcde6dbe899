"""``torch.distributions``' Normal, Bernoulli, Categorical and Uniform against torch: from one seed
the same samples (each class draws through the random operator torch's does), the same
log-probabilities, entropies and moments, the same reparametrised gradients, and the same
argument and value checks.

Then ``expand``, ``cdf``/``icdf`` and ``kl_divergence`` of the same four families: an expanded
distribution has torch's batch shape, keeps its parametrisation as broadcast views and draws
torch's samples from one seed; the cdf and its inverse give torch's values and gradients (and
torch's errors where a family has none); the KL divergence of every pair torch registers between
these families gives torch's values (infinite where torch's is) and gradients, and an unregistered
pair raises torch's NotImplementedError.

Tests ``internals.distributions`` (torch/distributions/).
"""
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


# ---------------------------------------------------------------------------------------------
# expand, cdf/icdf and kl_divergence
# ---------------------------------------------------------------------------------------------


TOL = dict(exact_layout=False, rtol=2e-7, atol=1e-7)


def _dists(lib):
    t = lib.tensor
    return {
        "normal": lib.distributions.Normal(t([0.5, -1.0]), t([1.5, 0.2])),
        "bernoulli_probs": lib.distributions.Bernoulli(probs=t([0.3, 0.9])),
        "bernoulli_logits": lib.distributions.Bernoulli(logits=t([0.3, -2.0])),
        "categorical": lib.distributions.Categorical(probs=t([[1.0, 2.0, 1.0], [0.5, 0.0, 3.0]])),
        "uniform": lib.distributions.Uniform(t([0.0, -1.0]), t([1.0, 2.0])),
    }


@pytest.fixture(autouse=True)
def torchs_default_validation():
    """torch's argument validation at its default (on): torch.compile's first use in a process
    turns it off (``Distribution.set_default_validate_args(False)``), and a test run earlier in the
    same process may have compiled."""
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


@pytest.mark.parametrize("name", ["normal", "bernoulli_probs", "bernoulli_logits", "categorical", "uniform"])
def test_expand(name):
    seen = {}
    for lib in (torch, internals):
        lib.manual_seed(0)
        big = _dists(lib)[name].expand((3, 2))
        params = {k: v for k, v in vars(big).items() if isinstance(v, (torch.Tensor, internals.Tensor))}
        seen[lib] = (tuple(big.batch_shape), tuple(big.event_shape), sorted(params), big.sample((2,)),
                     [v.stride() for _, v in sorted(params.items())], big._validate_args)
    ours, theirs = seen[internals], seen[torch]
    assert ours[:3] == theirs[:3] and ours[4:] == theirs[4:]
    assert_same(ours[3], theirs[3], **TOL)


def test_expand_refuses_a_subclass_with_its_own_init():
    for lib in (torch, internals):
        class Shifted(lib.distributions.Normal):
            def __init__(self, loc):
                super().__init__(loc, loc.exp())
        with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
            Shifted(lib.zeros(2)).expand((3, 2))


def _cdf_icdf(lib, name):
    t = lib.tensor
    loc = t([0.5, -1.0], requires_grad=True)
    dist = {"normal": lambda: lib.distributions.Normal(loc, t([1.5, 0.2])),
            "uniform": lambda: lib.distributions.Uniform(loc, loc + t([1.0, 3.0]))}[name]()
    cdf = dist.cdf(t([[0.6, -0.9], [1.2, 0.5]]))
    icdf = dist.icdf(t([0.25, 0.9]))
    return [cdf, icdf, lib.autograd.grad(cdf.sum() + icdf.sum(), loc)[0]]


@pytest.mark.parametrize("name", ["normal", "uniform"])
def test_cdf_and_icdf(name):
    for o, t in zip(_cdf_icdf(internals, name), _cdf_icdf(torch, name)):
        assert_same(o, t, **TOL)


@pytest.mark.parametrize("name", ["bernoulli_probs", "categorical"])
def test_no_cdf_where_torch_has_none(name):
    for lib in (torch, internals):
        with pytest.raises(NotImplementedError):
            _dists(lib)[name].cdf(lib.tensor([0.0, 1.0]))


def _pairs(lib):
    t, D = lib.tensor, lib.distributions
    a = t([0.5, -1.0, 0.0], requires_grad=True)
    return a, {
        "normal_normal": (D.Normal(a, t([1.5, 0.2, 1.0])), D.Normal(t([0.0, 0.0, 1.0]), a.exp())),
        "bernoulli_bernoulli": (D.Bernoulli(logits=a), D.Bernoulli(probs=t([0.5, 1.0, 0.0]))),
        "categorical_categorical": (D.Categorical(logits=a.expand(2, 3) * t([[1.0], [2.0]])),
                                    D.Categorical(probs=t([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]]))),
        "uniform_uniform": (D.Uniform(a, a + 1), D.Uniform(t([0.0, -2.0, -1.0]), t([2.0, 1.0, 1.5]))),
        "normal_uniform": (D.Normal(a, t([1.0, 1.0, 1.0])), D.Uniform(t(0.0), t(1.0))),
        "uniform_normal": (D.Uniform(a, a + 2), D.Normal(t([0.0, 1.0, -1.0]), t([1.0, 2.0, 0.5]))),
    }


@pytest.mark.parametrize("pair", ["normal_normal", "bernoulli_bernoulli", "categorical_categorical",
                                  "uniform_uniform", "normal_uniform", "uniform_normal"])
def test_kl_divergence(pair):
    seen = []
    for lib in (torch, internals):
        a, pairs = _pairs(lib)
        kl = lib.distributions.kl_divergence(*pairs[pair])
        finite = kl[kl.isfinite()].sum()
        grad = lib.autograd.grad(finite, a, allow_unused=True)[0] if finite.requires_grad else None
        seen.append((kl, grad))
    (theirs, their_grad), (ours, our_grad) = seen
    assert_same(ours, theirs, **TOL)
    assert (our_grad is None) == (their_grad is None)
    if their_grad is not None:
        assert_same(our_grad, their_grad, **TOL)


def test_kl_of_an_unregistered_pair_and_a_registered_subclass():
    messages = []
    for lib in (torch, internals):
        D = lib.distributions
        with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type "
                                                      "Categorical and q type Normal"):
            D.kl_divergence(D.Categorical(probs=lib.ones(2)), D.Normal(lib.zeros(1), lib.ones(1)))
        with pytest.raises(NotImplementedError) as info:
            D.kl_divergence(D.Bernoulli(probs=lib.tensor([0.5])), D.Normal(lib.zeros(1), lib.ones(1)))
        messages.append(str(info.value))

        class Wider(D.Normal):
            pass
        kl = D.kl_divergence(Wider(lib.zeros(1), lib.ones(1)), D.Normal(lib.ones(1), lib.ones(1)))
        assert kl.item() == 0.5
    assert messages[0] == messages[1]
