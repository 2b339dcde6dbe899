"""Differential tests of internals' operators against torch.

1. PyTorch's own OpInfo sample inputs for every op internals implements, as given and made
   non-contiguous, compared with exact strides.
2. Output strides of elementwise ops over random layouts (the TensorIterator claim), by hypothesis.
3. In-place ops, reductions, matmul, softmax, error parity and numeric edge cases.

``python tests/aten/test_ops.py`` prints how many OpInfo samples ran and were skipped, per op. Each
op's test asserts the fraction that must run (``Adapter.min_ran``): all of them, today.
"""
import math

import hypothesis
import hypothesis.strategies as st
import pytest
import torch
from helpers import (  # noqa: F401
    ADAPTERS,
    ADD_ALPHA_TOL,
    DTYPE_PAIRS,
    FLOAT_DTYPES,
    LOG_SOFTMAX_TOL,
    MATMUL_TOL,
    OPINFOS,
    REDUCE_KW,
    TO_INTERNALS,
    TORCH_DTYPES,
    Adapter,
    Unsupported,
    assert_same,
    assert_same_error,
    assert_same_result,
    check_opinfo_samples,
    compare_call,
    fn,
    meth,
    opinfo_cases,
    opinfo_samples,
    run_opinfo_samples,
    same_outcome,
    to_ours,
)
from strategies import small_integer_tensor

import internals
from internals.aten.native.dispatch_stub import cpu_capability

# =============================================================================================
# 1. OpInfo sample inputs
# =============================================================================================


assert set(OPINFOS) == set(ADAPTERS), f"not in op_db: {set(ADAPTERS) - set(OPINFOS)}"


def opinfo_dtypes(name):
    """The course dtypes torch's OpInfo says the op supports on the CPU."""
    supported = OPINFOS[name].supported_dtypes("cpu")
    return [d for d in TORCH_DTYPES if d in supported]


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, TORCH_DTYPES))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


def test_every_course_op_has_an_opinfo():
    """The table covers every op internals implements that op_db has (nothing silently left out)."""
    implemented = {"neg", "abs", "exp", "log", "sqrt", "nn.functional.relu", "sigmoid", "tanh", "add", "sub",
                   "mul", "div.no_rounding_mode", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
                   "where", "sum", "mean", "prod", "amax", "amin", "max.reduction_with_dim",
                   "max.reduction_no_dim", "min.reduction_with_dim", "min.reduction_no_dim", "argmax", "argmin",
                   "mm", "bmm", "matmul", "softmax", "log_softmax", "clone", "contiguous", "view", "reshape",
                   "transpose", "t", "permute", "movedim", "expand", "narrow", "select", "squeeze", "unsqueeze",
                   "flatten", "unflatten", "diagonal", "unfold", "split", "chunk", "as_strided"}
    assert implemented <= set(ADAPTERS)
    assert all(len(opinfo_dtypes(name)) >= 4 for name in ADAPTERS)     # mean/softmax: the 4 float dtypes


# =============================================================================================
# Helpers for the tests below
# =============================================================================================



def twin(t):
    """``t`` as the given library wants it: torch's own tensor, or its internals copy."""
    ours = internals.from_torch(t) if isinstance(t, torch.Tensor) else t
    return lambda lib: t if lib is torch else ours


def prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def values_for(dtype, numel, seed):
    """Small values exact in every course dtype: integers, and quarters for float dtypes."""
    flat = small_integer_tensor((numel,), dtype, seed)
    return (flat.double() / 4).to(dtype) if dtype.is_floating_point else flat


@st.composite
def laid_out(draw, shape, dtype, expand=True, values=values_for):
    """A torch tensor of ``shape`` in a random layout over a larger storage.

    Its dims are permuted in memory, some sliced with a step of 2, some broadcast with expand
    (stride 0, when ``expand``), and the first element may sit at a storage offset.
    """
    ndim = len(shape)
    plain = draw(st.integers(0, 3)) == 0                         # a quarter are simply contiguous
    order = list(range(ndim)) if plain else draw(st.permutations(range(ndim)))   # memory order of the dims
    steps = [1 if plain else draw(st.sampled_from((1, 1, 2))) for _ in shape]
    expanded = [expand and not plain and draw(st.integers(0, 3)) == 0 for _ in shape]
    offset = 0 if plain else draw(st.integers(0, 2))
    sizes = [1 if e else n * step for n, step, e in zip(shape, steps, expanded)]
    flat = values(dtype, offset + prod(sizes), draw(st.integers(0, 2 ** 31 - 1)))
    inverse = [order.index(d) for d in range(ndim)]
    base = flat[offset:].view([sizes[d] for d in order]).permute(inverse)
    t = base[tuple(slice(None, None, 1 if e else step) for step, e in zip(steps, expanded))]
    return t.expand(shape)


@st.composite
def broadcast_operand(draw, shape, dtypes=None, scalars=True):
    """A tensor broadcastable to ``shape`` (leading dims dropped, some sizes 1), or a Python scalar."""
    if scalars and draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(PY_SCALARS))
    keep = draw(st.integers(0, len(shape)))
    own = [n if draw(st.booleans()) else 1 for n in shape[len(shape) - keep:]]
    return draw(laid_out(tuple(own), draw(st.sampled_from(dtypes or TORCH_DTYPES))))


