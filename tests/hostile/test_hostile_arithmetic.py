"""Arithmetic at its edges: division, rounding, clamping, powers, copies.

Each case differed from torch 2.13 before it was fixed."""
import itertools
import subprocess
import sys

import pytest
import torch
from helpers import assert_same, same_error, same_or_same_error

import internals

# ----------------------------------------------------------------------------- rounding division
VALUES = [0.0, -0.0, 1.0, -1.0, 2.5, -7.0, float("inf"), -float("inf"), float("nan"), 1e308, 1e-308]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_rounding_division_keeps_nan_inf_huge_and_negative_zero(dtype, mode):
    """Numba's math.floor and math.trunc return int64: nan, inf and 1e308 came back as -2**63,
    and a -0.0 quotient as 0.0."""
    a, b = zip(*itertools.product(VALUES, VALUES))

    def run(lib):
        d = getattr(lib, dtype)
        return lib.div(lib.tensor(a, dtype=d), lib.tensor(b, dtype=d), rounding_mode=mode)
    ours, theirs = run(internals), run(torch)
    assert_same(ours, theirs)
    assert [str(v) for v in ours.tolist()] == [str(v) for v in theirs.tolist()]     # the signs of zeros


def test_floor_divide_by_a_nan_scalar():
    for lib in (torch, internals):
        assert all(v != v for v in (lib.arange(4) // float("nan")).tolist())


@pytest.mark.parametrize("make", [lambda L: L.ones(1, 3).expand(4, 3), lambda L: L.tensor(1.0).expand(4),
                                  lambda L: L.arange(24.0).as_strided((2, 2), (0, 0), 3)])
def test_copying_a_tensor_onto_itself_is_a_no_op(make):
    """``copy_impl`` returns at once when source and destination are the same elements."""
    def run(lib):
        x = make(lib)
        return x.copy_(x)
    assert_same(run(internals), run(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_clamp_and_maximum_keep_the_first_of_equal_zeros(dtype):
    """``std::max(a, b)`` returns ``a`` when neither is less: clamp(-0.0, min=0.0) is -0.0, it was
    0.0. (Past a vector's width torch's own answer changes, so short tensors only.)"""
    def run(L):
        d = getattr(L, dtype)
        a, b = L.tensor([-0.0, 0.0, 1.0], dtype=d), L.tensor([0.0, -0.0, float("nan")], dtype=d)
        return (L.maximum(a, b), L.minimum(a, b), a.clamp(min=0.0), a.clamp(max=-0.0),
                a.clamp(L.zeros(3, dtype=d), L.ones(3, dtype=d)))
    for o, t in zip(run(internals), run(torch)):
        assert_same(o, t)
        assert [str(v) for v in o.tolist()] == [str(v) for v in t.tolist()]


def same(fn, **kw):
    assert_same(fn(internals), fn(torch), **kw)


def test_floor_division_of_the_most_negative_int_by_minus_one_wraps():
    """Numba's ``//`` gives 0 there; torch's ``div_floor_integer`` wraps to the same value."""
    same(lambda L: L.tensor([-2**63, 7]) // -1)
    same(lambda L: L.tensor([-2**63, 7]).div(L.tensor(-1), rounding_mode="floor"))


def test_copy_names_its_tensors_in_torchs_order():
    """``copy_``'s TensorIterator broadcasts the given output first, then the input (``compute_shape``)."""
    same_error(lambda L: L.zeros(2, 3).copy_(L.ones(4)))
    same_error(lambda L: L.zeros(2, 3).add_(L.ones(4)))


# ----------------------------------------------------------------------------- integer division
@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, dtype=L.int8).floor_divide(-2**63),
    lambda L: L.ones(2, dtype=L.int8) // 256,
    lambda L: L.ones(2, dtype=L.int8) % 256,
    lambda L: L.ones(2, dtype=L.int8) % 257,
    lambda L: L.ones(2, dtype=L.uint8).div(-256, rounding_mode="trunc"),
    lambda L: L.ones(2, dtype=L.int8).remainder(L.tensor(256)),
    lambda L: L.ones(2, dtype=L.int8).remainder(L.tensor([256])),
    lambda L: 300 % L.tensor([0, 1], dtype=L.int8),
    lambda L: L.floor_divide(L.tensor([1, 2]), 1j),
    lambda L: 1j // L.tensor([1, 0]),
    lambda L: 1j % L.tensor([1, 0]),
    lambda L: L.tensor([1, 2]).div(1j, rounding_mode="trunc"),
    lambda L: L.tensor([1 + 1j]).remainder(1),
])
def test_integer_division_reads_the_divisor_in_the_common_dtype(call):
    """A divisor that wraps to 0 in an int8 tensor's dtype divides by zero, as torch says (the
    package divided by the unwrapped number and returned zeros); complex floor and trunc
    division are refused by name (a Numba typing error leaked out)."""
    same_or_same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.lerp(L.ones(2, dtype=L.long), L.zeros(2, dtype=L.long), L.tensor(0.5)),
    lambda L: L.lerp(L.ones(2, dtype=L.long), L.zeros(2, dtype=L.long), L.tensor(1)),
    lambda L: L.ones(2).lerp_(L.zeros(2), L.tensor(0.5j)),
    lambda L: L.ones(2).lerp_(L.zeros(2), L.tensor(0.5, dtype=L.float64)),
    lambda L: L.ones(2, dtype=L.float16).lerp(L.zeros(2, dtype=L.float16), L.tensor(0.3, dtype=L.float64)),
    lambda L: L.lerp(L.ones(2), L.zeros(2), L.tensor(True)),
    lambda L: L.lerp(L.tensor(1.), L.tensor(0.), L.tensor(0.3, dtype=L.float64)),
    lambda L: L.lerp(L.ones(2), L.zeros(2), L.tensor([0.3], dtype=L.float64)),
    lambda L: L.lerp(L.ones(2), L.zeros(2), L.tensor(2, dtype=L.int8)),
])
def test_lerp_promotes_a_0_dim_weight(call):
    """``TORCH_META_FUNC(lerp_Tensor)`` promotes a 0-dim weight with the operands; the package
    required the weight to have the input's dtype."""
    same_or_same_error(call)


