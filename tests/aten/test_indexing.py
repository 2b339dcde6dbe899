"""Operators of ``aten/native/indexing.py`` that torch 2.13 declares structured, declared so here:
``gather`` and ``scatter_add`` (``TensorAdvancedIndexing.cpp``). ``gather.out`` is primary (a
meta step that lays out the output of index's shape, refuses overlaps and checks the index; an
impl step that writes each element at the output's own strides), ``gather`` derived;
``scatter_add.out`` likewise (self copied into the output, then src added), ``scatter_add`` and
``scatter_add_`` derived. Values, layouts of fresh, kept and resized outputs, warnings, errors and
fake tensors against torch's. (OpInfo samples and gradients: ``test_shape_and_indexing_ops.py``.)

Then the rest of the scatter family (``scatter``, ``scatter_reduce.two``: OpInfo samples, values
with NaNs, gradients, out= forms, meta steps and errors) and ``index_put_(accumulate=True)`` in
16-bit floats, each add rounded as torch's CPU rounds it; last ``take_along_dim``
(CompositeImplicitAutograd in torch: a ``gather`` after broadcasting), with the gradient, graph and
CUDA tests it shares with ``diagflat``; and ``index_add`` declared structured (its out= form,
errors, meta step, 0-d tensors and second derivative).

Tests ``internals.aten.native.indexing`` (aten/src/ATen/native/TensorAdvancedIndexing.cpp).
"""

import pytest
import torch
from helpers import (
    TORCH_DTYPES,
    Adapter,
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    assert_same_error,
    assert_second_derivatives_match_torch,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    native_entries,
    opinfo_cases,
    same_error,
    same_or_same_error,
    same_outcome,
)
from helpers import run_everyday_call as _run

import internals
from internals.aten.native import indexing


def test_gather_is_declared_structured_as_torch_declares_it():
    assert_derived_from_structured_out("gather", "out", indexing)


def _x(L):
    return L.arange(12.).reshape(3, 4)


def _index(L):
    return L.tensor([[2, 0], [1, 1]])


GATHER_CASES = {
    "a transposed input": lambda L: L.gather(_x(L).t(), 1, _index(L)),
    "a transposed index: a contiguous result": lambda L: L.gather(_x(L), 1, _index(L).t()),
    "into an empty out": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(0)),
    "resized, warns": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(5)),
    "kept strides": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(2, 2).t()),
    "an int32 index along dim 0": lambda L: L.gather(_x(L), 0, L.tensor([[0, 2, 1, 0]], dtype=L.int32)),
    "an empty index of any dtype": lambda L: L.gather(_x(L), 1, L.empty(0, 2)),
    "out beside the index in one storage": lambda L: (lambda i: L.gather(
        L.arange(12).reshape(3, 4), 1, i[:, :1], out=i[:, 1:]))(L.tensor([[0, 1], [1, 2]])),
}


@pytest.mark.parametrize("case", GATHER_CASES)
def test_gather_matches_torch(case):
    assert_out_variant_matches_torch(GATHER_CASES[case])


GATHER_ERRORS = {
    "an out of another dtype": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(0, dtype=L.int64)),
    "an int16 index": lambda L: L.gather(_x(L), 1, _index(L).short()),
    "an index out of bounds": lambda L: L.gather(_x(L), 1, L.tensor([[5, 0]])),
    "a dim out of range": lambda L: L.gather(_x(L), 3, _index(L)),
    "an index larger than self": lambda L: L.gather(_x(L), 0, L.tensor([[0, 1, 2, 3, 0]])),
    "out over the input": lambda L: (lambda x: L.gather(x, 1, L.tensor([[0, 1]]), out=x[0, :2].view(1, 2)))(_x(L)),
    "out with a stride of 0": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(2, 1).expand(2, 2)),
}


@pytest.mark.parametrize("case", GATHER_ERRORS)
def test_gather_errors_match_torch(case):
    same_error(GATHER_ERRORS[case])


