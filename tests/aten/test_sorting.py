"""The out= kernels of the selections and scans in ``aten/native/sorting.py``: kthvalue,
median.dim, nanmedian.dim, mode, cummax, cummin and logcumsumexp.

torch 2.13 does not declare them structured, but gives each an out= kernel of its own
(``kthvalue_out_cpu``, ``median_out_cpu``, ``mode_out``, ``cummax_out``, ``logcumsumexp_out``)
that its functional kernel runs into fresh outputs. Each is checked here against torch: the
values, sizes, strides and dtypes of the functional and out= forms, a wrong-sized ``out``
resized with torch's warning, torch's exception for an ``out`` of the wrong dtype, the overlap
rules, and autograd.

Then ``quantile``/``nanquantile``, ``nanmedian`` and ``unique_consecutive``: OpInfo samples,
everyday calls and errors, gradients and the CUDA kernels; last the everyday calls, gradients and
CUDA kernels of ``cummax``/``cummin`` (the sections at the end of this file).

Tests ``internals.aten.native.sorting`` (aten/src/ATen/native/Sorting.cpp, Unique.cpp).
"""
import warnings

import pytest
import torch
from helpers import (
    LIBM_ULPS,
    NAN,
    TORCH_DTYPES,
    Adapter,
    assert_fake_matches_real,
    assert_same,
    both_with_warnings,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    fn,
    native_entries,
    opinfo_cases,
    same_error,
)
from helpers import run as _run

import internals
from internals.aten import dispatcher
from internals.aten.native import sorting
from internals.c10.dispatch_key import DispatchKey

ENTRIES = native_entries()
OUT_KERNELS = {"kthvalue.values": "kthvalue_out", "median.dim_values": "median_dim_out",
               "nanmedian.dim_values": "nanmedian_dim_out", "mode.values": "mode_out", "cummax.out": "cummax_out",
               "cummin.out": "cummin_out", "logcumsumexp.out": "logcumsumexp_out"}


@pytest.mark.parametrize("name", OUT_KERNELS)
def test_each_out_overload_names_its_own_kernel(name):
    """The out= entry names its kernel, as torch's does; no generic out rules are left on it."""
    entry = ENTRIES[name]
    assert entry["dispatch"] == {"CPU, CUDA": OUT_KERNELS[name]} and "out_rules" not in entry
    assert dispatcher.find(name).table[DispatchKey.CPU][0].fn is getattr(sorting, OUT_KERNELS[name])


def _x(L):
    """A transposed input of distinct values of both signs: torch's selections pick the index
    of a tied value by the order their quickselect leaves, which no rule gives (mode's ties are
    tested apart)."""
    return L.tensor([[3., 1., 2., 0.5], [0., -5., 4., 4.5], [2.5, 6., -1., 7.]]).t()


def _e(L, dtype=None):
    return L.empty(0, dtype=dtype or L.float32)


def _pair(L, *shape, dtype=None):
    return L.empty(*shape, dtype=dtype or L.float32), L.empty(*shape, dtype=L.long)


def assert_outs_match_torch(program, ulps=None):
    """``program(lib)``, an out= call with (values, indices) outs, gives torch's named pair (each
    with torch's values and layout), with the same warnings (a resized non-empty out warns)."""
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(program)
    assert type(ours).__name__ == type(theirs).__name__
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t, ulps=ulps)
    assert our_warnings == their_warnings


SELECTIONS = {
    "kthvalue": lambda L, x, *a, **k: L.kthvalue(x, 2 if x.dim() else 1, *a, **k),
    "median": lambda L, *a, **k: L.median(*a, **k),
    "nanmedian": lambda L, *a, **k: L.nanmedian(*a, **k),
    "mode": lambda L, *a, **k: L.mode(*a, **k),
}

