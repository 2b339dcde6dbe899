"""Indexing and assignment by index: torch's parsing, checks and order.

Each case differed from torch 2.13 before it was fixed."""
import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, assert_same_error, logging_modes, same_error, same_or_same_error

import internals


def same_first_error_line(fn):
    """Both libraries raise the same class with the same first line."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours).splitlines()[0] == str(theirs).splitlines()[0]


# ----------------------------------------------------------------------------- overlapping writes
@pytest.mark.parametrize("geometry", [((4,), (0,), 0), ((2, 3), (0, 1), 1), ((2, 2), (0, 0), 3)])
def test_scatter_into_a_self_overlapping_view_is_refused(geometry):
    """Two elements of ``self`` at one address: which scatter wins would be a race; torch refuses."""
    def run(lib):
        x = lib.arange(24.0).as_strided(*geometry)
        x.scatter_(0, lib.zeros((1,) + tuple(x.shape[1:]), dtype=lib.int64), 3.0)
    same_first_error_line(run)


# ----------------------------------------------------------------------------- masks
@pytest.mark.parametrize("index", [
    lambda L: (L.tensor(True),), lambda L: (L.tensor(False),), lambda L: (L.tensor([1, 0, 1], dtype=L.uint8),),
    lambda L: (L.tensor([True, False, True]),), lambda L: (L.tensor([True, False]),),
])
@pytest.mark.parametrize("value", [lambda L: L.tensor(-1.0), lambda L: L.tensor(7)])
def test_index_put_with_one_mask_and_one_value_is_masked_fill(index, value):
    """``canDispatchToMaskedFill``: a 0-dim mask fills everything (it was a NumPy ValueError), a
    uint8 mask is refused as masked_fill_ refuses it, and the value's dtype need not match."""
    def run(lib):
        return lib.arange(12.0).reshape(3, 4).index_put_(index(lib), value(lib))
    try:
        theirs = run(torch)
    except (RuntimeError, IndexError):
        same_first_error_line(run)
        return
    assert_same(run(internals), theirs)


def test_setitem_with_a_uint8_mask_is_refused():
    def run(lib):
        lib.arange(12.0).reshape(3, 4)[lib.tensor([1, 0, 1], dtype=lib.uint8)] = -1.0
    same_first_error_line(run)


def test_setitem_with_a_mask_after_a_slice():
    def run(lib):
        x = lib.arange(12.0).reshape(3, 4)
        x[:, lib.tensor([True, False, True, False])] = lib.tensor(7)
        return x
    assert_same(run(internals), run(torch))


def _warned(fn):
    with pytest.warns(UserWarning) as record:
        result = fn()
    return result, [str(w.message).split(" (Triggered internally")[0] for w in record]


def test_a_short_list_holding_sequences_is_a_tuple_of_indices():
    """NumPy's heuristic, which torch keeps with a warning: ``x[[[0, 1], [1, 2]]]`` is
    ``x[[0, 1], [1, 2]]`` (two elements); it was read as one (2, 2) index tensor."""
    for index in ([[0, 1], [1, 2]], [slice(None), 1], [None, 0], [Ellipsis, [1, 2]]):
        ours, ours_warned = _warned(lambda index=index: internals.arange(12.).reshape(3, 4)[index])
        theirs, their_warned = _warned(lambda index=index: torch.arange(12.).reshape(3, 4)[index])
        assert_same(ours, theirs)
        assert ours_warned == their_warned


def same(fn, **kw):
    assert_same(fn(internals), fn(torch), **kw)


def test_an_empty_list_indexes_as_an_int64_tensor():
    same(lambda L: L.arange(12.).reshape(3, 4)[[]])
    same(lambda L: L.arange(12.).reshape(3, 4)[[], 1:])


def test_a_string_index_is_a_type_error():
    same_error(lambda L: L.arange(3.)["a"])


def _setitem(L, index, value_shape):
    x = L.arange(12.).reshape(3, 4)
    x[index] = L.arange(float(np.prod(value_shape))).reshape(value_shape)
    return x


