"""Optimizers over the sparse gradients of ``nn.Embedding(sparse=True)``, against torch's
single-tensor loops: SGD (plain, with momentum, dampening, Nesterov, maximizing), Adagrad's sparse
path and SparseAdam, over several steps with rows looked up twice, rows never looked up and a
padding row; and the refusals (optimizers that take no sparse gradient, SparseAdam's dense ones).

Where torch adds a sparse update times a learning rate into a dense parameter it calls BLAS's axpy
(``add_dense_sparse_worker_hybrid_cpu``), whose multiply-add MKL fuses or not by instruction set:
those parameters are compared within ``PRODUCT_ULPS``. Sparse arithmetic on the values, and
updates added with alpha 1 (SparseAdam's, Adagrad's accumulator), are compared bit for bit.
"""
import pytest
import torch
from helpers import PRODUCT_ULPS, RoundedSqrt, assert_same, same_error

import internals

EXACT = dict(rtol=0, atol=0)
LOOKUPS = [[[0, 2, 5, 0], [1, 1, 3, 0]], [[4, 4, 4, 2], [2, 2, 2, 2]], [[5, 1, 0, 0], [3, 6, 6, 1]]]


def _train(L, make_optimizer, steps=3, padding_idx=2):
    """A sparse embedding trained by ``make_optimizer``; the weights and state after each step."""
    L.manual_seed(0)
    emb = L.nn.Embedding(7, 3, sparse=True, padding_idx=padding_idx).double()
    opt = make_optimizer(L, emb.parameters())
    seen = []
    for step in range(steps):
        opt.zero_grad()
        out = emb(L.tensor(LOOKUPS[step % len(LOOKUPS)]))
        (out * out * (step + 1) + out).sum().backward()
        assert emb.weight.grad.is_sparse
        if L is torch:
            with RoundedSqrt():
                opt.step()
        else:
            opt.step()
        state = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in opt.state[emb.weight].items()}
        seen.append((emb.weight.detach().clone(), state))
    return seen


def _assert_same_sparse(got, want, tol=EXACT):
    assert got.is_sparse and want.is_sparse
    assert tuple(got.shape) == tuple(want.shape)
    assert got.is_coalesced() == want.is_coalesced()
    assert_same(got._indices(), want._indices(), exact_layout=False, **EXACT)
    assert_same(got._values(), want._values(), exact_layout=False, **tol)


def _compare(make_optimizer, weight_tol, state_tol=None):
    for (w_ours, s_ours), (w_theirs, s_theirs) in zip(_train(internals, make_optimizer), _train(torch, make_optimizer)):
        assert_same(w_ours, w_theirs, **weight_tol)
        assert sorted(s_ours) == sorted(s_theirs)
        for key, want in s_theirs.items():
            got = s_ours[key]
            if isinstance(want, torch.Tensor) and want.is_sparse:
                _assert_same_sparse(got, want, state_tol or weight_tol)
            elif isinstance(want, torch.Tensor):
                assert_same(got, want, **(state_tol or weight_tol))
            else:
                assert got == want


SGD_CONFIGS = [dict(lr=0.1), dict(lr=0.1, maximize=True), dict(lr=0.1, momentum=0.9),
               dict(lr=0.05, momentum=0.5, dampening=0.25), dict(lr=0.05, momentum=0.9, nesterov=True),
               dict(lr=0.05, momentum=0.9, maximize=True)]


@pytest.mark.parametrize("config", SGD_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_sgd_follows_torch(config):
    """With momentum the buffer is a sparse tensor (torch's ``clone().detach()``, then ``mul_`` and
    a sparse ``add_``): its entries equal torch's, in torch's order and with its coalesced flag."""
    _compare(lambda L, p: L.optim.SGD(p, foreach=False, **config), dict(ulps=PRODUCT_ULPS), EXACT)


ADAGRAD_CONFIGS = [dict(lr=0.1), dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.5),
                   dict(lr=0.05, eps=1e-3, maximize=True)]