SELECTION_OUT_CASES = {
    "into empty outs": lambda f, L: f(L, _x(L), 1, out=_pair(L, 0)),
    "keepdim": lambda f, L: f(L, _x(L), 0, True, out=_pair(L, 0)),
    "resized, warns": lambda f, L: f(L, _x(L), 1, out=_pair(L, 5)),
    "keepdim resized, warns": lambda f, L: f(L, _x(L), 1, True, out=_pair(L, 2, 2)),
    "outs of the right sizes keep their strides": lambda f, L: f(
        L, _x(L), 0, out=(L.empty(3, 2)[:, 0], L.empty(3, 2, dtype=L.long)[:, 1])),
    "a 0-dim input": lambda f, L: f(L, L.tensor(2.5), 0, out=_pair(L, 3)),
    "integers": lambda f, L: f(L, L.tensor([[4, 1, 6], [2, 3, 9]]), 1, out=_pair(L, 0, dtype=L.long)),
    "an empty input along another dim": lambda f, L: f(L, L.empty(0, 3), 1, out=_pair(L, 5)),
}


@pytest.mark.parametrize("case", SELECTION_OUT_CASES)
@pytest.mark.parametrize("op", SELECTIONS)
def test_selection_out_variant_matches_torch(op, case):
    assert_outs_match_torch(lambda L: SELECTION_OUT_CASES[case](SELECTIONS[op], L))


@pytest.mark.parametrize("op", SELECTIONS)
def test_selection_functional_forms_match_torch(op):
    """The functional kernel runs the out= kernel into fresh outputs: torch's layouts."""
    def forms(L):
        f, x = SELECTIONS[op], _x(L)
        return [*f(L, x, 0), *f(L, x, 1, True), *f(L, x.half(), -1), *f(L, L.tensor(3.), 0),
                *f(L, L.tensor([[1, 3, 0]]), 1)]
    for ours, theirs in zip(forms(internals), forms(torch), strict=True):
        assert_same(ours, theirs)


def test_mode_of_ties_matches_torch():
    """The most frequent value, the smallest among equally frequent ones, at its last index."""
    assert_outs_match_torch(lambda L: L.mode(L.tensor([[4, 1, 4, 1, 1], [2, 2, 9, 9, 0]]), 1,
                                             out=_pair(L, 0, dtype=L.long)))


SELECTION_ERRORS = {
    "values of another dtype": lambda f, L: f(L, _x(L), 1, out=(_e(L, L.float64), _e(L, L.long))),
    "indices not long": lambda f, L: f(L, _x(L), 1, out=(_e(L), _e(L, L.int32))),
    "both wrong: which is named first": lambda f, L: f(L, _x(L), 1, out=(_e(L, L.float64), _e(L, L.int32))),
    "an empty reduced dim": lambda f, L: f(L, L.empty(2, 0), 1, out=_pair(L, 0)),
    "dim out of range": lambda f, L: f(L, _x(L), 2, out=_pair(L, 0)),
    "an input that requires grad": lambda f, L: f(L, _x(L).requires_grad_(), 1, out=_pair(L, 0)),
    "an out that requires grad": lambda f, L: f(L, _x(L), 1, out=(_e(L).requires_grad_(), _e(L, L.long))),
    "bool": lambda f, L: f(L, L.tensor([[True, False]]), 1, out=_pair(L, 0, dtype=L.bool)),
    "complex": lambda f, L: f(L, L.ones(2, 2, dtype=L.complex64), 1, out=_pair(L, 0, dtype=L.complex64)),
}