@pytest.mark.parametrize("index", [0, (slice(None), 1), (slice(0, 2),)])
@pytest.mark.parametrize("value_shape", [(1, 1, 4), (1, 4), (1, 1, 1), (1, 2, 4), (2, 1, 4), (2,), (1, 3, 1)])
def test_setitem_drops_the_values_leading_ones_then_expands(index, value_shape):
    """``copy_to``: leading size-1 dims of the value are ignored, then it is expanded to the target
    (with expand's messages); a (1, 1, 4) value for a row of 4 was refused."""
    try:
        expected = _setitem(torch, index, value_shape)
    except RuntimeError:
        same_error(lambda L: _setitem(L, index, value_shape))
    else:
        assert_same(_setitem(internals, index, value_shape), expected)


@pytest.mark.parametrize("value", [lambda L: L.ones(4), lambda L: L.ones(1, 4), lambda L: L.ones(1),
                                   lambda L: L.tensor(2.)])
def test_setitem_runs_the_operators_torchs_copy_to_runs(value):
    """A copy when the sizes agree, a fill from a 0-dim value, else a view then an expand: the
    expand used to run whatever the sizes, and a 0-dim value was copied, not filled."""
    log_t, log_i = [], []
    theirs, ours = logging_modes(log_t, log_i)
    with theirs:
        torch.zeros(3, 4)[0] = value(torch)
    with ours:
        internals.zeros(3, 4)[0] = value(internals)
    assert log_i == log_t


def test_setitem_with_a_tensor_index_drops_leading_ones_too():
    def run(L):
        x = L.zeros(3, 4)
        x[L.tensor([0, 2])] = L.ones(1, 1, 4)
        return x
    same(run)


def test_masked_select_names_the_mask_first():
    same_error(lambda L: L.ones(3, 4).masked_select(L.tensor([True, False])))


# ----------------------------------------------------------------------------- gather and scatter
@pytest.mark.parametrize("call", [
    lambda L: L.zeros(3, 4).scatter_add(0, L.tensor([[0., 1.]]), L.ones(2, 5)),
    lambda L: L.zeros(3, 4).scatter_reduce(0, L.tensor([[0, 1, 2, 0, 1]]), L.ones(2, 5), "sum"),
    lambda L: L.zeros(3, 4).scatter(0, L.tensor([[0, 1, 2, 0, 1]]), 7.),
    lambda L: L.zeros(3, 4).scatter(0, L.tensor([[0, 1]]), 7., reduce="add"),
    lambda L: L.zeros(3, 4).scatter_add(0, L.tensor([[0, 1, 2]]), L.ones(2, 2)),
    lambda L: L.zeros(0, 4).scatter(1, L.tensor([[0, 1], [2, 0]]), L.ones(2, 5)),
    lambda L: L.zeros(3, 4).scatter(0, L.tensor([[0, 1]]), L.ones(2, 5, dtype=L.long)),
    lambda L: L.zeros(3, 4).scatter(0, L.tensor([[0, 1]]), L.ones(5)),
    lambda L: L.zeros(3, 4).gather(0, L.tensor([[0, 1, 2, 0, 1]])),
    lambda L: L.zeros(3, 4).scatter_reduce(1, L.tensor([[0, 1]]), L.ones(2, 5, dtype=L.long), "amax",
                                           include_self=False),
])
def test_scatter_checks_in_torchs_order_with_torchs_messages(call):
    """``scatter_shape_check`` says "Expected index ... and to be no larger size than src"
    (gather's "Size does not match" was used), checks dtypes first, and names ``scatter`` for
    ``scatter_add`` too."""
    same_or_same_error(call)


# ----------------------------------------------------------------------------- index_put_, take, index_select
@pytest.mark.parametrize("index", ["[0, 0, 1]", "[5]", "[-6]", "[0.]", "[1, 0] uint8", "[]"])
@pytest.mark.parametrize("value", ["[1, 2]", "[[1.], [1.]]", "1.", "True"])
@pytest.mark.parametrize("size", [5, 0])
def test_index_put_checks_indices_then_value_shape_then_dtype_then_bounds(index, value, size):
    """``make_info`` checks the indices (and that a dim of size 0 is not indexed), then
    ``make_index_put_iterator`` the value's shape and dtype; the kernel checks the bounds last.
    The dtype was checked first."""
    def run(L):
        vals, _, dt = index.partition(" ")
        ix = L.tensor(eval(vals), dtype=getattr(L, dt) if dt else (L.long if vals == "[]" else None))
        return L.zeros(size).index_put_((ix,), L.tensor(eval(value)), accumulate=True)
    same_or_same_error(run)


