"""Weight normalization's operators against torch: ``norm_except_dim`` and ``_weight_norm``
(``aten/native/weight_norm.py``) for the whole tensor (dim -1), the first, a middle and the last
dimension; values, shapes, strides and dtypes, gradients once and twice, and fake tensors."""
import pytest
import torch
from helpers import PRODUCT_ULPS, assert_same

import internals

I = internals.from_torch      # noqa: E741


def operands(dim, dtype=torch.float64):
    g = torch.Generator().manual_seed(0)
    v = torch.randn(3, 4, 5, generator=g, dtype=dtype)
    # g has the shape norm_except_dim gives: size 1 everywhere but dim (a scalar for dim -1).
    norm_shape = () if dim == -1 else tuple(n if d == dim else 1 for d, n in enumerate(v.shape))
    return v, torch.rand(norm_shape, generator=g, dtype=dtype) + 0.5


@pytest.mark.parametrize("dim", [-1, 0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_norm_except_dim(dim, dtype):
    v, _ = operands(dim, dtype)
    assert_same(internals.norm_except_dim(I(v), 2, dim), torch.norm_except_dim(v, 2, dim), ulps=PRODUCT_ULPS)
    assert_same(internals.norm_except_dim(I(v), 3, dim), torch.norm_except_dim(v, 3, dim), ulps=PRODUCT_ULPS)


@pytest.mark.parametrize("dim", [-1, 0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_weight_norm_values(dim, dtype):
    v, g = operands(dim, dtype)
    assert_same(internals._weight_norm(I(v), I(g), dim), torch._weight_norm(v, g, dim), ulps=PRODUCT_ULPS)


def torch_composite(v, g, dim):
    """torch's unfused path, which it takes for the middle dimensions, written out."""
    return v * (g / torch.norm_except_dim(v, 2, dim))


@pytest.mark.parametrize("dim", [-1, 0, 1, 2])
def test_weight_norm_gradients_once_and_twice(dim):
    """First derivatives match torch's _weight_norm on every path; second derivatives match its
    composite path. For the first and last dimension torch's fused kernel differentiates its
    backward with _weight_norm_differentiable_backward, whose result fails torch's own
    gradgradcheck (float64, this file's operands), so there the reference is the composite."""
    v, g = operands(dim)
    results = []
    for lib, weight_norm, (vv, gg) in ((torch, torch._weight_norm, (v, g)),
                                       (torch, torch_composite, (v, g)),
                                       (internals, internals._weight_norm, (I(v), I(g)))):
        vv, gg = vv.clone().requires_grad_(), gg.clone().requires_grad_()
        w = weight_norm(vv, gg, dim)
        weights = lib.linspace(-1, 1, w.numel(), dtype=lib.float64).reshape(w.shape)
        dv, dg = lib.autograd.grad((w * weights).sum(), (vv, gg), create_graph=True)
        second = lib.autograd.grad((dv.pow(2).sum() + dg.pow(2).sum()), (vv, gg))
        results.append((dv, dg, *second))
    fused, composite, ours = results
    for o, t in zip(ours[:2], fused[:2]):
        assert_same(o, t, rtol=1e-10, atol=1e-12)
    for o, t in zip(ours, composite):
        assert_same(o, t, rtol=1e-10, atol=1e-12)
    assert torch.autograd.gradgradcheck(lambda a, b: torch_composite(a, b, dim),
                                        (v.clone().requires_grad_(), g.clone().requires_grad_()))


def test_fake_tensors_reach_the_composite():
    from internals._subclasses.fake_tensor import FakeTensorMode
    v, g = operands(0, torch.float32)
    with FakeTensorMode() as mode:
        fake = internals._weight_norm(mode.from_tensor(I(v)), mode.from_tensor(I(g)), 0)
    assert tuple(fake.shape) == tuple(v.shape) and fake.stride() == torch._weight_norm(v, g, 0).stride()
