"""The compressed sparse layouts (CSR, CSC, BSR, BSC): SparseCsrTensorImpl and the SparseCsrCPU
kernels, checked against torch.

Every conversion is data movement, so a result is compared part by part and exactly: the
compressed and plain indices (values and dtype), the values, sizes, nnz, layout. Dense inputs are
small integers, mostly zero, drawn by hypothesis or written out; the errors are torch's class and
message.
"""
import pytest
import torch
from helpers import assert_same, assert_same_error
from hypothesis import given
from hypothesis import strategies as hst

import internals

EXACT = dict(rtol=0, atol=0)
LAYOUTS = ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]
ROW_PARTS = ("crow_indices", "col_indices")
COLUMN_PARTS = ("ccol_indices", "row_indices")

pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state:UserWarning")


def parts(t):
    return ROW_PARTS if t.layout in (torch.sparse_csr, torch.sparse_bsr, internals.sparse_csr,
                                     internals.sparse_bsr) else COLUMN_PARTS


def assert_same_compressed(ours, theirs):
    """Layout, sizes, nnz, dims, and each component tensor exactly (dtype included)."""
    assert repr(ours.layout) == repr(theirs.layout).replace("torch", "internals")
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert (ours._nnz(), ours.sparse_dim(), ours.dense_dim()) == (theirs._nnz(), theirs.sparse_dim(),
                                                                  theirs.dense_dim())
    assert ours.dtype is getattr(internals, str(theirs.dtype).split(".")[-1])
    for name in (*parts(theirs), "values"):
        assert_same(getattr(ours, name)().detach(), getattr(theirs, name)().detach(), exact_layout=False, **EXACT)


def assert_same_sparse_coo(ours, theirs):
    assert ours.layout is internals.sparse_coo and theirs.layout == torch.sparse_coo
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.is_coalesced() == theirs.is_coalesced()
    assert_same(ours._indices(), theirs._indices(), exact_layout=False, **EXACT)
    assert_same(ours._values(), theirs._values(), exact_layout=False, **EXACT)


def mostly_zeros(shape, dtype=torch.float32, seed=0, density=0.4):
    g = torch.Generator().manual_seed(seed)
    values = torch.randint(-5, 6, shape, generator=g)
    return (values * (torch.rand(shape, generator=g) < density)).to(dtype)


def both(program):
    """``program`` run on internals and on torch: (ours, theirs)."""
    return program(internals), program(torch)


# ---------------------------------------------------------------------- dense -> compressed -> dense
CONVERSIONS = {
    # name: (dense shape, conversion); the conversion gets the library, so layouts name themselves
    "csr": ((5, 4), lambda T, x: x.to_sparse_csr()),
    "csc": ((5, 4), lambda T, x: x.to_sparse_csc()),
    "bsr-2x2": ((4, 6), lambda T, x: x.to_sparse_bsr((2, 2))),
    "bsr-1x3": ((4, 6), lambda T, x: x.to_sparse_bsr((1, 3))),
    "bsc-2x3": ((4, 6), lambda T, x: x.to_sparse_bsc((2, 3))),
    "csr-hybrid": ((4, 3, 2), lambda T, x: x.to_sparse_csr(dense_dim=1)),
    "csc-hybrid": ((4, 3, 2), lambda T, x: x.to_sparse_csc(1)),
    "bsr-hybrid": ((4, 2, 3), lambda T, x: x.to_sparse_bsr((2, 1), dense_dim=1)),
    "to_sparse-layout": ((3, 5), lambda T, x: x.to_sparse(layout=T.sparse_csr)),
    "to_sparse-bsc": ((4, 4), lambda T, x: x.to_sparse(layout=T.sparse_bsc, blocksize=(2, 2))),
    "csr-batched": ((2, 3, 3), lambda T, x: x.to_sparse_csr()),
    "empty-rows": ((3, 0), lambda T, x: x.to_sparse_csr()),
    "all-zero": ((3, 4), lambda T, x: (x * 0).to_sparse_csc()),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bool, torch.float64])
