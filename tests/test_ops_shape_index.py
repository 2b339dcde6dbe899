"""Differential tests of the joining, indexing and creation operators (issue 16a) against torch:
PyTorch's OpInfo samples (values, dtypes, shapes, strides, errors), then gradients, torch's
errors and bounds checks, and the Python protocol (``__format__``, return types, ``__array__``).

The OpInfo runner is the one of ``test_ops.py`` (same comparison, same non-contiguous pass),
over this file's own table; its index arguments may also hold slices and ``...``.
"""
import numpy as np
import pytest
import torch

import internals
from conftest import TO_INTERNALS, assert_same, assert_same_error
from test_ops import (TORCH_DTYPES, Adapter, Unsupported, _noncontiguous, _opinfo_name, compare_call, fn, meth,
                      opinfo_samples, to_ours)
from torch.testing._internal.common_methods_invocations import op_db

ADAPTERS = {
    # joining and splitting
    "cat": Adapter(fn("cat"), kwargs=("dim",)),
    "stack": Adapter(fn("stack"), kwargs=("dim",)),
    "hstack": Adapter(fn("hstack")),
    "vstack": Adapter(fn("vstack")),
    "unbind": Adapter(fn("unbind"), "unbind"),
    "flip": Adapter(fn("flip"), "flip", kwargs=("dims",)),
    "roll": Adapter(fn("roll"), "roll"),
    "repeat": Adapter(meth("repeat"), "repeat"),
    "tile": Adapter(fn("tile"), "tile"),
    "repeat_interleave": Adapter(fn("repeat_interleave"), "repeat_interleave", kwargs=("repeats", "dim", "output_size")),
    "tril": Adapter(fn("tril"), "tril"),
    "triu": Adapter(fn("triu"), "triu"),
    "diag": Adapter(fn("diag"), "diag"),
    "diag_embed": Adapter(fn("diag_embed"), "diag_embed", kwargs=("offset", "dim1", "dim2")),
    "atleast_1d": Adapter(fn("atleast_1d")),
    "atleast_2d": Adapter(fn("atleast_2d")),
    # indexing
    "__getitem__": Adapter(lambda x, index: x[index]),
    "index_put": Adapter(fn("index_put"), "index_put", kwargs=("accumulate",)),
    "index_select": Adapter(fn("index_select"), "index_select"),
    "gather": Adapter(fn("gather"), "gather", kwargs=("sparse_grad",)),
    # the samples with reduce="add"/"multiply" (scatter.reduce) are skipped: no such overload here
    "scatter": Adapter(fn("scatter"), "scatter", min_ran=0.3),
    "scatter_add": Adapter(fn("scatter_add"), "scatter_add"),
    "masked_fill": Adapter(fn("masked_fill"), "masked_fill"),
    "masked_select": Adapter(fn("masked_select"), "masked_select"),
    "nonzero": Adapter(fn("nonzero"), kwargs=("as_tuple",)),
    "argwhere": Adapter(fn("argwhere"), "argwhere"),
    "take": Adapter(fn("take"), "take"),
    # creation
    "new_zeros": Adapter(meth("new_zeros"), "new_zeros", kwargs=("dtype", "device", "requires_grad")),
    "new_ones": Adapter(meth("new_ones"), "new_ones", kwargs=("dtype", "device", "requires_grad")),
    "new_full": Adapter(meth("new_full"), "new_full", kwargs=("dtype", "device", "requires_grad")),
    "full_like": Adapter(fn("full_like"), kwargs=("dtype", "device")),
}
OPINFOS = {_opinfo_name(op): op for op in op_db if _opinfo_name(op) in ADAPTERS}
assert set(OPINFOS) == set(ADAPTERS), f"not in op_db: {set(ADAPTERS) - set(OPINFOS)}"


def convert(value):
    """``to_ours``, letting the slices and ``...`` of an index through."""
    if isinstance(value, slice) or value is Ellipsis:
        return value
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        converted = [convert(v) for v in value]
        return converted if isinstance(value, list) else tuple(converted)
    return to_ours(value)


def run_samples(name, dtype):
    """Every OpInfo sample of ``name`` at ``dtype``, as given and non-contiguous: (ran, skipped)."""
    op, adapter = OPINFOS[name], ADAPTERS[name]
    ran, skipped, reasons = 0, 0, set()
    for sample in opinfo_samples(op, dtype):
        for layout in ("as given", "non-contiguous"):
            x, args, kwargs = sample.input, sample.args, sample.kwargs
            if layout == "non-contiguous":
                x, args, kwargs = _noncontiguous(x), _noncontiguous(args), {k: _noncontiguous(v) for k, v in kwargs.items()}
            try:
                extra = set(kwargs) - set(adapter.kwargs)
                if extra:
                    raise Unsupported(f"keyword {sorted(extra)}")
                ours = (convert(x), convert(tuple(args)), {k: convert(v) for k, v in kwargs.items()})
            except Unsupported as why:
                skipped += 1
                reasons.add(str(why))
                continue
            where = f"{name} {dtype} {layout}: input {getattr(x, 'shape', x)!r}, args {args!r}, kwargs {kwargs!r}"
            try:
                compare_call(adapter.ours, op.op, (x, args, kwargs), ours, adapter.tol)
                if adapter.method and op.method_variant is not None:
                    compare_call(meth(adapter.method), op.method_variant, (x, args, kwargs), ours, adapter.tol)
            except AssertionError as e:
                raise AssertionError(f"{where}\n{e}") from e
            ran += 1
    return ran, skipped, reasons


CASES = [pytest.param(name, dtype, id=f"{name}-{str(dtype)[6:]}") for name in ADAPTERS
         for dtype in TORCH_DTYPES if dtype in OPINFOS[name].supported_dtypes("cpu")]


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    ran, skipped, reasons = run_samples(name, dtype)
    assert ran > 0 and ran >= ADAPTERS[name].min_ran * (ran + skipped), (
        f"{name} {dtype}: only {ran} of {ran + skipped} samples ran; skipped for {sorted(reasons)}")
