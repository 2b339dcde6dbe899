"""Arithmetic on the compressed layouts (``sparse/sparse_csr_tensor_math.py``), against torch.

What torch 2.13's CPU computes for CSR (and CSC, BSR where it takes them): the value-wise unary
operators, ``mul`` by a number, a dense tensor or another CSR matrix, ``add`` of two CSR matrices
or with a dense side, their in-place forms, ``t()``, ``sum()`` and the product of two compressed
matrices. A compressed result is compared part by part (layout, sizes, nnz, the compressed and
plain indices exactly, the values exactly or within the library-math ulps); a refusal by its
exception class and message.
"""
import pytest
import torch
from helpers import LIBM_ULPS, PRODUCT_ULPS, assert_same, assert_same_error

import internals

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state:UserWarning"),
              pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled:UserWarning")]

EXACT = dict(rtol=0, atol=0)
A = [[1.0, 0.0, -2.0, 0.0], [0.0, 3.0, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0]]
B = [[0.0, 5.0, 1.0, 0.0], [0.0, -3.0, 0.0, 0.0], [2.0, 0.0, 0.0, -1.5]]
C4 = [[1.0, 0.0, -2.0, 0.0], [0.0, 3.0, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 4.0, 1.0]]
D4 = [[0.0, 5.0, 0.0, 0.0], [0.0, -3.0, 0.0, 0.0], [2.0, 0.0, 0.0, -1.5], [0.0, 0.0, 0.0, 0.0]]


def _parts(t):
    name = str(t.layout).split(".")[-1]
    if name in ("sparse_csr", "sparse_bsr"):
        return name, t.crow_indices(), t.col_indices(), t.values()
    if name in ("sparse_csc", "sparse_bsc"):
        return name, t.ccol_indices(), t.row_indices(), t.values()
    return name, None, None, t


def assert_same_result(ours, theirs, ulps=None):
    (layout_i, c_i, p_i, v_i), (layout_t, c_t, p_t, v_t) = _parts(ours), _parts(theirs)
    assert layout_i == layout_t
    assert tuple(ours.shape) == tuple(theirs.shape)
    if c_t is not None:
        assert ours._nnz() == theirs._nnz()
        assert_same(c_i, c_t, exact_layout=False, **EXACT)
        assert_same(p_i, p_t, exact_layout=False, **EXACT)
    tol = dict(ulps=ulps) if ulps else EXACT
    assert_same(v_i.detach(), v_t.detach(), exact_layout=False, **tol)


def _csr(lib, rows, dtype=None):
    return lib.tensor(rows, dtype=dtype or lib.float32).to_sparse_csr()


# torch's unary operators with compressed kernels; those of library math within LIBM_ULPS
UNARY_EXACT = ["abs", "neg", "sign", "sgn", "ceil", "floor", "round", "trunc", "frac", "relu", "isnan", "isinf",
               "signbit", "angle", "isposinf", "isneginf"]
UNARY_LIBM = ["sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "erf", "erfinv", "expm1", "log1p",
              "sqrt", "rad2deg", "deg2rad"]


@pytest.mark.parametrize("layout", ["csr", "csc", "bsr"])
@pytest.mark.parametrize("op", UNARY_EXACT + UNARY_LIBM)
def test_unary_operators_map_the_stored_values(op, layout):
    def program(lib):
        x = lib.tensor(A)
        x = {"csr": x.to_sparse_csr(), "csc": x.to_sparse_csc(), "bsr": x.to_sparse_bsr((1, 2))}[layout]
        return getattr(lib, op)(x)
    assert_same_result(program(internals), program(torch), None if op in UNARY_EXACT else LIBM_ULPS)