@pytest.mark.parametrize("name", CONVERSIONS)
def test_dense_to_compressed_and_back(name, dtype):
    shape, convert = CONVERSIONS[name]
    # a batch needs the same count of entries in every batch: the same matrix twice (shuffled rows)
    x = mostly_zeros(shape, dtype, seed=len(name))
    if name == "csr-batched":
        x = torch.stack([x[0], x[0].flip(0)])
    ours, theirs = convert(internals, internals.from_torch(x)), convert(torch, x)
    assert_same_compressed(ours, theirs)
    assert_same(ours.to_dense(), theirs.to_dense(), **EXACT)


@given(hst.integers(1, 5), hst.integers(1, 5), hst.sampled_from(LAYOUTS), hst.integers(0, 2**31 - 1))
def test_random_matrices_convert_as_torch(rows, cols, layout, seed):
    """Any small matrix, any layout (a block of 1 x 1 for BSR and BSC: every size divides)."""
    x = mostly_zeros((rows, cols), seed=seed)
    blocksize = (1, 1) if layout in ("sparse_bsr", "sparse_bsc") else None

    def program(T):
        return (x if T is torch else internals.from_torch(x)).to_sparse(layout=getattr(T, layout),
                                                                        blocksize=blocksize)
    ours, theirs = both(program)
    assert_same_compressed(ours, theirs)
    assert_same(ours.to_dense(), theirs.to_dense(), **EXACT)


# ---------------------------------------------------------------------- between layouts
X = [[1., 0, 2], [0, 0, 3], [4, 5, 0], [0, 0, 0]]
BETWEEN = {
    "csr-to-csc": lambda T: T.tensor(X).to_sparse_csr().to_sparse_csc(),
    "csc-to-csr": lambda T: T.tensor(X).to_sparse_csc().to_sparse_csr(),
    "csr-to-bsr": lambda T: T.tensor(X).to_sparse_csr().to_sparse_bsr((2, 1)),
    "csc-to-bsc": lambda T: T.tensor(X).to_sparse_csc().to_sparse_bsc((2, 1)),
    # an explicit zero is an entry: it stays one
    "explicit-zero-csr-to-csc": lambda T: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [0., 2, 3], (2, 2)).to_sparse_csc(),
    "coo-to-csr": lambda T: T.tensor(X).to_sparse().to_sparse_csr(),
    "coo-to-csc": lambda T: T.tensor(X).to_sparse().to_sparse(layout=T.sparse_csc),
    "uncoalesced-coo-to-csc": lambda T: T.sparse_coo_tensor([[0, 2, 3, 0], [0, 1, 2, 0]], [0., 1., 2., 5.],
                                                            (4, 3)).to_sparse_csc(),
    "coo-to-bsr": lambda T: T.sparse_coo_tensor([[0, 2, 3], [0, 1, 2]], [0., 1., 2.], (4, 3)).to_sparse_bsr((2, 1)),
    "coo-to-bsc": lambda T: T.sparse_coo_tensor([[0, 2, 3], [0, 1, 2]], [0., 1., 2.], (4, 3)).to_sparse_bsc((2, 3)),
    "hybrid-coo-to-csr": lambda T: T.sparse_coo_tensor([[0, 2], [0, 1]], [[1., 2.], [3., 4.]], (3, 2, 2))
                                    .to_sparse_csr(),
    "same-layout-is-self": lambda T: T.tensor(X).to_sparse_bsr((2, 1)).to_sparse(layout=T.sparse_bsr,
                                                                                   blocksize=(2, 1)),
    "to-float64": lambda T: T.tensor(X).to_sparse_csc().to(T.float64),
    "clone": lambda T: T.tensor(X).to_sparse_bsc((2, 3)).clone(),
}


@pytest.mark.parametrize("name", BETWEEN)
def test_conversions_between_layouts(name):
    ours, theirs = both(BETWEEN[name])
    assert_same_compressed(ours, theirs)


