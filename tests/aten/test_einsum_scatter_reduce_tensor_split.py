"""Differential tests of these operators against torch: ``einsum`` as
torch computes it (pairwise ``bmm`` contractions, so the same grad_fn and dispatched operators),
``scatter_reduce.two``, ``tensor_split``, complex ``pow`` and trigonometry, and float16
``index_put_(accumulate=True)``.

As ``tests/aten/test_ops_math.py``: PyTorch's OpInfo samples (as given and non-contiguous), then
everyday calls compared for values, strides, grad_fn names, gradients and error messages.
"""
import pytest
import torch
from helpers import (
    COMPLEX,
    TORCH_DTYPES,
    Adapter,
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    assert_same_error,
    check_opinfo_samples,
    logging_modes,
    opinfo_cases,
    rotated_cases,
    same_error,
    same_or_same_error,
)
from torch.testing._internal.common_methods_invocations import op_db

import internals
from internals.aten.native import indexing

# torch's BLAS sums each contraction in another order than internals' bmm loop (test_ops.MATMUL_TOL);
# float16/bfloat16 products are accumulated in float32 by both and rounded once.
EINSUM_TOL = {torch.float32: (1.3e-6, 1e-4), torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}

ADAPTERS = {
    "einsum": Adapter(lambda tensors, equation: internals.einsum(equation, tensors), tol=EINSUM_TOL),
    **{f"scatter_reduce.{r}": Adapter(internals.scatter_reduce, "scatter_reduce", kwargs=("include_self",))
       for r in ("sum", "prod", "mean", "amax", "amin")},
    "tensor_split": Adapter(internals.tensor_split, "tensor_split"),
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


# =============================================================================================
# scatter_reduce.two
# =============================================================================================

def _scatter_inputs(lib, dtype=torch.float64, nan=False):
    gen = torch.Generator().manual_seed(1)
    self = torch.randn(3, 4, generator=gen, dtype=torch.float64)
    src = torch.randn(2, 4, generator=gen, dtype=torch.float64)
    if nan:
        src[0, 1] = float("nan")
    self, src = self.to(dtype), src.to(dtype)
    index = torch.tensor([[0, 1, 0, 2], [1, 1, 0, 0]])
    if lib is torch:
        return self, index, src
    return internals.from_torch(self), internals.from_torch(index), internals.from_torch(src)


REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_int_inputs(lib, dtype):
    d = getattr(lib, str(dtype)[6:])
    self = lib.tensor([[3, -2, 7, 1], [0, 5, -4, 2], [6, 1, 1, -3]], dtype=d)
    src = lib.tensor([[-1, 4, 2, 9], [3, -6, 0, 5]], dtype=d)
    return self, lib.tensor([[0, 1, 0, 2], [1, 1, 0, 0]]), src


@pytest.mark.parametrize("reduce", REDUCTIONS + ("max", "min"))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int64, torch.int16])
def test_scatter_reduce_values(reduce, include_self, dtype):
    """Out of place and in place, with a NaN in the source for the floats."""
    for nan in (False, True) if dtype.is_floating_point else (False,):
        def inputs(lib, nan=nan):
            return _scatter_inputs(lib, dtype, nan) if dtype.is_floating_point else _scatter_int_inputs(lib, dtype)
        (x_t, i_t, s_t), (x_o, i_o, s_o) = inputs(torch), inputs(internals)
        theirs = x_t.scatter_reduce(0, i_t, s_t, reduce, include_self=include_self)
        assert_same(internals.scatter_reduce(x_o, 0, i_o, s_o, reduce, include_self=include_self), theirs,
                    rtol=0, atol=0)
        assert x_o.scatter_reduce_(0, i_o, s_o, reduce, include_self=include_self) is x_o
        assert_same(x_o, theirs, rtol=0, atol=0)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients(reduce, include_self):
    theirs_in = [t.requires_grad_() if t.is_floating_point() else t for t in _scatter_inputs(torch)]
    ours_in = [t.requires_grad_() if t.dtype.is_floating_point else t for t in _scatter_inputs(internals)]
    if reduce == "prod":        # zeros: two in one group (column 0), a single one in another
        with torch.no_grad():
            theirs_in[2][0, 0] = theirs_in[2][1, 0] = theirs_in[2][0, 3] = 0
        with internals.no_grad():
            ours_in[2][0, 0] = ours_in[2][1, 0] = ours_in[2][0, 3] = 0
    theirs = theirs_in[0].scatter_reduce(0, theirs_in[1], theirs_in[2], reduce, include_self=include_self)
    ours = ours_in[0].scatter_reduce(0, ours_in[1], ours_in[2], reduce, include_self=include_self)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "ScatterReduceBackward0"
    weights = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    (theirs * weights).sum().backward()
    (ours * internals.from_torch(weights)).sum().backward()
    for o, t in ((ours_in[0], theirs_in[0]), (ours_in[2], theirs_in[2])):
        assert_same(o.grad, t.grad, rtol=1e-12, atol=1e-12)
    ours_in = [t.detach().requires_grad_() if t.dtype.is_floating_point else t for t in _scatter_inputs(internals)]
    assert internals.autograd.gradcheck(
        lambda a, b: a.scatter_reduce(0, ours_in[1], b, reduce, include_self=include_self), (ours_in[0], ours_in[2]))