BINARY = {
    "csr*2": lambda L: _csr(L, A) * 2,
    "2.5*csr": lambda L: 2.5 * _csr(L, A),
    "csr*0-dim": lambda L: _csr(L, A) * L.tensor(-3.0),
    "csr*0-dim-double": lambda L: _csr(L, A) * L.tensor(0.5, dtype=L.float64),
    "csc*2": lambda L: L.tensor(A).to_sparse_csc() * 2,
    "csr*dense": lambda L: _csr(L, A) * L.tensor(B),
    "dense*csr": lambda L: L.tensor(B) * _csr(L, A),
    "csr*csr": lambda L: _csr(L, A) * _csr(L, B),
    "csr*csr-promoted": lambda L: _csr(L, A) * _csr(L, B, L.float64),
    "csr*csc": lambda L: _csr(L, A) * L.tensor(B).to_sparse_csc(),
    "csr*bsr": lambda L: _csr(L, A, L.float64) * L.tensor(B).to_sparse_bsr((1, 2)),
    "csr*bsc": lambda L: _csr(L, A) * L.tensor(B).to_sparse_bsc((3, 2)),
    "empty-csr*bsr": lambda L: _csr(L, [[0.0, 0.0], [0.0, 0.0]]) * L.ones(2, 2, dtype=L.float64).to_sparse_bsr((1, 1)),
    "bsr*number": lambda L: L.tensor(A).to_sparse_bsr((1, 2)) * 3,
    "0-dim*bsc": lambda L: L.tensor(2.0) * L.tensor(A).to_sparse_bsc((1, 2)),
    "csr+csr": lambda L: _csr(L, A) + _csr(L, B),
    "csr+csr-alpha": lambda L: L.add(_csr(L, A, L.float64), _csr(L, B, L.float64), alpha=-2),
    "csr+self": lambda L: _csr(L, A) + _csr(L, A),
    "csr+bsr-1x1": lambda L: _csr(L, A) + L.tensor(B).to_sparse_bsr((1, 1)),
    "csr+bsr-1x1-alpha": lambda L: L.add(_csr(L, A, L.float64), L.tensor(B, dtype=L.float64).to_sparse_bsr((1, 1)),
                                         alpha=0.5),
    "csr+dense": lambda L: _csr(L, A) + L.tensor(B),
    "dense+csr": lambda L: L.tensor(B) + _csr(L, A),
    "dense+csr-alpha": lambda L: L.add(L.tensor(B), _csr(L, A), alpha=3),
    "mul_": lambda L: _csr(L, A).mul_(2),
    "add_": lambda L: _csr(L, A).add_(_csr(L, B)),
    "t": lambda L: _csr(L, A).t(),
    "csc.t": lambda L: L.tensor(A).to_sparse_csc().t(),
    "t.t": lambda L: _csr(L, A).t().t(),
    "sum": lambda L: _csr(L, A).sum(),
    "sum-int": lambda L: _csr(L, A, L.int64).sum(),
    "sum-dtype": lambda L: _csr(L, A).sum(dtype=L.float64),
}


@pytest.mark.parametrize("name", BINARY)
def test_arithmetic_as_torch(name):
    """Products and sums of small integers and halves: exact in float, whatever the order."""
    assert_same_result(BINARY[name](internals), BINARY[name](torch))