TO_COO = {
    "csr": lambda T: T.tensor(X).to_sparse_csr().to_sparse(),
    # CSC, BSR and BSC list their elements in the order they store them: not sorted, not coalesced
    "csc": lambda T: T.tensor(X).to_sparse_csc().to_sparse(),
    "bsr": lambda T: T.tensor(X).to_sparse_bsr((2, 1)).to_sparse(),
    "bsc": lambda T: T.tensor(X).to_sparse_bsc((2, 1)).to_sparse(),
    "sparse_dim-2": lambda T: T.tensor(X).to_sparse_csr().to_sparse(2),
    "batched-csc": lambda T: T.tensor([[[1., 0], [0, 2]], [[0, 3], [4, 0]]]).to_sparse_csc().to_sparse(),
    # sorted by construction, so flagged coalesced: BSR of one-row blocks, one stored entry, no elements
    "bsr-1-row-blocks": lambda T: T.tensor(X).to_sparse_bsr((1, 3)).to_sparse(),
    "batched-bsr-1-row-blocks": lambda T: T.ones(2, 2, 4).to_sparse_bsr((1, 2)).to_sparse(),
    "bsc-one-block": lambda T: T.ones(2, 4).to_sparse_bsc((2, 4)).to_sparse(),
    "csc-one-entry": lambda T: T.tensor([[0., 0], [3, 0]]).to_sparse_csc().to_sparse(),
    "csc-one-column": lambda T: T.ones(3, 1).to_sparse_csc().to_sparse(),
    "bsc-no-elements": lambda T: T.ones(0, 4).to_sparse_bsc((1, 2)).to_sparse(),
    "bsc-no-entries": lambda T: T.zeros(2, 4).to_sparse_bsc((1, 2)).to_sparse(),
}


@pytest.mark.parametrize("name", TO_COO)
def test_compressed_to_coo(name):
    assert_same_sparse_coo(*both(TO_COO[name]))


def test_same_layout_returns_the_tensor_itself():
    for T in (internals, torch):
        c = T.tensor(X).to_sparse_csr()
        assert c.to_sparse_csr() is c and c.to_sparse(layout=T.sparse_csr) is c


REFUSED_CONVERSIONS = {
    "csr-with-blocksize": lambda T: T.tensor(X).to_sparse(layout=T.sparse_csr, blocksize=(2, 1)),
    "bsr-without-blocksize": lambda T: T.tensor(X).to_sparse(layout=T.sparse_bsr),
    "bsr-indivisible": lambda T: T.tensor(X).to_sparse_bsr((3, 1)),
    "bsc-indivisible-layout-path": lambda T: T.tensor(X).to_sparse(layout=T.sparse_bsc, blocksize=(1, 2)),
    "dense_dim-out-of-range": lambda T: T.ones(2, 2, 2).to_sparse_csr(dense_dim=2),
    "dense_dim-out-of-range-layout-path": lambda T: T.ones(2, 2, 2).to_sparse(layout=T.sparse_csc, dense_dim=3),
    "uneven-batches": lambda T: T.tensor([[[1., 0], [0, 0]], [[0, 0], [1, 1]]]).to_sparse_csr(),
    "coo-three-sparse-dims": lambda T: T.ones(2, 2, 2).to_sparse().to_sparse_csr(),
    "coo-dense_dim": lambda T: T.tensor(X).to_sparse().to_sparse(layout=T.sparse_csr, dense_dim=1),
    "coo-dense_dim-op-path": lambda T: T.tensor(X).to_sparse().to_sparse_csr(1),
    "coo-bsr-indivisible": lambda T: T.tensor(X).to_sparse().to_sparse_bsr((3, 1)),
    "compressed-blocksize-to-csr": lambda T: T.tensor(X).to_sparse_csc().to_sparse(layout=T.sparse_csr,
                                                                                   blocksize=(1, 1)),
    "compressed-blocksize-to-coo": lambda T: T.tensor(X).to_sparse_csr().to_sparse(layout=T.sparse_coo,
                                                                                   blocksize=(1, 1)),
    "compressed-dense_dim": lambda T: T.tensor(X).to_sparse_csr().to_sparse(layout=T.sparse_csc, dense_dim=1),
    "bsr-blocksize-changed": lambda T: T.tensor(X).to_sparse_bsr((2, 1)).to_sparse_bsr((1, 1)),
    "bsr-to-csr": lambda T: T.tensor(X).to_sparse_bsr((2, 1)).to_sparse_csr(),
    "to-coo-sparse_dim-1": lambda T: T.tensor(X).to_sparse_csr().to_sparse(1),
    "to_dense-dtype": lambda T: T.tensor(X).to_sparse_csr().to_dense(T.float64),
    "coalesce": lambda T: T.tensor(X).to_sparse_csr().coalesce(),
    # a given dense_dim's range is checked before the dims are counted; a block layout first
    # reads its block rows at dim -2 - dense_dim
    "dense_dim-of-a-vector": lambda T: T.ones(6).to_sparse_csr(dense_dim=1),
    "dense_dim-0-of-a-vector-csc": lambda T: T.ones(6).to_sparse_csc(dense_dim=0),
    "negative-dense_dim-of-a-vector-bsr": lambda T: T.ones(6).to_sparse_bsr(1, dense_dim=-1),
    "dense_dim-of-a-vector-bsr": lambda T: T.ones(6).to_sparse_bsr(1, dense_dim=0),
    "dense_dim-past-the-block-rows": lambda T: T.ones(2, 2, 2).to_sparse_bsc(1, dense_dim=2),
    "negative-dense_dim": lambda T: T.ones(2, 2).to_sparse_csr(dense_dim=-1),
    # COO has no blocks and keeps its dims
    "dense-to-coo-blocksize": lambda T: T.tensor(X).to_sparse(blocksize=(1, 1)),
    "coo-to-coo-blocksize": lambda T: T.tensor(X).to_sparse().to_sparse(layout=T.sparse_coo, blocksize=(1, 1)),
    "coo-to-coo-dense_dim": lambda T: T.tensor(X).to_sparse().to_sparse(layout=T.sparse_coo, dense_dim=0),
}