@pytest.mark.parametrize("case", SELECTION_ERRORS)
@pytest.mark.parametrize("op", SELECTIONS)
def test_selection_errors_match_torch(op, case):
    """Each kernel checks in its own words and order (median names the indices first)."""
    program = SELECTION_ERRORS[case]
    if case in ("bool", "complex"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                program(SELECTIONS[op], torch)
            except Exception:
                return same_error(lambda L: program(SELECTIONS[op], L))
            return assert_outs_match_torch(lambda L: program(SELECTIONS[op], L))
    same_error(lambda L: program(SELECTIONS[op], L))


def test_kthvalue_out_of_range_is_refused_before_the_outputs():
    same_error(lambda L: L.kthvalue(_x(L), 9, 1, out=(_e(L, L.float64), _e(L, L.int32))))


# An out= that overlaps the input: kthvalue refuses any overlap before resizing; median reads
# its input (or a copy of it, when the dim is strided) after resizing, mode checks the resized
# outputs against it. Where torch runs, its values depend on the order its loop reads and writes
# the shared memory, so only the layouts are compared.
ALIASES = {"self": lambda x: x, "first row": lambda x: x[0], "tail": lambda x: x.view(-1)[1:4],
           "column": lambda x: x[:, 0]}


def _layouts(results):
    return [(str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), r.storage_offset()) for r in results]


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("shape", [(2, 3), (1, 3), (3, 1)])
@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("op", SELECTIONS)
def test_selection_into_its_own_input(op, alias, shape):
    def fn(L):
        x = L.arange(float(shape[0] * shape[1])).reshape(shape) % 3
        results = SELECTIONS[op](L, x, shape.index(3), out=(ALIASES[alias](x), L.empty(0, dtype=L.long)))
        return (*results, x)
    try:
        theirs = fn(torch)
    except (RuntimeError, IndexError):
        return same_error(fn)
    assert _layouts(fn(internals)) == _layouts(theirs)


@pytest.mark.parametrize("op", ["kthvalue", "median", "nanmedian", "mode"])
def test_selection_gradients_match_torch(op):
    def grads(L):
        x = _x(L).requires_grad_()
        values, indices = SELECTIONS[op](L, x, 1)
        values.backward(L.arange(1., 5.))
        return x.grad, indices, type(values.grad_fn).__name__
    (ours, our_indices, our_node), (theirs, their_indices, their_node) = grads(internals), grads(torch)
    assert_same(ours, theirs)
    assert_same(our_indices, their_indices)
    assert our_node == their_node


# ---------------------------------------------------------------------------------- the scans
SCANS = {"cummax": lambda L, *a, **k: L.cummax(*a, **k), "cummin": lambda L, *a, **k: L.cummin(*a, **k)}

SCAN_OUT_CASES = {
    "into empty outs": lambda f, L: f(L, _x(L), 1, out=_pair(L, 0)),
    "resized, warns": lambda f, L: f(L, _x(L), 0, out=_pair(L, 5)),
    "outs of the right sizes keep their strides": lambda f, L: f(
        L, _x(L), 1, out=(L.empty(3, 4).t(), L.empty(3, 4, dtype=L.long).t())),
    "a 0-dim input, resized": lambda f, L: f(L, L.tensor(2.), -1, out=_pair(L, 3)),
    "an empty input reads no dim": lambda f, L: f(L, L.empty(0, 3), 7, out=_pair(L, 5)),
    "bool": lambda f, L: f(L, L.tensor([False, True, False]), 0, out=_pair(L, 0, dtype=L.bool)),
    "float16": lambda f, L: f(L, _x(L).half(), 0, out=_pair(L, 0, dtype=L.float16)),
    "out is the input": lambda f, L: (lambda x: f(L, x, 1, out=(x, L.empty(0, dtype=L.long))))(_x(L).contiguous()),
}


@pytest.mark.parametrize("case", SCAN_OUT_CASES)
@pytest.mark.parametrize("op", SCANS)
def test_scan_out_variant_matches_torch(op, case):
    assert_outs_match_torch(lambda L: SCAN_OUT_CASES[case](SCANS[op], L))


SCAN_ERRORS = {
    "values of another dtype": lambda f, L: f(L, _x(L), 1, out=(_e(L, L.float64), _e(L, L.long))),
    "indices not long": lambda f, L: f(L, _x(L), 1, out=(_e(L), _e(L, L.int32))),
    "dim out of range": lambda f, L: f(L, _x(L), 2, out=_pair(L, 0)),
    "a 0-dim input's dim": lambda f, L: f(L, L.tensor(2.), 5, out=_pair(L, 0)),
    "a 0-dim input: the dtype first": lambda f, L: f(L, L.tensor(2.), 5, out=(_e(L, L.float64), _e(L, L.long))),
    "an input that requires grad": lambda f, L: f(L, _x(L).requires_grad_(), 1, out=_pair(L, 0)),
}