@pytest.mark.parametrize("indices", ["(None,)", "(L.tensor([0]), None)", "[None, L.tensor([1])]"])
def test_index_put_binding_takes_tensors_only(indices):
    """The Nones of ``x[:, i] = v`` reach the operator from the indexing code; the binding refuses them."""
    same_error(lambda L: L.zeros(3, 3).index_put_(eval(indices), L.ones(1)))


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(0)[L.tensor([0, 0])],
    lambda L: L.zeros(2, 0)[:, L.tensor([[0], [1]])],
    lambda L: L.zeros(2, 0)[:, L.tensor([], dtype=L.long)],
])
def test_indexing_a_dim_of_size_0_is_refused_before_the_kernel(call):
    same_or_same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.take(L.zeros(0, 4), L.tensor([[0, 1], [2, 0]])),
    lambda L: L.take(L.zeros(0), L.tensor([-1])),
    lambda L: L.take(L.zeros(0), L.tensor([], dtype=L.long)),
    lambda L: L.index_select(L.tensor(0.), 0, L.empty(0, dtype=L.long)),
    lambda L: L.index_select(L.tensor(0.), 0, L.tensor([0, 0])),
    lambda L: L.index_select(L.tensor(0.), 0, L.tensor([0])),
    lambda L: L.index_select(L.tensor(0.), 1, L.tensor([0.])),
    lambda L: L.index_select(L.zeros(0, 4), 0, L.tensor(0)),
    lambda L: L.index_select(L.zeros(2, 0), 1, L.tensor([0])),
    lambda L: L.index_select(L.zeros(0, 4), 0, L.tensor([], dtype=L.long)),
])
def test_take_and_index_select_on_empty_and_0_dim_tensors(call):
    """A 0-dim tensor with an empty index gave an empty vector (torch: an error); empty
    sources named the index, not the emptiness."""
    same_or_same_error(call)


# ----------------------------------------------------------------------------- repeat_interleave
@pytest.mark.parametrize("x", ["L.arange(6.)", "L.arange(24.).reshape(2, 3, 4)", "L.empty(0, 3)", "L.tensor(3.)"])
@pytest.mark.parametrize("repeats", ["2", "0", "-1", "L.tensor(2)", "L.tensor([[1]])", "L.tensor([1., 2.])",
                                     "L.tensor([], dtype=L.long)"])
@pytest.mark.parametrize("dim", [None, 0, -1, 1])
@pytest.mark.parametrize("output_size", [None, 0, 3, 12])
def test_repeat_interleave_validates_as_torch(x, repeats, dim, output_size):
    """An output_size that disagrees, repeats of two dims, float repeats and a 0-dim input
    were accepted or refused with other errors."""
    same_or_same_error(lambda L: L.repeat_interleave(eval(x), eval(repeats), dim, output_size=output_size))


@pytest.mark.parametrize("repeats", ["[1, 2, 0]", "[1, -2, 0]", "[[1, 2]]", "[1., 2.]", "[]"])
@pytest.mark.parametrize("output_size", [None, 3, 5])
def test_repeat_interleave_of_counts(repeats, output_size):
    same_or_same_error(lambda L: L.repeat_interleave(L.tensor(eval(repeats), dtype=None if repeats != "[]"
                                                              else L.long), output_size=output_size))


# ----------------------------------------------------------------------------- sorting and selection
@pytest.mark.parametrize("op", ["sort", "argsort", "median", "mode", "cumsum", "kthvalue", "topk"])
@pytest.mark.parametrize("dim", [0, -1, 1, 3, -4])
def test_a_0_dim_tensor_takes_only_dims_0_and_minus_1(op, dim):
    """sort, argsort, median, mode and cumsum of a 0-dim tensor accepted any dim."""
    def run(L):
        x = L.tensor(3.)
        return getattr(L, op)(x, 1, dim) if op in ("kthvalue", "topk") else getattr(L, op)(x, dim)
    same_or_same_error(run)


@pytest.mark.parametrize("x", ["L.tensor(3.)", "L.tensor([True])", "L.tensor(True)", "L.ones(2, 3).bool()",
                               "L.ones(0, 3).bool()"])