# ----------------------------------------------------------------------------- crash checks
def test_int_min_divided_by_minus_one_does_not_crash():
    """torch's CPU kernel dies of SIGFPE on INT64_MIN / -1 with rounding_mode='trunc' (the
    round-6 run lost its worker there); the package must not: it runs in a subprocess and
    exits cleanly."""
    code = ("import internals as L\n"
            "for dt in (L.int64, L.int32, L.int16, L.int8):\n"
            "    x = L.full((3,), -2 ** (8 * L.empty(0, dtype=dt).element_size() - 1), dtype=dt)\n"
            "    for mode in ('trunc', 'floor'):\n"
            "        L.div(x, -1, rounding_mode=mode), L.div(x, L.tensor(-1, dtype=dt), rounding_mode=mode)\n"
            "    x // -1, x % -1, L.fmod(x, -1), L.remainder(x, -1)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([1 + 2j, 0j, -1j]).argmax(),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).argmin(0),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).max(),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).min(),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).amax(),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).amin(0),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).max(0),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).max(5),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).min(0),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).sort(),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).sort(stable=True),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).argsort(),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).topk(1),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).topk(5),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).median(),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).median(0),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).mode(),
    lambda L: L.tensor([1 + 2j, 0j, -1j]).kthvalue(1),
    lambda L: L.tensor(1 + 2j).kthvalue(1),
    lambda L: L.tensor(True).kthvalue(1),
    lambda L: L.tensor(1 + 2j).topk(1),
    lambda L: L.tensor(1 + 2j).max(0),
    lambda L: L.zeros(0, dtype=L.complex64).max(),
    lambda L: L.zeros(0, dtype=L.complex64).argmax(),
    lambda L: L.tensor([True, False]).round(),
    lambda L: L.tensor([1 + 2j]).round(),
    lambda L: L.tensor([1 + 2j]).round(decimals=2),
    lambda L: L.tensor([1 + 2j]).clamp(0, 1),
    lambda L: L.tensor([1 + 2j]).clamp(max=L.tensor(1j)),
    lambda L: L.tensor([1 + 2j]).clip_(min=0),
])
def test_comparisons_refuse_complex_tensors_as_torch(call):
    """Sorting, selection, max/min and clamp compare elements: torch's kernels refuse complex
    tensors by name; Numba's typing errors leaked out of the package's."""
    same_or_same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.bitwise_left_shift(L.tensor([-7, 0, 7]), 1j),
    lambda L: L.bitwise_and(L.tensor([1, 2]), 1j),
    lambda L: L.tensor([1, 2]) ^ 1j,
    lambda L: 1j & L.tensor([True]),
    lambda L: L.bitwise_left_shift(L.tensor([-0.0, 1.5]), 2**63),
    lambda L: L.bitwise_right_shift(L.tensor([-0.0, 1.5]), -2**63 - 1),
    lambda L: L.tensor([True]) << True,
    lambda L: L.tensor([True]) & True,
    lambda L: L.clamp(L.tensor([-7, 0, 7]), 1j, 0),
    lambda L: L.arange(12.).reshape(3, 4).new_zeros((-1, 2)),
    lambda L: L.arange(12.).reshape(3, 4).new_zeros((2, -3), dtype=L.int8),
])
def test_bitwise_clamp_and_new_zeros_refuse_by_dtype_first(call):
    """A complex operand of a bitwise operator leaked a Numba typing error, and a float tensor
    shifted by 2**63 failed on the number before its dtype; clamp refuses a complex result
    whatever makes it complex; ``new_zeros`` is ``empty(...).zero_()`` and words a negative size
    as ``empty`` does."""
    same_or_same_error(call)