@pytest.mark.parametrize("name", REFUSED_CONVERSIONS)
def test_refused_conversions_match_torch(name):
    ours, theirs = assert_same_error(lambda: REFUSED_CONVERSIONS[name](internals),
                                     lambda: REFUSED_CONVERSIONS[name](torch))
    assert str(ours) == str(theirs)


LAID_OUT = {
    "csr": lambda x: x.to_sparse_csr(),
    "bsc": lambda x: x.to_sparse_bsc(2),
    "layout-path-csc": lambda x: x.to_sparse(layout=x.to_sparse_csc().layout),
    "csr-to-csc": lambda x: x.to_sparse_csr().to_sparse_csc(),
    "coo-to-csr": lambda x: x.to_sparse().to_sparse_csr(),
    "coo-to-bsr": lambda x: x.to_sparse().to_sparse_bsr(2),
    "csc-to-bsc": lambda x: x.to_sparse_csc().to_sparse_bsc(2),
    "batched-csc": lambda x: x.reshape(2, 2, 6).to_sparse_csc(),
    "batched-bsr": lambda x: x.reshape(2, 2, 6).to_sparse_bsr(2),
    "hybrid-csr": lambda x: x.reshape(2, 2, 6).to_sparse_csr(dense_dim=1),
}


@pytest.mark.parametrize("name", LAID_OUT)
def test_conversions_lay_out_their_indices_as_torch(name):
    """Each part's strides and storage offset too: torch's conversions take the plain indices from
    the second row of the COO index tensor they go through (offset nnz), except the block ones."""
    def program(T):
        x = T.tensor([[0., 1, 0, 2, 0, 0], [3, 0, 0, 0, 4, 5], [0, 0, 6, 0, 0, 1], [7, 8, 0, 0, 0, 9]])
        s = LAID_OUT[name](x)
        return [(t.storage_offset(), t.stride(), tuple(t.shape)) for t in
                (*(getattr(s, part)() for part in parts(s)), s.values())]
    assert program(internals) == program(torch)


