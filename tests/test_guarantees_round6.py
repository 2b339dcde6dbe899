"""A sixth round of hostile inputs (issue 15): each case differed from torch 2.13 before its fix."""
import subprocess
import sys

import numpy as np  # noqa: F401  (the cases name np inside eval)
import pytest
import torch
from conftest import same_error, same_or_same_error

import internals


# ----------------------------------------------------------------------------- TypeError of several overloads
@pytest.mark.parametrize("call", [
    lambda L: L.ones(2).sum("a"),
    lambda L: L.ones(2).sum("a", True),
    lambda L: L.ones(2).sum(dtype="a"),
    lambda L: L.ones(2).sum(0, keepdim="a"),
    lambda L: L.ones(2, 2).view("a"),
    lambda L: L.ones(2).add("a"),
    lambda L: L.add(L.ones(2), "a"),
    lambda L: L.ones(2).std("a", "b"),
    lambda L: L.ones(2).transpose("a", 0),
    lambda L: L.ones(2).squeeze("a", "b"),
    lambda L: L.ones(2).new_zeros("a"),
    lambda L: L.ones(2).repeat_interleave("a"),
])
def test_several_overloads_list_torchs_didnt_match_lines(call):
    """``format_invalid_args`` reads each printed signature back, counting ``*`` and every
    parameter as a piece: a line says "didn't match" only where the count of pieces equals
    the count of arguments (the package matched by its own parameter counts)."""
    same_error(call)


# ----------------------------------------------------------------------------- setitem values
def _setitem_case(dtype, index, value):
    """``x[index] = value`` on a zero tensor of ``dtype``: torch's result or torch's error."""
    def run(L):
        x = L.zeros(3, dtype=getattr(L, dtype))
        x[eval(index)] = eval(value)
        return x
    same_or_same_error(run)


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool", "float16", "uint8"])
@pytest.mark.parametrize("index", ["0", "'a'", "slice(None, None, 0)", "5", "[5]"])
@pytest.mark.parametrize("value", ["2**63", "-2**63 - 1", "np.uint64(2**64 - 1)", "2**64"])
def test_setitem_reads_an_int_as_int64_before_the_index(dtype, index, value):
    """``valueToTensor`` unpacks a Python int as a long long first: past int64 it is a
    ValueError, whatever the dtype (a float tensor stored 9.2e18) and whatever the index."""
    _setitem_case(dtype, index, value)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int8", "bool"])
@pytest.mark.parametrize("index", ["0", "5", "slice(1, None)", "[0]", "...", "L.tensor([True, False, True])"])
@pytest.mark.parametrize("value", ["1e300", "70000", "2**62", "2 + 0j", "1e300j", "float('nan')", "True"])
def test_setitem_of_16_bit_floats_takes_a_double(dtype, index, value):
    """Into float16 and bfloat16 a number goes through a double, so 1e6 becomes inf (the package
    refused it as an overflow) and a complex number with no imaginary part is taken."""
    _setitem_case(dtype, index, value)


@pytest.mark.parametrize("dtype", ["bool", "bfloat16", "complex64", "complex128", "float16"])
def test_setitem_names_the_legacy_tensor_type(dtype):
    """``can't assign a str to a torch.BoolTensor`` (the package said ``CPUBoolType``)."""
    def run(L):
        L.zeros(2, dtype=getattr(L, dtype))[0] = "a"
    same_error(run)


# ----------------------------------------------------------------------------- getitem indices
@pytest.mark.parametrize("x", ["L.arange(24).reshape(2, 3, 4)", "L.arange(6.)", "L.tensor(5)", "L.zeros(0, 3)"])
@pytest.mark.parametrize("index", [
    "2**63", "-2**63 - 1", "2**64", "10**30", "np.uint64(2**63)", "(0, 2**63)", "-2**63", "-3", "1", "0",
    "np.float64(1)", "np.bool_(True)", "slice(1.0, 2)", "slice(None, 'a')", "range(2)", "(range(2), 0)",
    "[1j]", "[0, 1j]", "slice(None, None, 2**63)", "slice(2**63, None)", "slice(-2**70, 2**70, 3)",
    "slice(L.tensor(1), 3)", "slice(None, L.tensor(2))", "slice(None, None, L.tensor(2))",
    "slice(L.tensor(1.), 3)", "slice(np.int64(1), None)"])
def test_getitem_reads_indices_as_torch(x, index):
    """An int past int64 is a ValueError (the package said out of bounds); slice bounds are read
    with ``__index__`` and clamped into int64 (a float is a TypeError, and a 0-dim tensor start
    was used as a tensor: ``x[t:3]`` gave the wrong elements); a huge step wraps the size and
    stride around as torch's int64 arithmetic does; a range is a sequence; a complex list
    element cannot be an int; NumPy scalars are named ``numpy.float64``; ``x[i]`` of a 0-dim
    tensor is out of bounds of a size-0 dim unless ``i`` is 0."""
    same_or_same_error(lambda L: eval(x)[eval(index)])


