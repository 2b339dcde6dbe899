"""The sparse COO layout: SparseTensorImpl, the SparseCPU/SparseCUDA kernels, checked against torch.

Dense inputs with many zeros are drawn by hypothesis and converted by both libraries; uncoalesced
inputs (duplicate coordinates, unsorted) are built by both with ``sparse_coo_tensor`` from the same
indices and values. A sparse result is compared part by part: indices and values (exactly: torch's
``to_sparse`` and ``coalesce`` sort the entries, and so must we), sizes, nnz, coalesced flag. On
cuda (Numba's simulator here) the sizes stay tiny and the results are compared with torch's CPU ones.
"""
import re

import pytest
import torch
from helpers import assert_same, assert_same_error
from hypothesis import given, settings
from hypothesis import strategies as hst

import internals

DTYPES = [torch.float32, torch.float64, torch.int64, torch.bool]
EXACT = dict(rtol=0, atol=0)

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")


# ---------------------------------------------------------------------- inputs and comparisons
def mostly_zeros(shape, dtype, seed, density=0.3):
    """A dense torch tensor of small integers, most of them zero."""
    g = torch.Generator().manual_seed(seed)
    values = torch.randint(-5, 6, shape, generator=g)
    keep = torch.rand(shape, generator=g) < density
    return (values * keep).to(dtype)


@hst.composite
def sparse_inputs(draw, max_dims=3, dtypes=DTYPES, max_side=4):
    shape = tuple(draw(hst.lists(hst.integers(0, max_side), min_size=0, max_size=max_dims)))
    return mostly_zeros(shape, draw(hst.sampled_from(dtypes)), draw(hst.integers(0, 2**31 - 1)),
                        draw(hst.sampled_from([0.0, 0.3, 0.7])))


@hst.composite
def uncoalesced_inputs(draw, max_sparse_dims=3, dtypes=DTYPES, max_dense_dims=1):
    """indices (with duplicates, unsorted), values and sizes for ``sparse_coo_tensor``."""
    sparse_sizes = tuple(draw(hst.lists(hst.integers(1, 3), min_size=1, max_size=max_sparse_dims)))
    dense_sizes = tuple(draw(hst.lists(hst.integers(1, 3), max_size=max_dense_dims)))
    nnz = draw(hst.integers(0, 8))
    g = torch.Generator().manual_seed(draw(hst.integers(0, 2**31 - 1)))
    indices = torch.stack([torch.randint(0, n, (nnz,), generator=g) for n in sparse_sizes])
    values = torch.randint(-5, 6, (nnz, *dense_sizes), generator=g).to(draw(hst.sampled_from(dtypes)))
    return indices, values, sparse_sizes + dense_sizes


def ours_of(t, device="cpu"):
    """The internals twin of a torch tensor, dense or sparse (indices and values copied)."""
    if t.layout == torch.sparse_coo:
        return internals.sparse_coo_tensor(ours_of(t._indices(), device), ours_of(t._values(), device), t.shape,
                                           is_coalesced=t.is_coalesced())
    out = internals.from_torch(t)
    return out if device == "cpu" else out.to(device)


def assert_same_sparse(ours, theirs, values_tol=EXACT):
    assert ours.layout is internals.sparse_coo and theirs.layout == torch.sparse_coo
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert (ours.sparse_dim(), ours.dense_dim(), ours._nnz()) == (theirs.sparse_dim(), theirs.dense_dim(),
                                                                  theirs._nnz())
    assert ours.is_coalesced() == theirs.is_coalesced()
    # Values compared, not strides: torch's indices are sometimes a transposed view (strides of
    # size-1 dims differ); the strides of a sum's indices are checked where that is tested.
    assert_same(ours._indices().cpu(), theirs._indices(), exact_layout=False, **EXACT)
    assert_same(ours._values().cpu(), theirs._values(), exact_layout=False, **values_tol)