# ---------------------------------------------------------------------- the factories
FACTORIES = {
    "csr": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (2, 2), **k),
    "csr-size-inferred": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], **k),
    "csc": lambda T, **k: T.sparse_csc_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (2, 2), **k),
    "bsr": lambda T, **k: T.sparse_bsr_tensor([0, 1, 2], [0, 1], [[[1., 2]], [[3, 4]]], (2, 4), **k),
    "bsc-size-inferred": lambda T, **k: T.sparse_bsc_tensor([0, 1, 2], [0, 1], [[[1., 2]], [[3, 4]]], **k),
    "compressed-bsr": lambda T, **k: T.sparse_compressed_tensor([0, 1, 2], [0, 1], [[[1., 2]], [[3, 4]]],
                                                                layout=T.sparse_bsr, **k),
    "int32-indices": lambda T, **k: T.sparse_csr_tensor(T.tensor([0, 1, 1], dtype=T.int32),
                                                        T.tensor([1], dtype=T.int32), [7], (2, 3), **k),
    "hybrid": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [[1.], [2], [3]], (2, 2, 1), **k),
    "batched": lambda T, **k: T.sparse_csr_tensor([[0, 1, 1], [0, 0, 1]], [[1], [0]], [[5.], [6.]], (2, 2, 3),
                                                  **k),
    "dtype": lambda T, **k: T.sparse_csc_tensor([0, 2, 3], [0, 1, 1], [1, 2, 3], (2, 2), dtype=T.float64, **k),
    "requires_grad": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (2, 2),
                                                        requires_grad=True, **k),
    # no stored element: the invariants' check still counts the batches
    "no-element": lambda T, **k: T.sparse_csr_tensor(T.tensor([0, 0, 0]), T.tensor([], dtype=T.int64),
                                                     T.tensor([], dtype=T.float64), (2, 3), **k),
    "no-row": lambda T, **k: T.sparse_csc_tensor(T.tensor([0, 0, 0, 0]), T.tensor([], dtype=T.int64),
                                                 T.tensor([]), (0, 3), **k),
    "batched-no-element": lambda T, **k: T.sparse_csr_tensor(T.zeros(2, 3, dtype=T.int64), T.zeros(2, 0, dtype=T.int64),
                                                             T.zeros(2, 0), (2, 2, 4), **k),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories_build_what_torch_builds(name):
    ours, theirs = FACTORIES[name](internals), FACTORIES[name](torch, check_invariants=True)
    assert_same_compressed(ours, theirs)
    assert ours.requires_grad == theirs.requires_grad
    assert repr(ours) == repr(theirs).replace("torch.", "internals.")


BAD_FACTORIES = {
    # the invariants (torch checks them with check_invariants=True; internals always does)
    "crow-last-not-nnz": lambda T, **k: T.sparse_csr_tensor([0, 2, 1], [0, 1, 1], [1., 2, 3], (2, 2), **k),
    "crow-first-not-zero": lambda T, **k: T.sparse_csr_tensor([1, 2, 3], [0, 1, 1], [1., 2, 3], (2, 2), **k),
    "crow-decreasing": lambda T, **k: T.sparse_csr_tensor([0, 2, 1, 3], [0, 1, 1], [1., 2, 3], (3, 2), **k),
    "col-out-of-range": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 5, 1], [1., 2, 3], (2, 2), **k),
    "col-unsorted": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [1, 0, 1], [1., 2, 3], (2, 2), **k),
    "col-repeated": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [1, 1, 1], [1., 2, 3], (2, 2), **k),
    "ccol-decreasing": lambda T, **k: T.sparse_csc_tensor([0, 2, 1, 3], [0, 1, 1], [1., 2, 3], (2, 3), **k),
    "row-out-of-range": lambda T, **k: T.sparse_csc_tensor([0, 2, 3], [0, 5, 1], [1., 2, 3], (2, 2), **k),
    "row-unsorted": lambda T, **k: T.sparse_csc_tensor([0, 2, 3], [1, 0, 1], [1., 2, 3], (2, 2), **k),
    "ccol-first-not-zero": lambda T, **k: T.sparse_csc_tensor([1, 2, 3], [0, 1, 1], [1., 2, 3], (2, 2), **k),
    # shapes and dtypes (checked by torch always)
    "crow-length": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (3, 2), **k),
    "ccol-length": lambda T, **k: T.sparse_csc_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (2, 3), **k),
    "block-rows-length": lambda T, **k: T.sparse_bsr_tensor([0, 1, 2], [0, 1], [[[1., 2]], [[3, 4]]], (3, 4), **k),
    "col-length": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [1., 2], (2, 2), **k),
    "float-indices": lambda T, **k: T.sparse_csr_tensor([0., 2, 3], [0., 1, 1], [1., 2, 3], (2, 2), **k),
    "mixed-index-dtypes": lambda T, **k: T.sparse_csr_tensor(T.tensor([0, 2, 3], dtype=T.int32), [0, 1, 1],
                                                             [1., 2, 3], (2, 2), **k),
    "size-too-long": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (2, 2, 2), **k),
    "size-too-short": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (2,), **k),
    "index-dims-differ": lambda T, **k: T.sparse_csr_tensor([[0, 2, 3]], [0, 1, 1], [1., 2, 3], (1, 2, 2), **k),
    "hybrid-size-missing": lambda T, **k: T.sparse_csr_tensor([0, 2, 3], [0, 1, 1], [[1.], [2], [3]], (2, 2), **k),
    "block-indivisible": lambda T, **k: T.sparse_bsr_tensor([0, 1, 2], [0, 1], [[[1., 2]], [[3, 4]]], (2, 3), **k),
    "block-values-too-flat": lambda T, **k: T.sparse_bsr_tensor([0, 1, 2], [0, 1], [1., 2], (2, 4), **k),
    "strided-layout": lambda T, **k: T.sparse_compressed_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (2, 2),
                                                                layout=T.strided, **k),
    "no-layout": lambda T, **k: T.sparse_compressed_tensor([0, 2, 3], [0, 1, 1], [1., 2, 3], (2, 2), **k),
}