SCATTER_ERRORS = {
    "unknown reduction": lambda lib, x, i, s: x.scatter_reduce(0, i, s, "Sum"),
    "src dtype": lambda lib, x, i, s: x.scatter_reduce(0, i, s.to(lib.float32), "sum"),
    "index dtype": lambda lib, x, i, s: x.scatter_reduce(0, i.to(lib.int16), s, "amax"),
    "index too large": lambda lib, x, i, s: x.scatter_reduce(0, i + 5, s, "prod", include_self=False),
    "index rank": lambda lib, x, i, s: x.scatter_reduce(0, i[0], s, "mean"),
    "bool mean": lambda lib, x, i, s: (x > 0).scatter_reduce(0, i, s > 0, "mean"),
}


@pytest.mark.parametrize("case", SCATTER_ERRORS)
def test_scatter_reduce_errors(case):
    f = SCATTER_ERRORS[case]
    ours, theirs = assert_same_error(lambda: f(internals, *_scatter_inputs(internals)),
                                     lambda: f(torch, *_scatter_inputs(torch)))
    assert str(ours) == str(theirs)


# =============================================================================================
# the scatter family, declared as torch declares it: a meta and an impl step, out= the primary
# =============================================================================================
SCATTERS = ("scatter.src", "scatter_.src", "scatter.value", "scatter_.value", "scatter.reduce", "scatter_.reduce",
            "scatter.value_reduce", "scatter_.value_reduce", "scatter_reduce.two", "scatter_reduce_.two")


@pytest.mark.parametrize("name", SCATTERS)
def test_scatters_are_derived_from_their_structured_out(name):
    assert_derived_from_structured_out(name, "out", indexing)


SCATTER_OUT_CASES = {
    "src into an empty out": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(0, dtype=L.float64)),
    "src resized, warns": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(5, dtype=L.float64)),
    "src keeps out's strides": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(4, 3, dtype=L.float64).t()),
    "src into self": lambda L, x, i, s: L.scatter(x, 0, i, s, out=x),
    "src along dim 1": lambda L, x, i, s: L.scatter(x, 1, i[:, :2], s, out=L.empty(0, dtype=L.float64)),
    "value": lambda L, x, i, s: L.scatter(x, 0, i, 2.5, out=L.empty(0, dtype=L.float64)),
    "value reduce": lambda L, x, i, s: L.scatter(x, 0, i, 2.0, reduce="multiply", out=L.empty(3, 4, dtype=L.float64)),
    "value of an empty index": lambda L, x, i, s: L.scatter(x, 0, i[:0], 1e300, out=L.empty(0, dtype=L.float64)),
    **{f"scatter_reduce {r}{' without self' * (not keep)}": (
        lambda L, x, i, s, r=r, keep=keep: L.scatter_reduce(x, 0, i, s, r, include_self=keep,
                                                              out=L.empty(0, dtype=L.float64)))
       for r in REDUCTIONS for keep in (True, False)},
}


