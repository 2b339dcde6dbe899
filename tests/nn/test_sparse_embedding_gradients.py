"""``nn.Embedding(..., sparse=True)`` and ``F.embedding(..., sparse=True)`` against torch: the
weight's gradient is a sparse COO tensor (``embedding_backward`` choosing
``embedding_sparse_backward``) with torch's indices, values, size and coalesced flag; it
accumulates over backward passes, steps plain SGD, and is refused where torch refuses it."""
import numpy as np
import pytest
import torch
from helpers import assert_same, same_error

import internals

INDICES = [[[1, 2, 1], [4, 1, 0]], [3, 3, 3], [[0, 0]], [[]]]


def _weight(L, dtype="float64"):
    a = np.random.default_rng(0).standard_normal((5, 3))
    return L.tensor(a.tolist(), dtype=getattr(L, dtype), requires_grad=True)


def _assert_same_sparse(got, want, exact_layout=True):
    """Entries, order and flag; ``exact_layout=False`` after a coalesce, whose indices torch leaves
    as a narrowed view of a longer buffer (ours are compact)."""
    assert got.is_sparse and want.is_sparse
    assert tuple(got.shape) == tuple(want.shape)
    assert got.is_coalesced() == want.is_coalesced()
    assert_same(got._indices(), want._indices(), exact_layout=exact_layout, rtol=0, atol=0)
    assert_same(got._values(), want._values(), exact_layout=exact_layout, rtol=0, atol=0)


def _gradient(L, indices, padding_idx, dtype="float64", passes=1):
    w = _weight(L, dtype)
    for k in range(passes):
        out = L.nn.functional.embedding(L.tensor(indices, dtype=L.int64), w, padding_idx=padding_idx, sparse=True)
        assert out.grad_fn.name() == "EmbeddingBackward0"
        (out * out * (k + 1)).sum().backward()
    return w.grad


@pytest.mark.parametrize("padding_idx", [None, 0, 1])
@pytest.mark.parametrize("indices", INDICES, ids=["2d", "repeated", "padding_only", "empty"])
def test_sparse_gradient_is_torch_s(indices, padding_idx):
    """One entry per lookup, in lookup order, uncoalesced; padding lookups dropped; none at all
    leaves (1, 0) indices and (0, 3) values."""
    _assert_same_sparse(_gradient(internals, indices, padding_idx), _gradient(torch, indices, padding_idx))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_gradient_accumulates_over_passes(dtype):
    got, want = _gradient(internals, INDICES[0], None, dtype, 3), _gradient(torch, INDICES[0], None, dtype, 3)
    _assert_same_sparse(got, want)
    assert_same(got.to_dense(), want.to_dense(), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_sparse_gradient_is_torch_s(dtype):
    """A first 16-bit sparse gradient is torch's (summing a second one is not covered: torch's
    CPU sparse addition has a bfloat16 kernel on one path and none on another)."""
    _assert_same_sparse(_gradient(internals, INDICES[0], None, dtype), _gradient(torch, INDICES[0], None, dtype))


def test_module_and_plain_sgd_follow_torch():
    """Embedding(sparse=True) trained by SGD (plain and maximizing): the same weights after each
    step (each stored entry added in turn, as torch's dense-sparse addition adds them)."""
    def run(L, maximize):
        L.manual_seed(0)
        emb = L.nn.Embedding(6, 4, sparse=True, padding_idx=2).double()
        opt = L.optim.SGD(emb.parameters(), lr=0.1, maximize=maximize)
        seen = []
        for step in range(3):
            opt.zero_grad()
            idx = L.tensor([[step, 2, 5, step], [1, 1, 3, 0]])
            emb(idx).pow(2).sum().backward()
            opt.step()
            seen.append(emb.weight.detach().clone())
        return seen
    for maximize in (False, True):
        for got, want in zip(run(internals, maximize), run(torch, maximize)):
            assert_same(got, want, rtol=0, atol=1e-15)


def test_refusals_match_torch():
    """scale_grad_by_freq with sparse gradients; SGD's weight decay (sparse + dense); Adam."""
    def freq(L):
        w = _weight(L)
        L.nn.functional.embedding(L.tensor([1, 1]), w, sparse=True, scale_grad_by_freq=True).sum().backward()

    def decay(L):
        w = _weight(L)
        L.nn.functional.embedding(L.tensor([1, 1]), w, sparse=True).sum().backward()
        L.optim.SGD([w], lr=0.1, weight_decay=0.1).step()

    def adam(L):
        w = _weight(L)
        L.nn.functional.embedding(L.tensor([1, 1]), w, sparse=True).sum().backward()
        L.optim.Adam([w]).step()
    for case in (freq, decay, adam):
        same_error(case)


BAGS = [  # indices, offsets, include_last_offset
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 4], False),
    ([1, 1, 0, 0, 2], [0, 2, 2, 5], True),       # an empty bag; the last offset an end
    ([3, 0, 0, 3, 1], [0, 1, 3], False),
]


