"""``einsum`` against torch, computed as torch computes it (pairwise ``bmm`` contractions, so the same
grad_fn and dispatched operators): PyTorch's OpInfo samples (as given and non-contiguous), then
everyday calls compared for values, strides, grad_fn names, gradients and error messages.

Tests ``internals._functional.einsum`` (torch/functional.py and aten/src/ATen/native/Linear.cpp).
"""
import pytest
import torch
from helpers import (
    TORCH_DTYPES,
    Adapter,
    assert_same,
    assert_same_error,
    check_opinfo_samples,
    logging_modes,
    opinfo_cases,
)

import internals

# torch's BLAS sums each contraction in another order than internals' bmm loop (test_ops.MATMUL_TOL);
# float16/bfloat16 products are accumulated in float32 by both and rounded once.
EINSUM_TOL = {torch.float32: (1.3e-6, 1e-4), torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}

ADAPTERS = {
    "einsum": Adapter(lambda tensors, equation: internals.einsum(equation, tensors), tol=EINSUM_TOL),
}


OPINFO_CASES = opinfo_cases(ADAPTERS, TORCH_DTYPES)


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


# =============================================================================================
# einsum: torch's algorithm, so torch's grad_fn, strides and dispatched operators
# =============================================================================================

EINSUM_CASES = {
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "batch matmul": ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    "batch matmul, transposed": ("bij,bkj->bik", [(2, 2, 3), (2, 4, 3)]),
    "outer": ("i,j->ij", [(3,), (4,)]),
    "dot, implicit output": ("i,i", [(3,), (3,)]),
    "trace": ("ii", [(3, 3)]),
    "diagonal": ("ii->i", [(3, 3)]),
    "sum": ("ij->", [(2, 3)]),
    "column sums": ("ij->j", [(2, 3)]),
    "transpose": ("ij->ji", [(2, 3)]),
    "row-wise dot": ("ij,ij->i", [(2, 3), (2, 3)]),
    "bilinear": ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    "ellipsis": ("...j,j->...", [(2, 3), (3,)]),
    "broadcast ellipsis": ("...ij,...jk", [(2, 1, 2, 3), (5, 3, 4)]),
    "diagonal and contraction": ("iij,kj", [(2, 2, 3), (4, 3)]),
    "spaces and capitals": ("aB, Bc -> ca", [(2, 3), (3, 4)]),
}


def _einsum_operands(lib, shapes):
    gen = torch.Generator().manual_seed(0)
    tensors = [torch.randn(*s, generator=gen, dtype=torch.float64) for s in shapes]
    if lib is torch:
        return [t.requires_grad_() for t in tensors]
    return [internals.from_torch(t).requires_grad_() for t in tensors]


@pytest.mark.parametrize("case", EINSUM_CASES)
def test_einsum_matches_torchs_graph(case):
    equation, shapes = EINSUM_CASES[case]
    ours_in, theirs_in = _einsum_operands(internals, shapes), _einsum_operands(torch, shapes)
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    with mode_t:
        theirs = torch.einsum(equation, *theirs_in)
    with mode_i:
        ours = internals.einsum(equation, *ours_in)
    assert log_i == log_t
    assert_same(ours, theirs, rtol=1e-12, atol=1e-12)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    theirs.sum().backward()
    ours.sum().backward()
    for o, t in zip(ours_in, theirs_in):
        assert_same(o.grad, t.grad, rtol=1e-12, atol=1e-12)
    assert internals.autograd.gradcheck(lambda *xs: internals.einsum(equation, *xs),
                                        tuple(x.detach().requires_grad_() for x in ours_in))


def test_einsum_path_orders_the_contractions():
    equation, shapes = EINSUM_CASES["bilinear"]
    for path in ([1, 2, 0, 1], [0, 2, 0, 1]):
        theirs = torch.ops.aten.einsum(equation, _einsum_operands(torch, shapes), path=path)
        ours = internals.ops.aten.einsum(equation, _einsum_operands(internals, shapes), path=path)
        assert_same(ours, theirs, rtol=1e-12, atol=1e-12)
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


EINSUM_ERRORS = {
    "no operands": ("ij", []),
    "more operands": ("ij", [(2, 3), (3,)]),
    "fewer operands": ("ij,j,k", [(2, 3), (3,)]),
    "bad label": ("i1", [(2, 3)]),
    "bad output label": ("ij->i1", [(2, 3)]),
    "two ellipses": ("......", [(2, 3)]),
    "lone dot": ("i.j", [(2, 3)]),
    "dot in output": ("ij->.", [(2, 3)]),
    "two ellipses in output": ("...->......", [(2, 3)]),
    "too many subscripts": ("ijk", [(2, 3)]),
    "too many with ellipsis": ("ijk...", [(2, 3)]),
    "output label repeated": ("ij->ii", [(2, 3)]),
    "output label unknown": ("ij->k", [(2, 3)]),
    "sizes do not broadcast": ("ij,jk", [(2, 3), (4, 5)]),
    "ellipsis sizes": ("...,...", [(2, 3), (4, 3)]),
    "diagonal of unequal sizes": ("ii", [(2, 3)]),
}


@pytest.mark.parametrize("case", EINSUM_ERRORS)
def test_einsum_errors(case):
    equation, shapes = EINSUM_ERRORS[case]
    ours, theirs = assert_same_error(lambda: internals.einsum(equation, [internals.ones(s) for s in shapes]),
                                     lambda: torch.einsum(equation, [torch.ones(s) for s in shapes]))
    assert str(ours) == str(theirs)


SUBLISTS = {
    "matmul": lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
    "implicit output": lambda lib, a, b: lib.einsum(a, [0, 27], b, [27, 2]),
    "ellipsis": lambda lib, a, b: lib.einsum(a, [..., 1], b, [1, 2], [..., 2]),
    "out of range": lambda lib, a, b: lib.einsum(a, [0, 52], b, [52, 2]),
    "equation alone": lambda lib, a, b: lib.einsum("ij"),
}


@pytest.mark.parametrize("case", SUBLISTS)
def test_einsum_sublist_format(case):
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 3, generator=gen), torch.randn(3, 4, generator=gen)
    f = SUBLISTS[case]
    try:
        theirs = f(torch, a, b)
    except ValueError:
        ours, theirs = assert_same_error(lambda: f(internals, internals.from_torch(a), internals.from_torch(b)),
                                         lambda: f(torch, a, b))
        assert str(ours) == str(theirs)
        return
    assert_same(f(internals, internals.from_torch(a), internals.from_torch(b)), theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("path", [[0, 0], [0, 3], [0]])
def test_einsum_path_errors(path):
    with pytest.raises(RuntimeError) as theirs:
        torch.ops.aten.einsum("i,i", [torch.ones(2), torch.ones(2)], path=path)
    with pytest.raises(RuntimeError) as ours:
        internals.ops.aten.einsum("i,i", [internals.ones(2), internals.ones(2)], path=path)
    assert str(ours.value) == str(theirs.value)