@pytest.mark.parametrize("case", SCAN_ERRORS)
@pytest.mark.parametrize("op", SCANS)
def test_scan_errors_match_torch(op, case):
    same_error(lambda L: SCAN_ERRORS[case](SCANS[op], L))


LOGCUMSUMEXP_OUT_CASES = {
    "into an empty out": lambda L: L.logcumsumexp(_x(L), 1, out=_e(L)),
    "resized, warns": lambda L: L.logcumsumexp(_x(L), 0, out=L.empty(5)),
    "an out of the right sizes keeps its strides": lambda L: L.logcumsumexp(_x(L), 1, out=L.empty(3, 4).t()),
    "out is the input": lambda L: (lambda x: L.logcumsumexp(x, 0, out=x))(_x(L).contiguous()),
    "a 0-dim input": lambda L: L.logcumsumexp(L.tensor(-1.5), 0, out=L.empty(2)),
    "float64": lambda L: L.logcumsumexp(_x(L).double(), 0, out=_e(L, L.float64)),
}


@pytest.mark.parametrize("case", LOGCUMSUMEXP_OUT_CASES)
def test_logcumsumexp_out_variant_matches_torch(case):
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(LOGCUMSUMEXP_OUT_CASES[case])
    assert_same(ours, theirs, ulps=LIBM_ULPS)       # log and exp: library math, as the CPU rounds it
    assert our_warnings == their_warnings


LOGCUMSUMEXP_ERRORS = {
    "out of another dtype": lambda L: L.logcumsumexp(_x(L), 1, out=_e(L, L.float64)),
    "integers": lambda L: L.logcumsumexp(L.tensor([1, 2]), 0, out=_e(L, L.long)),
    "integers into float: the dtype first": lambda L: L.logcumsumexp(L.tensor([1, 2]), 0, out=_e(L)),
    "partial overlap after the resize": lambda L: (lambda x: L.logcumsumexp(x, 1, out=x.view(-1)[1:]))(
        _x(L).contiguous()),
    "an input that requires grad": lambda L: L.logcumsumexp(_x(L).requires_grad_(), 1, out=_e(L)),
}


@pytest.mark.parametrize("case", LOGCUMSUMEXP_ERRORS)
def test_logcumsumexp_errors_match_torch(case):
    same_error(LOGCUMSUMEXP_ERRORS[case])


def test_scan_functional_forms_and_gradients_match_torch():
    def forms(L):
        x = _x(L).requires_grad_()
        values, indices = L.cummax(x, 0)
        low, low_at = x.cummin(1)
        logs = L.logcumsumexp(x, 1)
        (values.sum() + 2 * low.sum() + logs.sum()).backward()
        return [values, indices, low, low_at, logs, x.grad], [type(t.grad_fn).__name__ for t in (values, low, logs)]
    (ours, our_nodes), (theirs, their_nodes) = forms(internals), forms(torch)
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o.detach(), t.detach(), ulps=LIBM_ULPS)
    assert our_nodes == their_nodes


FAKE_PROGRAMS = {
    "kthvalue into resized outs": lambda L, x: L.kthvalue(x.t(), 1, 0, out=_pair(L, 5))[0],
    "mode, keepdim": lambda L, x: L.mode(x, 1, True)[1],
    "median": lambda L, x: L.median(x, 0)[0],
    "cummax into strided outs": lambda L, x: L.cummax(x, 1, out=(L.empty(3, 4).t(),
                                                                  L.empty(3, 4, dtype=L.long).t()))[0],
    "logcumsumexp": lambda L, x: L.logcumsumexp(x.t(), 1),
}


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])


# ---------------------------------------------------------------- topk, declared structured
def test_topk_is_derived_from_its_structured_out():
    """torch's declaration: ``topk.values`` structured (meta and impl steps), ``topk`` delegating."""
    assert ENTRIES["topk"]["structured_delegate"] == "topk.values" and ENTRIES["topk.values"]["structured"]
    out_kernel = dispatcher.find("topk.values").table[DispatchKey.CPU][0].fn
    assert dispatcher.find("topk").table[DispatchKey.CPU][0].fn.__wrapped__ is out_kernel.meta
    assert out_kernel.meta.__module__ == sorting.__name__ and out_kernel.impl.__name__ == "impl_topk"