def shapes(max_dims=4, max_side=4):
    return st.lists(st.integers(0, max_side), max_size=max_dims).map(tuple)


PY_SCALARS = [True, False, 0, 3, -2, 0.5, -2.25]
# The hypothesis tests below are cheap (a few ms an example): more examples than the profile's 60.
MORE_EXAMPLES = hypothesis.settings(max_examples=200)


# =============================================================================================
# 2. Output strides of elementwise ops: the TensorIterator claim
# =============================================================================================

UNARY = ["neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid", "tanh"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"]
OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
             "/": lambda a, b: a / b, "**": lambda a, b: a ** b, "==": lambda a, b: a == b,
             "<": lambda a, b: a < b, ">=": lambda a, b: a >= b}


@MORE_EXAMPLES
@hypothesis.given(data=st.data())
def test_unary_output_layout(data):
    shape = data.draw(shapes(), "shape")
    x = twin(data.draw(laid_out(shape, data.draw(st.sampled_from(TORCH_DTYPES), "dtype")), "x"))
    name = data.draw(st.sampled_from(UNARY), "op")
    same_outcome(lambda lib: getattr(lib, name)(x(lib)))
    same_outcome(lambda lib: getattr(x(lib), name)())


@MORE_EXAMPLES
@hypothesis.given(data=st.data())
def test_binary_output_layout(data):
    """Any two layouts and dtypes, broadcast against each other; Python scalars as ``other``."""
    shape = data.draw(shapes(), "shape")
    a = twin(data.draw(laid_out(shape, data.draw(st.sampled_from(TORCH_DTYPES), "dtype a")), "a"))
    name = data.draw(st.sampled_from(BINARY), "op")
    scalars = name not in ("maximum", "minimum")     # torch.maximum takes tensors only
    b = twin(data.draw(broadcast_operand(shape, scalars=scalars), "b"))
    same_outcome(lambda lib: getattr(lib, name)(a(lib), b(lib)))
    if not isinstance(b(torch), (bool, int, float)):     # and the other way round: ties go to the first
        same_outcome(lambda lib: getattr(lib, name)(b(lib), a(lib)))


@MORE_EXAMPLES
@hypothesis.given(data=st.data())
def test_operator_output_layout(data):
    """Python operators, with the scalar on either side (the reflected ``__radd__`` & co.)."""
    shape = data.draw(shapes(), "shape")
    a = twin(data.draw(laid_out(shape, data.draw(st.sampled_from(TORCH_DTYPES), "dtype a")), "a"))
    b = twin(data.draw(broadcast_operand(shape), "b"))
    op = OPERATORS[data.draw(st.sampled_from(sorted(OPERATORS)), "operator")]
    same_outcome(lambda lib: op(a(lib), b(lib)))
    same_outcome(lambda lib: op(b(lib), a(lib)))


@MORE_EXAMPLES
@hypothesis.given(data=st.data())
def test_where_output_layout(data):
    shape = data.draw(shapes(), "shape")
    cond = twin(data.draw(laid_out(shape, torch.bool), "condition"))
    a = twin(data.draw(broadcast_operand(shape), "input"))
    b = twin(data.draw(broadcast_operand(shape), "other"))
    same_outcome(lambda lib: lib.where(cond(lib), a(lib), b(lib)))


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(3, 4).t(),                       # transposed: output (1, 3)
    lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),       # any permutation is kept
    lambda lib: lib.ones(4, 6)[:, ::2],                   # not dense: contiguous output
    lambda lib: lib.ones(3, 1).expand(3, 4),              # a broadcast input alone: contiguous output
    lambda lib: lib.ones(2, 3, 4).transpose(0, 2)[1:],    # permuted and offset
    lambda lib: lib.ones(0, 3).t(),                       # zero-size
    lambda lib: lib.ones(()),                             # 0-dim
], ids=["t", "permute", "step", "expanded", "offset", "zero-size", "0-dim"])
def test_layouts_named_in_the_course(make):
    same_outcome(lambda lib: make(lib) + 1)
    same_outcome(lambda lib: make(lib).exp())
    same_outcome(lambda lib: make(lib).clone())
    same_outcome(lambda lib: make(lib).contiguous())
    same_outcome(lambda lib: lib.where(make(lib) > 0, make(lib), 0.0))


# =============================================================================================
# 3. In-place ops
# =============================================================================================

INPLACE = ["add_", "sub_", "mul_", "div_"]


def _inplace_run(t_self, other, name, **kwargs):
    """A fresh twin of ``t_self`` (same storage layout) per library, written in place by ``name``."""
    ours_self, theirs_self = internals.from_torch(t_self), _fresh_copy(t_self)
    o = twin(other)

    def run(lib):
        target = theirs_self if lib is torch else ours_self
        before = target._version
        result = getattr(target, name)(o(lib), **kwargs)
        assert result is target, f"{name} returns self"
        assert target._version == before + 1
        return target
    return run, ours_self, theirs_self