FAKE_PROGRAMS = {
    "gather": lambda L, x: L.gather(x.t(), 1, L.tensor([[2, 0], [1, 1]]).t()),
    "gather out resized": lambda L, x: L.gather(x, 0, L.tensor([[0, 1, 2]]), out=L.empty(5)),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_run_the_meta_step(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])


# ---- scatter_add: scatter_add.out primary; scatter_add and scatter_add_ derived
def test_scatter_add_is_declared_structured_as_torch_declares_it():
    assert_derived_from_structured_out("scatter_add", "out", indexing)
    assert native_entries()["scatter_add_"]["structured_delegate"] == "scatter_add.out"


def _self(L):
    return L.arange(15.).reshape(5, 3).t()


def _scatter_index(L):
    return L.tensor([[0, 1, 2, 0], [2, 0, 0, 1]])


SCATTER_ADD_CASES = {
    "a transposed self: a contiguous result": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5)),
    "in place on a transposed self": lambda L: _self(L).scatter_add_(1, _scatter_index(L), L.ones(2, 5)),
    "into an empty out": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5), out=L.empty(0)),
    "kept strides": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5), out=L.empty(5, 3).t()),
    "resized, warns": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5), out=L.empty(4)),
    "repeated indices, integers": lambda L: L.scatter_add(L.arange(4), 0, L.tensor([0, 0, 3]), L.tensor([1, 2, 3])),
    "an empty index": lambda L: L.scatter_add(_self(L), 0, L.empty(0, dtype=L.int64), L.ones(2, 5)),
}


@pytest.mark.parametrize("case", SCATTER_ADD_CASES)
def test_scatter_add_matches_torch(case):
    assert_out_variant_matches_torch(SCATTER_ADD_CASES[case])


SCATTER_ADD_ERRORS = {
    "src of another dtype": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5, dtype=L.float64)),
    "an out of another dtype": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5),
                                                       out=L.empty(0, dtype=L.float64)),
    "in place from a part of self": lambda L: (lambda x: x.scatter_add_(0, L.tensor([0, 1]), x[2:]))(L.arange(4.)),
    "in place from an overlapping part": lambda L: (lambda x: x[:2].scatter_add_(0, L.tensor([0, 1]), x[1:3]))(
        L.arange(4.)),
    "a float index": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L).float(), L.ones(2, 5)),
    "an index out of bounds": lambda L: L.scatter_add(_self(L), 0, L.tensor([[5]]), L.ones(2, 5)),
    "in place on a broadcast self": lambda L: L.ones(2, 1).expand(2, 3).scatter_add_(0, L.tensor([[0]]),
                                                                                     L.ones(1, 1)),
}


@pytest.mark.parametrize("case", SCATTER_ADD_ERRORS)
def test_scatter_add_errors_match_torch(case):
    same_error(SCATTER_ADD_ERRORS[case])


def test_scatter_add_fake_tensors_run_the_meta_step():
    index = [[0, 1, 2], [2, 0, 0]]
    assert_fake_matches_real(lambda L, x: L.scatter_add(x.t(), 1, L.tensor(index), x.t()))
    assert_fake_matches_real(lambda L, x: x.scatter_add_(0, L.tensor(index), x * 2))
    assert_fake_matches_real(lambda L, x: L.scatter_add(x, 0, L.tensor(index), x, out=L.empty(5)))


# =============================================================================================
# OpInfo samples of scatter_reduce.two (one reduction at a time) and take_along_dim
# =============================================================================================
SCATTER_REDUCE_ADAPTERS = {
    **{f"scatter_reduce.{r}": Adapter(internals.scatter_reduce, "scatter_reduce", kwargs=("include_self",))
       for r in ("sum", "prod", "mean", "amax", "amin")},
}
TAKE_ALONG_DIM_ADAPTERS = {
    "take_along_dim": Adapter(internals.take_along_dim, "take_along_dim", kwargs=("dim",)),
}
ADAPTERS = {**SCATTER_REDUCE_ADAPTERS, **TAKE_ALONG_DIM_ADAPTERS}