@pytest.mark.parametrize("case", SCATTER_OUT_CASES)
def test_scatter_out_variants_match_torch(case):
    """out= gives torch's values in torch's layout, with torch's resize warning."""
    assert_out_variant_matches_torch(lambda L: SCATTER_OUT_CASES[case](L, *_scatter_inputs(L)))


def test_scatter_reduce_out_matches_torch():
    """scatter's deprecated ``reduce=`` with a tensor source (torch warns once a process, so its
    warning is compared in test_scatter_reduce_warns, not here)."""
    same_or_same_error(lambda L: (lambda x, i, s: L.scatter(x, 0, i, s, reduce="add", out=L.empty(0, dtype=L.float64)))(
        *_scatter_inputs(L)))


SCATTER_OUT_ERRORS = {
    "out of another dtype": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(0)),
    "value into another dtype": lambda L, x, i, s: L.scatter(x, 0, i, 1, out=L.empty(0, dtype=L.int64)),
    "out is the index": lambda L, x, i, s: L.scatter(x.long(), 0, i, s.long(), out=i),
    "out is the source": lambda L, x, i, s: L.scatter(x[:2], 0, i[:, :1], s, out=s),
    "out overlaps itself": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(1, dtype=L.float64).expand(3, 4)),
    "in place over its source": lambda L, x, i, s: x.scatter_(0, i[:, :1], x[1:]),
    "unknown reduce": lambda L, x, i, s: L.scatter(x, 0, i, 1.0, reduce="sum", out=L.empty(0, dtype=L.float64)),
    "unknown reduce in place": lambda L, x, i, s: x.scatter_(0, i, 1.0, reduce="mean"),
    "scatter_reduce's unknown reduce": lambda L, x, i, s: L.scatter_reduce(x, 0, i, s, "add", out=L.empty(0)),
    "bool mean into out": lambda L, x, i, s: L.scatter_reduce(x > 0, 0, i, s > 0, "mean",
                                                              out=L.empty(0, dtype=L.bool)),
}


@pytest.mark.parametrize("case", SCATTER_OUT_ERRORS)
def test_scatter_out_errors(case):
    """torch's exception class and message, from the meta step (checks, dtype, overlap)."""
    same_error(lambda L: SCATTER_OUT_ERRORS[case](L, *_scatter_inputs(L)))


@pytest.mark.parametrize("case", ["src", "value", "value_reduce", "two"])
def test_scatter_meta_steps_lay_out_fakes(case):
    """Fake tensors reach every scatter's meta step: the output of self's shape and dtype."""
    program = {
        "src": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(0, dtype=L.float64)),
        "value": lambda L, x, i, s: L.scatter(x, 0, i, 1.5),
        "value_reduce": lambda L, x, i, s: x.scatter_(0, i, 1.5, reduce="add"),
        "two": lambda L, x, i, s: L.scatter_reduce(x, 0, i, s, "amax", out=L.empty(4, 3, dtype=L.float64).t()),
    }[case]
    assert_fake_matches_real(program, lambda: _scatter_inputs(internals))


# =============================================================================================
# index_put_(accumulate=True) in 16-bit floats: each add rounds on torch's CPU
# =============================================================================================

