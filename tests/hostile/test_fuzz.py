"""Fuzzing against torch: random views, as_strided geometries, basic indices and dtype arguments.

Every case either gives torch's result (values, sizes, strides, storage offset, dtype) or raises
torch's exception class. Part of the cases run again in a subprocess under ``NUMBA_BOUNDSCHECK=1``
(Numba then checks every index a kernel uses; the kernel cache directory is keyed by that setting,
so the subprocess compiles and keeps bounds-checked kernels of its own): a kernel that reads or
writes outside its buffer fails there with an IndexError instead of passing by luck.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as hst

import internals

STORAGE = 24        # elements of the storage every as_strided case views
UNDER_BOUNDSCHECK = os.environ.get("NUMBA_BOUNDSCHECK") == "1"


def same_outcome(ours_fn, theirs_fn):
    """Both raise the same exception class, or both return tensors torch and we agree on."""
    try:
        theirs = theirs_fn()
    except Exception as e:      # noqa: BLE001 - the class is what is compared
        with pytest.raises(type(e)):
            ours_fn()
        return None
    ours = ours_fn()
    if theirs is None:              # a setitem: what it wrote is compared afterwards
        assert ours is None
        return None
    assert_same(ours, theirs)
    return ours, theirs


# ----------------------------------------------------------------------------- as_strided
geometry = hst.integers(1, 3).flatmap(lambda n: hst.tuples(
    hst.lists(hst.integers(0, 5), min_size=n, max_size=n),   # (torch accepts size -1 beside a 0: a quirk)
    hst.lists(hst.integers(-1, 9), min_size=n, max_size=n),
    hst.integers(-1, STORAGE)))


@settings(max_examples=60)
@given(geometry)
def test_as_strided_then_ops(case):
    """A view anywhere in (or past) a 24-element storage: refused as torch refuses it, or the same
    view; then an elementwise op, a reduction and an in-place write (overlap errors included)."""
    size, stride, offset = case
    base, tbase = internals.arange(float(STORAGE)), torch.arange(float(STORAGE))
    views = same_outcome(lambda: base.as_strided(size, stride, offset), lambda: tbase.as_strided(size, stride, offset))
    if views is None:
        return
    x, tx = views
    same_outcome(lambda: x * 2 + 1, lambda: tx * 2 + 1)
    same_outcome(lambda: x.sum(-1), lambda: tx.sum(-1))
    same_outcome(lambda: x.add_(1), lambda: tx.add_(1))
    assert_same(base, tbase)


# ----------------------------------------------------------------------------- basic indexing
index_item = hst.one_of(
    hst.integers(-5, 5),
    hst.builds(slice, hst.none() | hst.integers(-6, 6), hst.none() | hst.integers(-6, 6),
               hst.none() | hst.integers(-2, 3)),
    hst.none(), hst.just(Ellipsis))


@settings(max_examples=80)
@given(hst.lists(hst.integers(0, 4), min_size=0, max_size=3), hst.lists(index_item, max_size=4))
def test_basic_indexing_reads_and_writes(shape, index):
    """x[index] and x[index] = value: the same view (or error class), and the same elements written."""
    index = tuple(index)
    if index.count(Ellipsis) > 1:       # torch accepts several on a 0-dim tensor only (its scalar fast path)
        return
    n = int(np.prod(shape)) if shape else 1
    x, tx = internals.arange(float(n)).reshape(shape), torch.arange(float(n)).reshape(shape)
    if same_outcome(lambda: x[index], lambda: tx[index]) is None:
        return
    same_outcome(lambda: x.__setitem__(index, -1.0), lambda: tx.__setitem__(index, -1.0))
    assert_same(x, tx)


# ----------------------------------------------------------------------------- dtype arguments
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
numbers = hst.one_of(hst.booleans(), hst.integers(-2**64, 2**64),
                     hst.sampled_from([0.5, -1.5, 1e20, -1e20, float("nan"), float("inf"), 255.0, 256.0, -129.0]))


@settings(max_examples=80)
@given(hst.sampled_from(DTYPES), hst.lists(numbers, min_size=1, max_size=3), hst.sampled_from(["tensor", "full",
                                                                                                "setitem", "fill_"]))
def test_numbers_meet_dtypes(dtype, values, how):
    """A Python number into a tensor of a dtype: overflow refused as torch refuses it, else the
    same value (torch.tensor, torch.full, setitem and fill_ each have their own rules)."""
    def make(T):
        d = getattr(T, dtype)
        if how == "tensor":
            return T.tensor(values, dtype=d)
        if how == "full":
            return T.full((2,), values[0], dtype=d)
        x = T.zeros(2, dtype=d)
        if how == "setitem":
            x[0] = values[0]
        else:
            x.fill_(values[0])
        return x

    same_outcome(lambda: make(internals), lambda: make(torch))


# ----------------------------------------------------------------------------- again, bounds-checked
@pytest.mark.slow
@pytest.mark.skipif(UNDER_BOUNDSCHECK, reason="already running under NUMBA_BOUNDSCHECK=1")
def test_fuzz_cases_pass_with_numbas_bounds_checks():
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTEST_XDIST_WORKER")}
    env.update(NUMBA_BOUNDSCHECK="1", HYPOTHESIS_PROFILE="course")
    here = Path(__file__).parent
    # no nbval either: its plugin would import nbformat into the child for no test of it
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                             "-p", "no:nbval", "-k", "as_strided or basic_indexing", str(here / "test_fuzz.py")],
                            env=env, cwd=Path(__file__).parents[2], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