def tolerance(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype.is_floating_point else EXACT


# ---------------------------------------------------------------------- conversions
@given(sparse_inputs())
def test_to_sparse_equals_torch(x):
    assert_same_sparse(ours_of(x).to_sparse(), x.to_sparse())


@given(sparse_inputs(), hst.data())
def test_to_sparse_with_dense_dims_equals_torch(x, data):
    if x.dim() == 0:
        return
    sparse_dim = data.draw(hst.integers(1, x.dim()))
    assert_same_sparse(ours_of(x).to_sparse(sparse_dim), x.to_sparse(sparse_dim))
    dense_dim = x.dim() - sparse_dim
    assert_same_sparse(ours_of(x).to_sparse(dense_dim=dense_dim), x.to_sparse(dense_dim=dense_dim))


@given(sparse_inputs())
def test_to_dense_round_trip(x):
    s = ours_of(x).to_sparse()
    assert_same(s.to_dense(), x.to_sparse().to_dense(), **EXACT)
    assert_same(s.to_dense(), x, **EXACT)


@given(uncoalesced_inputs())
def test_coalesce_and_to_dense_of_uncoalesced_input(case):
    indices, values, size = case
    theirs = torch.sparse_coo_tensor(indices, values, size)
    ours = internals.sparse_coo_tensor(ours_of(indices), ours_of(values), size)
    assert_same_sparse(ours, theirs)
    assert_same_sparse(ours.coalesce(), theirs.coalesce())
    assert_same(ours.to_dense(), theirs.to_dense(), **EXACT)


@pytest.mark.parametrize("indices", [[[2, 0, 2]], [[2, 0, 2, 0], [1, 1, 1, 1]], [[1, 0]]])
def test_coalesce_keeps_the_first_columns_of_an_nnz_wide_index_buffer(indices):
    """torch merges into an (sparse_dim, nnz) index buffer and keeps the first columns, so merged
    duplicates leave the indices with strides (nnz, 1): an Embedding's sparse gradient, coalesced,
    shows them."""
    theirs = torch.sparse_coo_tensor(torch.tensor(indices), torch.ones(len(indices[0]), 2), (4, 2, 2)[:len(indices)]
                                     + (2,)).coalesce()
    ours = internals.sparse_coo_tensor(ours_of(torch.tensor(indices)), internals.ones(len(indices[0]), 2),
                                       (4, 2, 2)[:len(indices)] + (2,)).coalesce()
    assert_same(ours.indices(), theirs.indices(), **EXACT)
    assert_same(ours.values(), theirs.values(), **EXACT)


def test_a_coalesced_tensor_is_its_own_coalesced_form():
    s = internals.tensor([[0, 1.0], [2, 0]]).to_sparse()
    assert s.coalesce() is s and s.to_sparse() is s
    x = internals.ones(2)
    assert x.to_dense() is x


def test_float16_round_trip():
    x = torch.tensor([[0, 1.5, 0], [-2.25, 0, 0]], dtype=torch.float16)
    assert_same_sparse(ours_of(x).to_sparse(), x.to_sparse())
    assert_same(ours_of(x).to_sparse().to_dense(), x, **EXACT)


# ---------------------------------------------------------------------- add
@given(uncoalesced_inputs(dtypes=[torch.float64, torch.int64]), hst.booleans(), hst.booleans(),
       hst.sampled_from([1, 2, -1]))
def test_add_sparse_sparse(case, coalesce_a, coalesce_b, alpha):
    indices, values, size = case
    a = torch.sparse_coo_tensor(indices, values, size)
    b = torch.sparse_coo_tensor(indices.flip(1), values * 3, size)
    a, b = (a.coalesce() if coalesce_a else a), (b.coalesce() if coalesce_b else b)
    theirs, ours = a.add(b, alpha=alpha), ours_of(a).add(ours_of(b), alpha=alpha)
    # torch's CPU merge, entry for entry: same entries, same order, same coalesced flag.
    assert_same_sparse(ours, theirs)
    assert_same_sparse(ours.coalesce(), theirs.coalesce())


@given(sparse_inputs(dtypes=[torch.float32, torch.float64, torch.int64]), hst.data())
def test_add_dense_sparse(x, data):
    other = mostly_zeros(tuple(x.shape), data.draw(hst.sampled_from([torch.float32, torch.int64])),
                         data.draw(hst.integers(0, 100)), 0.5)
    theirs = x.add(other.to_sparse(), alpha=2)
    ours = ours_of(x).add(ours_of(other).to_sparse(), alpha=2)
    assert_same(ours, theirs, **EXACT)


def test_sparse_sparse_promotes_and_keeps_cancelled_entries():
    a = torch.tensor([[0, 1.0, 0], [2, 0, 3]]).to_sparse()
    b = torch.tensor([[0, 1.0, 0], [2, 0, 0]], dtype=torch.float64).to_sparse()
    assert_same_sparse(ours_of(a).add(ours_of(b), alpha=-1), a.add(b, alpha=-1))



def _entry_lists():
    a = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([3., 4., 5.]), (2, 3))
    b = torch.sparse_coo_tensor(torch.tensor([[0, 1], [2, 1]]), torch.tensor([1., 2.]), (2, 3))
    return a, b


SUMS = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: a.add(b, alpha=2),
    "add_coalesced": lambda a, b: a.coalesce() + b.coalesce(),
    "add_itself": lambda a, b: a + a,
    "add_int": lambda a, b: a.long() + b.long(),
    "add_": lambda a, b: a.clone().add_(b),
    "sub": lambda a, b: a - b,
    "sub_alpha": lambda a, b: a.sub(b, alpha=3),
    "sub_": lambda a, b: a.clone().sub_(b),
    "dense_sub_sparse": lambda a, b: a.to_dense() - b,
}