@pytest.mark.parametrize("config", ADAGRAD_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_adagrad_sparse_path_follows_torch(config):
    """The accumulator grows only at the rows a step looks up, bit for bit; the parameter within
    BLAS's ulps."""
    _compare(lambda L, p: L.optim.Adagrad(p, foreach=False, **config), dict(ulps=PRODUCT_ULPS), EXACT)


SPARSE_ADAM_CONFIGS = [dict(), dict(lr=0.01, betas=(0.8, 0.9)), dict(lr=0.01, eps=1e-4, maximize=True)]


@pytest.mark.parametrize("config", SPARSE_ADAM_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_sparse_adam_follows_torch_bit_for_bit(config):
    """Every update is added with alpha 1, so weights, moments and the (Python int) step count
    are torch's to the bit."""
    _compare(lambda L, p: L.optim.SparseAdam(p, **config), EXACT)


def test_sparse_adam_skips_an_empty_gradient_but_counts_the_step():
    """A step whose lookups all hit the padding row: nothing moves, the count still advances."""
    def run(L):
        L.manual_seed(0)
        emb = L.nn.Embedding(4, 2, sparse=True, padding_idx=1).double()
        opt = L.optim.SparseAdam(emb.parameters())
        for idx in ([0, 2], [1, 1], [3, 0]):
            opt.zero_grad()
            emb(L.tensor(idx)).sum().backward()
            opt.step()
        return emb.weight.detach(), opt.state[emb.weight]
    (w_ours, s_ours), (w_theirs, s_theirs) = run(internals), run(torch)
    assert_same(w_ours, w_theirs, **EXACT)
    assert s_ours["step"] == s_theirs["step"] == 3
    assert_same(s_ours["exp_avg_sq"], s_theirs["exp_avg_sq"], **EXACT)


def _sparse_grad(L):
    w = L.nn.Parameter(L.arange(6.0).reshape(3, 2))
    L.nn.functional.embedding(L.tensor([1, 1, 2]), w, sparse=True).sum().backward()
    return w


@pytest.mark.parametrize("make", [
    lambda L, p: L.optim.Adam(p), lambda L, p: L.optim.AdamW(p), lambda L, p: L.optim.RMSprop(p),
    lambda L, p: L.optim.Adam(p, amsgrad=True), lambda L, p: L.optim.Adagrad(p, weight_decay=0.1),
    lambda L, p: L.optim.SGD(p, lr=0.1, weight_decay=0.1), lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.9,
                                                                                    weight_decay=0.1),
], ids=["adam", "adamw", "rmsprop", "amsgrad", "adagrad_decay", "sgd_decay", "sgd_momentum_decay"])
def test_refusals_of_sparse_gradients(make):
    """torch's class and message, and the parameter untouched."""
    def program(L):
        w = _sparse_grad(L)
        before = w.detach().clone()
        try:
            make(L, [w]).step()
        finally:
            assert (w.detach() == before).all()
    same_error(program)


def test_sparse_adam_refuses_dense_gradients():
    def program(L):
        w = L.nn.Parameter(L.ones(3))
        w.grad = L.ones(3)
        L.optim.SparseAdam([w]).step()
    same_error(program)


@pytest.mark.parametrize("kwargs", [dict(lr=0.0), dict(lr=-1.0), dict(eps=0.0), dict(betas=(1.0, 0.9)),
                                    dict(betas=(0.9, -0.1))])
def test_sparse_adam_bad_hyper_parameters(kwargs):
    same_error(lambda L: L.optim.SparseAdam([L.nn.Parameter(L.ones(2))], **kwargs))


def test_sparse_adam_refuses_complex_parameters_by_position():
    same_error(lambda L: L.optim.SparseAdam([{"params": [L.nn.Parameter(L.ones(2))]},
                                             {"params": [L.nn.Parameter(L.ones(2)),
                                                         L.ones(2, dtype=L.complex64)]}]))

