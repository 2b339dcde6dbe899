"""``nn.AdaptiveLogSoftmaxWithLoss`` against torch's: parameters under a seed, forward, log_prob,
predict, gradients and the errors for bad cutoffs and targets."""
import pytest
import torch

import internals
from tests.helpers import LIBM_ULPS, PRODUCT_ULPS, assert_same, assert_within_ulps_of_largest

IN, CLASSES, CUTOFFS = 16, 10, [3, 6]   # the last tail is 16 // 4**2 = 1 wide: no empty weights
TARGETS = [0, 9, 4, 2, 7, 5, 3, 8]


def built(lib, **kwargs):
    lib.manual_seed(7)
    m = lib.nn.AdaptiveLogSoftmaxWithLoss(IN, CLASSES, CUTOFFS, **kwargs)
    x = lib.linspace(-2.0, 3.0, len(TARGETS) * IN).reshape(len(TARGETS), IN).cos().requires_grad_()
    return m, x


@pytest.mark.parametrize("kwargs", [{}, {"head_bias": True, "div_value": 2.0}])
def test_parameters_under_a_seed_match_torch(kwargs):
    (ours, _), (theirs, _) = built(internals, **kwargs), built(torch, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for a, b in zip(ours.state_dict().values(), theirs.state_dict().values()):
        assert_same(a, b)
    assert (ours.shortlist_size, ours.n_clusters, ours.head_size, ours.cutoffs) == \
        (theirs.shortlist_size, theirs.n_clusters, theirs.head_size, theirs.cutoffs)


def run(lib):
    m, x = built(lib, head_bias=True)
    target = lib.tensor(TARGETS)
    res = m(x, target)
    res.loss.backward()
    single = m(x[1], target[1])
    return (res, single, m.log_prob(x), x.grad, m.head.weight.grad, m.tail[1][0].weight.grad)


def test_forward_log_prob_and_gradients_match_torch():
    (res, single, logp, *grads), (res_t, single_t, logp_t, *grads_t) = run(internals), run(torch)
    assert type(res).__name__ == "_ASMoutput" and res._fields == ("output", "loss")
    assert_same(res.output, res_t.output, ulps=LIBM_ULPS)
    assert_same(res.loss, res_t.loss, ulps=PRODUCT_ULPS)
    assert res.output.grad_fn.name() == res_t.output.grad_fn.name()
    assert_same(single.output, single_t.output, ulps=LIBM_ULPS)
    assert_same(single.loss, single_t.loss, ulps=LIBM_ULPS)
    assert_same(logp, logp_t, ulps=LIBM_ULPS)
    for ours, theirs in zip(grads, grads_t):
        assert_within_ulps_of_largest(ours, theirs, PRODUCT_ULPS)


def test_predict_matches_torch():
    outs = []
    for lib in (internals, torch):
        m, x = built(lib)
        with lib.no_grad():
            m.head.weight[:, :] = 0.0
            m.head.weight[4, :] = 1.0           # cluster 1 (entry 4) wins where a row's sum is positive
        outs.append((m.predict(x), m.predict(x[:1].abs()), m.predict(-x[:1].abs())))
    for ours, theirs in zip(*outs):
        assert_same(ours, theirs)


BAD_CUTOFFS = [[], [6, 3], [3, 3], [0, 4], [3, 10], [2.5]]


@pytest.mark.parametrize("cutoffs", BAD_CUTOFFS)
def test_bad_cutoffs_raise_like_torch(cutoffs):
    with pytest.raises(ValueError) as theirs:
        torch.nn.AdaptiveLogSoftmaxWithLoss(IN, CLASSES, cutoffs)
    with pytest.raises(ValueError) as ours:
        internals.nn.AdaptiveLogSoftmaxWithLoss(IN, CLASSES, cutoffs)
    assert str(ours.value) == str(theirs.value)


BAD_CALLS = {
    "target_out_of_range": lambda lib: ((4, IN), [1, 2, 10, 0]),
    "negative_target": lambda lib: ((2, IN), [-1, 2]),
    "batch_mismatch": lambda lib: ((3, IN), [1, 2]),
    "3d_input": lambda lib: ((2, 1, IN), [1, 2]),
    "0d_target_2d_input": lambda lib: ((2, IN), 1),
    "2d_target": lambda lib: ((2, IN), [[1], [2]]),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_targets_raise_like_torch(name):
    errors = []
    for lib in (torch, internals):
        shape, target = BAD_CALLS[name](lib)
        m, _ = built(lib)
        with pytest.raises(RuntimeError) as caught:
            m(lib.ones(shape), lib.tensor(target))
        errors.append(str(caught.value))
    assert errors[1] == errors[0].replace("torch.Size", "internals.Size")