@pytest.mark.parametrize("name", SUMS)
def test_sum_of_two_sparse_keeps_torchs_index_buffer(name):
    """torch's merge writes into indices of room for both inputs' entries and then narrows them
    (``set_nnz_and_narrow``): the result's indices keep a row stride of nnz(a) + nnz(b), and
    ``coalesce`` of a result already coalesced returns it unchanged."""
    a, b = _entry_lists()
    theirs, ours = SUMS[name](a, b), SUMS[name](ours_of(a), ours_of(b))
    if theirs.layout == torch.strided:
        assert_same(ours, theirs, **EXACT)
        return
    assert_same_sparse(ours, theirs)
    assert ours._indices().stride() == theirs._indices().stride()
    assert ours.coalesce().indices().stride() == theirs.coalesce().indices().stride()


@pytest.mark.parametrize("name", ["bool_bool", "float_bool", "sparse_dense"])
def test_sparse_sub_refusals_match_torch(name):
    def case(lib):
        a = lib.sparse_coo_tensor(lib.tensor([[0], [1]]), lib.tensor([1.]), (2, 3))
        m = lib.sparse_coo_tensor(lib.tensor([[0], [1]]), lib.tensor([True]), (2, 3))
        calls = {"bool_bool": lambda: m - m, "float_bool": lambda: a - m, "sparse_dense": lambda: a - lib.ones(2, 3)}
        return calls[name]
    ours, theirs = assert_same_error(case(internals), case(torch))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- mm
@given(hst.integers(0, 5), hst.integers(0, 5), hst.integers(0, 4), hst.sampled_from([torch.float32, torch.float64,
                                                                                       torch.int64]),
       hst.integers(0, 1000), hst.booleans())
def test_mm_sparse_dense(M, K, N, dtype, seed, uncoalesced):
    a = mostly_zeros((M, K), dtype, seed).to_sparse()
    if uncoalesced:     # every entry twice, in reverse order the second time
        a = torch.sparse_coo_tensor(torch.cat([a._indices(), a._indices().flip(1)], 1),
                                    torch.cat([a._values(), a._values().flip(0)]), a.shape)
    b = torch.randint(-5, 6, (K, N), generator=torch.Generator().manual_seed(seed)).to(dtype)
    assert_same(ours_of(a).mm(ours_of(b)), a.mm(b), **tolerance(dtype))
    c = torch.randint(-5, 6, (N, M), generator=torch.Generator().manual_seed(seed + 1)).to(dtype)
    assert_same(internals.mm(ours_of(c), ours_of(a)), torch.mm(c, a), **tolerance(dtype))


@given(hst.integers(0, 5), hst.integers(0, 5), hst.integers(0, 4), hst.sampled_from([torch.float32, torch.float64]),
       hst.integers(0, 1000), hst.booleans())
def test_mm_sparse_sparse(M, K, N, dtype, seed, uncoalesced):
    """A coalesced COO product: small integers, so every sum is exact whatever its order; a sum
    that cancels to zero stays an entry, as torch's."""
    a = mostly_zeros((M, K), dtype, seed, density=0.5).to_sparse()
    if uncoalesced:     # every entry twice, in reverse order the second time
        a = torch.sparse_coo_tensor(torch.cat([a._indices(), a._indices().flip(1)], 1),
                                    torch.cat([a._values(), a._values().flip(0)]), a.shape)
    b = mostly_zeros((K, N), dtype, seed + 1, density=0.5).to_sparse()
    assert_same_sparse(ours_of(a).mm(ours_of(b)), a.mm(b))
    assert_same_sparse(internals.mm(ours_of(a), ours_of(b).t().t()), torch.mm(a, b.t().t()))


def test_mm_sparse_sparse_records_torchs_node():
    a = mostly_zeros((3, 4), torch.float32, 0, density=0.5).to_sparse().requires_grad_()
    b = mostly_zeros((4, 2), torch.float32, 1, density=0.5).to_sparse()
    theirs, ours = a @ b, ours_of(a.detach()).requires_grad_() @ ours_of(b)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "MmBackward0"
    assert_same_sparse(ours.detach(), theirs.detach())


SPARSE_PRODUCT_REFUSALS = {
    "shapes": lambda L: L.ones(2, 3).to_sparse() @ L.ones(2, 3).to_sparse(),
    "dtypes": lambda L: L.ones(2, 3).to_sparse() @ L.ones(3, 2, dtype=L.float64).to_sparse(),
    "integers": lambda L: L.ones(2, 3, dtype=L.int64).to_sparse() @ L.ones(3, 2, dtype=L.int64).to_sparse(),
    "bools": lambda L: L.ones(2, 3, dtype=L.bool).to_sparse() @ L.ones(3, 2, dtype=L.bool).to_sparse(),
    "halves": lambda L: L.ones(2, 3, dtype=L.half).to_sparse() @ L.ones(3, 2, dtype=L.half).to_sparse(),
    "3-d mat1": lambda L: L.mm(L.ones(2, 3, 2).to_sparse(2), L.ones(3, 2).to_sparse()),
    "1-d mat1": lambda L: L.mm(L.ones(3).to_sparse(), L.ones(3, 2).to_sparse()),
    "3-d mat2": lambda L: L.mm(L.ones(2, 3).to_sparse(), L.ones(3, 2, 2).to_sparse(2)),
    "hybrid mat1": lambda L: L.mm(L.ones(2, 3).to_sparse(1), L.ones(3, 2).to_sparse()),
    "hybrid mat2": lambda L: L.mm(L.ones(2, 3).to_sparse(), L.ones(3, 2).to_sparse(1)),
}


