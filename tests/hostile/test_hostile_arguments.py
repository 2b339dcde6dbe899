"""Arguments torch refuses, in torch's order and with torch's exception classes.

Each case differed from torch 2.13 before it was fixed."""
import gc
import sys

import numpy as np
import pytest
import torch
from helpers import assert_same, assert_same_error, same_error, same_or_same_error

import internals


# ----------------------------------------------------------------------------- messages
@pytest.mark.parametrize("call", [
    lambda L: L.ones(6).view((2, 3), 1), lambda L: L.ones(6).view([2, 3], 1),
    lambda L: L.ones(6).view((2, 3), (1,)), lambda L: L.ones(2).add((2, 3)),
])
def test_argument_types_are_named_as_torch_names_them(call):
    """``got (tuple, int)``: the given arguments by their Python type names, not ``tuple of (int, int)``."""
    ours, theirs = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(ours) == str(theirs)


def same_first_error_line(fn):
    """Both libraries raise the same class with the same first line."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours).splitlines()[0] == str(theirs).splitlines()[0]


# ----------------------------------------------------------------------------- devices
@pytest.mark.parametrize("args", [
    ("cuda:01",), ("cuda:\u0661",), ("",), (" cuda",), ("cuda:",), (":0",), ("cuda:0:0",), ("cuda:+1",), ("cpu:-1",),
    ("cuda:0", 0), ("cuda", -1), ("cuda", "0"), (True,), (None,), (1.5,), (-1,),
])
def test_device_strings_and_arguments_refused_as_torch_refuses(args):
    same_first_error_line(lambda lib: lib.device(*args))


def test_a_bare_integer_is_an_accelerator_index():
    """torch.device(0) is the accelerator's device 0 (this torch build has none, so only internals runs it)."""
    assert internals.device(0) == internals.device("cuda:0") and internals.device(2).index == 2


# ----------------------------------------------------------------------------- empty scan/topk outputs
EMPTY = [(0,), (0, 3), (3, 0), (2, 0, 4), (0, 0), (1, 0, 1)]


def _transposed(L, shape):
    x = L.zeros(shape)
    return x.transpose(0, -1) if x.dim() > 1 else x


@pytest.mark.parametrize("shape", EMPTY)
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "topk", "sort"])
def test_empty_results_have_torchs_strides(shape, op):
    """``.contiguous()`` keeps an empty tensor's strides: cumsum of a transposed (0, 3) tensor
    had strides (1, 3) where torch's contiguous output has (1, 1)."""
    for dim in range(-len(shape), len(shape)):
        def run(L, dim=dim):
            x = _transposed(L, shape)
            return x.topk(0, dim) if op == "topk" else getattr(x, op)(dim)
        ours, theirs = run(internals), run(torch)
        for o, t in zip(*(r if isinstance(r, tuple) else (r,) for r in (ours, theirs))):
            assert_same(o, t)


def test_a_failed_allocation_leaves_no_error_behind():
    """A storage whose allocation fails is collected without an exception in ``__del__``
    (Python reports those as ignored: the allocator must not be read before it is set)."""
    seen = []
    previous, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        with pytest.raises(RuntimeError, match="can't allocate memory"):
            internals.empty(2**62, dtype=internals.uint8)
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert seen == []


# ----------------------------------------------------------------------------- joining, flipping, rolling
@pytest.mark.parametrize("call", [
    lambda L: L.cat(L.ones(2)),
    lambda L: L.cat([L.ones(2), 1]),
    lambda L: L.cat((L.ones(2), None)),
    lambda L: L.stack([L.ones(2), np.int64(1)]),
    lambda L: L.cat([L.ones(2)], dim=None),
    lambda L: L.cat([L.ones(2)], True),
    lambda L: L.stack(L.ones(2)),
    lambda L: L.stack([L.ones(2)], 1.0),
    lambda L: L.cat([]),
    lambda L: L.stack(()),
    lambda L: L.cat(tensors=[L.ones(2), L.ones(1)], dim=0),
    lambda L: L.stack([L.arange(6.), L.empty(0)], 3),
    lambda L: L.stack([L.arange(6.), L.empty(0)], -4),
])
def test_cat_and_stack_parse_their_lists_as_torch(call):
    """A list holding a number or None raised AttributeError inside the kernel, a tensor for the
    list asked for its truth value, ``dim=True`` was taken as 1; stack compared sizes before
    checking its dim."""
    same_or_same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.flip(L.ones(2, 3), [0, 0]),
    lambda L: L.flip(L.ones(2, 3), (1, -1)),
    lambda L: L.flip(L.ones(2, 3), (0, 0, 7)),
    lambda L: L.roll(L.ones(2, 3), [], []),
    lambda L: L.roll(L.ones(0, 3), [], []),
    lambda L: L.roll(L.tensor(3.), 1, 0),
    lambda L: L.roll(L.tensor(3.), 1, 5),
    lambda L: L.roll(L.tensor(3.), [1, 2], [0, 1]),
    lambda L: L.roll(L.tensor(3.), 1),
    lambda L: L.unbind(L.tensor(3.), 9),
    lambda L: L.unbind(L.tensor(3.), -1),
    lambda L: L.ones(2, 3).unfold(0, -1, 1),
    lambda L: L.ones(2, 3).unfold(0, -1, 0),
    lambda L: L.tensor(3.).unfold(0, -1, 1),
    lambda L: L.tensor_split(L.ones(2, 3), L.tensor([1., 2.]), 5),
    lambda L: L.tensor_split(L.ones(2, 3), L.tensor([[1]]), 5),
    lambda L: L.tensor_split(L.ones(2, 3), 0, 5),
    lambda L: L.tensor_split(L.ones(2, 3), [1], 5),
    lambda L: L.tensor_split(L.tensor(3.), 0, 5),
])
def test_dims_and_sizes_are_checked_in_torchs_order(call):
    """Duplicate flip dims, an empty roll, 0-dim roll and unbind, a negative unfold size and
    tensor_split's checks before its dim's: other messages (or a tensor) before."""
    same_or_same_error(call)