OPINFO_CASES = (opinfo_cases(SCATTER_REDUCE_ADAPTERS, TORCH_DTYPES)
                + opinfo_cases(TAKE_ALONG_DIM_ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool)))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


# =============================================================================================
# scatter_reduce.two
# =============================================================================================

def _scatter_inputs(lib, dtype=torch.float64, nan=False):
    gen = torch.Generator().manual_seed(1)
    self = torch.randn(3, 4, generator=gen, dtype=torch.float64)
    src = torch.randn(2, 4, generator=gen, dtype=torch.float64)
    if nan:
        src[0, 1] = float("nan")
    self, src = self.to(dtype), src.to(dtype)
    index = torch.tensor([[0, 1, 0, 2], [1, 1, 0, 0]])
    if lib is torch:
        return self, index, src
    return internals.from_torch(self), internals.from_torch(index), internals.from_torch(src)


REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_int_inputs(lib, dtype):
    d = getattr(lib, str(dtype)[6:])
    self = lib.tensor([[3, -2, 7, 1], [0, 5, -4, 2], [6, 1, 1, -3]], dtype=d)
    src = lib.tensor([[-1, 4, 2, 9], [3, -6, 0, 5]], dtype=d)
    return self, lib.tensor([[0, 1, 0, 2], [1, 1, 0, 0]]), src


@pytest.mark.parametrize("reduce", REDUCTIONS + ("max", "min"))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int64, torch.int16])
def test_scatter_reduce_values(reduce, include_self, dtype):
    """Out of place and in place, with a NaN in the source for the floats."""
    for nan in (False, True) if dtype.is_floating_point else (False,):
        def inputs(lib, nan=nan):
            return _scatter_inputs(lib, dtype, nan) if dtype.is_floating_point else _scatter_int_inputs(lib, dtype)
        (x_t, i_t, s_t), (x_o, i_o, s_o) = inputs(torch), inputs(internals)
        theirs = x_t.scatter_reduce(0, i_t, s_t, reduce, include_self=include_self)
        assert_same(internals.scatter_reduce(x_o, 0, i_o, s_o, reduce, include_self=include_self), theirs,
                    rtol=0, atol=0)
        assert x_o.scatter_reduce_(0, i_o, s_o, reduce, include_self=include_self) is x_o
        assert_same(x_o, theirs, rtol=0, atol=0)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients(reduce, include_self):
    theirs_in = [t.requires_grad_() if t.is_floating_point() else t for t in _scatter_inputs(torch)]
    ours_in = [t.requires_grad_() if t.dtype.is_floating_point else t for t in _scatter_inputs(internals)]
    if reduce == "prod":        # zeros: two in one group (column 0), a single one in another
        with torch.no_grad():
            theirs_in[2][0, 0] = theirs_in[2][1, 0] = theirs_in[2][0, 3] = 0
        with internals.no_grad():
            ours_in[2][0, 0] = ours_in[2][1, 0] = ours_in[2][0, 3] = 0
    theirs = theirs_in[0].scatter_reduce(0, theirs_in[1], theirs_in[2], reduce, include_self=include_self)
    ours = ours_in[0].scatter_reduce(0, ours_in[1], ours_in[2], reduce, include_self=include_self)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "ScatterReduceBackward0"
    weights = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    (theirs * weights).sum().backward()
    (ours * internals.from_torch(weights)).sum().backward()
    for o, t in ((ours_in[0], theirs_in[0]), (ours_in[2], theirs_in[2])):
        assert_same(o.grad, t.grad, rtol=1e-12, atol=1e-12)
    ours_in = [t.detach().requires_grad_() if t.dtype.is_floating_point else t for t in _scatter_inputs(internals)]
    assert internals.autograd.gradcheck(
        lambda a, b: a.scatter_reduce(0, ours_in[1], b, reduce, include_self=include_self), (ours_in[0], ours_in[2]))