@pytest.mark.parametrize("name", SPARSE_PRODUCT_REFUSALS)
def test_mm_sparse_sparse_refusals_match_torch(name):
    ours, theirs = assert_same_error(lambda: SPARSE_PRODUCT_REFUSALS[name](internals),
                                     lambda: SPARSE_PRODUCT_REFUSALS[name](torch))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- sparse_coo_tensor
def test_sparse_coo_tensor_infers_sizes_and_converts():
    i, v = torch.tensor([[0, 3, 1], [2, 0, 2]]), torch.tensor([1, 2, 3])
    assert_same_sparse(internals.sparse_coo_tensor(ours_of(i), ours_of(v)), torch.sparse_coo_tensor(i, v))
    assert_same_sparse(internals.sparse_coo_tensor(ours_of(i), ours_of(v), (4, 3), dtype=internals.float64),
                       torch.sparse_coo_tensor(i, v, (4, 3), dtype=torch.float64))
    assert_same_sparse(internals.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,)),
                       torch.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,)))


# torch checks indices against sizes only with check_invariants=True; internals always does (its kernels trust them).
FACTORY_ERRORS = [   # (indices, values, size or None, is_coalesced)
    ([[0, -1]], [1.0, 2.0], (3,), None),
    ([[0, 5]], [1.0, 2.0], (3,), None),
    ([[0, 1], [4, 2]], [1.0, 2.0], (3, 3), None),
    ([[0, -1]], [1.0, 2.0], None, None),
    ([0, 1], [1.0, 2.0], None, None),
    ([[0, 1]], [1.0, 2.0, 3.0], (3,), None),
    ([[0, 1]], [1.0, 2.0], (3, 4), None),
    ([[0, 1]], [[1.0, 2], [3, 4]], (3, 3), None),
    ([[1, 0]], [1.0, 2.0], (3,), True),
]


@pytest.mark.parametrize("indices, values, size, is_coalesced", FACTORY_ERRORS)
def test_sparse_coo_tensor_errors(indices, values, size, is_coalesced):
    def make(M, **kw):
        args = (M.tensor(indices), M.tensor(values)) + ((size,) if size else ())
        return M.sparse_coo_tensor(*args, is_coalesced=is_coalesced, **kw)
    ours, theirs = assert_same_error(lambda: make(internals), lambda: make(torch, check_invariants=True))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- what a sparse tensor refuses
def _pair():
    x = torch.tensor([[0, 1.0, 0], [2, 0, 3]])
    u = torch.sparse_coo_tensor(torch.tensor([[0, 1, 0]]), torch.tensor([1.0, 2, 3]), (2,))
    return (x, x.to_sparse(), u), (ours_of(x), ours_of(x).to_sparse(), ours_of(u))