def _fresh_copy(t):
    """A copy of ``t`` with its own storage laid out the same way, at version 0."""
    flat = torch.empty(t.untyped_storage().nbytes() // t.element_size(), dtype=t.dtype)
    flat.untyped_storage().copy_(t.untyped_storage())
    return flat.as_strided(t.shape, t.stride(), t.storage_offset())


@MORE_EXAMPLES
@hypothesis.given(data=st.data())
def test_inplace_binary(data):
    """Values, version bump and errors (casting, overlap, shape) of add_/sub_/mul_/div_."""
    shape = data.draw(shapes(), "shape")
    t_self = data.draw(laid_out(shape, data.draw(st.sampled_from(TORCH_DTYPES), "self dtype")), "self")
    other = data.draw(broadcast_operand(shape), "other")
    name = data.draw(st.sampled_from(INPLACE), "op")
    run, ours_self, theirs_self = _inplace_run(t_self, other, name)
    outcome = same_outcome(run)
    if outcome is None:                 # refused: neither wrote anything
        assert ours_self._version == theirs_self._version == 0
    assert_same(ours_self, theirs_self)


@MORE_EXAMPLES
@hypothesis.given(data=st.data())
def test_copy_broadcasts_and_casts(data):
    shape = data.draw(shapes(), "shape")
    t_self = data.draw(laid_out(shape, data.draw(st.sampled_from(TORCH_DTYPES), "self dtype")), "self")
    src = data.draw(broadcast_operand(shape, scalars=False), "src")
    run, ours_self, theirs_self = _inplace_run(t_self, src, "copy_")
    same_outcome(run)
    assert_same(ours_self, theirs_self)


FILL_VALUES = [True, 0, 7, -3, 300, 2.5, -0.75, 1e6, float("nan"), float("inf")]


@MORE_EXAMPLES
@hypothesis.given(data=st.data())
def test_fill_and_zero(data):
    """fill_ (any value, any layout: an expanded tensor may be filled) and zero_."""
    shape = data.draw(shapes(), "shape")
    t_self = data.draw(laid_out(shape, data.draw(st.sampled_from(TORCH_DTYPES), "dtype")), "self")
    value = data.draw(st.sampled_from(FILL_VALUES), "value")
    run, ours_self, theirs_self = _inplace_run(t_self, value, "fill_")
    same_outcome(run)
    assert_same(ours_self, theirs_self)
    ours_self.zero_(), theirs_self.zero_()
    assert_same(ours_self, theirs_self)
    assert ours_self._version == theirs_self._version


def test_version_counter_is_shared_by_views():
    t = torch.zeros(3, 4)
    o = internals.from_torch(t)
    for lib, x in ((torch, t), (internals, o)):
        row, col = x[1], x[:, 2]
        row.add_(1)
        col.mul_(2)
        x.t().copy_(lib.ones(4, 3))
        x.fill_(0.5)
        x[0].zero_()
        x.exp_()
        assert x._version == row._version == col._version == 6
        assert (x + 1)._version == 0       # out of place: a new tensor, a new counter
    assert_same(o, t)


EXPANDED_MESSAGE = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location. Please clone() the tensor before performing the operation.")
PARTIAL_MESSAGE = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                   "a single memory location. Please clone() the tensor before performing the operation.")


@pytest.mark.parametrize("write", [
    lambda x, lib: x.add_(1), lambda x, lib: x.mul_(lib.ones(3, 4)), lambda x, lib: x.sub_(2),
    lambda x, lib: x.div_(2), lambda x, lib: x.copy_(lib.ones(3, 4)), lambda x, lib: x.exp_(),
], ids=["add_", "mul_", "sub_", "div_", "copy_", "exp_"])
def test_writing_into_an_expanded_tensor_is_refused(write):
    for lib in (torch, internals):
        x = lib.zeros(3, 1).expand(3, 4)
        with pytest.raises(RuntimeError) as e:
            write(x, lib)
        assert str(e.value) == EXPANDED_MESSAGE
        assert x._version == 0


def test_filling_an_expanded_tensor_is_allowed():
    same_outcome(lambda lib: lib.zeros(3, 1).expand(3, 4).fill_(2))
    same_outcome(lambda lib: lib.ones(3, 1).expand(3, 4).zero_())


@pytest.mark.parametrize("write", [
    lambda x: x[1:].add_(x[:-1]), lambda x: x[:-1].mul_(x[1:]), lambda x: x[1:].copy_(x[:-1]),
    lambda x: x[2:].sub_(x[:-2], alpha=2), lambda x: x.view(2, 5).mul_(x.view(2, 5)[0]),
], ids=["add_", "mul_", "copy_", "sub_", "broadcast read of a row"])
def test_partial_overlap_is_refused(write):
    for lib in (torch, internals):
        x = lib.arange(10.0)
        with pytest.raises(RuntimeError) as e:
            write(x)
        assert str(e.value) == PARTIAL_MESSAGE


