"""complex32 (``torch.chalf``, ScalarType ComplexHalf) against torch: the dtype, its promotion,
and its tensors.

torch calls complex32 support experimental: it warns once when one is made, and its CPU kernels
cover making, casting, filling, copying, viewing, indexing, printing, saving and comparing such
tensors, and a little arithmetic (add, sub, mul, neg, abs, sgn, addcmul, index_add), while the
rest raises "not implemented for 'ComplexHalf'". internals moves complex32 words as they are
and computes that arithmetic in complex64, rounding each part to float16 as torch's
complex<float> opmath does; a kernel torch lacks for it is refused by the kernel's name.
"""
import io
import math
import pickle
import subprocess
import sys
import warnings

import pytest
import torch
from helpers import DTYPE_PAIRS, assert_same, assert_same_error

import internals

PAIRS = DTYPE_PAIRS + [(internals.complex64, torch.complex64), (internals.complex128, torch.complex128),
                       (internals.complex32, torch.complex32)]
TO_INTERNALS = {theirs: ours for ours, theirs in PAIRS}


def test_the_dtype_object():
    ours, theirs = internals.complex32, torch.complex32
    assert internals.chalf is ours and torch.chalf is theirs
    assert (ours.itemsize, ours.is_complex, ours.is_floating_point, ours.is_signed) == (
        theirs.itemsize, theirs.is_complex, theirs.is_floating_point, theirs.is_signed)
    assert ours.to_real() is internals.float16 and theirs.to_real() is torch.float16
    assert internals.float16.to_complex() is ours and torch.float16.to_complex() is theirs
    assert ours.to_complex() is ours and theirs.to_complex() is theirs
    assert repr(ours).replace("internals.", "torch.") == repr(theirs) == "torch.complex32"
    assert pickle.loads(pickle.dumps(ours)) is ours


@pytest.mark.parametrize("a", [theirs for _, theirs in PAIRS], ids=str)
def test_promote_types_with_complex32(a):
    """complex32 with every dtype, both ways: a float16 or narrower part stays complex32, a wider
    one (float32, bfloat16's meeting with float16 in float32, float64) widens the parts."""
    for x, y in ((a, torch.complex32), (torch.complex32, a)):
        assert internals.promote_types(TO_INTERNALS[x], TO_INTERNALS[y]) is TO_INTERNALS[torch.promote_types(x, y)]
        assert internals.can_cast(TO_INTERNALS[x], TO_INTERNALS[y]) == torch.can_cast(x, y)


def test_result_type_of_a_half_tensor_and_a_complex_number():
    assert torch.result_type(torch.ones(2, dtype=torch.float16), 1j) is torch.complex32
    assert internals.result_type(internals.ones(2, dtype=internals.float16), 1j) is internals.complex32


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


VALUES = [1 + 2j, -0.5j, complex(-0.0, 0.0), 3.33333, complex(math.inf, -1), complex(math.nan, 2), 70000 + 1e-8j]


def _both(values=VALUES, dtype="chalf"):
    theirs = _quiet(lambda: torch.tensor(values, dtype=getattr(torch, dtype)))
    ours = _quiet(lambda: internals.tensor(values, dtype=getattr(internals, dtype)))
    return ours, theirs