@pytest.mark.parametrize("index", ["0", "1", "-1", "2**63"])
def test_setitem_of_a_0_dim_tensor_by_an_int(index):
    def run(L):
        x = L.tensor(5)
        x[eval(index)] = 1
    same_error(run)


@pytest.mark.parametrize("index", ["slice(1, 2)", "slice(None)", "slice(1.0, None)", "slice(2**70, None)"])
@pytest.mark.parametrize("write", [False, True])
def test_a_lone_slice_goes_to_slice_even_for_a_0_dim_tensor(index, write):
    """``x[a:b]`` is the fast path of both bindings: the slice operator refuses a 0-dim tensor
    (the package said "too many indices")."""
    def run(L):
        x = L.tensor(5)
        if write:
            x[eval(index)] = 3
        return x[eval(index)]
    same_or_same_error(run)


def test_a_0_dim_tensor_slice_start_selects_the_right_elements():
    """The silent one: ``x[t:3]`` with ``t = tensor(1)`` returned elements 2 and 3."""
    same_or_same_error(lambda L: L.arange(6)[L.tensor(1):3])
    same_or_same_error(lambda L: L.arange(12).reshape(3, 4)[:, L.tensor(1):L.tensor(4):L.tensor(2)])


# ----------------------------------------------------------------------------- shapes and dims
@pytest.mark.parametrize("x", ["L.zeros(2, 3)", "L.zeros(0, 3)", "L.zeros(3)"])
@pytest.mark.parametrize("repeats", ["(-1, 2)", "(2, -1, -2)", "(0, -1)", "(-1, 0, 1)", "(1, 2**60, 4)"])
@pytest.mark.parametrize("op", ["repeat", "tile"])
def test_repeat_checks_the_sizes_it_makes(x, repeats, op):
    """torch checks the result's sizes, naming the first negative one: a dim of 0 repeated -1
    times is empty, not an error; the package named the smallest repeat."""
    same_or_same_error(lambda L: getattr(eval(x), op)(*eval(repeats)))


@pytest.mark.parametrize("op", ["sum", "amax", "amin", "mean", "logsumexp", "count_nonzero", "any", "all",
                                "std", "var", "std_mean", "var_mean", "squeeze"])
@pytest.mark.parametrize("dims", ["(1, 1, 2)", "(1, -1)", "(0, 5, 0)", "(-3, 0, 0)"])
def test_dim_lists_are_wrapped_and_compared_in_torchs_order(op, dims):
    """Most reductions wrap every dim before looking for a repeated one; var, std and squeeze
    wrap and compare one dim at a time (the package did the opposite for sum and squeeze)."""
    def run(L):
        x = L.arange(12.).reshape(3, 4)
        return getattr(L, op)(x, eval(dims)) if hasattr(L, op) else getattr(x, op)(eval(dims))
    same_or_same_error(run)


@pytest.mark.parametrize("name", ["concat", "concatenate", "cat"])
@pytest.mark.parametrize("tensors", ["[]", "()"])
def test_concat_refuses_an_empty_list_as_cat(name, tensors):
    same_error(lambda L: getattr(L, name)(eval(tensors)))


@pytest.mark.parametrize("call", [
    lambda L: L.empty(1, 2**62, 12),
    lambda L: L.zeros(2**62, 12),
    lambda L: L.ones(2**63 - 1, 2, dtype=L.int8),
    lambda L: L.full((2**62, 12), 2.),
    lambda L: L.empty(2**63 - 1, 0),
    lambda L: L.empty(2**61, 2**61, dtype=L.int8, memory_format=L.channels_last),
    lambda L: L.empty(-2, 3, memory_format=L.preserve_format),
    lambda L: L.empty(2, -1, -3),
])
def test_factories_check_the_storage_size_before_the_strides(call):
    """``computeStorageNbytesContiguous`` refuses sizes whose bytes pass int64 before any stride
    is computed (the package named a stride or the element count)."""
    same_or_same_error(call)


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


@pytest.mark.parametrize("kw", ["rtol=-1", "atol=-1e-5", "atol=float('nan')", "rtol=float('nan')",
                                "atol=-1234567.5", "rtol=L.tensor(-1)"])
def test_isclose_prints_its_tolerance_as_a_cpp_double(kw):
    same_error(lambda L: eval(f"L.isclose(L.ones(2), L.ones(2), {kw})"))


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


def test_lerp_gradient_through_a_promoted_weight():
    def run(L):
        a = L.ones(2, requires_grad=True)
        w = L.tensor(0.3, dtype=L.float64, requires_grad=True)
        r = L.lerp(a, L.zeros(2), w)
        r.sum().backward()
        return r.detach(), a.grad, w.grad, r.grad_fn.name()
    same_or_same_error(run)