@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", ["one element, 3000 ones", "rows", "strided target", "mixed values"])
def test_index_put_accumulate_rounds_each_add(dtype, case):
    def run(lib):
        d = getattr(lib, str(dtype)[6:])
        gen = torch.Generator().manual_seed(2)
        if case == "one element, 3000 ones":
            return lib.zeros(3, dtype=d).index_put_((lib.zeros(3000, dtype=lib.int64),), lib.ones(3000, dtype=d),
                                                    accumulate=True)
        if case == "rows":
            return lib.zeros(3, 2, dtype=d).index_put_((lib.tensor([0, 2] * 700),), lib.ones(1400, 2, dtype=d),
                                                       accumulate=True)
        if case == "strided target":
            x = lib.full((4, 3), 100.0, dtype=d)[:, 1]
            return x.index_put_((lib.tensor([3, 0, 3, 3, 1]),), lib.tensor(0.3, dtype=d), accumulate=True)
        values = torch.randn(500, generator=gen).to(dtype)
        index = torch.randint(0, 4, (500,), generator=gen)
        if lib is not torch:
            values, index = internals.from_torch(values), internals.from_torch(index)
        return lib.full((4,), 7.0, dtype=d).index_put_((index,), values, accumulate=True)
    assert_same(run(internals), run(torch), rtol=0, atol=0)


# =============================================================================================
# tensor_split: views made by slice.Tensor, one per piece
# =============================================================================================

SPLITS = {
    "sections": (3,),
    "sections, uneven": (3, 1),
    "more sections than elements": (7, 1),
    "indices": ([1, 4],),
    "indices, negative and past the end": ([-3, 9], -1),
    "indices, decreasing": ([3, 1], 1),
    "indices as a tuple": ((1, 2),),
    "no indices": ([],),
    "tensor sections": (lambda lib: lib.tensor(2), 1),
    "tensor indices": (lambda lib: lib.tensor([1, 3]), 1),
    "tensor indices, strided": (lambda lib: lib.tensor([0, 1, 2, 3])[::2], 1),
}


def _split_args(lib, args):
    return tuple(a(lib) if callable(a) else a for a in args)


@pytest.mark.parametrize("case", SPLITS)
def test_tensor_split_views(case):
    x_t = torch.arange(10.0, dtype=torch.float64).reshape(2, 5).requires_grad_()
    x_o = internals.from_torch(x_t.detach()).requires_grad_()
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    args_t, args_o = _split_args(torch, SPLITS[case]), _split_args(internals, SPLITS[case])
    with mode_t:
        theirs = torch.tensor_split(x_t, *args_t)
    with mode_i:
        ours = internals.tensor_split(x_o, *args_o)
    # a 0-dim sections tensor is read with item(), which both modes see as _local_scalar_dense
    assert log_i == log_t
    assert type(ours) is tuple and len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t)
        assert o._base is x_o and type(o.grad_fn).__name__ == type(t.grad_fn).__name__
    assert [tuple(p.shape) for p in x_o.tensor_split(*args_o)] == [tuple(p.shape) for p in theirs]
    weights = torch.arange(1.0, 11.0, dtype=torch.float64)
    sum(((p * weights[:p.numel()].reshape(p.shape)).sum() for p in theirs),
        torch.zeros((), dtype=torch.float64)).backward()
    sum(((p * internals.from_torch(weights[:p.numel()].reshape(p.shape))).sum() for p in ours),
        internals.zeros((), dtype=internals.float64)).backward()
    assert_same(x_o.grad, x_t.grad)


def test_tensor_split_gradcheck():
    x = internals.from_torch(torch.randn(3, 5, dtype=torch.float64)).requires_grad_()
    assert internals.autograd.gradcheck(lambda x: internals.tensor_split(x, [1, 3], 1), (x,))
    assert internals.autograd.gradcheck(lambda x: x.tensor_split(2), (x,))


SPLIT_ERRORS = {
    "0-dim input": lambda lib: lib.tensor(1.0).tensor_split(2),
    "0-dim input, tensor": lambda lib: lib.tensor(1.0).tensor_split(lib.tensor(2)),
    "zero sections": lambda lib: lib.ones(4).tensor_split(0),
    "dim out of range": lambda lib: lib.ones(4).tensor_split(2, 1),
    "float tensor": lambda lib: lib.ones(4).tensor_split(lib.tensor([1.0])),
    "2-d tensor": lambda lib: lib.ones(4).tensor_split(lib.tensor([[1]])),
    "keyword of the docs": lambda lib: lib.tensor_split(lib.ones(4), indices_or_sections=2),
}