def _topk_input(L):
    return L.tensor([[3.0, -1.0, 2.0, 7.0], [0.5, 5.0, -4.0, 4.0], [1.0, 8.0, 6.0, -2.0]])


TOPK_OUT_CASES = {
    "into empty outs": lambda L, x: L.topk(x, 2, out=(L.empty(0), L.empty(0, dtype=L.long))),
    "smallest along dim 0": lambda L, x: L.topk(x, 2, 0, largest=False, out=(L.empty(0), L.empty(0, dtype=L.long))),
    "resized, warns": lambda L, x: L.topk(x, 1, out=(L.empty(5), L.empty(5, dtype=L.long))),
    "keeps the outs' strides": lambda L, x: L.topk(x, 2, out=(L.empty(2, 3).t(), L.empty(2, 3, dtype=L.long).t())),
    "k of 0": lambda L, x: L.topk(x, 0, out=(L.empty(0), L.empty(0, dtype=L.long))),
    "a 0-dim input": lambda L, x: L.topk(x[0, 0], 1, out=(L.empty(3), L.empty(0, dtype=L.long))),
    "of a transposed input": lambda L, x: L.topk(x.t(), 3, 0, out=(L.empty(0), L.empty(0, dtype=L.long))),
}


@pytest.mark.parametrize("case", TOPK_OUT_CASES)
def test_topk_out_variant_matches_torch(case):
    """Values, indices (distinct values: no ties), layouts and the resize warning, as torch's."""
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(
        lambda L: TOPK_OUT_CASES[case](L, _topk_input(L)))
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t)
    assert our_warnings == their_warnings


TOPK_ERRORS = {
    "k too large": lambda L, x: L.topk(x, 5, out=(L.empty(0), L.empty(0, dtype=L.long))),
    "negative k": lambda L, x: x.topk(-1),
    "values of another dtype": lambda L, x: L.topk(x, 2, out=(L.empty(0, dtype=L.long), L.empty(0, dtype=L.long))),
    "indices of another dtype": lambda L, x: L.topk(x, 2, out=(L.empty(0), L.empty(0))),
    "values partly over the input": lambda L, x: (lambda v: L.topk(v[0:6], 6, out=(v[3:9], L.empty(0, dtype=L.long))))(
        x.reshape(-1)),
    "bool input": lambda L, x: L.topk(x > 0, 1, out=(L.empty(0, dtype=L.bool), L.empty(0, dtype=L.long))),
}


@pytest.mark.parametrize("case", TOPK_ERRORS)
def test_topk_errors_match_torch(case):
    same_error(lambda L: TOPK_ERRORS[case](L, _topk_input(L)))


def test_topk_meta_step_lays_out_fakes():
    assert_fake_matches_real(lambda L, x: L.topk(x, 2, 0, out=(L.empty(4, 2).t(), L.empty(0, dtype=L.long))),
                             lambda: (_topk_input(internals),))


# =============================================================================================
# quantile/nanquantile (every interpolation), nanmedian (all elements and along a dim) and
# unique_consecutive (with return_inverse, return_counts, dim): OpInfo samples (as given and
# non-contiguous), errors, grad_fn names and gradients, and the CUDA kernels.
#
# The values are compared bit for bit, but for quantile's interpolation: torch's lerp on the
# two neighbours fuses its multiply-add in the vectorized loop and not in the scalar one, so its
# last bit follows the CPU and the loop a row lands in (LERP_ULPS). Which index nanmedian returns
# among equal values, or in a row of NaN only, is an accident of std::nth_element
# (CONTRIBUTING.md: undefined); the cases below have one answer.
# =============================================================================================