REFUSALS = {    # (operation, True where only the start of the message is torch's)
    "data_ptr": (lambda x, s, u: s.data_ptr(), False),
    "untyped_storage": (lambda x, s, u: s.untyped_storage(), False),
    "numpy": (lambda x, s, u: s.numpy(), False),
    "nbytes": (lambda x, s, u: s.nbytes, False),
    "view": (lambda x, s, u: s.view(6), True),
    "as_strided": (lambda x, s, u: s.as_strided((2,), (1,)), True),
    "exp": (lambda x, s, u: s.exp(), True),
    "max": (lambda x, s, u: s.max(), True),
    "fill_": (lambda x, s, u: s.fill_(1), True),
    "add(sparse, dense)": (lambda x, s, u: s.add(x), False),
    "add sizes": (lambda x, s, u: s.add(u), False),
    "add(dense, sparse) sizes": (lambda x, s, u: x.add(u), False),
    "add density": (lambda x, s, u: s.add(x.to_sparse(1)), False),
    "integral alpha": (lambda x, s, u: x.long().add(s.long(), alpha=0.5), False),
    "mm dtype": (lambda x, s, u: s.mm(x.t().double()), False),
    "mm shape": (lambda x, s, u: s.mm(x), False),
    "mm bool": (lambda x, s, u: s.bool().mm(x.t().bool()), False),
    "mm 1-d": (lambda x, s, u: s.mm(x[0]), False),
    "indices of uncoalesced": (lambda x, s, u: u.indices(), False),
    "values of uncoalesced": (lambda x, s, u: u.values(), False),
    "indices of dense": (lambda x, s, u: x.indices(), False),
    "values of dense": (lambda x, s, u: x.values(), False),
    "_nnz of dense": (lambda x, s, u: x._nnz(), True),
    "coalesce of dense": (lambda x, s, u: x.coalesce(), False),
    "is_coalesced of dense": (lambda x, s, u: x.is_coalesced(), False),
    "to_sparse too many dims": (lambda x, s, u: x.to_sparse(3), False),
    "to_sparse no sparse dims": (lambda x, s, u: x.to_sparse(0), False),
    "to_sparse sparse_dim change": (lambda x, s, u: s.to_sparse(1), False),
    "to_dense dtype": (lambda x, s, u: s.to_dense(torch.float64 if isinstance(x, torch.Tensor) else internals.float64),
                       False),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refusals_match_torch(name):
    fn, prefix_only = REFUSALS[name]
    theirs_args, ours_args = _pair()
    ours, theirs = assert_same_error(lambda: fn(*ours_args), lambda: fn(*theirs_args))
    if prefix_only:    # a dense-only op: the dispatcher finds no kernel for the SparseCPU key
        def first(e):
            return re.match(r"[^.]*\.", str(e)).group(0)
        assert first(ours) == first(theirs)
    else:
        assert str(ours) == str(theirs)


def test_metadata_matches_torch_and_touches_no_memory():
    (x, s, u), (xo, so, uo) = _pair()
    for attr in ("stride", "storage_offset", "is_contiguous", "dim", "numel", "element_size",
                 "sparse_dim", "dense_dim", "_nnz", "is_coalesced"):
        assert getattr(so, attr)() == getattr(s, attr)(), attr
    assert so.stride(1) == s.stride(1) and tuple(so.shape) == tuple(s.shape)
    assert so.is_sparse and not xo.is_sparse and s.is_sparse
    assert (xo.sparse_dim(), xo.dense_dim()) == (x.sparse_dim(), x.dense_dim())
    assert repr(so.layout) == repr(s.layout).replace("torch", "internals")


# ---------------------------------------------------------------------- dispatcher
def _key_names(keyset):
    return re.findall(r"\w+", str(keyset))[1:]


def test_key_sets_equal_torch():
    (x, s, u), (xo, so, uo) = _pair()
    ours_keys = set(internals.c10.dispatch_key.DispatchKey.__members__)
    for mine, theirs in ((so, s), (so.coalesce(), s.coalesce()), (so._values(), s._values())):
        assert _key_names(internals._C._dispatch_keys(mine)) == [
            k for k in _key_names(torch._C._dispatch_keys(theirs)) if k in ours_keys]
    with internals.inference_mode(), torch.inference_mode():
        assert _key_names(internals._C._dispatch_keys(xo.to_sparse())) == [
            k for k in _key_names(torch._C._dispatch_keys(x.to_sparse())) if k in ours_keys]


def test_mm_and_add_have_sparse_kernels():
    for op in ("aten::mm", "aten::add.Tensor"):
        ours, theirs = internals._C._dispatch_dump_table(op), torch._C._dispatch_dump_table(op)
        for key in ("SparseCPU", "SparseCUDA"):
            where = "internals/aten/native/sparse/sparse_tensor_math.py"
            assert re.search(rf"^{key}: registered at {where}:\d+ \[kernel\]$", ours, re.M)
        assert re.search(r"^SparseCPU: .* \[kernel\]$", theirs, re.M)     # a CPU wheel: no SparseCUDA


def test_dense_path_of_add_runs_below_the_sparse_kernel():
    (x, s, u), (xo, so, uo) = _pair()
    with internals.aten.dispatcher.trace() as log:
        xo.add(so)
    assert ("aten::add.Tensor", "SparseCPU", "kernel", "add_sparse") in log
    assert ("aten::add.Tensor", "CPU", "kernel", "add") in log


# ---------------------------------------------------------------------- printing
@pytest.mark.parametrize("make", [
    lambda M: M.tensor([[0, 1.0, 0], [2, 0, 3]]).to_sparse(),
    lambda M: M.tensor([[0, 1.0, 0], [2, 0, 3]], dtype=M.float64).to_sparse(),
    lambda M: M.tensor([[0, 1, 0], [2, 0, 3]], dtype=M.int32).to_sparse(1),
    lambda M: M.zeros(2, 3).to_sparse(),
    lambda M: M.tensor([[True, False]]).to_sparse(),
    lambda M: M.tensor(3.0).to_sparse(),
])
def test_repr_like_torch(make):
    assert repr(make(internals)) == repr(make(torch)).replace("torch.", "internals.")


# ---------------------------------------------------------------------- cuda (simulated: tiny)
@settings(max_examples=6)
@given(sparse_inputs(max_dims=2, max_side=3, dtypes=[torch.float32, torch.int64, torch.bool]))
def test_cuda_to_sparse_to_dense(x):
    s = ours_of(x, "cuda").to_sparse()
    assert s.device.type == "cuda" and _key_names(internals._C._dispatch_keys(s))[0] == "SparseCUDA"
    assert_same_sparse(s, x.to_sparse())
    assert_same(s.to_dense().cpu(), x, **EXACT)


@pytest.mark.slow
@settings(max_examples=5)
@given(uncoalesced_inputs(max_sparse_dims=2, dtypes=[torch.float64, torch.int64]))
def test_cuda_coalesce_and_add(case):
    indices, values, size = case
    theirs = torch.sparse_coo_tensor(indices, values, size)
    ours = internals.sparse_coo_tensor(ours_of(indices, "cuda"), ours_of(values, "cuda"), size)
    assert_same_sparse(ours.coalesce(), theirs.coalesce())
    assert_same(ours.to_dense().cpu(), theirs.to_dense(), **EXACT)
    total = ours.add(ours, alpha=2)       # concatenated on cuda, as torch's CUDA kernel does
    assert not total.is_coalesced() and total._nnz() == 2 * ours._nnz()
    assert_same_sparse(total.coalesce(), theirs.add(theirs, alpha=2).coalesce())


def test_cuda_mm():
    a = mostly_zeros((4, 3), torch.float32, 7, 0.5).to_sparse()
    b = torch.randn(3, 2, generator=torch.Generator().manual_seed(1))
    assert_same(ours_of(a, "cuda").mm(ours_of(b, "cuda")).cpu(), a.mm(b), rtol=1e-5, atol=1e-5)


def test_cuda_mm_overwrites_a_reused_block():
    """The output comes from ``empty``: a block the caching allocator hands back still holds the
    last tensor's bytes (NaN here), and every output element, empty rows too, must overwrite them."""
    a = torch.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()     # row 1 has no entries
    b = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    a_cuda, b_cuda = ours_of(a, "cuda"), ours_of(b, "cuda")
    stale = [internals.full((2, 2), float("nan"), device="cuda") for _ in range(8)]
    del stale                                   # their blocks go back to the cache, NaNs and all
    assert_same(a_cuda.mm(b_cuda).cpu(), a.mm(b), **EXACT)


SPARSE_PTX_PROGRAM = r'''
import os, sys, types as pytypes
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"      # compile for real: the simulator cannot make PTX
import numba.cuda.dispatcher
from numba import cuda, types
import internals
from internals.aten.native.sparse.cuda import kernels as k
assert not internals.cuda.is_simulated()
CC = (7, 5)
# The kernels call the per-item functions of sparse/rows.py; compiling such a call asks the
# current GPU for its compute capability, and this machine has none (as in test_cuda.py).
numba.cuda.dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=CC)
try:
    cuda.compile_ptx(lambda a: None, (types.float32[::1],), cc=CC)
except Exception as e:
    print("TOOLCHAIN MISSING:", type(e).__name__, str(e).strip().splitlines()[0])
    sys.exit(0)
i64, A = types.int64, lambda t: t[::1]
I = A(i64)
jobs = [("linear_index", k._linear_index, (I, I, I, i64)), ("csr_row_pointers", k._csr_row_pointers, (I, I, i64, i64))]
for t in (types.float32, types.float64, types.int64, types.boolean):
    T = A(t)
    jobs += [(f"nonzero_rows {t}", k._nonzero_rows, (I, T, i64)),
             (f"gather_rows {t}", k._gather_rows, (I, T, T, I, I, I, i64, i64)),
             (f"merge_segments {t}", k._merge_segments, (I, T, I, T, I, I, i64, i64, i64)),
             (f"scatter_rows {t}", k._scatter_rows, (T, T, I, i64))]
    if t is not types.boolean:
        jobs.append((f"spmm {t}", k._spmm, (T, I, I, T, T, i64, i64)))
for name, kernel, signature in jobs:
    try:
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=CC)
        print("OK" if ".entry" in ptx else "FAILED", name)
    except Exception as e:
        print("FAILED", name, type(e).__name__, " ".join(str(e).split())[:300])
'''


@pytest.mark.slow
def test_sparse_cuda_kernels_compile_to_ptx():
    """The simulator runs kernels as Python: compile each sparse kernel to real PTX (as test_cuda.py
    does for the dense ones), for every value type the sparse ops hand it."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run([sys.executable, "-c", SPARSE_PTX_PROGRAM], capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    if "TOOLCHAIN MISSING" in result.stdout:
        pytest.skip("no CUDA compiler toolchain: " + result.stdout.strip())
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAILED")], result.stdout
    assert sum(line.startswith("OK") for line in lines) == 2 + 4 * 4 + 3


# ---------------------------------------------------------------------- clone, detach, mul, sparse_mask
# The operators an optimizer's sparse path calls: SGD's momentum (clone, detach, mul_, add_),
# Adagrad's and SparseAdam's reads of their dense state at a gradient's rows (sparse_mask).
@given(uncoalesced_inputs(dtypes=[torch.float64, torch.int64]), hst.booleans())
def test_clone_copies_entries_and_flag(case, coalesce):
    x = torch.sparse_coo_tensor(*case)
    x = x.coalesce() if coalesce else x
    ours = ours_of(x)
    copy = ours.clone()
    assert_same_sparse(copy, x.clone())
    assert copy._values()._impl.storage is not ours._values()._impl.storage
    assert copy._indices()._impl.storage is not ours._indices()._impl.storage


@pytest.mark.parametrize("fmt", ["contiguous_format", "preserve_format", "channels_last"])
def test_clone_refuses_a_memory_format(fmt):
    def clone(lib):
        lib.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,)).clone(memory_format=getattr(lib, fmt))
    ours, theirs = assert_same_error(lambda: clone(internals), lambda: clone(torch))
    assert str(ours) == str(theirs)


def test_detach_shares_entries_and_version():
    """torch's shallow copy: the same values at first, one version counter; ``mul_`` then gives
    the detached tensor values of its own (the original's stay), and both versions move."""
    def program(lib):
        x = lib.sparse_coo_tensor([[0, 2, 0]], [1.0, 2.0, 3.0], (4,), requires_grad=True)
        d = x.detach()
        shared = d._values().data_ptr() == x._values().data_ptr()
        before = d._version
        d.mul_(2.0)
        return x, d, d.requires_grad, shared, d._version - before, x._version - before
    ours, theirs = program(internals), program(torch)
    assert_same_sparse(ours[0].detach(), theirs[0].detach())
    assert_same_sparse(ours[1], theirs[1])
    assert ours[2:] == theirs[2:]


@pytest.mark.parametrize("scalar", [2.5, -1, 0.0, "tensor", "tensor_int"])
@given(case=uncoalesced_inputs(dtypes=[torch.float32, torch.float64, torch.int64]), coalesce=hst.booleans())
def test_mul_by_a_scalar(scalar, case, coalesce):
    """Values times the scalar in the promoted type; indices copied, flag kept; in place too."""
    x = torch.sparse_coo_tensor(*case)
    x = x.coalesce() if coalesce else x
    if scalar == "tensor":
        theirs_s, ours_s = torch.tensor(1.5, dtype=torch.float64), internals.tensor(1.5, dtype=internals.float64)
    elif scalar == "tensor_int":
        theirs_s, ours_s = torch.tensor(3), internals.tensor(3)
    else:
        theirs_s = ours_s = scalar
    assert_same_sparse(ours_of(x).mul(ours_s), x.mul(theirs_s))
    assert_same_sparse(ours_of(x) * ours_s, x * theirs_s)
    if (x * theirs_s).dtype == x.dtype:
        assert_same_sparse(ours_of(x).mul_(ours_s), x.clone().mul_(theirs_s))
    else:     # an integer tensor cannot hold the product
        ours, theirs = assert_same_error(lambda: ours_of(x).mul_(ours_s), lambda: x.clone().mul_(theirs_s))
        assert str(ours) == str(theirs)


def test_mul_by_a_dimensioned_tensor_is_not_silently_wrong():
    """Products torch computes and the package does not are refused, never approximated."""
    x = internals.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,))
    for other in (x, internals.ones(3)):
        with pytest.raises(NotImplementedError):
            x.mul(other)
        with pytest.raises(NotImplementedError):
            x.clone().mul_(other)