@pytest.mark.parametrize("call", [
    lambda L, x: L.kthvalue(x, 1), lambda L, x: L.kthvalue(x, 1, 0), lambda L, x: L.median(x),
    lambda L, x: L.median(x, 0), lambda L, x: L.mode(x, 0), lambda L, x: L.topk(x, 0), lambda L, x: L.topk(x, 1),
    lambda L, x: L.topk(x, 100), lambda L, x: L.topk(x, -1, 0, largest=False),
])
def test_selection_refuses_bool_in_its_kernel_and_copies_a_0_dim_input(x, call):
    """kthvalue and median of bool were computed (torch: not implemented), topk checked bool
    before k, and topk of a 0-dim tensor with k=0 failed in a reshape."""
    same_or_same_error(lambda L: call(L, eval(x)))


@pytest.mark.parametrize("x", ["L.arange(4.)", "L.arange(4.).expand(3, 4)", "L.tensor(2.)", "L.empty(0, 4)"])
def test_where_takes_a_uint8_condition_with_torchs_warning(x):
    """torch warns once a process (TORCH_WARN_ONCE), internals once a call site."""
    def run(L):
        return L.where(L.tensor([1, 0, 2, 0], dtype=L.uint8), eval(x), 0.)
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor. This behavior is deprecated"):
        run(internals)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_or_same_error(run)


# ----------------------------------------------------------------------------- masked_fill, softmax
@pytest.mark.parametrize("mask", ["L.tensor([True, False])", "L.ones(5, 2, 3, 4, dtype=L.bool)",
                                  "L.ones(3, 1, dtype=L.bool)", "L.ones(1, 2, 3, 4, dtype=L.bool)"])
@pytest.mark.parametrize("call", [
    lambda L, x, m: x.clone().masked_fill_(m, 1.), lambda L, x, m: x.masked_fill(m, 1.),
    lambda L, x, m: x.masked_fill(m, L.tensor([1.])), lambda L, x, m: x.clone().masked_fill_(m, L.tensor([1.])),
    lambda L, x, m: x.masked_fill(m, L.tensor(2.)),
])
def test_masked_fill_broadcasts_as_torch(mask, call):
    """In place, TensorIterator broadcasts self with the mask (self named first) and refuses to
    grow self; out of place, the mask is broadcast with self before the value is checked."""
    same_or_same_error(lambda L: call(L, L.zeros(2, 3, 4), eval(mask)))


@pytest.mark.parametrize("start", ["L.tensor(1)", "L.tensor([1])", "L.tensor(1.)", "L.tensor(True)",
                                   "L.tensor(1, dtype=L.int8)", "L.tensor(-1)", "np.int64(1)", "1"])
@pytest.mark.parametrize("x", ["L.arange(6.)", "L.arange(6.).reshape(2, 3)[:, ::2]", "L.empty(0, 2)", "L.tensor(2.)"])
@pytest.mark.parametrize("how", ["function", "method"])
def test_narrow_takes_a_0_dim_integer_tensor_as_start(start, x, how):
    """torch's binding tries ``narrow.Tensor`` first; a one-element vector was read as an int,
    a float tensor refused with a TypeError."""
    def run(L):
        t = eval(x)
        return L.narrow(t, 0, eval(start), 1) if how == "function" else t.narrow(0, eval(start), 1)
    same_or_same_error(run)


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


# ----------------------------------------------------------------------------- scatter's and empty_strided's layouts
@pytest.mark.parametrize("make", [lambda L: L.ones(4, 3).t(), lambda L: L.arange(10.).as_strided((3, 4), (1, 1)),
                                  lambda L: L.arange(10.).as_strided((0, 4), (2**50, 1)),
                                  lambda L: L.ones(4, 3)[:, :2]])
@pytest.mark.parametrize("op", [lambda L, x, i: x.scatter(0, i, 1.), lambda L, x, i: x.scatter(0, i, x),
                                lambda L, x, i: x.scatter_add(0, i, x),
                                lambda L, x, i: x.scatter_reduce(0, i, x, "sum"),
                                lambda L, x, i: x.scatter(0, i, 2., reduce="add")])
def test_out_of_place_scatters_are_contiguous(make, op):
    """The structured scatters allocate a contiguous result and copy ``self`` in; internals
    cloned ``self`` with its layout (a transposed input gave a transposed result)."""
    same_or_same_error(lambda L: op(L, make(L), L.zeros(make(L).shape, dtype=L.long)))