@pytest.mark.parametrize("name", BAD_FACTORIES)
def test_factory_refusals_match_torch(name):
    """torch checks the index invariants only when asked to (``check_invariants=True``): it is
    asked here; internals always checks them."""
    ours, theirs = assert_same_error(lambda: BAD_FACTORIES[name](internals),
                                     lambda: BAD_FACTORIES[name](torch, check_invariants=True))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- accessors and metadata
ACCESSORS = ["crow_indices", "col_indices", "ccol_indices", "row_indices", "values", "indices", "_indices",
             "is_coalesced", "sparse_dim", "dense_dim", "_nnz"]


@pytest.mark.parametrize("layout", ["strided", *LAYOUTS])
@pytest.mark.parametrize("name", ACCESSORS)
def test_accessors_answer_or_refuse_as_torch(name, layout):
    """Each accessor on each layout: the same tensor, number or error (the CSR names refuse
    the column layouts and the other way round)."""
    def program(T):
        x = T.tensor(X)
        if layout != "strided":
            x = x.to_sparse(layout=getattr(T, layout), blocksize=(2, 1) if layout in ("sparse_bsr", "sparse_bsc")
                            else None)
        return getattr(x, name)()
    try:
        theirs = program(torch)
    except (RuntimeError, NotImplementedError):
        ours, theirs_error = assert_same_error(lambda: program(internals), lambda: program(torch))
        # no kernel for the key: the first sentence (torch then lists its many backends, we ours)
        assert str(ours).split(". ")[0] == str(theirs_error).split(". ")[0]
        return
    ours = program(internals)
    if isinstance(theirs, torch.Tensor):
        assert_same(ours, theirs, exact_layout=False, **EXACT)
    else:
        assert ours == theirs


@pytest.mark.parametrize("layout", LAYOUTS)
def test_detach_shares_the_three_tensors_and_the_version(layout):
    """``detach`` of a compressed tensor (an optimizer's step, ``x.data``): torch copies the impl,
    so the result holds the same index and value tensors, out of the graph, and their version."""
    def program(T):
        x = T.tensor(X).to_sparse(layout=getattr(T, layout), blocksize=(2, 1) if "b" in layout[7:] else None)
        x.requires_grad_()
        d = x.detach()
        return d, d.requires_grad, d.grad_fn, d._version == x._version
    ours, theirs = program(internals), program(torch)
    assert_same_compressed(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]


def test_index_accessors_record_no_gradient_and_are_not_views():
    def program(T):
        c = T.tensor(X).to_sparse_csc().requires_grad_()
        return [(o.requires_grad, o._is_view(), o.grad_fn) for o in (c.ccol_indices(), c.row_indices())]
    assert program(internals) == program(torch)