SCATTER_ERRORS = {
    "unknown reduction": lambda lib, x, i, s: x.scatter_reduce(0, i, s, "Sum"),
    "src dtype": lambda lib, x, i, s: x.scatter_reduce(0, i, s.to(lib.float32), "sum"),
    "index dtype": lambda lib, x, i, s: x.scatter_reduce(0, i.to(lib.int16), s, "amax"),
    "index too large": lambda lib, x, i, s: x.scatter_reduce(0, i + 5, s, "prod", include_self=False),
    "index rank": lambda lib, x, i, s: x.scatter_reduce(0, i[0], s, "mean"),
    "bool mean": lambda lib, x, i, s: (x > 0).scatter_reduce(0, i, s > 0, "mean"),
}


@pytest.mark.parametrize("case", SCATTER_ERRORS)
def test_scatter_reduce_errors(case):
    f = SCATTER_ERRORS[case]
    ours, theirs = assert_same_error(lambda: f(internals, *_scatter_inputs(internals)),
                                     lambda: f(torch, *_scatter_inputs(torch)))
    assert str(ours) == str(theirs)


# =============================================================================================
# the scatter family, declared as torch declares it: a meta and an impl step, out= the primary
# =============================================================================================
SCATTERS = ("scatter.src", "scatter_.src", "scatter.value", "scatter_.value", "scatter.reduce", "scatter_.reduce",
            "scatter.value_reduce", "scatter_.value_reduce", "scatter_reduce.two", "scatter_reduce_.two")


@pytest.mark.parametrize("name", SCATTERS)
def test_scatters_are_derived_from_their_structured_out(name):
    assert_derived_from_structured_out(name, "out", indexing)


SCATTER_OUT_CASES = {
    "src into an empty out": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(0, dtype=L.float64)),
    "src resized, warns": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(5, dtype=L.float64)),
    "src keeps out's strides": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(4, 3, dtype=L.float64).t()),
    "src into self": lambda L, x, i, s: L.scatter(x, 0, i, s, out=x),
    "src along dim 1": lambda L, x, i, s: L.scatter(x, 1, i[:, :2], s, out=L.empty(0, dtype=L.float64)),
    "value": lambda L, x, i, s: L.scatter(x, 0, i, 2.5, out=L.empty(0, dtype=L.float64)),
    "value reduce": lambda L, x, i, s: L.scatter(x, 0, i, 2.0, reduce="multiply", out=L.empty(3, 4, dtype=L.float64)),
    "value of an empty index": lambda L, x, i, s: L.scatter(x, 0, i[:0], 1e300, out=L.empty(0, dtype=L.float64)),
    **{f"scatter_reduce {r}{' without self' * (not keep)}": (
        lambda L, x, i, s, r=r, keep=keep: L.scatter_reduce(x, 0, i, s, r, include_self=keep,
                                                              out=L.empty(0, dtype=L.float64)))
       for r in REDUCTIONS for keep in (True, False)},
}


@pytest.mark.parametrize("case", SCATTER_OUT_CASES)
def test_scatter_out_variants_match_torch(case):
    """out= gives torch's values in torch's layout, with torch's resize warning."""
    assert_out_variant_matches_torch(lambda L: SCATTER_OUT_CASES[case](L, *_scatter_inputs(L)))


def test_scatter_reduce_out_matches_torch():
    """scatter's deprecated ``reduce=`` with a tensor source (torch warns once a process, so its
    warning is compared in test_scatter_reduce_warns, not here)."""
    same_or_same_error(lambda L: (lambda x, i, s: L.scatter(x, 0, i, s, reduce="add", out=L.empty(0, dtype=L.float64)))(
        *_scatter_inputs(L)))


