"""``nn.functional.gumbel_softmax`` against torch: the Gumbel noise is drawn from torch's
exponential stream, so one seed gives torch's sample; soft and hard (straight-through) forms,
their graphs and gradients."""
import pytest
import torch
from helpers import LIBM_ULPS, assert_same

import internals


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("tau,dim", [(1.0, -1), (0.5, 0), (2.0, 1)])
def test_gumbel_softmax_samples_as_torch(hard, tau, dim):
    """The same sample (within the ulps of exp and log), the one-hot exactly where hard, the same
    node names, and the same gradient through the soft sample."""
    results = {}
    for lib in (torch, internals):
        lib.manual_seed(0)
        logits = lib.linspace(-2.0, 2.0, 15).reshape(3, 5).requires_grad_()
        y = lib.nn.functional.gumbel_softmax(logits, tau=tau, hard=hard, dim=dim)
        (y * lib.arange(15.0).reshape(3, 5)).sum().backward()
        results[lib] = (y, logits.grad, y.grad_fn.name(), [n.name() for n, _ in y.grad_fn.next_functions if n])
    ours, theirs = results[internals], results[torch]
    assert ours[2:] == theirs[2:]
    if hard:
        assert_same(ours[0], theirs[0].detach(), rtol=0, atol=0)
    else:
        assert_same(ours[0].detach(), theirs[0].detach(), ulps=4 * LIBM_ULPS)
    # softmax's backward subtracts sum(g·y) from each g: small results lose their leading digits,
    # so the gradient is compared against the size of its terms (up to 14), not its own
    torch.testing.assert_close(ours[1].to_torch(), theirs[1], rtol=0, atol=14 * 2 ** -20)


def test_gumbel_softmax_warns_about_eps():
    for lib in (torch, internals):
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
            lib.nn.functional.gumbel_softmax(lib.zeros(2, 3), eps=1e-5)