@given(uncoalesced_inputs(dtypes=[torch.float32, torch.float64], max_dense_dims=2), hst.booleans())
def test_sparse_mask_reads_the_dense_values_at_the_mask(case, coalesce):
    indices, values, size = case
    mask = torch.sparse_coo_tensor(indices, values, size)
    mask = mask.coalesce() if coalesce else mask
    dense = torch.randn(size, dtype=torch.float64, generator=torch.Generator().manual_seed(len(indices[0])))
    assert_same_sparse(ours_of(dense).sparse_mask(ours_of(mask)), dense.sparse_mask(mask))


def test_sparse_mask_size_mismatch():
    def program(lib):
        lib.ones(3, 2).sparse_mask(lib.sparse_coo_tensor([[0]], [[1.0, 1.0, 1.0]], (3, 3)))
    ours, theirs = assert_same_error(lambda: program(internals), lambda: program(torch))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- autograd through conversions
def _weights(lib, shape):
    return lib.arange(float(torch.Size(shape).numel()), dtype=lib.float64).reshape(shape) - 2.5


SPARSE_GRAPHS = {
    # to_sparse then to_dense: only the stored (nonzero) entries get a gradient (masked_grad)
    "to_sparse-to_dense": lambda lib, x: x.to_sparse().to_dense(),
    "to_sparse-sparse_dim": lambda lib, x: x.to_sparse(1).to_dense(),
    "to_dense-unmasked": lambda lib, x: x.to_sparse().to_dense(masked_grad=False),
    # sparse_mask reads x at the mask's entries: the gradient is the incoming one there
    "sparse_mask": lambda lib, x: x.sparse_mask(lib.tensor([[1., 0., 0.], [0., 0., 2.]]).to_sparse()).to_dense(),
    "sparse_mask-mul": lambda lib, x: (x * 3).sparse_mask(lib.tensor([[0., 1., 1.], [1., 0., 0.]]).to_sparse())
                                        .to_dense() * x,
}