SCATTER_OUT_ERRORS = {
    "out of another dtype": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(0)),
    "value into another dtype": lambda L, x, i, s: L.scatter(x, 0, i, 1, out=L.empty(0, dtype=L.int64)),
    "out is the index": lambda L, x, i, s: L.scatter(x.long(), 0, i, s.long(), out=i),
    "out is the source": lambda L, x, i, s: L.scatter(x[:2], 0, i[:, :1], s, out=s),
    "out overlaps itself": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(1, dtype=L.float64).expand(3, 4)),
    "in place over its source": lambda L, x, i, s: x.scatter_(0, i[:, :1], x[1:]),
    "unknown reduce": lambda L, x, i, s: L.scatter(x, 0, i, 1.0, reduce="sum", out=L.empty(0, dtype=L.float64)),
    "unknown reduce in place": lambda L, x, i, s: x.scatter_(0, i, 1.0, reduce="mean"),
    "scatter_reduce's unknown reduce": lambda L, x, i, s: L.scatter_reduce(x, 0, i, s, "add", out=L.empty(0)),
    "bool mean into out": lambda L, x, i, s: L.scatter_reduce(x > 0, 0, i, s > 0, "mean",
                                                              out=L.empty(0, dtype=L.bool)),
}


@pytest.mark.parametrize("case", SCATTER_OUT_ERRORS)
def test_scatter_out_errors(case):
    """torch's exception class and message, from the meta step (checks, dtype, overlap)."""
    same_error(lambda L: SCATTER_OUT_ERRORS[case](L, *_scatter_inputs(L)))


@pytest.mark.parametrize("case", ["src", "value", "value_reduce", "two"])
def test_scatter_meta_steps_lay_out_fakes(case):
    """Fake tensors reach every scatter's meta step: the output of self's shape and dtype."""
    program = {
        "src": lambda L, x, i, s: L.scatter(x, 0, i, s, out=L.empty(0, dtype=L.float64)),
        "value": lambda L, x, i, s: L.scatter(x, 0, i, 1.5),
        "value_reduce": lambda L, x, i, s: x.scatter_(0, i, 1.5, reduce="add"),
        "two": lambda L, x, i, s: L.scatter_reduce(x, 0, i, s, "amax", out=L.empty(4, 3, dtype=L.float64).t()),
    }[case]
    assert_fake_matches_real(program, lambda: _scatter_inputs(internals))


# =============================================================================================
# index_put_(accumulate=True) in 16-bit floats: each add rounds on torch's CPU
# =============================================================================================

@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", ["one element, 3000 ones", "rows", "strided target", "mixed values"])
def test_index_put_accumulate_rounds_each_add(dtype, case):
    def run(lib):
        d = getattr(lib, str(dtype)[6:])
        gen = torch.Generator().manual_seed(2)
        if case == "one element, 3000 ones":
            return lib.zeros(3, dtype=d).index_put_((lib.zeros(3000, dtype=lib.int64),), lib.ones(3000, dtype=d),
                                                    accumulate=True)
        if case == "rows":
            return lib.zeros(3, 2, dtype=d).index_put_((lib.tensor([0, 2] * 700),), lib.ones(1400, 2, dtype=d),
                                                       accumulate=True)
        if case == "strided target":
            x = lib.full((4, 3), 100.0, dtype=d)[:, 1]
            return x.index_put_((lib.tensor([3, 0, 3, 3, 1]),), lib.tensor(0.3, dtype=d), accumulate=True)
        values = torch.randn(500, generator=gen).to(dtype)
        index = torch.randint(0, 4, (500,), generator=gen)
        if lib is not torch:
            values, index = internals.from_torch(values), internals.from_torch(index)
        return lib.full((4,), 7.0, dtype=d).index_put_((index,), values, accumulate=True)
    assert_same(run(internals), run(torch), rtol=0, atol=0)