# ----------------------------------------------------------------------------- add/sub with alpha
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [3, 7, 64, 1000])
def test_add_and_sub_with_alpha_round_once(dtype, n):
    """torch's ``add`` is ``vec::fmadd(other, alpha, self)`` (and GCC fuses the scalar loop's
    ``self + alpha * other``): one rounding. The package rounded the product, then the sum."""
    g = torch.Generator().manual_seed(n)
    a = torch.randn(n, generator=g, dtype=getattr(torch, dtype)) * 50
    b = torch.randn(n, generator=g, dtype=getattr(torch, dtype)) * 50
    ours_a, ours_b = internals.from_torch(a), internals.from_torch(b)
    for alpha in (0.1, -0.1, 0.8, 1.7, -3):
        assert_same(ours_a.add(ours_b, alpha=alpha), a.add(b, alpha=alpha), rtol=0, atol=0)
        assert_same(ours_a.sub(ours_b, alpha=alpha), a.sub(b, alpha=alpha), rtol=0, atol=0)
        assert_same(ours_a.clone().add_(ours_b.flip(0), alpha=alpha), a.clone().add_(b.flip(0), alpha=alpha),
                    rtol=0, atol=0)


# ----------------------------------------------------------------------------- overlap
@pytest.mark.parametrize("pair", ["shift", "rev", "same", "expand", "zero_stride", "t"])
@pytest.mark.parametrize("bounds", [
    lambda b: {"min": b}, lambda b: {"max": b}, lambda b: {"min": b, "max": b}, lambda b: {"min": 2, "max": 5}])
def test_clamp_in_place_checks_its_bounds_for_overlap(pair, bounds):
    """``clamp_(x, min=x_shifted)`` reads bounds the loop has already written: torch refuses a
    partial overlap (and a self-overlapping ``x``); internals clamped into a copy and wrote back."""
    def run(L):
        s = L.arange(1., 9.)
        a, b = {"shift": (s[1:7], s[0:6]), "rev": (s, s.flip(0)), "same": (s, s), "expand": (s[:1].expand(4), s[:4]),
                "zero_stride": (s.as_strided((4,), (0,)), s[:4]),
                "t": (s[:4].view(2, 2), s[:4].view(2, 2).t())}[pair]
        return a.clamp_(**bounds(b)), s
    same_or_same_error(run)


# ----------------------------------------------------------------------------- unclear errors
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("call", [
    lambda x: x.bitwise_not(), lambda x: ~x, lambda x: x.bitwise_not_()])
def test_bitwise_not_of_a_complex_tensor_is_refused_as_torch_refuses(dtype, call):
    """internals said ``internals: None is not implemented for complex tensors``."""
    same_error(lambda L: call(L.ones(2, dtype=getattr(L, dtype))))


