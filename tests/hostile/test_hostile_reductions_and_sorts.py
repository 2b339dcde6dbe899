"""Reductions, scans and sorts at their edges.

Each case differed from torch 2.13 before it was fixed."""
import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, same_error, same_or_same_error

import internals


@pytest.mark.parametrize("shape", [(3, 0), (2, 0, 4), (0, 0)])
def test_kthvalue_over_an_empty_dim(shape):
    same_error(lambda L: L.zeros(shape).kthvalue(1, 1))


def same(fn, **kw):
    assert_same(fn(internals), fn(torch), **kw)


# ----------------------------------------------------------------------------- 16-bit cumsum
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_accumulate_in_torchs_cpu_acc_type(dtype, op):
    """``cpu_cum_base_kernel`` accumulates a 16-bit float in float (rounded at each step) and a
    float32 in double: a float16 cumsum of 20000 values differed in 9 places (double sums)."""
    a = np.random.default_rng(0).standard_normal(20000).astype(np.float32)
    if op == "cumprod":
        a = 1 + a / 1000

    def run(L):
        return getattr(L.tensor(a).to(getattr(L, dtype)), op)(0)
    same(run)


def test_topk_refuses_bool():
    same_error(lambda L: L.tensor([True, False]).topk(1))


def test_multinomial_without_replacement_reads_bfloat16():
    """The zero-sum check read a bfloat16 sum through NumPy, which has no bfloat16 (TypeError)."""
    p = internals.tensor([0.2, 0.3, 0.5]).to(internals.bfloat16)
    internals.manual_seed(0)
    picked = internals.multinomial(p, 2)
    assert picked.shape == (2,) and len(set(picked.tolist())) == 2
    same_error(lambda L: L.multinomial(L.tensor([[0.0, 0.0], [1.0, 0.0]]).to(L.bfloat16), 1))


# ----------------------------------------------------------------------------- complex tensors
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [None, "complex128"])
def test_scans_of_complex_tensors_stay_complex(op, dtype):
    """The silent one: a complex cumsum came back as int64 (the scan treated every dtype that
    is not a float as an integer)."""
    same_or_same_error(lambda L: getattr(L.tensor([[1 + 2j, 0.5j], [-1j, 3]]), op)(
        0, dtype=getattr(L, dtype) if dtype else None))


def test_logsumexp_of_a_complex_tensor_is_refused_not_made_real():
    """The silent one: the imaginary parts were dropped. torch computes a complex result; the
    package says it has no complex kernel."""
    with pytest.raises(NotImplementedError, match="logsumexp is not implemented for complex tensors"):
        internals.tensor([1 + 2j]).logsumexp(0)
    assert torch.tensor([1 + 2j]).logsumexp(0).is_complex()


# ----------------------------------------------------------------------------- var and std
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("values", [[65504., -0.5, 1e-4], [300., -300., 1000.], [1.]])
@pytest.mark.parametrize("op", [
    lambda L, x: x.std(), lambda L, x: x.var(), lambda L, x: x.std(0, keepdim=True),
    lambda L, x: x.var(correction=0), lambda L, x: L.std_mean(x), lambda L, x: L.var_mean(x, 0)])
def test_var_and_std_of_16_bit_and_complex_tensors(dtype, values, op):
    """float16 std took the root of a variance already rounded to float16 (inf for a variance
    past 65504, where torch gives 37824); a complex tensor was refused with a message naming
    complex dtypes as supported (torch: the real-valued variance of both parts)."""
    def run(L):
        x = L.tensor(values, dtype=getattr(L, dtype)) * (1 + 2j if "complex" in dtype else 1)
        return op(L, x)
    same_or_same_error(run)


@pytest.mark.parametrize("out", [
    lambda L, x: x.t(), lambda L, x: L.empty(1, 2).expand(2, 2), lambda L, x: L.arange(8.)[1:5].view(2, 2),
    lambda L, x: x[0], lambda L, x: L.empty(1).expand(2), lambda L, x: L.empty(0)])
@pytest.mark.parametrize("op", [
    lambda L, x, o: L.cumsum(x, 0, out=o), lambda L, x, o: L.sort(x, 0, out=(o, L.empty(0, dtype=L.int64))),
    lambda L, x, o: L.topk(x, 1, 0, out=(o, L.empty(0, dtype=L.int64))),
    lambda L, x, o: L.max(x, 0, out=(o, L.empty(0, dtype=L.int64)))])
def test_scans_and_sorts_check_their_resized_out_for_overlap(out, op):
    """``cumsum(x, 0, out=x.t())`` and an expanded ``out`` are refused by torch's kernels once
    ``out`` has its size; internals wrote them."""
    def run(L):
        x = L.arange(4.).view(2, 2)
        r = op(L, x, out(L, x))
        return (*r, x) if isinstance(r, tuple) else (r, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the resize warning
        same_or_same_error(run)


# ----------------------------------------------------------------------------- reductions into their input
OUT_VIEWS = {"self": lambda x: x, "row": lambda x: x[0], "col": lambda x: x[:, 0], "head": lambda x: x.view(-1)[:4],
             "t": lambda x: x.t(), "tail": lambda x: x.view(-1)[2:6]}


REDUCTIONS = {"sum": lambda L, x, o: L.sum(x, 0, out=o), "nansum": lambda L, x, o: L.nansum(x, 0, out=o),
              "mean": lambda L, x, o: L.mean(x, 0, out=o), "prod": lambda L, x, o: L.prod(x, 0, out=o),
              "amax": lambda L, x, o: L.amax(x, 0, out=o), "amin": lambda L, x, o: L.amin(x, 0, out=o),
              "max": lambda L, x, o: L.max(x, 0, out=(o, L.empty(0, dtype=L.long))),
              "min": lambda L, x, o: L.min(x, 0, out=(o, L.empty(0, dtype=L.long))),
              "cumsum": lambda L, x, o: L.cumsum(x, 0, out=o)}


OUT_CASES = [(op, view, shape) for op in REDUCTIONS for view in OUT_VIEWS for shape in [(4, 4), (1, 4), (4, 1)]]


def _layouts(results):
    return [(str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), r.storage_offset()) for r in results]


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("op, view, shape", OUT_CASES)
def test_a_reduction_into_its_own_input_runs_as_torchs_kernels_do(op, view, shape):
    """torch does not refuse ``sum(x, 0, out=x[0])``: ``out`` is resized (resizing ``x`` too when
    it *is* ``x``) and the kernel reads the input part-way written, in an order that follows its
    vector width: the values are undefined and not compared. max and min refuse a partial
    overlap of ``out`` with its reduced dim put back; the rest runs, with torch's layouts."""
    def fn(L):
        x = L.arange(float(shape[0] * shape[1])).reshape(shape) + 1
        result = REDUCTIONS[op](L, x, OUT_VIEWS[view](x))
        return (*(result if isinstance(result, tuple) else (result,)), x)
    try:
        theirs = fn(torch)
    except RuntimeError:
        return same_error(fn)
    assert _layouts(fn(internals)) == _layouts(theirs)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("kwargs", [{}, {"sorted": False}, {"return_inverse": True}, {"return_counts": True},
                                    {"dim": 0}, {"dim": 0, "return_counts": True}])
@pytest.mark.parametrize("size", [3, 0])
def test_unique_refuses_complex(dtype, kwargs, size):
    same_error(lambda L: L.unique(L.ones(size, dtype=getattr(L, dtype)), **kwargs))
    same_error(lambda L: L.ones(size, dtype=getattr(L, dtype)).unique(**kwargs))