MAKERS = {
    "zeros": lambda L: L.zeros(2, 3, dtype=L.complex32),
    "ones": lambda L: L.ones(2, dtype=L.chalf),
    "full complex": lambda L: L.full((2,), 1.5 - 1j, dtype=L.chalf),
    "full real": lambda L: L.full((3,), 2.0, dtype=L.chalf),
    "empty then fill_": lambda L: L.empty(3, dtype=L.chalf).fill_(0.1 + 7j),
    "zero_": lambda L: L.ones(3, dtype=L.chalf).zero_(),
    "tensor": lambda L: L.tensor(VALUES, dtype=L.chalf),
    "tensor of a real list": lambda L: L.tensor([1.0, -2.5, 1e-8], dtype=L.chalf),
    "zeros_like": lambda L: L.zeros_like(L.ones(2, 2, dtype=L.chalf)),
    "ones_like": lambda L: L.ones_like(L.ones(2, 2, dtype=L.chalf)),
    "complex() of float16 parts": lambda L: L.complex(L.tensor([1.0, 2.0], dtype=L.float16),
                                                      L.tensor([0.5, -1.0], dtype=L.float16)),
    "view_as_complex": lambda L: L.view_as_complex(L.arange(6.0).reshape(3, 2).to(L.float16)),
    "view of float16 pairs": lambda L: L.arange(6.0).to(L.float16).view(L.complex32),
    "from complex64": lambda L: L.tensor(VALUES, dtype=L.complex64).to(L.complex32),
    "from complex128": lambda L: L.tensor([1 / 3 + 1e-5j, 1e5 - 65519.9j], dtype=L.complex128).to(L.chalf),
    "from float64": lambda L: L.tensor([1 / 3, 1e5, -0.0]).double().chalf(),
    "from int64": lambda L: L.tensor([3, -70000]).to(L.chalf),
    "from bool": lambda L: L.tensor([True, False]).to(L.chalf),
    "from float16": lambda L: L.tensor([0.1, 2.0], dtype=L.float16).to(L.chalf),
}


@pytest.mark.parametrize("case", MAKERS)
def test_made_as_torch_makes_it(case):
    """Values (bit for bit, through complex64, which holds every float16 part), sizes and strides;
    a double becomes float16 through float, as c10::Half takes a float."""
    theirs, ours = _quiet(lambda: MAKERS[case](torch)), _quiet(lambda: MAKERS[case](internals))
    assert ours.dtype is internals.complex32 and theirs.dtype is torch.complex32
    assert (tuple(ours.shape), ours.stride(), ours.storage_offset()) == (
        tuple(theirs.shape), theirs.stride(), theirs.storage_offset())
    assert_same(ours.to(internals.complex64), theirs.to(torch.complex64), rtol=0, atol=0)


def test_the_experimental_warning_is_torchs():
    """Once per process, when the first complex32 tensor is made (a fresh process for each)."""
    code = ("import warnings, {lib}\nwith warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    {lib}.zeros(1, dtype={lib}.chalf); {lib}.ones(1, dtype={lib}.chalf)\n"
            "print([str(x.message).split(' (Triggered')[0] for x in w])")
    out = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True, text=True,
                          check=True).stdout for lib in ("torch", "internals")]
    assert out[0] == out[1] and "ComplexHalf support is experimental" in out[0]


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "float64", "float16", "int64", "int16",
                                   "bool"])
def test_casts_out_of_complex32(dtype):
    """To complex types exactly, to real ones the real part (with torch's warning), to bool
    whether either part is nonzero."""
    ours, theirs = _both(VALUES[:4] + VALUES[6:] if dtype.startswith("int") else VALUES)
    with warnings.catch_warnings(record=True) as caught_t:
        warnings.simplefilter("always")
        t = theirs.to(getattr(torch, dtype))
    with warnings.catch_warnings(record=True) as caught_i:
        warnings.simplefilter("always")
        i = ours.to(getattr(internals, dtype))
    assert_same(i, t, rtol=0, atol=0)
    assert [w.category for w in caught_i] == [w.category for w in caught_t]


def test_copy_into_views_and_broadcast():
    def program(L):
        x = _quiet(lambda: L.zeros(3, 4, dtype=L.chalf))
        x[:, 1].copy_(L.tensor([1.0, 2, 3]))
        x.t()[2].copy_(L.tensor(1 - 1j))
        x[0, ::3] = 5j
        return x.to(L.complex64)
    assert_same(program(internals), program(torch), rtol=0, atol=0)


VIEWS = {
    "view_as_real": lambda L, x: L.view_as_real(x),
    "real": lambda L, x: x.real,
    "imag": lambda L, x: x.imag,
    "slice": lambda L, x: x[1::2],
    "reshape/transpose": lambda L, x: x[:6].reshape(2, 3).t(),
    "contiguous": lambda L, x: x[:6].reshape(2, 3).t().contiguous(),
    "clone": lambda L, x: x[::2].clone(),
    "cat": lambda L, x: L.cat([x[:2], x[4:]]),
    "stack": lambda L, x: L.stack([x[:2], x[3:5]], 1),
    "index tensor": lambda L, x: x[L.tensor([4, 0, 0])],
    "mask": lambda L, x: x[L.tensor([True, False, True, True, False, False, True])],
    "index_select": lambda L, x: x.index_select(0, L.tensor([2, 1])),
    "expand": lambda L, x: x[:1].expand(3, 2),
    "unbind": lambda L, x: x[:2].unbind()[1],
    "view int32": lambda L, x: x.view(L.int32),
    "conj": lambda L, x: x.conj(),
    "conj_physical": lambda L, x: x.conj_physical(),
    "resolve_conj": lambda L, x: x.conj().resolve_conj(),
    "isnan": lambda L, x: x.isnan(),         # (read through the float16 parts)
    "isfinite": lambda L, x: x.isfinite(),
}


