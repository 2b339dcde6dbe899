"""``copy_`` between every pair of dtypes, bit for bit with torch (``aten/native/copy.py``,
``cpu/loops.py``'s ``copy_loop``).

A cast on the calling thread (one grain or less) is NumPy's ``copyto`` over views of the two
buffers; past a grain it is the compiled parallel loop; a float to an integer always takes the
compiled loop. Each road is checked here against torch, in every layout the iterator hands a loop
(contiguous, transposed, a broadcast source of stride 0, a view at an offset), with the values a
conversion can get wrong: ties and fractions, every integer type's edges (wrapping when narrowed),
float64 values past float32's range, subnormals, signed zeros, infinities and NaN. A float goes to
an integer only from inside that integer's range: outside it C defines no result
(CONTRIBUTING.md, "Undefined").
"""
import math
import warnings

import pytest
import torch
from helpers import TO_INTERNALS, assert_same

import internals
from internals.aten.native import scalar_ops as ops
from internals.aten.native.cpu import loops
from internals.aten.native.cpu.parallel_for import GRAIN

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]
TO_INTERNALS = {**TO_INTERNALS, torch.complex64: internals.complex64, torch.complex128: internals.complex128}

INTEGERS = [0, 1, -1, 2, 127, -128, 128, 255, 256, -129, 32767, -32768, 65535, 2**31 - 1, -2**31, 2**32 - 1,
            2**53 + 1, 2**62 + 2**40 + 1, 2**63 - 1, -2**63, 16777217, 33554435]
FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -1.7, 2.5, 127.9, -128.9, 255.5, 32767.5, 1e-40, -1e-45, 5e-324, 16777217.0,
          2.0**53 + 2, 65504.0, 65520.0, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-8, 3.4e38, 3.5e38, 1e300, -1e300,
          math.inf, -math.inf, math.nan]


def _values(src, dst):
    """Values of ``src`` that ``dst`` has a defined conversion for, as a 1-d torch tensor."""
    if src is torch.bool:
        return torch.tensor([True, False, True, True, False])
    if not (src.is_floating_point or src.is_complex):
        info = torch.iinfo(src)
        return torch.tensor([v for v in INTEGERS if info.min <= v <= info.max], dtype=src)
    values = torch.tensor(FLOATS, dtype=torch.float64)
    if dst.is_complex or dst.is_floating_point or dst is torch.bool:
        if src.is_complex:
            return torch.complex(values, values.flip(0)).to(src)
        return values.to(src)
    # into an integer: only values whose truncation lies inside its range (Python compares an int
    # and a float exactly)
    real = {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(src, src)
    info = torch.iinfo(dst)
    inside = torch.tensor([v for v in values.to(real).tolist() if math.isfinite(v) and info.min - 1 < v < info.max + 1],
                          dtype=real)
    return torch.complex(inside, -inside) if src.is_complex else inside


LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.repeat(3).reshape(3, -1).t(),
    "broadcast": lambda t: t[:1].expand(4, len(t)),
    "offset": lambda t: t.repeat(2)[len(t) + 1:],
}


def _copy_both(theirs, dst):
    """``empty_like(x, dtype=dst).copy_(x)`` in both libraries (the output keeps x's strides)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # complex into a real dtype warns: tested elsewhere
        expected = torch.empty_like(theirs, dtype=dst).copy_(theirs)
        ours = internals.from_torch(theirs)
        got = internals.empty_like(ours, dtype=TO_INTERNALS[dst]).copy_(ours)
    return got, expected


def _same_bits(got, expected, src):
    """Dtype, sizes and strides, and every byte. A NaN's pattern is compared only where neither
    side is a 16-bit float: torch's own pattern there follows its code path (its vectorised
    float -> bfloat16 gives 0xFFFF, the scalar one 0x7FC0), so there only "is NaN" is."""
    assert_same(got, expected, rtol=0, atol=0)
    ours, theirs = got.to_torch().contiguous(), expected.contiguous()
    if {src, theirs.dtype} & {torch.float16, torch.bfloat16} and (theirs.is_floating_point() or theirs.is_complex()):
        ours, theirs = torch.view_as_real(ours) if ours.is_complex() else ours, \
            torch.view_as_real(theirs) if theirs.is_complex() else theirs
        nan = theirs.isnan()
        assert torch.equal(ours.isnan(), nan)
        ours, theirs = ours[~nan], theirs[~nan]
    assert torch.equal(ours.view(torch.uint8), theirs.view(torch.uint8))


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dst", DTYPES, ids=str)
@pytest.mark.parametrize("src", DTYPES, ids=str)
def test_small_casts_match_torch_bit_for_bit(src, dst, layout):
    got, expected = _copy_both(LAYOUTS[layout](_values(src, dst)), dst)
    _same_bits(got, expected, src)


@pytest.mark.parametrize("src, dst", [(torch.int64, torch.float32), (torch.float64, torch.float32),
                                      (torch.float32, torch.int16), (torch.int32, torch.bool)], ids=str)
def test_casts_past_a_grain_take_the_parallel_loop_with_the_same_bits(src, dst):
    values = _values(src, dst)
    theirs = values.repeat(2 * (GRAIN // len(values) + 2)).reshape(2, -1).t()      # strided, over a grain
    got, expected = _copy_both(theirs, dst)
    _same_bits(got, expected, src)


def test_a_cast_on_the_calling_thread_compiles_no_loop():
    """Below a grain only a float to an integer reaches the identity loop's one-thread build."""
    serial = loops._loops["unary", ops.IDENTITY].serial
    before = len(serial.signatures)
    for src, dst in [(torch.int16, torch.float64), (torch.float64, torch.complex64), (torch.uint8, torch.bool),
                     (torch.float32, torch.bfloat16)]:
        _same_bits(*_copy_both(_values(src, dst).reshape(-1, 1).expand(-1, 3), dst), src)
    assert len(serial.signatures) == before