@pytest.mark.parametrize("case", SPLIT_ERRORS)
def test_tensor_split_errors(case):
    ours, theirs = assert_same_error(lambda: SPLIT_ERRORS[case](internals), lambda: SPLIT_ERRORS[case](torch))
    assert str(ours) == str(theirs)


# =============================================================================================
# sin, cos, tan, tanh, sigmoid of complex tensors
# =============================================================================================

# sin and cos agree with torch's (glibc's csin, ccos) bit for bit; tan and tanh (cmath's against
# glibc's ctan, ctanh) and sigmoid (whose vectorised reciprocal torch applies to full vectors
# only) within a few ulps (relative to |value|).
COMPLEX_TOL = {"sin": (0, 0), "cos": (0, 0)}
COMPLEX_DEFAULT_TOL = {torch.complex128: (1e-15, 0), torch.complex64: (6e-7, 0)}
COMPLEX_UNARY = ("sin", "cos", "tan", "tanh", "sigmoid")


def _complex_tol(name, dtype):
    return COMPLEX_TOL.get(name, COMPLEX_DEFAULT_TOL[dtype])


# each op on complex64 or complex128 in ``make test`` (helpers.ROTATED), on both in ``make test-slow``
COMPLEX_UNARY_CASES = [case for name in COMPLEX_UNARY for case in rotated_cases(name, COMPLEX, name)]


def _check_complex(ours, theirs, name):
    o = ours.to_torch()
    assert (o.dtype, o.shape, o.stride(), o.storage_offset()) == (
        theirs.dtype, theirs.shape, theirs.stride(), theirs.storage_offset())
    rtol, atol = _complex_tol(name, theirs.dtype)
    torch.testing.assert_close(o, theirs, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize(("name", "dtype"), COMPLEX_UNARY_CASES)
def test_complex_unary_opinfo_samples(name, dtype):
    """OpInfo's samples of the op at a complex dtype, as given and transposed (complex tensors
    are not in test_ops' dtype table, so they are converted here)."""
    (op,) = [op for op in op_db if op.name == name and not op.variant_test_name]
    torch.manual_seed(0)
    samples = list(op.sample_inputs_func(op, "cpu", dtype, False))
    assert samples
    for sample in samples:
        for x in (sample.input, sample.input.mT if sample.input.dim() >= 2 else sample.input):
            _check_complex(getattr(internals, name)(internals.from_torch(x)), getattr(torch, name)(x), name)
            _check_complex(getattr(internals.from_torch(x), name)(), getattr(x, name)(), name)


@pytest.mark.parametrize(("name", "dtype"), COMPLEX_UNARY_CASES)
def test_complex_unary_values(name, dtype):
    """Zeros of both signs, purely real and purely imaginary values, and a thousand random ones
    up to |9| in each part, out of place and in place."""
    gen = torch.Generator().manual_seed(3)
    z = torch.complex(torch.randn(1000, generator=gen, dtype=torch.float64) * 3,
                      torch.randn(1000, generator=gen, dtype=torch.float64) * 3).to(dtype)
    z[:6] = torch.tensor([0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1 + 0j, 2j, -1.5 - 0.5j])
    _check_complex(getattr(internals, name)(internals.from_torch(z)), getattr(torch, name)(z), name)
    ours = internals.from_torch(z.clone())
    assert getattr(ours, name + "_")() is ours
    _check_complex(ours, getattr(torch, name)(z), name)


def test_complex_unary_on_the_cuda_simulator():
    z = torch.tensor([0.5 + 1j, -2 - 0.25j, 0j], dtype=torch.complex128)
    for name in COMPLEX_UNARY:
        ours = getattr(internals, name)(internals.from_torch(z).to("cuda")).to("cpu")
        _check_complex(ours, getattr(torch, name)(z), name)