# =============================================================================================
# take_along_dim: CompositeImplicitAutograd in torch (a gather after broadcasting), so its graph
# holds the nodes of the operators it decomposes into; compared with diagflat's, its partner
# of the same kind (tests/aten/test_tensor_shape.py), where one test looks at both
# =============================================================================================
X = "lib.arange(12.).reshape(3, 4)"
TAKE_ALONG_DIM_PROGRAMS = [
    f"lib.take_along_dim({X}, lib.tensor([[0], [2], [1]]), 1)", f"lib.take_along_dim({X}, lib.tensor([3, 0]))",
    f"lib.take_along_dim({X}, lib.tensor([[1, 0, 2, 0]]), 0)", f"{X}.take_along_dim(lib.tensor([[1, 0]]), dim=-1)",
    f"lib.take_along_dim({X}.t(), lib.tensor([[2, 0, 1]]), 0)",
    f"lib.take_along_dim({X}.requires_grad_(), lib.tensor([[0], [2], [1]]), 1)",
    "lib.take_along_dim(lib.arange(24.).reshape(2, 3, 4), lib.tensor([[[1]], [[2]]]), 2)",
    "lib.take_along_dim(lib.arange(24.).reshape(2, 3, 4), lib.arange(24.).reshape(2, 3, 4).argmax(1, True), 1)",
    f"lib.take_along_dim({X}, lib.tensor([1]), 1)", f"lib.take_along_dim({X}, lib.tensor([[1]], dtype=lib.int32), 1)",
    f"lib.take_along_dim({X}, lib.tensor([[1]]), 3)", f"lib.take_along_dim({X}, lib.tensor([15]))",
    f"lib.take_along_dim({X}, lib.tensor([[-1], [5], [-9]]), 1)", f"lib.take_along_dim({X}, lib.tensor([-1]))",
    "lib.take_along_dim(lib.zeros(3, 0), lib.tensor([[1]]), 1)",
    "lib.take_along_dim(lib.zeros(3, 2), lib.zeros(3, 0, dtype=lib.long), 1)",
    f"lib.take_along_dim({X}, lib.tensor([[1, 2]]), 1)",
    f"lib.take_along_dim({X}, lib.tensor([[1]]), 1, out=lib.empty(0))",
]