PRODUCTS = {
    "csr@csr": lambda L: _csr(L, A) @ L.tensor(B).t().contiguous().to_sparse_csr(),
    "csr@csr.t": lambda L: L.mm(_csr(L, A), _csr(L, B).t()),
    "csc@csc": lambda L: L.tensor(A).to_sparse_csc() @ L.tensor(B).t().contiguous().to_sparse_csc(),
    "csr@csc-double": lambda L: _csr(L, A, L.float64) @ L.tensor(B, dtype=L.float64).t().contiguous().to_sparse_csc(),
    "empty-rows": lambda L: _csr(L, [[0.0, 0.0], [0.0, 0.0]]) @ _csr(L, [[1.0, 0.0], [0.0, 2.0]]),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_products_of_two_compressed_matrices(name):
    """A CSR result with every reachable entry, a sum that cancels to zero kept as an entry."""
    assert_same_result(PRODUCTS[name](internals), PRODUCTS[name](torch), PRODUCT_ULPS)


def test_a_product_of_random_matrices():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(7, 9, generator=g) * (torch.rand(7, 9, generator=g) < 0.4)
    b = torch.randn(9, 5, generator=g) * (torch.rand(9, 5, generator=g) < 0.4)
    theirs = a.to_sparse_csr() @ b.to_sparse_csr()
    ours = internals.from_torch(a).to_sparse_csr() @ internals.from_torch(b).to_sparse_csr()
    assert_same_result(ours, theirs, PRODUCT_ULPS)


# the in-place forms torch has for the compressed layouts: the values changed, the indices kept
UNARY_INPLACE_EXACT = ["abs", "neg", "sign", "sgn", "ceil", "floor", "round", "trunc", "frac", "relu"]
UNARY_INPLACE_LIBM = ["sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "erf", "erfinv", "expm1",
                      "log1p", "sqrt", "rad2deg", "deg2rad"]


# torch's round_ takes CSR only (a refusal below)
INPLACE_CASES = [(op, layout) for layout in ("csr", "bsc") for op in UNARY_INPLACE_EXACT + UNARY_INPLACE_LIBM
                 if layout == "csr" or op != "round"]


@pytest.mark.parametrize(("op", "layout"), INPLACE_CASES)
def test_in_place_unary_operators_change_the_values(op, layout):
    def program(lib):
        x = lib.tensor(A) / 4
        x = x.to_sparse_csr() if layout == "csr" else x.to_sparse_bsc((1, 2))
        same = getattr(x, op + "_")()
        assert same is x
        return x
    assert_same_result(program(internals), program(torch), None if op in UNARY_INPLACE_EXACT else LIBM_ULPS)


# sum over dims: CSR matrices only, the dims kept; each sum over a few small integers and halves
SUMS = {
    "rows": lambda L: _csr(L, A).sum(1, keepdim=True),
    "columns": lambda L: _csr(L, B).sum(0, keepdim=True),
    "negative dim": lambda L: _csr(L, A).sum(-1, keepdim=True),
    "both": lambda L: _csr(L, B).sum((0, 1), keepdim=True),
    "both reversed": lambda L: _csr(L, B).sum((1, -2), keepdim=True),
    "no dims": lambda L: _csr(L, A).sum((), keepdim=True),
    "integers in int64": lambda L: _csr(L, A, L.int32).sum(0, keepdim=True),
    "dtype": lambda L: _csr(L, A).sum(1, keepdim=True, dtype=L.float64),
    "half": lambda L: _csr(L, B, L.float16).sum(0, keepdim=True),
    "empty columns": lambda L: _csr(L, [[0.0, 0.0], [0.0, 0.0]]).sum(0, keepdim=True),
    "int32 indices": lambda L: L.sparse_csr_tensor(L.tensor([0, 2, 2, 3], dtype=L.int32),
                                                   L.tensor([1, 3, 0], dtype=L.int32), L.tensor([1.0, 2.0, 3.0]),
                                                   (3, 4)).sum(1, keepdim=True),
}


@pytest.mark.parametrize("name", SUMS)
def test_sums_over_dims_as_torch(name):
    ours, theirs = SUMS[name](internals), SUMS[name](torch)
    assert_same_result(ours, theirs)
    assert ours.dtype is getattr(internals, str(theirs.dtype).split(".")[-1])
    assert ours.crow_indices().dtype is getattr(internals, str(theirs.crow_indices().dtype).split(".")[-1])


def test_a_sum_over_dims_records_torchs_node():
    def program(lib):
        return _csr(lib, A).requires_grad_().sum(1, keepdim=True)
    ours, theirs = program(internals), program(torch)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "SumBackward1"
    assert_same_result(ours, theirs)


# What torch's CPU refuses on the compressed layouts, with its class and message. Elementwise
# operators without a compressed kernel (those that do not keep zero at zero, and the binary
# ones but add and mul) run their dense structured kernel, whose TensorIterator refuses the
# layout; the views ask for strides the compressed layouts do not have.
REFUSED_LIKE_TORCH = {
    "sub": lambda L: _csr(L, A) - _csr(L, B),
    "sub-dense": lambda L: _csr(L, A) - L.tensor(B),
    "dense-sub": lambda L: L.tensor(B) - _csr(L, A),
    "sub-number": lambda L: _csr(L, A) - 1,
    "sub_": lambda L: _csr(L, A).sub_(_csr(L, B)),
    "div-number": lambda L: _csr(L, A) / 2,
    "div-dense": lambda L: _csr(L, A) / L.tensor(B),
    "div-csr": lambda L: _csr(L, A) / _csr(L, B),
    "exp": lambda L: L.exp(_csr(L, A)),
    "cos": lambda L: L.cos(_csr(L, A)),
    "cos-csc": lambda L: L.cos(L.tensor(A).to_sparse_csc()),
    "sigmoid": lambda L: L.sigmoid(_csr(L, A)),
    "exp_": lambda L: _csr(L, A).exp_(),
    "pow-2": lambda L: L.pow(_csr(L, A), 2),
    "pow-half": lambda L: _csr(L, A) ** 0.5,
    "pow-bsr": lambda L: L.tensor(A).to_sparse_bsr((1, 2)) ** 2,
    "sum-dim": lambda L: _csr(L, A).sum(0),
    "sum-dims": lambda L: _csr(L, A).sum((0, 1)),
    "sum-csc": lambda L: L.tensor(A).to_sparse_csc().sum(1, keepdim=True),
    "sum-bsr": lambda L: L.tensor(A).to_sparse_bsr((1, 2)).sum(1, keepdim=True),
    "sum-bool": lambda L: _csr(L, A, L.bool).sum(1, keepdim=True),
    "sum-dim-out-of-range": lambda L: _csr(L, A).sum(2, keepdim=True),
    "sum-dim-none": lambda L: _csr(L, A).sum(None, keepdim=True),
    "unsqueeze": lambda L: _csr(L, A).unsqueeze(0),
    "unsqueeze-last": lambda L: _csr(L, A).unsqueeze(-1),
    "unsqueeze-out-of-range": lambda L: _csr(L, A).unsqueeze(5),
    "squeeze": lambda L: _csr(L, A).squeeze(),
    "squeeze-dim": lambda L: L.tensor([A]).to_sparse_csr().squeeze(0),
    "squeeze-bsc": lambda L: L.tensor(A).to_sparse_bsc((1, 2)).squeeze(),
    "narrow-rows": lambda L: _csr(L, A).narrow(0, 0, 2),
    "narrow-columns": lambda L: _csr(L, A).narrow(1, 1, 2),
    "narrow-too-long": lambda L: _csr(L, A).narrow(0, 0, 9),
    "slice": lambda L: _csr(L, A)[1:],
    # mul makes an empty result of self's layout, which only a CSR result serves
    "dense*csc": lambda L: L.tensor(B) * L.tensor(A).to_sparse_csc(),
    "csc*dense": lambda L: L.tensor(A).to_sparse_csc() * L.tensor(B),
    "csc*csr": lambda L: L.tensor(A).to_sparse_csc() * _csr(L, B),
    "dense*bsr": lambda L: L.tensor(B) * L.tensor(A).to_sparse_bsr((1, 2)),
    "bsr*dense": lambda L: L.tensor(A).to_sparse_bsr((1, 2)) * L.tensor(B),
    "bsc*csr": lambda L: L.tensor(A).to_sparse_bsc((1, 2)) * _csr(L, B),
    "csr*broadcast-dense": lambda L: _csr(L, A) * L.tensor(B[0]),
    "broadcast-dense*csr": lambda L: L.tensor(B[0]) * _csr(L, A),
}


@pytest.mark.parametrize("name", REFUSED_LIKE_TORCH)
def test_operators_without_compressed_kernels_refuse_as_torch(name):
    ours, theirs = assert_same_error(lambda: REFUSED_LIKE_TORCH[name](internals),
                                     lambda: REFUSED_LIKE_TORCH[name](torch))
    assert str(ours) == str(theirs)


# torch's own checks stop these with an internal assertion, or in its dispatcher, whose wording
# names its C++ sources: the class is compared
REFUSED_CLASS = {
    "mean": lambda L: _csr(L, A).mean(),
    "mean-dim": lambda L: _csr(L, A).mean(1, keepdim=True),
    "sum-batched": lambda L: L.ones(2, 3, 3).to_sparse_csr().sum(2, keepdim=True),
    "sum-hybrid": lambda L: L.ones(3, 4, 2).to_sparse_csr(dense_dim=1).sum(0, keepdim=True),
    "sum-dim-twice": lambda L: _csr(L, A).sum((1, 1), keepdim=True),
    "round_-csc": lambda L: L.tensor(A).to_sparse_csc().round_(),
    # torch adds a dense tensor to CSR and CSC only (an assertion in add_out_dense_sparse_compressed_cpu)
    "bsr+dense": lambda L: L.tensor(A).to_sparse_bsr((1, 2)) + L.tensor(B),
    "dense+bsc": lambda L: L.tensor(B) + L.tensor(A).to_sparse_bsc((1, 2)),
    "0-dim+bsr": lambda L: L.tensor(2.0) + L.tensor(A).to_sparse_bsr((1, 2)),
}


@pytest.mark.parametrize("name", REFUSED_CLASS)
def test_refusals_of_the_same_class_as_torchs(name):
    assert_same_error(lambda: REFUSED_CLASS[name](internals), lambda: REFUSED_CLASS[name](torch))


REFUSED = {
    "csc+csc": lambda L: L.tensor(A).to_sparse_csc() + L.tensor(B).to_sparse_csc(),
    "csr+csc": lambda L: _csr(L, A) + L.tensor(B).to_sparse_csc(),
    "integers": lambda L: _csr(L, A, L.int64) + _csr(L, B, L.int64),
    "dtypes": lambda L: _csr(L, A) + _csr(L, B, L.float64),
    "shapes": lambda L: _csr(L, A) + _csr(L, [[1.0]]),
    "mul-shapes": lambda L: _csr(L, A) * _csr(L, [[1.0]]),
    "t-3d": lambda L: L.ones(2, 3, 4).to_sparse_csr().t(),
    "transpose-batch-and-sparse": lambda L: L.ones(2, 3, 4).to_sparse_csr().transpose(0, 1),
    "transpose-hybrid": lambda L: L.ones(2, 3, 4).to_sparse_csr(dense_dim=1).transpose(1, 2),
    "csr@csr-shapes": lambda L: _csr(L, A) @ _csr(L, B),
    "csr@csr-integers": lambda L: _csr(L, A, L.int64) @ _csr(L, B, L.int64).t(),
    "csr@bsc": lambda L: _csr(L, A) @ L.tensor(B).t().contiguous().to_sparse_bsc((1, 1)),
    # torch asks other for its crow_indices first; MKL refuses non-square blocks, then mixed ones
    "csc+bsc": lambda L: L.tensor(A).to_sparse_csc() + L.tensor(B).to_sparse_bsc((1, 2)),
    "bsc+csr": lambda L: L.tensor(A).to_sparse_bsc((1, 2)) + _csr(L, B),
    "bsr+bsr-non-square": lambda L: L.tensor(A).to_sparse_bsr((1, 2)) + L.tensor(B).to_sparse_bsr((1, 2)),
    "bsr+csc": lambda L: L.tensor(A).to_sparse_bsr((1, 2)) + L.tensor(B).to_sparse_csc(),
    "bsr+bsr-square": lambda L: L.tensor(C4).to_sparse_bsr((2, 2)) + L.tensor(D4).to_sparse_bsr((2, 2)),
    "bsr+bsr-square-double": lambda L: L.add(L.tensor(C4, dtype=L.float64).to_sparse_bsr((2, 2)),
                                             L.tensor(D4, dtype=L.float64).to_sparse_bsr((2, 2)), alpha=2),
    "bsr+bsr-complex": lambda L: L.tensor(C4, dtype=L.complex64).to_sparse_bsr((2, 2)) * 1
                                 + L.tensor(D4, dtype=L.complex64).to_sparse_bsr((2, 2)),
    "bsr+bsr-mixed": lambda L: L.tensor(C4).to_sparse_bsr((2, 2)) + L.tensor(D4).to_sparse_bsr((1, 1)),
    "csr+bsr": lambda L: _csr(L, C4) + L.tensor(D4).to_sparse_bsr((2, 2)),
    "bsr+csr": lambda L: L.tensor(C4).to_sparse_bsr((2, 2)) + _csr(L, D4),
    "bsr-1x1+bsr": lambda L: L.tensor(C4).to_sparse_bsr((1, 1)) + L.tensor(D4).to_sparse_bsr((2, 2)),
    "bsr+bsr-integers": lambda L: L.tensor(C4, dtype=L.int64).to_sparse_bsr((2, 2))
                                  + L.tensor(D4, dtype=L.int64).to_sparse_bsr((2, 2)),
    "csr+dense-shape": lambda L: _csr(L, A) + L.tensor(B[0]),
    "dense-shape+csc": lambda L: L.tensor(2.0) + L.tensor(A).to_sparse_csc(),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refusals_match_torch(name):
    ours, theirs = assert_same_error(lambda: REFUSED[name](internals), lambda: REFUSED[name](torch))
    assert str(ours) == str(theirs)


def test_the_transpose_shares_the_three_tensors():
    """CSR^T is the CSC tensor over the same compressed indices, plain indices and values."""
    c = internals.tensor(A).to_sparse_csr()
    t = c.t()
    assert t.layout is internals.sparse_csc
    assert t.ccol_indices().data_ptr() == c.crow_indices().data_ptr()
    assert t.row_indices().data_ptr() == c.col_indices().data_ptr()
    assert t.values().data_ptr() == c.values().data_ptr()


def test_coo_transpose_swaps_the_index_rows():
    def program(lib):
        s = lib.tensor(A).to_sparse()
        t = s.t()
        return t, t.is_coalesced(), s.transpose(1, 0).is_coalesced()
    (t_i, *rest_i), (t_t, *rest_t) = program(internals), program(torch)
    assert rest_i == rest_t
    assert_same(t_i._indices(), t_t._indices(), exact_layout=False, **EXACT)
    assert_same(t_i._values(), t_t._values(), exact_layout=False, **EXACT)


@pytest.mark.parametrize("case", ["hybrid-t", "dense-dim-transpose"])
def test_coo_transpose_refusals_match_torch(case):
    def program(lib):
        h = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.ones(2, 3), (2, 3))
        return h.t() if case == "hybrid-t" else h.transpose(0, 1)
    ours, theirs = assert_same_error(lambda: program(internals), lambda: program(torch))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- gradients of the unary operators
GRAD_EXACT = ["abs", "neg", "relu", "sign", "floor", "frac", "angle", "trunc", "round", "rad2deg"]
GRAD_LIBM = ["sin", "sqrt", "tanh", "expm1", "asin", "atanh", "erf"]


def _unary_backward(lib, op, layout):
    x = lib.tensor([[0.5, 0.0, -0.25, 0.0], [0.0, 0.75, 0.0, 0.125]])
    x = {"csr": x.to_sparse_csr(), "csc": x.to_sparse_csc(), "bsr": x.to_sparse_bsr((1, 2))}[layout]
    x.requires_grad_()
    y = getattr(lib, op)(x)
    y.to_dense().sum().backward()
    return y, x.grad


@pytest.mark.parametrize("op", GRAD_EXACT + GRAD_LIBM)
def test_gradients_of_unary_operators_on_csr(op):
    """torch's node, and torch's CSR gradient (the pattern of the input, the derivative at each
    value; a step function's has no entries), or torch's refusal where its formula reaches an
    operator without a compressed kernel (``cos`` in sin's, ``exp`` in expm1's)."""
    try:
        y_t, g_t = _unary_backward(torch, op, "csr")
    except RuntimeError:
        ours, theirs = assert_same_error(lambda: _unary_backward(internals, op, "csr"),
                                         lambda: _unary_backward(torch, op, "csr"))
        assert str(ours) == str(theirs)
        return
    y_i, g_i = _unary_backward(internals, op, "csr")
    assert type(y_i.grad_fn).__name__ == type(y_t.grad_fn).__name__
    assert_same_result(g_i, g_t, None if op in GRAD_EXACT else LIBM_ULPS)


@pytest.mark.parametrize("layout", ["csc", "bsr"])
@pytest.mark.parametrize("op", ["neg", "relu", "floor", "sqrt", "rad2deg", "expm1"])
def test_gradients_of_other_compressed_layouts_refused_as_torch(op, layout):
    """torch's gradient accumulation takes COO and CSR gradients only (a CSC or BSR one is asked
    whether it is contiguous), and some backward formulas stop earlier: the class is compared."""
    assert_same_error(lambda: _unary_backward(internals, op, layout), lambda: _unary_backward(torch, op, layout))