@pytest.mark.parametrize("name", SPARSE_GRAPHS)
def test_gradients_flow_through_sparse_conversions(name):
    """torch records ToSparseBackward, ToDenseBackward and SparseMaskBackward nodes, and gradients
    reach the dense input; the intermediate sparse tensors require grad, as torch's do."""
    def program(lib):
        x = lib.tensor([[0.0, 2.0, 0.0], [3.0, 0.5, -4.0]], dtype=lib.float64, requires_grad=True)
        y = SPARSE_GRAPHS[name](lib, x)
        nodes, node = [], y.grad_fn
        while node is not None:
            nodes.append(type(node).__name__)
            node = next((f for f, _ in node.next_functions if f is not None and f.name() != "AccumulateGrad"),
                        None)
        (g,) = lib.autograd.grad((y * _weights(lib, y.shape)).sum(), x)
        return y, g, nodes
    (y_i, g_i, nodes_i), (y_t, g_t, nodes_t) = program(internals), program(torch)
    assert nodes_i == nodes_t
    assert_same(y_i, y_t, **EXACT)
    assert_same(g_i, g_t, **EXACT)


def test_sparse_result_records_its_node():
    def program(lib):
        x = lib.tensor([[0.0, 2.0], [3.0, 0.0]], requires_grad=True)
        s, m = x.to_sparse(), x.sparse_mask(lib.tensor([[1.0, 0.0], [0.0, 1.0]]).to_sparse())
        return [(t.requires_grad, t.is_leaf, type(t.grad_fn).__name__) for t in (s, m)]
    assert program(internals) == program(torch)