@pytest.mark.parametrize("program", TAKE_ALONG_DIM_PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


@pytest.mark.parametrize("build", [
    lambda lib, x, t: lib.take_along_dim(x * t, lib.tensor([[2, 2], [0, 1]]), 1),
    lambda lib, x, t: lib.take_along_dim(x * t, lib.tensor([5, 0, 5])),
    lambda lib, x, t: lib.take_along_dim(x.t() * t.t(), lib.tensor([[1, 0]]), 0),
    lambda lib, x, t: lib.diagflat(x * t, -1),
    lambda lib, x, t: lib.diagflat((x * t).t(), 2),
])
def test_gradients_and_nodes(build):
    compare_gradients_and_nodes(build, allow_unused=True)


def test_graph_holds_the_decomposition():
    names = []
    for lib in (torch, internals):
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        y = lib.take_along_dim(x.t(), lib.tensor([[0, 2, 1]]), 0)
        z = lib.diagflat(x.t(), 1)
        names.append([(type(n).__name__, [type(m).__name__ for m, _ in n.next_functions])
                      for n in (y.grad_fn, z.grad_fn, z.grad_fn.next_functions[0][0])])
    assert names[0] == names[1]


def test_cuda_matches_cpu():
    x = internals.arange(24.0).reshape(2, 3, 4)
    i = internals.tensor([[[3, 0]], [[1, 1]]])
    for f in (lambda t, i: internals.take_along_dim(t, i, 2), lambda t, i: internals.diagflat(t[0], 1)):
        assert f(x.cuda(), i.cuda()).cpu().tolist() == f(x, i).tolist()


def test_devices_must_match():
    """torch's ``checkDevice`` message (TensorAdvancedIndexing.cpp; torch here has no CUDA)."""
    index = internals.zeros(2, 1, dtype=internals.long, device="cuda")
    with pytest.raises(RuntimeError, match=r"^Expected tensor to have cpu Device, but got tensor with cuda:0 Device "
                                           r"\(while checking arguments for torch.take_along_dim\(\):\)$"):
        internals.take_along_dim(internals.ones(2, 2), index, 1)


# =============================================================================================
# index_add, declared structured: index_add.out primary, index_add and index_add_ derived
# =============================================================================================


# ---------------------------------------------------------------- index_add, declared structured
@pytest.mark.parametrize("name", ["index_add", "index_add_"])
def test_index_add_is_derived_from_its_structured_out(name):
    assert_derived_from_structured_out(name, "out", indexing)


def _index_add_operands(L):
    return L.arange(12.).reshape(3, 4), L.tensor([2, 0, 2]), L.arange(9.).reshape(3, 3) - 4


INDEX_ADD_OUT_CASES = {
    "into an empty out": lambda L, x, i, s: L.index_add(x, 1, i, s, alpha=2, out=L.empty(0)),
    "resized, warns": lambda L, x, i, s: L.index_add(x, 1, i, s, out=L.empty(2)),
    "keeps out's strides": lambda L, x, i, s: L.index_add(x, 1, i, s, out=L.empty(4, 3).t()),
    "into self": lambda L, x, i, s: L.index_add(x, 1, i, s, alpha=-1, out=x),
    "along dim 0": lambda L, x, i, s: L.index_add(x.t(), 0, i, s.t(), out=L.empty(0)),
    "a 0-d self": lambda L, x, i, s: L.index_add(L.tensor(1.5), 0, i[1:2], L.tensor(2.), out=L.empty(0)),
}


@pytest.mark.parametrize("case", INDEX_ADD_OUT_CASES)
def test_index_add_out_matches_torch(case):
    assert_out_variant_matches_torch(lambda L: INDEX_ADD_OUT_CASES[case](L, *_index_add_operands(L)))


INDEX_ADD_OUT_ERRORS = {
    "out of another dtype": lambda L, x, i, s: L.index_add(x, 1, i, s, out=L.empty(0, dtype=L.float64)),
    "out is the source": lambda L, x, i, s: L.index_add(s, 1, i, s, out=s),
    "out overlaps itself": lambda L, x, i, s: L.index_add(x, 1, i, s, out=L.empty(1).expand(3, 4)),
    # a source that partly overlaps (a non-dense one would be too hard for torch's check to tell)
    "in place over its source": lambda L, x, i, s: (lambda v: v.index_add_(0, i, v[4:7]))(x.reshape(-1)),
    "an index out of range into out": lambda L, x, i, s: L.index_add(x, 1, i + 2, s, out=L.empty(0)),
}


@pytest.mark.parametrize("case", INDEX_ADD_OUT_ERRORS)
def test_index_add_out_errors(case):
    same_error(lambda L: INDEX_ADD_OUT_ERRORS[case](L, *_index_add_operands(L)))


def test_index_add_meta_step_lays_out_fakes():
    assert_fake_matches_real(lambda L, x, i, s: L.index_add(x, 1, i, s, out=L.empty(4, 3).t()),
                             lambda: _index_add_operands(internals))


@pytest.mark.parametrize("index", [[0], 0], ids=["vector_index", "0d_index"])
@pytest.mark.parametrize("source", [[5.0], 5.0], ids=["vector_source", "0d_source"])
def test_index_add_into_a_0d_tensor_matches_torch(index, source):
    """A 0-d self takes a 0-d source (whatever the index's rank); a one-element vector source
    does not match it: torch's shape check compares the two whole when either is 0-d."""
    same_outcome(lambda lib: lib.zeros((), dtype=lib.float64).index_add_(0, lib.tensor(index),
                                                                        lib.tensor(source, dtype=lib.float64)))


def test_index_add_of_0d_tensors_second_derivative_matches_torch():
    """The first gradient in the source selects from a 0-d gradient; its derivative adds back into
    a 0-d tensor (index_select_backward's index_add_), which used to refuse the shapes."""
    def program(lib):
        source = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        base = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        return lib.index_add(base, 0, lib.tensor([0]), source * source, alpha=-1) ** 2, source
    assert_second_derivatives_match_torch(program)