@pytest.mark.parametrize("dtype", ["bool", "float32", "float16", "int64"])
@pytest.mark.parametrize("value", [True, 1j, complex(float("nan"), 0), 1 + 0j, 0.5])
@pytest.mark.parametrize("bounds", [
    lambda v, t: {"min": v}, lambda v, t: {"max": v}, lambda v, t: {"min": v, "max": v},
    lambda v, t: {"min": t}, lambda v, t: {"max": t}, lambda v, t: {"min": t, "max": t}])
def test_clamp_reads_its_bounds_as_torchs_kernels_do(dtype, value, bounds):
    """A float tensor's Python bounds are doubles (a complex one with an imaginary part fails to
    convert, ``1+0j`` is 1); a bool tensor names the kernel it lacks (``clamp_min_scalar_cpu``)
    and takes one tensor bound (``maximum``). internals refused all complex bounds as complex
    clamps and named ``clamp_cpu`` for every bool case."""
    def run(L):
        x = L.tensor([1, 0], dtype=getattr(L, dtype))
        t = L.tensor([value.real if isinstance(value, complex) else value] * 2).to(x.dtype)
        return x.clamp(**bounds(value, t))
    same_or_same_error(run)


LAYOUTS = {"contiguous": lambda x, n: x[:n], "transposed": lambda x, n: x.reshape(2, n).t(),
           "strided": lambda x, n: x[::2]}


# ----------------------------------------------------------------------------- pow's float32 exponent
@pytest.mark.parametrize("dtype, inplace", [("float32", False), ("float32", True), ("int64", False), ("uint8", False),
                                            ("bool", False), ("float64", False), ("float64", True)])
@pytest.mark.parametrize("exponent", [5e-324, -5e-324, 1e-300, 1e-45, 1e39, -1e300, 0.1])
@pytest.mark.parametrize("n", [4, 32, 33, 70])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_pow_with_a_float_exponent_float32_rounds(dtype, inplace, exponent, n, layout):
    """torch's float32 pow loop takes the exponent as a double: its vectorized loop (the first
    multiple of 32 elements of a contiguous run) rounds it to float32, so ``0 ** 5e-324`` is 1
    there, and its scalar loop (the rest, and every element of a strided run) keeps it, so it is 0.
    internals rounded it everywhere."""

    def fn(L):
        x = LAYOUTS[layout]((L.arange(2 * n) % 5).to(getattr(L, dtype)), n)
        return x.pow_(exponent) if inplace else x ** exponent
    same_or_same_error(fn)


# ----------------------------------------------------------------------------- refused dtypes
@pytest.mark.parametrize("op", [lambda L, a: L.dot(a, a), lambda L, a: L.mv(L.ones(2, 3, dtype=a.dtype), a),
                                lambda L, a: L.addmv(L.ones(2, dtype=a.dtype), L.ones(2, 3, dtype=a.dtype), a),
                                lambda L, a: a.dot(a)])
def test_products_refuse_bool_with_their_kernels_names(op):
    same_error(lambda L: op(L, L.tensor([True, False, True])))


# ----------------------------------------------------------------------------- arange's count
@pytest.mark.parametrize("args, dtype", [
    ((2**62,), None), ((0, 2**62), "int8"), ((2**63,), None), ((-2**63, 2**63 - 1, 2**62), None), ((1e20,), "float32"),
    ((0, 1, 1e-30), None), ((2**40,), None), ((0.5, 3.7), "int64"), ((0, 5, 0.5), "int64"), ((0, 5, 0.5), "int32"),
    ((0.5, 3.7), "int32"), ((-7, 8, 3), None), ((1, 0, -0.3), None), ((0, 10, 3), "float16"),
])
def test_arange_counts_its_elements_as_torch_does(args, dtype):
    """int64 bounds read as int64 first (0.5 is 0, a 0.5 step is 0, 2**63 refused) and counted in
    wrapping int64 arithmetic; other dtypes count in double; a count past int64 is refused and
    an impossible allocation fails with torch's messages. internals counted exactly in Python
    and let NumPy fail with its own ValueError."""
    same_or_same_error(lambda L: L.arange(*args, **({} if dtype is None else {"dtype": getattr(L, dtype)})))