@pytest.mark.parametrize("case", VIEWS)
def test_data_movement(case):
    ours, theirs = _both()
    o, t = _quiet(lambda: VIEWS[case](internals, ours)), _quiet(lambda: VIEWS[case](torch, theirs))
    assert (o._base is not None) == (t._base is not None)
    if t.dtype is torch.complex32:
        assert o.dtype is internals.complex32 and o.is_conj() == t.is_conj()
        assert (tuple(o.shape), o.stride(), o.storage_offset()) == (tuple(t.shape), t.stride(), t.storage_offset())
        o, t = o.to(internals.complex64), t.to(torch.complex64)
    assert_same(o, t, rtol=0, atol=0)


def test_printing_item_and_tolist():
    ours, theirs = _both()
    assert repr(ours).replace("internals.", "torch.") == repr(theirs)
    assert repr(ours[0]).replace("internals.", "torch.") == repr(theirs[0])
    assert repr(ours[:0]).replace("internals.", "torch.") == repr(theirs[:0])
    assert str(ours.reshape(7, 1)[2:]) .replace("internals.", "torch.") == str(theirs.reshape(7, 1)[2:])
    assert repr(ours.tolist()) == repr(theirs.tolist())
    assert repr(ours[3].item()) == repr(theirs[3].item())


def test_equality():
    """== and != compare the numbers (NaN unequal to itself, -0 equal to 0), with tensors and scalars."""
    ours, theirs = _both()
    other_o, other_t = _both(list(reversed(VALUES)))
    for op in ("eq", "ne"):
        assert_same(getattr(ours, op)(other_o), getattr(theirs, op)(other_t), rtol=0, atol=0)
        assert_same(getattr(ours, op)(ours), getattr(theirs, op)(theirs), rtol=0, atol=0)
        assert_same(getattr(ours, op)(0), getattr(theirs, op)(0), rtol=0, atol=0)
        assert_same(getattr(ours, op)(1 + 2j), getattr(theirs, op)(1 + 2j), rtol=0, atol=0)
        wide_o, wide_t = ours.to(internals.complex64), theirs.to(torch.complex64)
        assert_same(getattr(ours, op)(wide_o), getattr(theirs, op)(wide_t), rtol=0, atol=0)


def test_save_and_load_both_ways():
    """torch writes complex32 with ``_rebuild_tensor_v3`` (untyped bytes and the dtype): each
    library reads the other's file, a slice's offset and a conjugate's bit included."""
    ours, theirs = _both()
    for save, load in ((internals.save, torch.load), (torch.save, internals.load), (internals.save, internals.load)):
        source = ours if save is internals.save else theirs
        lib = internals if load is internals.load else torch
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            save({"x": source[1:], "c": source.conj()}, buffer)
            buffer.seek(0)
            loaded = load(buffer)
        for key, want in (("x", theirs[1:]), ("c", theirs.conj())):
            got = loaded[key]
            assert got.dtype is lib.complex32 and got.is_conj() == want.is_conj()
            assert (tuple(got.shape), got.stride(), got.storage_offset()) == (
                tuple(want.shape), want.stride(), want.storage_offset())
            got = got.to(lib.complex64)
            got = got.to_torch() if lib is internals else got
            torch.testing.assert_close(got, want.to(torch.complex64), rtol=0, atol=0, equal_nan=True)


