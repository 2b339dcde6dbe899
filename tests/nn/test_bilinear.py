"""``F.bilinear`` / ``nn.Bilinear`` against torch: ``bilinear`` is CompositeImplicitAutograd over
``_trilinear`` (``aten/src/ATen/native/Linear.cpp``), whose derivative is three more ``_trilinear``
calls, so the graph holds torch's ``ViewBackward0`` over ``TrilinearBackward0`` (under an
``AddBackward0`` for the bias) and differentiates twice. torch sums the products as batched
matrix products, the package by broadcasting: the same sums in another order, compared within a
tolerance; the seeded module draws torch's weights bit for bit."""

import numpy as np
import pytest
import torch
from helpers import Adapter, assert_fake_matches_real, assert_same, check_opinfo_samples, same_outcome

import internals

TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-12, 1e-12)}
ADAPTERS = {"nn.functional.bilinear": Adapter(internals.nn.functional.bilinear, tol=TOL)}


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=str)
def test_opinfo_samples(dtype):
    name = "nn.functional.bilinear"
    check_opinfo_samples(name, dtype, ADAPTERS[name])


def _t(L, shape, seed, requires_grad=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return L.tensor(a.ravel().tolist(), dtype=L.float64).reshape(shape).requires_grad_(requires_grad)


def _nodes(t):
    return t.grad_fn.name(), [n.name() if n is not None else None for n, _ in t.grad_fn.next_functions]


SHAPES = {
    "batch": ((4, 3), (4, 5), (6, 3, 5), (6,)),
    "no_bias": ((4, 3), (4, 5), (6, 3, 5), None),
    "extra_batch_dims": ((2, 3, 3), (2, 3, 5), (2, 3, 5), (2,)),
    "unbatched": ((3,), (5,), (6, 3, 5), (6,)),
    "transposed_inputs": ((3, 4), (5, 4), (2, 3, 5), (2,)),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_values_two_gradients_and_nodes_match_torch(name):
    s1, s2, sw, sb = SHAPES[name]

    def run(L):
        x1, x2, w = _t(L, s1, 0), _t(L, s2, 1), _t(L, sw, 2)
        if name == "transposed_inputs":
            x1, x2 = x1.t(), x2.t()
        b = _t(L, sb, 3) if sb else None
        y = L.nn.functional.bilinear(x1, x2, w, b)
        leaves = (x1, x2, w) + ((b,) if b is not None else ())
        grads = L.autograd.grad((y * y).sum(), leaves, create_graph=True)
        second = L.autograd.grad((grads[0] * grads[0]).sum(), (x2, w))
        return (y, *grads, *second), (_nodes(y), _nodes(grads[0]))
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[0], theirs[0]):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    assert ours[1] == theirs[1]


def test_trilinear_itself_matches_torch_with_a_summed_unroll_dim():
    """``_trilinear`` of other expand and sum lists than bilinear's, called as the operator."""
    def run(L):
        a, b, c = _t(L, (3, 4), 0), _t(L, (4, 5), 1), _t(L, (3, 5), 2)
        # dims (i, j, k): a is (i, j), b (j, k), c (i, k); sum over j and k, unroll over j
        y = L.ops.aten._trilinear(a, b, c, [2], [0], [1], [1, 2], 1)
        grads = L.autograd.grad((y * y).sum(), (a, b, c))
        return (y, *grads), y.grad_fn.name()
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[0], theirs[0]):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    assert ours[1] == theirs[1]


BAD = {
    "dims": lambda F, a, b, w: F.bilinear(a, b[0], w),
    "batch": lambda F, a, b, w: F.bilinear(a, b[:3], w),
    "in1": lambda F, a, b, w: F.bilinear(a[:, :2], b, w),
    "in2": lambda F, a, b, w: F.bilinear(a, b[:, :2], w),
    "bias": lambda F, a, b, w: F.bilinear(a, b, w, a.new_ones(5)),
    # dtypes are checked before any size: a float32 operand beside float64 ones is refused
    "input2_dtype": lambda F, a, b, w: F.bilinear(a, b.float(), w),
    "weight_dtype": lambda F, a, b, w: F.bilinear(a[:0], b, w.float()),
    "bias_dtype": lambda F, a, b, w: F.bilinear(a, b, w, a.new_ones(6).float()),
}


@pytest.mark.parametrize("name", list(BAD))
def test_mismatched_sizes_raise_torchs_error_in_torchs_words(name):
    same_outcome(lambda L: BAD[name](L.nn.functional, _t(L, (4, 3), 0, False), _t(L, (4, 5), 1, False),
                                     _t(L, (6, 3, 5), 2, False)))


def test_the_seeded_module_draws_torchs_weights_and_computes_and_prints_alike():
    def run(L):
        L.manual_seed(5)
        m = L.nn.Bilinear(3, 5, 4, dtype=L.float64)
        n = L.nn.Bilinear(2, 2, 1, bias=False)
        return m.weight, m.bias, m(_t(L, (2, 3), 0), _t(L, (2, 5), 1)), repr(m), repr(n), n.bias is None
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0], rtol=0, atol=0)
    assert_same(ours[1], theirs[1], rtol=0, atol=0)
    assert_same(ours[2], theirs[2], rtol=1e-12, atol=1e-12)
    assert ours[3:] == theirs[3:]
    same_outcome(lambda L: L.nn.Bilinear(0, 2, 3), message=True)


def test_fake_tensors_get_the_real_layout():
    def operands():
        return _t(internals, (4, 3), 0, False), _t(internals, (4, 5), 1, False), _t(internals, (6, 3, 5), 2, False)
    assert_fake_matches_real(lambda L, a, b, w: L.nn.functional.bilinear(a, b, w), operands)
    assert_fake_matches_real(lambda L, a, b, w: L.ops.aten._trilinear(a, w, b, [1, 3], [0], [1, 2], [2, 3]),
                             operands)


# Differentiated twice: the gradient is itself a ``_trilinear`` (tests/autograd/test_autograd.py
# counts the nodes these reach; test_values_two_gradients_and_nodes_match_torch compares them).
SECOND_ORDER = {
    "bilinear": lambda L: (lambda x: (L.nn.functional.bilinear(x, x * 2, _t(L, (2, 3, 3), 1)) ** 2, x))(
        _t(L, (2, 3), 0)),
}