METADATA = {
    "stride": lambda c: c.stride(),
    "is_contiguous": lambda c: c.is_contiguous(),
    "storage_offset": lambda c: c.storage_offset(),
    "data_ptr": lambda c: c.data_ptr(),
    "nbytes": lambda c: c.nbytes,
    "numel-dim": lambda c: (c.numel(), c.dim(), c.element_size()),
    "flags": lambda c: (c.is_sparse, c.is_sparse_csr, c.requires_grad, c.is_leaf),
    "device": lambda c: str(c.device),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", METADATA)
def test_metadata_matches_torch(name, layout):
    def program(T):
        blocksize = (2, 1) if layout in ("sparse_bsr", "sparse_bsc") else None
        return METADATA[name](T.tensor(X).to_sparse(layout=getattr(T, layout), blocksize=blocksize))
    try:
        theirs = program(torch)
    except RuntimeError:
        ours, theirs_error = assert_same_error(lambda: program(internals), lambda: program(torch))
        assert str(ours) == str(theirs_error)
        return
    assert program(internals) == theirs


def test_layouts_and_key_sets_equal_torch():
    for layout in LAYOUTS:
        assert repr(getattr(internals, layout)) == repr(getattr(torch, layout)).replace("torch", "internals")
        blocksize = (2, 1) if layout in ("sparse_bsr", "sparse_bsc") else None
        ours = internals.tensor(X).to_sparse(layout=getattr(internals, layout), blocksize=blocksize)
        theirs = torch.tensor(X).to_sparse(layout=getattr(torch, layout), blocksize=blocksize)
        assert str(internals._C._dispatch_keys(ours)) == str(torch._C._dispatch_keys(theirs))


def test_the_compressed_keys_sit_where_torch_puts_them():
    """SparseCsrCPU and SparseCsrCUDA come right after the COO keys and before BackendSelect, in
    torch's full key set as in ours."""
    theirs = [k for k in str(torch._C._dispatch_keyset_full())[len("DispatchKeySet("):-1].split(", ")
              if k in internals.c10.dispatch_key.DispatchKey.__members__]
    assert [k.name for k in internals.c10.dispatch_key.DispatchKey] == theirs


def test_numpy_refuses_a_compressed_tensor():
    ours, theirs = assert_same_error(lambda: internals.tensor(X).to_sparse_csc().numpy(),
                                     lambda: torch.tensor(X).to_sparse_csc().numpy())
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- printing
@pytest.mark.parametrize("make", [
    lambda T: T.tensor(X).to_sparse_csr(),
    lambda T: T.tensor(X).to_sparse_csc(),
    lambda T: T.tensor(X).to_sparse_bsr((2, 1)),
    lambda T: T.tensor(X).to_sparse_bsc((2, 3)),
    lambda T: T.tensor([[1, 0]], dtype=T.int32).to_sparse_csc(),
    lambda T: T.tensor([[True, False]]).to_sparse_csr(),
    lambda T: T.zeros(3, 0).to_sparse_csr(),
    lambda T: T.tensor([[[1., 0], [0, 2]], [[0, 3], [4, 0]]]).to_sparse_csr(),
    lambda T: T.tensor(X, dtype=T.float64).to_sparse_csr().requires_grad_(),
    lambda T: T.tensor(X, requires_grad=True).to_sparse_csr(),
])
def test_repr_like_torch(make):
    assert repr(make(internals)) == repr(make(torch)).replace("torch.", "internals.")


# ---------------------------------------------------------------------- autograd
W = [[-2.5, 1.0, 0.5], [3.0, -1.0, 2.0], [0.25, 4.0, -3.0], [1.5, 2.5, -0.5]]
GRAPHS = {
    "to_sparse_csr": lambda T, x: x.to_sparse_csr().to_dense(),
    "to_sparse_csc": lambda T, x: x.to_sparse_csc().to_dense(),
    "to_sparse_bsr": lambda T, x: x.to_sparse_bsr((2, 1)).to_dense(),
    "to_sparse_bsc": lambda T, x: x.to_sparse_bsc((2, 3)).to_dense(),
    "to_sparse-layout": lambda T, x: x.to_sparse(layout=T.sparse_csr).to_dense(),
    "to_sparse-bsr-layout": lambda T, x: x.to_sparse(layout=T.sparse_bsr, blocksize=(2, 1)).to_dense(),
    "unmasked": lambda T, x: x.to_sparse_csr().to_dense(masked_grad=False),
    "unmasked-bsr": lambda T, x: x.to_sparse_bsr((2, 1)).to_dense(masked_grad=False),
    "values": lambda T, x: x.to_sparse_csc().values() * 2,
}


@pytest.mark.parametrize("name", GRAPHS)
def test_gradients_through_compressed_conversions(name):
    """The nodes torch records (ToSparseCsrBackward0, ToSparseBackward1, ToDenseBackward0,
    ValuesBackward0, ...) and the gradient that reaches the dense leaf."""
    def program(T):
        x = T.tensor(X, dtype=T.float64, requires_grad=True)
        y = GRAPHS[name](T, x)
        nodes, node = [], y.grad_fn
        while node is not None:
            nodes.append(type(node).__name__)
            node = next((f for f, _ in node.next_functions if f is not None and f.name() != "AccumulateGrad"),
                        None)
        weights = T.tensor(W, dtype=T.float64) if y.dim() == 2 else T.arange(float(y.numel()), dtype=T.float64)
        (g,) = T.autograd.grad((y * weights).sum(), x)
        return y, g, nodes
    (y_i, g_i, nodes_i), (y_t, g_t, nodes_t) = both(program)
    assert nodes_i == nodes_t
    assert_same(y_i, y_t, **EXACT)
    assert_same(g_i, g_t, **EXACT)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("through", ["to_dense", "values"])
def test_a_compressed_leaf_gets_a_gradient_in_its_own_layout(layout, through):
    """to_dense's gradient keeps only the stored entries (whole blocks for BSR and BSC); values'
    gradient is the incoming one as the values of a tensor with the leaf's indices."""
    def program(T):
        blocksize = (2, 1) if layout in ("sparse_bsr", "sparse_bsc") else None
        c = T.tensor(X, dtype=T.float64).to_sparse(layout=getattr(T, layout), blocksize=blocksize)
        c.requires_grad_()
        y = c.to_dense() if through == "to_dense" else c.values()
        weights = T.tensor(W, dtype=T.float64) if through == "to_dense" else T.arange(
            float(y.numel()), dtype=T.float64).reshape(y.shape)
        (g,) = T.autograd.grad((y * weights).sum(), c)
        return type(y.grad_fn).__name__, g
    (node_i, g_i), (node_t, g_t) = both(program)
    assert node_i == node_t
    assert_same_compressed(g_i, g_t)


# ---------------------------------------------------------------------- products
X4 = [[1., 0, 2, 0], [0, 0, 3, 1], [4, 5, 0, 0], [0, 0, 0, 0]]
D4 = [[0.5, 1.], [2., 3.], [4., -5.], [6., 7.]]
PRODUCTS = {
    "csr@dense": lambda T: T.mm(T.tensor(X4).to_sparse_csr(), T.tensor(D4)),
    "csc@dense": lambda T: T.mm(T.tensor(X4).to_sparse_csc(), T.tensor(D4)),
    "bsr@dense": lambda T: T.mm(T.tensor(X4).to_sparse_bsr((2, 2)), T.tensor(D4)),
    "float64": lambda T: T.tensor(X4, dtype=T.float64).to_sparse_csr() @ T.tensor(D4, dtype=T.float64),
    "dense@csc": lambda T: T.mm(T.tensor(D4).t(), T.tensor(X4).to_sparse_csc()),
    "dense@csr": lambda T: T.tensor(D4).t() @ T.tensor(X4).t().to_sparse_csr(),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_products_with_a_compressed_operand(name):
    """Sums of a few products of small integers and halves: exact in float, whatever the order."""
    ours, theirs = both(PRODUCTS[name])
    assert_same(ours, theirs, **EXACT)


REFUSED_PRODUCTS = {
    "non-square-blocks": lambda T: T.mm(T.tensor(X4).to_sparse_bsr((2, 1)), T.tensor(D4)),
    "bsc": lambda T: T.mm(T.tensor(X4).to_sparse_bsc((2, 2)), T.tensor(D4)),
    "dense@bsr": lambda T: T.mm(T.tensor(D4).t(), T.tensor(X4).to_sparse_bsr((2, 2))),
    "shapes": lambda T: T.mm(T.tensor(X4).to_sparse_csr(), T.tensor(D4).t()),
    "integers": lambda T: T.mm(T.tensor(X4).long().to_sparse_csr(), T.tensor(D4).long()),
    "dtypes": lambda T: T.mm(T.tensor(X4).to_sparse_csr(), T.tensor(D4, dtype=T.float64)),
}


@pytest.mark.parametrize("name", REFUSED_PRODUCTS)
def test_refused_products_match_torch(name):
    ours, theirs = assert_same_error(lambda: REFUSED_PRODUCTS[name](internals), lambda: REFUSED_PRODUCTS[name](torch))
    assert str(ours) == str(theirs)