ERRORS = {
    "numpy": lambda L, x: x.numpy(),
    "flip": lambda L, x: x.flip(0),
    "rot90": lambda L, x: x[:4].reshape(2, 2).rot90(),
    "gather": lambda L, x: x.gather(0, L.tensor([1])),
    "take_along_dim": lambda L, x: x.take_along_dim(L.tensor([1]), 0),
    "scatter": lambda L, x: x.scatter(0, L.tensor([0]), x),
    "scatter a value": lambda L, x: x.scatter(0, L.tensor([0]), 1j),
    "scatter_add": lambda L, x: x.scatter_add(0, L.tensor([0]), x),
    "scatter_reduce without self": lambda L, x: x.scatter_reduce(0, L.tensor([0]), x, "sum", include_self=False),
    "take": lambda L, x: x.take(L.tensor([1])),
    "masked_scatter": lambda L, x: x.masked_scatter(x.isnan(), x),
    "cumsum": lambda L, x: x.cumsum(0),
    "cumprod": lambda L, x: x.cumprod(0),
    "arange": lambda L, x: L.arange(3, dtype=L.chalf),
    "linspace": lambda L, x: L.linspace(0, 1j, 3, dtype=L.chalf),
    "nan_to_num": lambda L, x: x.nan_to_num(),
    "equal to itself": lambda L, x: L.equal(x, x),
    "equal to a copy": lambda L, x: L.equal(x, x.clone()),
    "logical_not": lambda L, x: x.logical_not(),
    "logical_and": lambda L, x: x.logical_and(x),
    "logical_xor": lambda L, x: L.logical_xor(x, x),
    "sum": lambda L, x: x.sum(),
    "mean": lambda L, x: x.mean(),
    "trace": lambda L, x: x[:4].reshape(2, 2).trace(),
    "vdot": lambda L, x: L.vdot(x, x),
    "baddbmm": lambda L, x: L.baddbmm(x[:4].reshape(1, 2, 2), x[:4].reshape(1, 2, 2), x[:4].reshape(1, 2, 2)),
    "dot": lambda L, x: x.dot(x),
    "mm": lambda L, x: x[:6].reshape(2, 3) @ x[:6].reshape(3, 2),
    "mv": lambda L, x: x[:6].reshape(3, 2) @ x[:2],
    "bmm": lambda L, x: x[:4].reshape(1, 2, 2).bmm(x[:4].reshape(1, 2, 2)),
    "sort": lambda L, x: x.sort(),
    "less than": lambda L, x: x < x,
}


@pytest.mark.parametrize("case", ERRORS)
def test_refused_as_torch_refuses(case):
    ours, theirs = _both()
    o, t = assert_same_error(lambda: _quiet(lambda: ERRORS[case](internals, ours)),
                             lambda: _quiet(lambda: ERRORS[case](torch, theirs)))
    assert str(o) == str(t)


ARITHMETIC = {
    "add": lambda L, x, y: x + y,
    "add alpha": lambda L, x, y: L.add(x, y, alpha=0.1),
    "add complex alpha": lambda L, x, y: L.add(x, y, alpha=2.5 + 0.7j),
    "add_ in place": lambda L, x, y: x.clone().add_(y),
    "float16 plus a Python complex": lambda L, x, y: x.real + 1j,
    "int64 plus complex32": lambda L, x, y: L.tensor([70001, 3, -2, 1, 0, 9, 4]) + y,
    "sub": lambda L, x, y: x - y,
    "sub alpha": lambda L, x, y: L.sub(x, y, alpha=1 / 3),
    "rsub": lambda L, x, y: 1 - x,
    "mul": lambda L, x, y: x * y,
    "mul by a number": lambda L, x, y: x * 2,
    "mul by a float16 tensor": lambda L, x, y: x * y.imag,
    "mul_ in place": lambda L, x, y: x.clone().mul_(y),
    "neg": lambda L, x, y: -x,
    "abs": lambda L, x, y: x.abs(),
    "sgn": lambda L, x, y: x.sgn(),
    "addcmul": lambda L, x, y: L.addcmul(x, x, y, value=0.3),
    "where": lambda L, x, y: L.where(x.real > 0, x, y),
    "masked_fill": lambda L, x, y: x.masked_fill(x.imag > 0, 1 - 3j),
    "index_add repeated": lambda L, x, y: x.clone().index_add_(0, L.tensor([0, 0, 2]), y[:3], alpha=0.1),
    "index_put_ accumulate": lambda L, x, y: x.clone().index_put_((L.tensor([1, 1, 1]),), y[:3], accumulate=True),
    "isclose": lambda L, x, y: L.isclose(x, y, rtol=0.5),
    "out= complex64": lambda L, x, y: L.mul(x, y, out=L.empty(7, dtype=L.complex64)),
}


