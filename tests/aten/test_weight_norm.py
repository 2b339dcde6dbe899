"""Weight normalization's operators against torch: ``norm_except_dim`` and ``_weight_norm``
(``aten/native/weight_norm.py``) for the whole tensor (dim -1), the first, a middle and the last
dimension; values, shapes, strides and dtypes, gradients once and twice, and fake tensors."""
import pytest
import torch
from helpers import PRODUCT_ULPS, assert_same, assert_same_error

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


@pytest.mark.parametrize("dim", [-1, 0, 1, 2])
def test_weight_norm_nodes_and_gradients_once_and_twice(dim):
    """For the first and last dimension torch's _weight_norm takes the fused
    ``_weight_norm_interface`` (one ``WeightNormInterfaceBackward0``), whose backward with
    create_graph is ``_weight_norm_differentiable_backward``; for the others, the composite
    ``v * (g / norm_except_dim(v))``. Nodes of every order and gradients once and twice match
    torch's on each path. (The fused path's second derivatives treat the saved norms as constants,
    as torch's do: they are not the composite's.)"""
    v, g = operands(dim)
    results = []
    for lib, vv, gg in ((torch, v, g), (internals, I(v), I(g))):
        vv, gg = vv.clone().requires_grad_(), gg.clone().requires_grad_()
        w = lib._weight_norm(vv, gg, dim)
        weights = lib.linspace(-1, 1, w.numel(), dtype=lib.float64).reshape(w.shape)
        dv, dg = lib.autograd.grad((w * weights).sum(), (vv, gg), create_graph=True)
        second = lib.autograd.grad((dv.pow(2).sum() + dg.pow(2).sum()), (vv, gg))
        nodes = [type(t.grad_fn).__name__ for t in (w, dv, dg)]
        results.append((nodes, (w, dv, dg, *second)))
    (nodes_t, theirs), (nodes_i, ours) = results
    assert nodes_i == nodes_t
    assert nodes_t[0] == ("WeightNormInterfaceBackward0" if dim in (0, 2) else "MulBackward0")
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dim", [0, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_fused_kernel_and_its_backward(dim, dtype):
    """``_weight_norm_interface`` returns the weight (contiguous) and the norms (laid out as g,
    in float for a 16-bit g); its backward operator gives contiguous gradients; the
    differentiable backward is the same formula. Bad input fails as torch's kernels do."""
    v, g = operands(dim, dtype)
    w_t, n_t = torch._weight_norm_interface(v, g, dim)
    w_i, n_i = internals._weight_norm_interface(I(v), I(g), dim)
    tol = dict(rtol=1e-2, atol=1e-2) if dtype is torch.bfloat16 else dict(ulps=PRODUCT_ULPS)
    # the backward's a·grad_w − b·v cancels: the sums' order (the kernel's vector width) shows
    # in float32's last bits
    backward_tol = {torch.float32: dict(rtol=1e-5, atol=1e-6),
                    torch.float64: dict(rtol=1e-12, atol=1e-15)}.get(dtype, tol)
    assert_same(w_i, w_t, **tol)
    assert_same(n_i, n_t, **tol)
    grad_w = torch.linspace(-1, 1, v.numel(), dtype=dtype).reshape(v.shape)
    theirs = torch.ops.aten._weight_norm_interface_backward(grad_w, v, g, n_t, dim)
    ours = internals.ops.aten._weight_norm_interface_backward(I(grad_w), I(v), I(g), n_i, dim)
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t, **backward_tol)
    if dtype is torch.float64:
        theirs = torch.ops.aten._weight_norm_differentiable_backward(grad_w, v, g, n_t, dim)
        ours = internals.ops.aten._weight_norm_differentiable_backward(I(grad_w), I(v), I(g), n_i, dim)
        for o, t in zip(ours, theirs, strict=True):
            assert_same(o, t, **backward_tol)
    bad = [lambda lib, T: lib.ops.aten._weight_norm_interface_backward(T(grad_w), T(v).transpose(0, 1),
                                                                       T(g), T(n_t), dim),
           lambda lib, T: lib._weight_norm_interface(T(v).long(), T(g).long(), dim),
           lambda lib, T: lib._weight_norm(T(v), T(g).double() if dtype is not torch.float64 else T(g).float(), dim)]
    for run in bad:
        error_i, error_t = assert_same_error(lambda run=run: run(internals, I), lambda run=run: run(torch, lambda t: t))
        assert str(error_i) == str(error_t)


def test_fake_tensors_reach_the_composite():
    from internals._subclasses.fake_tensor import FakeTensorMode
    v, g = operands(0, torch.float32)
    with FakeTensorMode() as mode:
        fake = internals._weight_norm(mode.from_tensor(I(v)), mode.from_tensor(I(g)), 0)
    assert tuple(fake.shape) == tuple(v.shape) and fake.stride() == torch._weight_norm(v, g, 0).stride()