QUANTILE_ADAPTERS = {
    "quantile": Adapter(fn("quantile"), "quantile", kwargs=("dim", "keepdim", "interpolation")),
    "nanquantile": Adapter(fn("nanquantile"), "nanquantile", kwargs=("dim", "keepdim", "interpolation")),
    "nanmedian": Adapter(fn("nanmedian"), "nanmedian", kwargs=("dim", "keepdim")),
    "unique_consecutive": Adapter(internals.unique_consecutive, "unique_consecutive",
                                  kwargs=("return_inverse", "return_counts", "dim")),
}
# cummax and cummin, whose out= kernels are compared above and their everyday calls below
CUM_ADAPTERS = {
    "cummax": Adapter(internals.cummax, "cummax", kwargs=("dim",)),
    "cummin": Adapter(internals.cummin, "cummin", kwargs=("dim",)),
}
ADAPTERS = {**QUANTILE_ADAPTERS, **CUM_ADAPTERS}
CASES = (opinfo_cases(QUANTILE_ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool, torch.float16))
         + opinfo_cases(CUM_ADAPTERS, TORCH_DTYPES))


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


LERP_ULPS = 4     # one rounding of the neighbours, counted in a result that can be smaller
ROWS = [[1.0, NAN, 3.0, 2.0], [4.0, 4.0, NAN, NAN], [5.0, 1.0, 2.0, 0.5]]
# inputs with many distinct values, made once by torch (both libraries read the same numbers)
WAVES = torch.arange(24.0).reshape(2, 3, 4).cos().tolist()
PROGRAMS = {
    **{f"quantile {mode}": lambda lib, mode=mode: lib.quantile(
        lib.tensor(ROWS).nan_to_num(), lib.tensor([0.0, 0.25, 0.5, 0.9, 1.0]), dim=1, keepdim=True,
        interpolation=mode) for mode in ("linear", "lower", "higher", "midpoint", "nearest")},
    **{f"nanquantile {mode}": lambda lib, mode=mode: lib.nanquantile(
        lib.tensor(ROWS), 0.4, dim=0, interpolation=mode) for mode in ("linear", "lower", "higher", "midpoint",
                                                                       "nearest")},
    "quantile of NaN is NaN": lambda lib: lib.quantile(lib.tensor(ROWS), 0.5, dim=1),
    "quantile over everything": lambda lib: lib.tensor(ROWS).nan_to_num().quantile(lib.tensor([0.1, 0.7])),
    "quantile keepdim over everything": lambda lib: lib.quantile(lib.tensor(ROWS).nan_to_num(), 0.3, keepdim=True),
    "quantile of a 3-d middle dim": lambda lib: lib.quantile(lib.tensor(WAVES),
                                                             lib.tensor([0.2, 0.6]), dim=1),
    "quantile of doubles": lambda lib: lib.quantile(lib.tensor(WAVES[1], dtype=lib.float64), 0.33),
    "quantile of a scalar": lambda lib: lib.quantile(lib.tensor(3.0), 0.5, dim=0),
    "nanquantile of NaN only": lambda lib: lib.nanquantile(lib.tensor([NAN, NAN]), 0.5),
    "quantile q out of range": lambda lib: lib.quantile(lib.ones(3), 1.5),
    "nanquantile q out of range": lambda lib: lib.nanquantile(lib.ones(3), -0.5),
    "quantile q tensor out of range": lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5, 1.5])),
    "quantile of integers": lambda lib: lib.quantile(lib.arange(3), 0.5),
    "quantile of half": lambda lib: lib.quantile(lib.ones(3, dtype=lib.float16), 0.5),
    "quantile interpolation": lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="cubic"),
    "quantile of nothing": lambda lib: lib.quantile(lib.ones(0), 0.5),
    "quantile q dtype": lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5], dtype=lib.float64)),
    "quantile q of 2 dims": lambda lib: lib.quantile(lib.ones(3), lib.ones(2, 2) * 0.5),
    "quantile dim": lambda lib: lib.quantile(lib.ones(3), 0.5, dim=2),
    "nanmedian": lambda lib: lib.nanmedian(lib.tensor(ROWS)),
    "nanmedian along a dim": lambda lib: lib.nanmedian(lib.tensor([[1.0, NAN, 3.0, 2.0], [5.0, 1.0, 2.0, 7.0]]), 1),
    "nanmedian keepdim": lambda lib: lib.tensor([[1.0, NAN], [NAN, NAN], [3.0, 2.0]]).nanmedian(0, keepdim=True),
    "nanmedian of integers": lambda lib: lib.nanmedian(lib.tensor([3, 1, 2, 4])),
    "nanmedian of NaN only": lambda lib: lib.nanmedian(lib.tensor([NAN, NAN, NAN])),
    "nanmedian of nothing": lambda lib: lib.nanmedian(lib.ones(0)),
    "nanmedian of an empty dim": lambda lib: lib.nanmedian(lib.ones(2, 0), 1),
    "nanmedian of bools": lambda lib: lib.nanmedian(lib.ones(2, dtype=lib.bool)),
    "nanmedian of bools along a dim": lambda lib: lib.nanmedian(lib.ones(2, dtype=lib.bool), 0),
    "nanmedian of a scalar": lambda lib: lib.nanmedian(lib.tensor(2.5), 0),
    "unique_consecutive": lambda lib: lib.unique_consecutive(lib.tensor([1, 1, 2, 2, 3, 1, 1, 2])),
    "unique_consecutive with all": lambda lib: lib.unique_consecutive(
        lib.tensor([[1, 1, 2], [2, 3, 3]]), return_inverse=True, return_counts=True),
    "unique_consecutive counts": lambda lib: lib.tensor([True, True, False, True]).unique_consecutive(
        return_counts=True),
    "unique_consecutive keeps NaN apart": lambda lib: lib.unique_consecutive(lib.tensor([NAN, NAN, 1.0, 1.0]),
                                                                             return_inverse=True),
    "unique_consecutive along dim 0": lambda lib: lib.unique_consecutive(
        lib.tensor([[1, 1], [1, 1], [2, 3], [1, 1]]), return_inverse=True, return_counts=True, dim=0),
    "unique_consecutive along dim 1": lambda lib: lib.unique_consecutive(
        lib.tensor([[1, 1, 2, 2], [3, 3, 4, 5]]), return_counts=True, dim=1),
    "unique_consecutive of a scalar": lambda lib: lib.unique_consecutive(lib.tensor(3.0), return_inverse=True,
                                                                         return_counts=True),
    "unique_consecutive of a scalar along dim 0": lambda lib: lib.unique_consecutive(lib.tensor(3.0), dim=0),
    "unique_consecutive dim": lambda lib: lib.unique_consecutive(lib.ones(3), dim=2),
    "unique_consecutive of nothing": lambda lib: lib.unique_consecutive(lib.ones(0), return_inverse=True,
                                                                        return_counts=True),
    "unique_consecutive of no slices": lambda lib: lib.unique_consecutive(lib.ones(0, 2), return_inverse=True,
                                                                          return_counts=True, dim=0),
    "unique_consecutive of empty slices": lambda lib: lib.unique_consecutive(lib.ones(2, 0), dim=0),
}