def _random_pair(lib, n=4000):
    """Values drawn in complex64 by torch's generator, rounded to complex32; the special ones
    (zeros of both signs, infinities, NaN, an overflow) appended."""
    g = torch.Generator().manual_seed(7)
    scale = torch.tensor([1e-3, 1.0, 300.0]).repeat_interleave(n // 3 + 1)[:n]
    parts = [torch.randn(n, dtype=torch.complex64, generator=g) * scale for _ in range(2)]
    parts = [torch.cat([p, torch.tensor(VALUES, dtype=torch.complex64)]) for p in parts]
    theirs = [_quiet(lambda p=p: p.to(torch.complex32)) for p in parts]
    if lib is torch:
        return theirs
    return [_quiet(lambda t=t: internals.from_torch(t.to(torch.complex64)).to(internals.complex32)) for t in theirs]


@pytest.mark.parametrize("case", ARITHMETIC)
def test_arithmetic_torch_computes_for_complex32(case):
    """Bit for bit: torch loads each complex<Half> as complex<float>, computes and rounds each
    part to float16 (each step of its complex<Half> arithmetic for alpha and addcmul's value);
    the package computes in complex64 and rounds the same way. Sizes, strides and dtypes too."""
    ours, theirs = _both(), _both(list(reversed(VALUES)))
    o = _quiet(lambda: ARITHMETIC[case](internals, ours[0], theirs[0]))
    t = _quiet(lambda: ARITHMETIC[case](torch, ours[1], theirs[1]))
    _same_complex32(o, t)
    if case in ("index_add repeated", "index_put_ accumulate", "out= complex64", "float16 plus a Python complex",
                "int64 plus complex32", "rsub", "mul by a float16 tensor"):
        return
    (xo, yo), (xt, yt) = _random_pair(internals), _random_pair(torch)
    _same_complex32(_quiet(lambda: ARITHMETIC[case](internals, xo, yo)),
                    _quiet(lambda: ARITHMETIC[case](torch, xt, yt)))


def _same_complex32(o, t):
    assert o.dtype is TO_INTERNALS[t.dtype]
    assert (tuple(o.shape), o.stride(), o.storage_offset()) == (tuple(t.shape), t.stride(), t.storage_offset())
    if t.dtype is torch.complex32:
        o, t = o.to(internals.complex64), t.to(torch.complex64)
    assert_same(o, t, rtol=0, atol=0)


def test_the_default_complex_dtype_follows_a_float16_default():
    """Under a float16 default, a Python complex becomes complex32 in both."""
    previous = (torch.get_default_dtype(), internals.get_default_dtype())
    try:
        torch.set_default_dtype(torch.float16)
        internals.set_default_dtype(internals.float16)
        theirs, ours = _quiet(lambda: torch.tensor([1j, 2])), _quiet(lambda: internals.tensor([1j, 2]))
        assert theirs.dtype is torch.complex32 and ours.dtype is internals.complex32
        assert repr(ours).replace("internals.", "torch.") == repr(theirs)
    finally:
        torch.set_default_dtype(previous[0])
        internals.set_default_dtype(previous[1])


@pytest.mark.parametrize("ord", [2, 1, math.inf, 3])
def test_vector_norm_computes_in_complex64(ord):
    """torch's norm of complex32 takes the moduli in float (complex<float>'s opmath), not rounded
    to float16 first. Compared bit for bit: the float32 sum's order (which follows the CPU) moves
    a float16 result only within 2**-13 of a tie, which these values do not come near, while
    moduli rounded to float16 first move several of these results by an ulp."""
    for n in (4, 7, 100, 1000):
        (o, _), (t, _) = _random_pair(internals, n), _random_pair(torch, n)
        ours, theirs = internals.linalg.vector_norm(o[:n], ord), torch.linalg.vector_norm(t[:n], ord)
        assert_same(ours, theirs, rtol=0, atol=0)