# ---------------------------------------------------------------------- values(): the differentiable accessor
def _values_program(lib):
    """A sparse leaf, coalesced, its values read and weighed: what torch records and returns."""
    s = lib.sparse_coo_tensor(lib.tensor([[1, 0, 1, 0], [2, 0, 2, 1]]), lib.tensor([3.0, 4.0, 5.0, -1.0]), (2, 3),
                              dtype=lib.float64, requires_grad=True)
    c = s.coalesce()
    v = c.values()
    (g,) = lib.autograd.grad((v * lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)).sum(), s)
    return c, v, g


def test_values_carries_the_gradient_back_to_the_sparse_tensor():
    """``values()`` is a view of the sparse tensor with a ValuesBackward0 node: the gradient of the
    values comes back as a sparse tensor with the coalesced input's indices (torch's
    ``values_backward``), then through CoalesceBackward0 to the leaf."""
    (c_i, v_i, g_i), (c_t, v_t, g_t) = _values_program(internals), _values_program(torch)
    for ours, theirs in ((v_i, v_t), (c_i, c_t)):
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert [type(f).__name__ for f, _ in v_i.grad_fn.next_functions] == [
        type(f).__name__ for f, _ in v_t.grad_fn.next_functions]
    assert (v_i._is_view(), v_i._base is c_i, v_i.requires_grad) == (v_t._is_view(), v_t._base is c_t, True)
    assert_same(v_i, v_t, **EXACT)
    assert_same_sparse(g_i, g_t)


@pytest.mark.parametrize("name", ["indices", "_indices", "_values"])
def test_index_accessors_and_raw_values_are_not_differentiable(name):
    """``indices()``, ``_indices()`` and ``_values()`` record nothing and are no views (their
    derivatives.yaml entries say ``output_differentiability: [False]``)."""
    def program(lib):
        s = lib.tensor([[0.0, 2.0], [3.0, 0.0]], requires_grad=True).to_sparse()
        out = getattr(s, name)()
        return out.requires_grad, out.grad_fn, out._is_view(), out._base is None, out.is_leaf
    assert program(internals) == program(torch)


def test_values_of_a_dense_conversion_reaches_the_dense_leaf():
    def program(lib):
        x = lib.tensor([[0.0, 1.0], [2.0, 0.0]], requires_grad=True)
        (g,) = lib.autograd.grad((x.to_sparse().values() * lib.tensor([3.0, -1.0])).sum(), x)
        return g
    assert_same(program(internals), program(torch), **EXACT)


def test_values_of_an_uncoalesced_tensor_is_refused():
    def program(lib):
        return lib.sparse_coo_tensor([[0, 0]], [1.0, 2.0], (2,), requires_grad=True).values()
    assert_same_error(lambda: program(internals), lambda: program(torch))