def _outcome(lib, program):
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 -- the class and message are what is compared
        return "error", type(exc).__name__, str(exc)
    return tuple(result) if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_everyday_calls_and_errors(name):
    """Values, dtypes, sizes and strides bit for bit, or torch's exception class and message."""
    ours, theirs = _outcome(internals, PROGRAMS[name]), _outcome(torch, PROGRAMS[name])
    if theirs[0] == "error":
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    interpolated = "quantile" in name and not any(mode in name for mode in ("lower", "higher", "nearest"))
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t, ulps=LERP_ULPS) if interpolated else assert_same(o, t, rtol=0, atol=0)


GRAD_CASES = {
    "nanmedian": lambda lib, x, t: lib.where(x > 2, lib.tensor(NAN, dtype=lib.float64), x * t).nanmedian(),
    "nanmedian of ties": lambda lib, x, t: (x * 0 + t).nanmedian(),
    "nanmedian along a dim": lambda lib, x, t: lib.where(x > 2, lib.tensor(NAN, dtype=lib.float64),
                                                         x * t).nanmedian(1).values,
    "quantile linear": lambda lib, x, t: lib.quantile(x * t, lib.tensor([0.2, 0.5], dtype=lib.float64), dim=1),
    "quantile midpoint": lambda lib, x, t: lib.quantile(x * t, 0.5, dim=0, interpolation="midpoint"),
    "quantile nearest": lambda lib, x, t: lib.quantile(x * t, 0.7, interpolation="nearest"),
    "nanquantile": lambda lib, x, t: lib.nanquantile(lib.where(x > 2, lib.tensor(NAN, dtype=lib.float64), x * t),
                                                     0.3, dim=1, keepdim=True),
    "vdot": lambda lib, x, t: lib.vdot((x * t).reshape(-1), x.reshape(-1)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


def test_unique_consecutive_has_no_derivative():
    for lib in (torch, internals):
        x = lib.tensor([1.0, 1.0, 2.0], requires_grad=True)
        out = lib.unique_consecutive(x)
        assert type(out.grad_fn).__name__ == "UniqueConsecutiveBackward0"
        with pytest.raises(NotImplementedError, match="the derivative for 'unique_consecutive' is not implemented"):
            out.sum().backward()


CUDA_PROGRAMS = {
    "nanmedian": lambda lib, d: lib.nanmedian(lib.tensor([[1.0, NAN, 3.0], [2.0, 5.0, 4.0]], device=d), 1),
    "quantile": lambda lib, d: (lib.quantile(lib.tensor(WAVES[0], device=d), 0.4, dim=1),),
    "unique_consecutive": lambda lib, d: lib.unique_consecutive(lib.tensor([1, 1, 2, 1], device=d),
                                                                return_inverse=True, return_counts=True),
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels(name):
    """The CUDA path (simulated here) gives torch's CPU answer."""
    ours, theirs = CUDA_PROGRAMS[name](internals, "cuda"), CUDA_PROGRAMS[name](torch, "cpu")
    for o, t in zip(ours, theirs, strict=True):
        assert o.device.type == "cuda"
        assert_same(o.cpu(), t, ulps=LERP_ULPS)


def _same(program, **env):
    assert _run(internals, program, **env) == _run(torch, program, **env)


# ---------------------------------------------------------------------------------- cummax / cummin
CUM_ROWS = "lib.tensor([[1., 3., 2., 3., NAN, 5.], [0., -1., 2., 2., 1., 7.]])"
CUMMAXMIN = [
    f"lib.cummax({CUM_ROWS}, 1)", f"lib.cummin({CUM_ROWS}, 1)", f"lib.cummin({CUM_ROWS}, 0)", f"{CUM_ROWS}.cummax(-1)",
    "lib.tensor([3, 1, 1, 2]).cummin(0)", "lib.cummax(lib.tensor(2.), 0)", "lib.cummax(lib.tensor([True, False]), 0)",
    "lib.cummax(lib.arange(12.).reshape(3, 4).t() % 5, 1)", "lib.cummax(lib.ones(2, 0), 1)",
    "lib.cummax(lib.ones(2, 3), 2)", "lib.cummin(lib.tensor([2., -0., 0.]), 0)",
    "lib.cummax(lib.tensor([1., 2., 0.5], dtype=lib.float16), 0)",
]


@pytest.mark.parametrize("program", CUMMAXMIN)
def test_cummax_cummin(program):
    _same(program)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_backward(name):
    grads = []
    for lib in (internals, torch):
        x = lib.tensor([[1.0, 3.0, 2.0, 3.0], [4.0, -1.0, 5.0, 0.0]], requires_grad=True)
        values, _ = getattr(lib, name)(x, 1)
        assert type(values.grad_fn).__name__ == f"{name.capitalize()}Backward0"
        (values * lib.arange(4.0)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
    x = internals.tensor([[0.3, 1.2, -0.5], [2.0, 0.1, 0.7]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(lambda t: getattr(internals, name)(t, 1).values, (x,))


def test_cummax_on_cuda():
    x = torch.tensor([[1.0, 3.0, NAN, 3.0], [4.0, -1.0, 5.0, 5.0]])
    for name in ("cummax", "cummin"):
        ours, theirs = getattr(internals, name)(internals.from_torch(x).cuda(), 1), getattr(torch, name)(x, 1)
        assert_same(ours.values.cpu(), theirs.values)
        assert_same(ours.indices.cpu(), theirs.indices)