# ----------------------------------------------------------------------------- random numbers, seeds, ints
@pytest.mark.parametrize("call", [
    lambda L: L.bernoulli(L.tensor([0.5, 2.])),
    lambda L: L.bernoulli(L.tensor([0.5, float("nan")])),
    lambda L: L.bernoulli(L.tensor([-0.1, 0.5], dtype=L.float64)),
    lambda L: L.bernoulli(L.tensor([0., 1.], dtype=L.float16)),
    lambda L: L.empty(3).normal_(0, float("nan")),
    lambda L: L.empty(3).normal_(0, -1),
    lambda L: L.empty(3).normal_(0, -0.25),
    lambda L: L.empty(3).uniform_(1, 0),
    lambda L: L.empty(3).uniform_(2.5, -1e20),
    lambda L: L.empty(3).exponential_(-1),
    lambda L: L.empty(3).exponential_(0),
    lambda L: L.randperm(300, dtype=L.int8),
    lambda L: L.randperm(129, dtype=L.int8),
    lambda L: L.randperm(128, dtype=L.int8),
    lambda L: L.randperm(5, dtype=L.bool),
    lambda L: L.randperm(1, dtype=L.bool),
    lambda L: L.randperm(0, dtype=L.bool),
    lambda L: L.randint(0, 2**63, (3,)),
    lambda L: L.randint(2**63, (3,)),
    lambda L: L.randint(-2**63 - 1, 0, (3,)),
    lambda L: L.zeros(2).sum(2**63),
])
def test_random_arguments_are_checked_as_torch_checks_them(call):
    """Probabilities outside [0, 1] or NaN, a NaN std, a permutation that does not fit its
    dtype or is bool, and ints past int64 (which wrapped into a wrong range) were accepted."""
    def run(L):
        L.manual_seed(0)
        return call(L)
    same_or_same_error(run)


@pytest.mark.parametrize("call", [
    lambda L: L.einsum(3, L.ones(2, 2)), lambda L: L.einsum(None, L.ones(2)), lambda L: L.einsum("ij", 3),
    lambda L: L.einsum("ij", [L.ones(2, 2), 3]), lambda L: L.einsum("i,i->", L.ones(2), None),
    lambda L: L.einsum("ij,jk", L.ones(2, 3), L.ones(3, 2)),
])
def test_einsum_goes_through_its_binding(call):
    """An equation that is not a string raised AttributeError, an operand that is not a tensor
    NotImplementedError from the dispatcher."""
    same_or_same_error(call)


@pytest.mark.parametrize("size", ["2", "2.0", "np.int64(1)", "[1, 1]", "(2, -1)", "L.tensor(1)", "L.tensor([1, 2])",
                                  "-1", "[np.int64(1), 1]"])
@pytest.mark.parametrize("dim", [0, -1, 9])
@pytest.mark.parametrize("how", ["function", "method"])
def test_split_routes_what_is_not_an_int_to_split_with_sizes(size, dim, how):
    """torch.split and Tensor.split are Python: a float or a NumPy integer goes to
    split_with_sizes and is refused there (internals split by it); a negative size is refused
    before the dim is checked."""
    def run(L):
        x = L.arange(6.).reshape(2, 3)
        return L.split(x, eval(size), dim) if how == "function" else x.split(eval(size), dim)
    same_or_same_error(run)


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


@pytest.mark.parametrize("shape, repeats", [((3,), (2**63 - 1,)), ((5,), (2**62,)), ((2,), (2**63 - 1,)),
                                            ((1, 3), (2**61, 9))])
def test_repeat_multiplies_its_sizes_in_int64(shape, repeats):
    same_error(lambda L: L.ones(*shape).repeat(*repeats))


# ----------------------------------------------------------------------------- fresh results' strides
@pytest.mark.parametrize("shape", [(4, 1), (1, 4), (2, 1, 1), (1, 1)])
@pytest.mark.parametrize("make", [lambda x: x, lambda x: x.transpose(0, -1), lambda x: x[..., ::2]])
@pytest.mark.parametrize("op", [lambda x: x.cumsum(0), lambda x: x.cumprod(0), lambda x: x.sort(0).values,
                                lambda x: x.argsort(0), lambda x: x.log_softmax(0), lambda x: x.softmax(-1),
                                lambda x: x.log_softmax(-1)])
def test_fresh_results_take_torchs_strides_on_size_one_dims(shape, make, op):
    """A (4, 1) result is contiguous with strides (1, 1) or (1, 4); torch's scans and
    log_softmax make (1, 1) (fresh contiguous strides), sort keeps a dense input's strides.
    internals kept the strides its computation happened to leave."""
    same_or_same_error(lambda L: op(make(L.ones(shape))))


@pytest.mark.parametrize("size, stride", [((2,), (-1,)), ((2, 3), (-1, 1)), ((-1,), (-1,)), ((3, 2), (1, -2))])
def test_empty_strided_with_a_negative_stride_overflows_as_torchs(size, stride):
    same_error(lambda L: L.empty_strided(size, stride))