def _bag_gradient(L, case, mode, padding_idx=None, per_sample=False, dtype="float64"):
    indices, offsets, last = case
    g = np.random.default_rng(1)
    w = L.tensor(g.standard_normal((10, 3)).tolist(), dtype=getattr(L, dtype), requires_grad=True)
    psw = L.tensor(g.standard_normal(len(indices)).tolist(), dtype=getattr(L, dtype)) if per_sample else None
    out = L.nn.functional.embedding_bag(L.tensor(indices), w, L.tensor(offsets), mode=mode, sparse=True,
                                        per_sample_weights=psw, include_last_offset=last, padding_idx=padding_idx)
    assert out.grad_fn.name() == "EmbeddingBagBackward0"
    (out * L.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
    return w.grad


@pytest.mark.parametrize("case", BAGS, ids=["two_bags", "empty_bag_last_offset", "repeats"])
@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 0, 3])
def test_embedding_bag_sparse_gradient_is_torch_s(case, mode, padding_idx):
    """One entry per position (padding positions dropped), its bag's gradient row, times the
    reciprocal of the bag's size for a mean: the same entries, order and flag as torch's, and the
    same rows once coalesced."""
    got, want = _bag_gradient(internals, case, mode, padding_idx), _bag_gradient(torch, case, mode, padding_idx)
    _assert_same_sparse(got, want)
    _assert_same_sparse(got.coalesce(), want.coalesce(), exact_layout=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_bag_sparse_gradient_with_sample_weights(dtype):
    got = _bag_gradient(internals, BAGS[0], "sum", per_sample=True, dtype=dtype)
    _assert_same_sparse(got, _bag_gradient(torch, BAGS[0], "sum", per_sample=True, dtype=dtype))


def test_embedding_bag_module_trained_by_sparse_adam_follows_torch():
    """nn.EmbeddingBag(sparse=True) and SparseAdam, three steps: the weights to the bit."""
    def run(L):
        L.manual_seed(0)
        bag = L.nn.EmbeddingBag(8, 3, mode="mean", sparse=True).double()
        opt = L.optim.SparseAdam(bag.parameters(), lr=0.01)
        for step in range(3):
            opt.zero_grad()
            bag(L.tensor([step, 2, 5, 7, step + 1, 2]), L.tensor([0, 2, 3])).pow(2).sum().backward()
            opt.step()
        return bag.weight.detach()
    assert_same(run(internals), run(torch), rtol=0, atol=0)


def test_embedding_bag_sparse_refusals():
    """Max mode with sparse gradients (a ValueError before any work); sample weights outside sum."""
    def max_mode(L):
        L.nn.functional.embedding_bag(L.tensor([1, 2]), _weight(L), L.tensor([0]), mode="max", sparse=True)

    def mean_with_weights(L):
        L.nn.functional.embedding_bag(L.tensor([1, 2]), _weight(L), L.tensor([0]), mode="mean", sparse=True,
                                      per_sample_weights=L.ones(2, dtype=L.float64))
    same_error(max_mode)
    same_error(mean_with_weights)