# ----------------------------------------------------------------------------- embedding's max_norm
@pytest.mark.parametrize("indices", ["[[0, 2], [2, 3]]", "[3, 1, 3]", "[0]", "[]"])
@pytest.mark.parametrize("max_norm, norm_type", [(1.0, 2.0), (5.0, 1.0), (2.5, float("inf")), (100.0, 2.0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_max_norm_renormalises_the_weight_in_place(indices, max_norm, norm_type, dtype):
    """``embedding_renorm_``: each named row, once, scaled down to ``max_norm`` (the package
    raised NotImplementedError); the weight's version moves by one."""
    def run(L):
        w = L.arange(12.).reshape(4, 3).to(getattr(L, dtype)).requires_grad_()
        ix = L.tensor(eval(indices), dtype=L.long)
        r = L.nn.functional.embedding(ix, w, max_norm=max_norm, norm_type=norm_type)
        r.sum().backward()
        return r.detach(), w.detach(), w.grad, w._version
    same_or_same_error(run)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.embedding(L.tensor([0, 7]), L.ones(4, 3), max_norm=1.0),
    lambda L: L.nn.functional.embedding(L.tensor([0, -1]), L.ones(4, 3), max_norm=1.0),
    lambda L: L.nn.functional.embedding(L.tensor([0., 1]), L.ones(4, 3), max_norm=1.0),
    lambda L: L.nn.functional.embedding(L.tensor([0, 1]), L.ones(12), max_norm=1.0),
    lambda L: L.nn.functional.embedding(L.tensor([0, 1], dtype=L.int32), L.ones(4, 3), max_norm=1.0),
    lambda L: L.nn.Embedding(4, 3, max_norm=0.5)(L.tensor([1, 1, 2])).shape,
])
def test_embedding_max_norm_checks_as_torch(call):
    same_or_same_error(call)


# ----------------------------------------------------------------------------- empty convolutions
@pytest.mark.parametrize("x, w, kw", [
    ((3, 0, 5, 5), (6, 0, 3, 3), "stride=2"),
    ((2, 0, 3, 3), (4, 0, 2, 2), "padding=1, bias=L.ones(4, requires_grad=True)"),
    ((0, 2, 3, 3), (4, 2, 2, 2), "bias=L.ones(4, requires_grad=True)"),
    ((0, 2, 3, 3), (4, 1, 2, 2), "groups=2"),
    ((0, 0, 3, 3), (4, 0, 2, 2), ""),
    ((0, 2, 3, 3), (4, 2, 0, 2), ""),
])
def test_empty_convolutions_and_their_gradients(x, w, kw):
    """No input channels: torch's empty backend gives (N, 0, OH, OW) (the package read the
    weight's element 0); an empty batch backpropagates zeros (the package's reshape failed), and
    the bias gradient is sized by the weight."""
    def run(L):
        xi, wi = L.ones(*x, requires_grad=True), L.ones(*w, requires_grad=True)
        out = eval(f"L.nn.functional.conv2d(xi, wi, {kw})")
        out.sum().backward()
        return out.detach(), xi.grad, wi.grad, out.grad_fn.name()
    same_or_same_error(run)


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


# ----------------------------------------------------------------------------- complex tensors
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [None, "complex128"])
def test_scans_of_complex_tensors_stay_complex(op, dtype):
    """The silent one: a complex cumsum came back as int64 (the scan treated every dtype that
    is not a float as an integer)."""
    same_or_same_error(lambda L: getattr(L.tensor([[1 + 2j, 0.5j], [-1j, 3]]), op)(
        0, dtype=getattr(L, dtype) if dtype else None))


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


def test_logsumexp_of_a_complex_tensor_is_refused_not_made_real():
    """The silent one: the imaginary parts were dropped. torch computes a complex result; the
    package says it has no complex kernel."""
    with pytest.raises(NotImplementedError, match="logsumexp is not implemented for complex tensors"):
        internals.tensor([1 + 2j]).logsumexp(0)
    assert torch.tensor([1 + 2j]).logsumexp(0).is_complex()


@pytest.mark.parametrize("call", [
    lambda L: L.cat([L.ones(2, 3, dtype=L.complex64), L.ones(2, 3, requires_grad=True)], 0),
    lambda L: L.stack([L.ones(3, dtype=L.complex64), L.ones(3, requires_grad=True)]),
    lambda L: L.ones(2, requires_grad=True) * 1j,
    lambda L: L.ones(2, requires_grad=True).to(L.complex64),
])
def test_a_complex_result_in_a_graph_is_refused_not_detached(call):
    """The silent one: torch records the complex result in the graph; the package returned it
    without ``requires_grad``, so a later backward would skip it. It has no complex autograd
    and now says so."""
    assert call(torch).grad_fn is not None
    with pytest.raises(NotImplementedError, match="complex tensors cannot require gradients"):
        call(internals)
    with internals.no_grad():
        assert not call(internals).requires_grad


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
