"""The facts quoted in the course's reference page, checked directly."""
import torch
from helpers import assert_same

import internals


def test_output_strides_follow_inputs():
    t = torch.randn(3, 4)
    a = internals.from_torch(t)
    tb = torch.randn(4, 3)
    b = internals.from_torch(tb)
    assert_same(a.t() + 1, t.t() + 1)
    assert_same(a.t().clone(), t.t().clone())
    assert_same(a.t().contiguous(), t.t().contiguous())
    assert_same(a.t() + b, t.t() + tb)
    assert_same(b + a.t(), tb + t.t())
    assert_same(a[:, ::2] + 1, t[:, ::2] + 1)