def test_full_overlap_is_allowed():
    """Reading and writing the very same elements is fine: each element is read, then written."""
    def run(lib):
        x = lib.arange(6.0).view(2, 3)
        x.add_(x)
        x.t().mul_(x.t())          # the same elements through another view: a full overlap too
        return x
    same_outcome(run)


@pytest.mark.parametrize("write", [
    lambda lib: lib.zeros(3).add_(lib.ones(2, 3)),
    lambda lib: lib.zeros(3).copy_(lib.ones(2, 3)),
    lambda lib: lib.zeros(2, 3).mul_(lib.ones(3, 2)),
    lambda lib: lib.zeros(1, 3).add_(lib.ones(2, 3)),
], ids=["add_ grows", "copy_ grows", "mul_ mismatch", "add_ size-1 self"])
def test_inplace_shape_mismatch(write):
    same_outcome(write)


# =============================================================================================
# 4. Reductions
# =============================================================================================

def dyadic_values(dtype, numel, seed):
    """Values whose sums and products are exact in float32 in any order (torch and internals
    add in different orders): 0 and signed powers of two up to 2 for floats, -3..3 for integers."""
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        choices = torch.tensor([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], dtype=dtype)
        return choices[torch.randint(0, len(choices), (numel,), generator=g)]
    low, high = {torch.bool: (0, 1), torch.uint8: (0, 3)}.get(dtype, (-3, 3))
    return torch.randint(low, high + 1, (numel,), generator=g).to(dtype)


@st.composite
def reduction_inputs(draw, dtype):
    return draw(laid_out(draw(shapes(max_dims=3)), dtype, values=dyadic_values))


REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin"]


@st.composite
def reduction_calls(draw, t, name):
    """(args, kwargs) for ``t.<name>``: no dim, one dim, or (for sum/mean/amax/amin) a list of dims."""
    n = max(t.dim(), 1)
    single = st.integers(-n, n - 1)
    kwargs = {}
    kinds = ["none", "int", "list"] if name in ("sum", "mean", "amax", "amin") else ["none", "int"]
    kind = draw(st.sampled_from(kinds))
    if name == "prod" and kind == "none":
        return (), {}
    if kind == "int":
        kwargs["dim"] = draw(single)
    elif kind == "list":
        dims = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
        kwargs["dim"] = [d - n if draw(st.booleans()) else d for d in dims]
    if kind != "none" or name in ("argmax", "argmin"):
        kwargs["keepdim"] = draw(st.booleans())
    if name in ("sum", "mean", "prod") and draw(st.booleans()):
        kwargs["dtype"] = draw(st.sampled_from([torch.int64, torch.float32, torch.float64, torch.float16]))
    if name in ("max", "min") and kind == "none":
        kwargs = {}
    return (), kwargs


@MORE_EXAMPLES
@hypothesis.given(data=st.data())
def test_reductions(data):
    """Any layout, dim/dims (negative too), keepdim, dtype=; errors (mean of ints, amax over an
    empty dim, ...) compared by class and message."""
    name = data.draw(st.sampled_from(REDUCTIONS), "op")
    t = data.draw(reduction_inputs(data.draw(st.sampled_from(TORCH_DTYPES), "dtype")), "input")
    args, kwargs = data.draw(reduction_calls(t, name), "call")
    x = twin(t)

    def run(lib):
        kw = {k: (TO_INTERNALS[v] if lib is internals and isinstance(v, torch.dtype) else v) for k, v in kwargs.items()}
        return getattr(x(lib), name)(*args, **kw)
    same_outcome(run)


@pytest.mark.parametrize("name, expected", [("sum", 0.0), ("prod", 1.0), ("mean", math.nan)])
def test_reductions_over_nothing(name, expected):
    for shape, dim in [((0,), None), ((0, 3), 0), ((2, 0), 1), ((2, 0), (0, 1))]:
        if dim is None:
            out = same_outcome(lambda lib, shape=shape: getattr(lib.zeros(*shape), name)())
        elif name == "prod" and not isinstance(dim, int):
            continue                                    # prod takes one dim only
        else:
            out = same_outcome(lambda lib, shape=shape, dim=dim: getattr(lib.zeros(*shape), name)(dim))
        assert out is not None and (torch.isnan(out[1]).all() if math.isnan(expected) else (out[1] == expected).all())
    same_outcome(lambda lib: lib.zeros(0, 3, dtype=lib.int8).sum(0))     # int64 zeros


@pytest.mark.parametrize("call", [
    lambda x: x.amax(0), lambda x: x.amin((0, 1)), lambda x: x.max(0), lambda x: x.argmax(0),
    lambda x: x.argmin(0, keepdim=True), lambda x: x.max(), lambda x: x.argmax(), lambda x: x.amax(),
    lambda x: x.amax(1), lambda x: x.max(1), lambda x: x.argmin(1),
], ids=["amax0", "amin01", "max0", "argmax0", "argmin0", "max", "argmax", "amax", "amax1", "max1", "argmin1"])
def test_max_like_over_an_empty_dim(call):
    """Reducing a zero-size dim has no answer: IndexError (or RuntimeError for max() without dim);
    reducing another dim of an empty tensor is fine and empty."""
    same_outcome(lambda lib: call(lib.zeros(0, 3)))


NAN = math.nan


@pytest.mark.parametrize("values", [
    [1.0, NAN, 3.0], [NAN, 1.0, 2.0], [1.0, 2.0, NAN], [NAN, NAN, 0.0], [1.0, 5.0, 5.0], [-math.inf, NAN, math.inf],
])
@pytest.mark.parametrize("name", ["amax", "amin", "max", "min", "argmax", "argmin"])
def test_nan_propagates(name, values):
    t = torch.tensor([values, values[::-1]])
    same_outcome(lambda lib: getattr(twin(t)(lib), name)())
    same_outcome(lambda lib: getattr(twin(t)(lib), name)(1))
    same_outcome(lambda lib: getattr(twin(t.t())(lib), name)(0, keepdim=True))
    same_outcome(lambda lib: getattr(twin(t.to(torch.float16))(lib), name)(1))


def test_max_with_dim_returns_values_and_indices():
    t = torch.tensor([[2.0, 2.0, 1.0], [3.0, 1.0, 3.0]])
    for _lib, x in ((torch, t), (internals, internals.from_torch(t))):
        r = x.max(1)
        assert type(r).__name__ == "max" and r.values is r[0] and r.indices is r[1]
        values, indices = r
        assert values.tolist() == [2.0, 3.0] and indices.tolist() == [0, 0]   # ties: the first
    same_outcome(lambda lib: twin(t)(lib).min(0, keepdim=True))
    same_outcome(lambda lib: lib.max(twin(t)(lib), 1))


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_sum_and_prod_result_dtypes(dtype):
    """Integer and bool sums and products accumulate and return int64; floats keep their dtype."""
    t = torch.tensor([[1, 0, 1], [1, 1, 0]]).to(dtype)
    for name in ("sum", "prod"):
        same_outcome(lambda lib, name=name: getattr(twin(t)(lib), name)())
        same_outcome(lambda lib, name=name: getattr(twin(t)(lib), name)(1, keepdim=True))
        same_outcome(lambda lib, name=name: getattr(twin(t)(lib), name)(0, dtype=lib.float64))


def test_integer_sum_does_not_overflow_its_input_dtype():
    t = torch.full((1000,), 100, dtype=torch.int8)
    out = same_outcome(lambda lib: twin(t)(lib).sum())
    assert out[1].item() == 100000


# =============================================================================================
# 5. matmul, mm, bmm
# =============================================================================================

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (5, 3, 4)), ((1, 2, 3), (4, 3, 2)), ((2, 5, 2, 3), (1, 3, 4)), ((6, 1, 2, 3), (1, 5, 3, 2)),
    ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((0, 2, 3), (3, 1)), ((2, 3), (3, 0)),
]
MATMUL_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8]


def _matrix(shape, dtype, seed, transposed):
    """A matrix (batch) of ``shape``; ``transposed``: stored column-major (``.mT`` of a contiguous one)."""
    if transposed and len(shape) >= 2:
        return values_for(dtype, prod(shape), seed).view(*shape[:-2], shape[-1], shape[-2]).mT
    return values_for(dtype, prod(shape), seed).view(shape)


@pytest.mark.parametrize("dtype", MATMUL_DTYPES, ids=str)
@pytest.mark.parametrize("a_shape, b_shape", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
def test_matmul_shapes(a_shape, b_shape, dtype):
    """Every dim combination (vectors, matrices, broadcast batches, empty), contiguous or transposed.

    Values are small integers (quarters for floats) and K <= 3: every sum of products is exact in
    float32, the accumulation type of both, and rounds once to float16/bfloat16, so the
    comparison is exact (rtol = atol = 0), integer wrap-around (uint8) included.
    """
    for transposed in (False, True):
        a = twin(_matrix(a_shape, dtype, 1, transposed))
        b = twin(_matrix(b_shape, dtype, 2, transposed))
        same_outcome(lambda lib, a=a, b=b: lib.matmul(a(lib), b(lib)), rtol=0, atol=0)
        same_outcome(lambda lib, a=a, b=b: a(lib) @ b(lib), rtol=0, atol=0)
        if len(a_shape) == len(b_shape) == 2:
            same_outcome(lambda lib, a=a, b=b: a(lib).mm(b(lib)), rtol=0, atol=0)
        if len(a_shape) == len(b_shape) == 3:
            same_outcome(lambda lib, a=a, b=b: lib.bmm(a(lib), b(lib)), rtol=0, atol=0)


# =============================================================================================
# 6. softmax and log_softmax
# =============================================================================================

@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded", "0-dim"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_softmax_along_each_dim(name, layout, dtype):
    g = torch.Generator().manual_seed(0)
    base = (torch.randn(4, 6, 5, generator=g) * 3).to(dtype)
    t = {"contiguous": base, "transposed": base.permute(2, 0, 1), "sliced": base[:, ::2, 1:],
         "expanded": base[:, :1].expand(4, 3, 5), "0-dim": base[0, 0, 0]}[layout]
    x = twin(t)
    tol = LOG_SOFTMAX_TOL.get(dtype, (None, None)) if name == "log_softmax" else (None, None)
    for dim in range(-max(t.dim(), 1), max(t.dim(), 1)):
        same_outcome(lambda lib, dim=dim: getattr(lib, name)(x(lib), dim), rtol=tol[0], atol=tol[1])
        same_outcome(lambda lib, dim=dim: getattr(x(lib), name)(dim, dtype=lib.float64))


def test_softmax_dtype_argument():
    """``dtype=`` converts the input first: an integer input then works, a float16 one computes in float32."""
    t = torch.arange(6).view(2, 3)
    same_outcome(lambda lib: twin(t)(lib).softmax(1, dtype=lib.float32))
    same_outcome(lambda lib: twin(t)(lib).log_softmax(0, dtype=lib.float64))
    same_outcome(lambda lib: twin(t.half())(lib).softmax(1, dtype=lib.float32))
    same_outcome(lambda lib: twin(t)(lib).softmax(1))                      # integers without dtype=: refused
    same_outcome(lambda lib: twin(t.float())(lib).softmax(2))              # dim out of range


def test_softmax_is_stable_for_large_inputs():
    """The maximum is subtracted first: exp(1000) would overflow."""
    t = torch.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    out = same_outcome(lambda lib: twin(t)(lib).softmax(1))
    assert torch.isfinite(out[1]).all()
    same_outcome(lambda lib: twin(t)(lib).log_softmax(1))


# =============================================================================================
# 7. Error parity
# =============================================================================================

ERRORS = {
    "shapes that don't broadcast": lambda lib: lib.ones(2, 3) + lib.ones(4),
    "3-d shapes that don't broadcast": lambda lib: lib.ones(2, 1, 3) * lib.ones(5, 4, 1, 2),
    "where shapes": lambda lib: lib.where(lib.ones(2, 3) > 0, lib.ones(3), lib.ones(4, 1, 2)),
    "bool negation": lambda lib: -lib.tensor([True, False]),
    "bool neg()": lambda lib: lib.tensor([True]).neg(),
    "bool subtraction": lambda lib: lib.tensor([True]) - lib.tensor([False]),
    "bool minus int": lambda lib: lib.tensor([True]) - 1,
    "int minus bool": lambda lib: 1 - lib.tensor([True]),
    "bool abs": lambda lib: lib.tensor([True]).abs(),
    "bool relu": lambda lib: lib.tensor([True]).relu(),
    "bool pow": lambda lib: lib.tensor([True]) ** lib.tensor([True]),
    "mean of ints": lambda lib: lib.tensor([1, 2]).mean(),
    "mean of ints, dim": lambda lib: lib.tensor([[1, 2]], dtype=lib.int8).mean(1),
    "argmax of bool": lambda lib: lib.tensor([True, False]).argmax(),
    "argmin of bool": lambda lib: lib.tensor([True, False]).argmin(0),
    "mm of bool": lambda lib: lib.tensor([[True]]).mm(lib.tensor([[True]])),
    "mm shape mismatch": lambda lib: lib.ones(2, 3).mm(lib.ones(4, 5)),
    "mm dtype mismatch": lambda lib: lib.ones(2, 3).mm(lib.ones(3, 5, dtype=lib.float64)),
    "mm dtype mismatch, int": lambda lib: lib.ones(2, 3, dtype=lib.float16).mm(lib.ones(3, 5, dtype=lib.int64)),
    "bmm dtype mismatch": lambda lib: lib.ones(2, 2, 3).bmm(lib.ones(2, 3, 5, dtype=lib.float64)),
    "mm of a vector": lambda lib: lib.ones(2, 3).mm(lib.ones(3)),
    "bmm shape mismatch": lambda lib: lib.ones(2, 2, 3).bmm(lib.ones(2, 4, 5)),
    "matmul shape mismatch": lambda lib: lib.ones(2, 3).matmul(lib.ones(4, 5)),
    "matmul 1-d mismatch": lambda lib: lib.ones(3).matmul(lib.ones(4)),
    "matmul batch mismatch": lambda lib: lib.ones(2, 2, 3).matmul(lib.ones(3, 3, 5)),
    "matmul 0-d": lambda lib: lib.ones(()).matmul(lib.ones(3)),
    "int pow, negative scalar exponent": lambda lib: lib.tensor([1, 2], dtype=lib.int32).pow(-2),
    "int ** negative scalar": lambda lib: lib.tensor([1, 2]) ** -1,
    "float alpha with ints": lambda lib: lib.tensor([1, 2]).add(lib.tensor([1, 2]), alpha=0.5),
    "float alpha with int sub": lambda lib: lib.tensor([1, 2]).sub(1, alpha=2.5),
    "alpha overflows int8": lambda lib: lib.tensor([1], dtype=lib.int8).add(lib.tensor([1], dtype=lib.int8), alpha=300),
    "in-place widening": lambda lib: lib.tensor([1, 2], dtype=lib.int32).add_(1.5),
    "in-place bool": lambda lib: lib.tensor([True]).mul_(2),
    "fill_ overflow": lambda lib: lib.zeros(2, dtype=lib.int8).fill_(300),
    "fill_ float16 overflow": lambda lib: lib.zeros(2, dtype=lib.float16).fill_(1e6),
    "reduction dim out of range": lambda lib: lib.ones(2, 3).sum(2),
    "repeated reduction dim": lambda lib: lib.ones(2, 3).sum((0, -2)),
    "softmax of ints": lambda lib: lib.tensor([1, 2]).softmax(0),
    "where with an int condition": lambda lib: lib.where(lib.tensor([1, 0]), lib.ones(2), lib.zeros(2)),
    "max of nothing": lambda lib: lib.zeros(0).max(),
    "argmax of nothing": lambda lib: lib.zeros(0, 2).argmax(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_parity(name):
    """Same exception class and the same message."""
    same_outcome(ERRORS[name])
    # (and it is an error in torch: no test that cannot fail); the class varies by entry, same_outcome checked it
    with pytest.raises(Exception):  # noqa: B017
        ERRORS[name](torch)


def test_different_devices():
    """internals has a (simulated) cuda device; torch's CPU build cannot make cuda tensors, so
    only internals is checked: mixing devices is refused, a 0-dim CPU tensor may join."""
    a = internals.ones(3, device="cuda")
    b = internals.ones(3)
    for op in (lambda: a + b, lambda: b * a, lambda: internals.where(b > 0, a, b), lambda: a.add_(b),
               lambda: b.sub_(a), lambda: a.view(1, 3).mm(b.view(3, 1)), lambda: internals.maximum(b, a)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            op()
    assert a._version == b._version == 0
    assert (a + internals.tensor(2.0)).device.type == "cuda"       # a 0-dim CPU tensor joins
    assert (a * 2).device.type == "cuda"
    assert_same((a + internals.tensor(2.0)).cpu(), torch.ones(3) + 2)
    assert_same(b.copy_(a * 3), torch.full((3,), 3.0))             # copy_ is how data crosses devices


# =============================================================================================
# 8. Numeric edge cases
# =============================================================================================

@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_half_precision_rounds_once(op, dtype):
    """float16/bfloat16: both compute in float32 and round the result once, so the results are
    equal bit for bit (rtol = atol = 0), with a tensor, a Python scalar or an integer operand."""
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(64, 33, generator=g) * 10).to(dtype)
    b = (torch.randn(64, 33, generator=g) * 10).to(dtype)
    i = torch.randint(-3000, 3000, (33,), generator=g, dtype=torch.int32)
    for other in (b, b[:, :1], b.t().contiguous().t(), 2.3, -0.7, i, torch.tensor(1.1, dtype=torch.float64)):
        ta, tb = twin(a), twin(other)
        same_outcome(lambda lib, ta=ta, tb=tb: getattr(lib, op)(ta(lib), tb(lib)), rtol=0, atol=0)
    reflected = OPERATORS[{"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]]
    for scalar in (2.3, -0.7, 3):                    # scalar on the left: 2.3 - x, 2.3 / x, ...
        same_outcome(lambda lib, scalar=scalar: reflected(scalar, twin(a)(lib)), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_precision_alpha_rounds_once(dtype):
    """add/sub with alpha != 1: alpha rounded to the 16-bit type, then a + alpha * b in float32
    as one fused multiply-add, rounded once to the 16-bit type: torch's vectorised loop.

    Its scalar loop (the tail that does not fill two vectors, small tensors) rounds alpha * b to
    the 16-bit type first (see ADD_ALPHA_TOL); 1024 elements fill whole vectors of 32 and 64.
    torch's x86-64 default build computes every element that way (its generic vectors are
    arrays of 16-bit values): there the two may differ by that rounding of the product, up to
    an ulp at the largest |a| + |alpha * b|.
    """
    g = torch.Generator().manual_seed(1)
    a = (torch.randn(1024, generator=g) * 10).to(dtype)
    b = (torch.randn(1024, generator=g) * 10).to(dtype)
    for alpha in (-3.125, 0.1, 3):
        atol = 0
        if cpu_capability() == "default":
            largest = float((a.float().abs() + (alpha * b.float()).abs()).max())
            atol = 2.0 ** (math.frexp(largest)[1] - (11 if dtype is torch.float16 else 8))
        ours_a, ours_b = internals.from_torch(a), internals.from_torch(b)
        assert_same(ours_a.add(ours_b, alpha=alpha), a.add(b, alpha=alpha), rtol=0, atol=atol)
        assert_same(ours_a.sub(ours_b, alpha=alpha), a.sub(b, alpha=alpha), rtol=0, atol=atol)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8], ids=str)
def test_integer_overflow_wraps_around(dtype):
    info = torch.iinfo(dtype)
    t = torch.tensor([info.min, info.max, info.max - 1, 0, 1]).to(dtype)
    u = torch.tensor([1, 1, 3, info.max, info.max]).to(dtype)
    x, y = twin(t), twin(u)
    for op in (lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a * 100,
               lambda a, b: a + 200, lambda a, b: a ** 3, lambda a, b: a.add(b, alpha=3)):
        same_outcome(lambda lib, op=op: op(x(lib), y(lib)), rtol=0, atol=0)
    same_outcome(lambda lib: -x(lib), rtol=0, atol=0)            # -(-128) is -128 in int8
    same_outcome(lambda lib: x(lib).abs(), rtol=0, atol=0)
    same_outcome(lambda lib: x(lib).add_(y(lib)), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32], ids=str)
def test_division_by_zero(dtype):
    t = torch.tensor([1, -1, 0, 5]).to(dtype)
    z = torch.zeros(4, dtype=dtype)
    same_outcome(lambda lib: twin(t)(lib) / twin(z)(lib), rtol=0, atol=0)      # inf, -inf, nan, inf
    same_outcome(lambda lib: twin(t)(lib) / 0, rtol=0, atol=0)
    same_outcome(lambda lib: twin(t)(lib) / 0.0, rtol=0, atol=0)
    same_outcome(lambda lib: twin(t)(lib) / -0.0, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_transcendental_edges(dtype):
    """exp overflows to inf (and underflows to 0); log of 0 is -inf, of a negative nan; sqrt of a
    negative is nan; sigmoid and tanh saturate; NaN and inf go through."""
    t = torch.tensor([0.0, -0.0, -1.0, 1.0, 12.0, 100.0, 1000.0, -1000.0, math.inf, -math.inf, math.nan]).to(dtype)
    x = twin(t)
    for name in ("exp", "log", "sqrt", "sigmoid", "tanh", "relu", "abs", "neg"):
        ours, theirs = same_outcome(lambda lib, name=name: getattr(x(lib), name)())
        zeros = theirs == 0              # assert_close cannot tell 0.0 from -0.0: check the sign bits
        assert torch.equal(torch.signbit(ours.to_torch()[zeros]), torch.signbit(theirs[zeros])), name


def test_exp_of_integers_is_float():
    same_outcome(lambda lib: lib.tensor([0, 1, 100, -100], dtype=lib.int16).exp())
    same_outcome(lambda lib: lib.tensor([True, False]).sqrt())
    same_outcome(lambda lib: lib.tensor([4, 0, -4], dtype=lib.uint8).log())


def test_pow_edges():
    same_outcome(lambda lib: lib.tensor([0.0, -8.0, 2.0]) ** lib.tensor([-1.0, 1 / 3, 0.5]))   # inf, nan, sqrt 2
    # negative tensor exponents: 0 unless |base| is 1 (0 ** -1 too, in torch's integer pow)
    same_outcome(lambda lib: lib.tensor([0, 2, -2, 1, -1], dtype=lib.int32)
                 ** lib.tensor([-1, -1, -3, -5, -5], dtype=lib.int32), rtol=0, atol=0)
    same_outcome(lambda lib: 2 ** lib.tensor([0, 10, 62, 63, 64]), rtol=0, atol=0)       # int64 wraps
    same_outcome(lambda lib: lib.tensor([2.0, 3.0], dtype=lib.float16) ** 16)             # overflows to inf
    # pow(Tensor, Scalar) short-cuts exponents 0 and 1 (a fill, a copy): even bool has those
    same_outcome(lambda lib: lib.tensor([True, False]) ** True, rtol=0, atol=0)
    same_outcome(lambda lib: lib.tensor([True, False]).pow(0), rtol=0, atol=0)
    same_outcome(lambda lib: lib.tensor([math.nan, -math.inf]) ** 0, rtol=0, atol=0)
    same_outcome(lambda lib: lib.tensor([True]) ** lib.tensor(True))                      # a tensor exponent: no


def test_maximum_minimum_propagate_nan():
    a = torch.tensor([1.0, math.nan, 3.0, math.nan, -0.0])
    b = torch.tensor([math.nan, 2.0, 1.0, math.nan, 0.0])
    for name in ("maximum", "minimum"):
        same_outcome(lambda lib, name=name: getattr(lib, name)(twin(a)(lib), twin(b)(lib)))
        same_outcome(lambda lib, name=name: getattr(lib, name)(twin(b)(lib), twin(a)(lib)))


if __name__ == "__main__":
    # The per-op counts quoted in the report: python tests/aten/test_ops.py
    total_ran = total_skipped = 0
    for name in ADAPTERS:
        counts = [run_opinfo_samples(name, OPINFOS[name], ADAPTERS[name], d) for d in opinfo_dtypes(name)]
        ran, skipped = sum(c[0] for c in counts), sum(c[1] for c in counts)
        reasons = set().union(*(c[2] for c in counts))
        total_ran, total_skipped = total_ran + ran, total_skipped + skipped
        print(f"{name:28s} dtypes {len(counts):2d}  ran {ran:4d}  skipped {skipped:3d}  {sorted(reasons) or ''}")
    print(f"{'total':28s}           ran {total_ran:4d}  skipped {total_skipped:3d}")
