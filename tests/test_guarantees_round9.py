"""A ninth round of hostile inputs (issue 15): each case differed from torch 2.13 before its fix.

This round tried about 9,000 cases (scripts outside the repository): float exponents that float32
rounds, reductions whose ``out=`` is (or overlaps) their input, products and ``unique`` over the
dtypes they refuse, storages saved by themselves, the strides of fresh results with size-1 dims,
storages freed or shrunk under their tensors, ``set_``/``as_strided`` past the end of a storage,
factory sizes that overflow, dtypes spelled as strings or NumPy/Python types, keyword misuse,
autograd misuse (hooks, ``grad`` options, saved-tensor hooks), ``save``/``load`` of views with
``map_location`` and ``weights_only``, and threads.
"""
import collections
import fractions
import io

import numpy as np
import pytest
import torch
from conftest import assert_same, same_error, same_or_same_error
from test_hostile import in_threads

import internals

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


# ----------------------------------------------------------------------------- reductions into their input
OUT_VIEWS = {"self": lambda x: x, "row": lambda x: x[0], "col": lambda x: x[:, 0], "head": lambda x: x.view(-1)[:4],
             "t": lambda x: x.t(), "tail": lambda x: x.view(-1)[2:6]}
REDUCTIONS = {"sum": lambda L, x, o: L.sum(x, 0, out=o), "nansum": lambda L, x, o: L.nansum(x, 0, out=o),
              "mean": lambda L, x, o: L.mean(x, 0, out=o), "prod": lambda L, x, o: L.prod(x, 0, out=o),
              "amax": lambda L, x, o: L.amax(x, 0, out=o), "amin": lambda L, x, o: L.amin(x, 0, out=o),
              "max": lambda L, x, o: L.max(x, 0, out=(o, L.empty(0, dtype=L.long))),
              "min": lambda L, x, o: L.min(x, 0, out=(o, L.empty(0, dtype=L.long))),
              "cumsum": lambda L, x, o: L.cumsum(x, 0, out=o)}
OUT_CASES = [(op, view, shape) for op in REDUCTIONS for view in OUT_VIEWS for shape in [(4, 4), (1, 4), (4, 1)]]


def _layouts(results):
    return [(str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), r.storage_offset()) for r in results]


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("op, view, shape", OUT_CASES)
def test_a_reduction_into_its_own_input_runs_as_torchs_kernels_do(op, view, shape):
    """torch does not refuse ``sum(x, 0, out=x[0])``: ``out`` is resized (resizing ``x`` too when
    it *is* ``x``) and the kernel reads the input part-way written, in an order that follows its
    vector width: the values are undefined and not compared. max and min refuse a partial
    overlap of ``out`` with its reduced dim put back; the rest runs, with torch's layouts."""
    def fn(L):
        x = L.arange(float(shape[0] * shape[1])).reshape(shape) + 1
        result = REDUCTIONS[op](L, x, OUT_VIEWS[view](x))
        return (*(result if isinstance(result, tuple) else (result,)), x)
    try:
        theirs = fn(torch)
    except RuntimeError:
        return same_error(fn)
    assert _layouts(fn(internals)) == _layouts(theirs)


# ----------------------------------------------------------------------------- refused dtypes
@pytest.mark.parametrize("op", [lambda L, a: L.dot(a, a), lambda L, a: L.mv(L.ones(2, 3, dtype=a.dtype), a),
                                lambda L, a: L.addmv(L.ones(2, dtype=a.dtype), L.ones(2, 3, dtype=a.dtype), a),
                                lambda L, a: a.dot(a)])
def test_products_refuse_bool_with_their_kernels_names(op):
    same_error(lambda L: op(L, L.tensor([True, False, True])))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("kwargs", [{}, {"sorted": False}, {"return_inverse": True}, {"return_counts": True},
                                    {"dim": 0}, {"dim": 0, "return_counts": True}])
@pytest.mark.parametrize("size", [3, 0])
def test_unique_refuses_complex(dtype, kwargs, size):
    same_error(lambda L: L.unique(L.ones(size, dtype=getattr(L, dtype)), **kwargs))
    same_error(lambda L: L.ones(size, dtype=getattr(L, dtype)).unique(**kwargs))


# ----------------------------------------------------------------------------- storages saved alone
def _saved(L, obj):
    buffer = io.BytesIO()
    L.save(obj, buffer)
    buffer.seek(0)
    return L.load(buffer)


def _describe(storage):
    return type(storage).__name__, str(storage.dtype).split(".")[-1], storage.size(), storage.tolist()


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "float16", "complex64"])
@pytest.mark.parametrize("make", [lambda x: x.untyped_storage(), lambda x: x.storage(),
                                  lambda x: x.untyped_storage()[2:6], lambda x: x[1:].storage()])
@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_a_bare_storage_saves_and_loads_as_a_typed_storage(dtype, make):
    """torch writes an UntypedStorage as ``torch.storage.UntypedStorage`` with its bytes, a
    TypedStorage under its legacy class; both load as TypedStorage (uint8 for the untyped one).
    internals pickled them by a global of its own, which its own load refused."""
    theirs = _describe(_saved(torch, make(torch.arange(5).to(getattr(torch, dtype)))))
    ours = _describe(_saved(internals, make(internals.arange(5).to(getattr(internals, dtype)))))
    assert ours == theirs


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
@pytest.mark.parametrize("writer, reader", [(internals, torch), (torch, internals)])
def test_a_bare_storage_crosses_between_the_libraries(writer, reader):
    x, y = writer.arange(5.), writer.arange(5.)
    buffer = io.BytesIO()
    writer.save({"bytes": y.untyped_storage(), "typed": x.storage(), "view": x[1:]}, buffer)
    buffer.seek(0)
    loaded = reader.load(buffer)
    assert loaded["bytes"].tolist() == list(y.numpy().tobytes())
    assert loaded["typed"].tolist() == [0., 1., 2., 3., 4.]
    assert loaded["view"].tolist() == [1., 2., 3., 4.]


@pytest.mark.parametrize("objects", [
    lambda L, x: [x.untyped_storage(), x],                  # uint8 bytes and float elements of one memory
    lambda L, x: [x.untyped_storage()[0:8], x.storage()],   # a slice of the bytes at the same address
    lambda L, x: [x.storage(), x.view(L.int32)],
])
def test_one_memory_saved_as_two_dtypes_is_refused(objects):
    same_error(lambda L: _saved(L, objects(L, L.arange(5.))))


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


@pytest.mark.parametrize("size, stride", [((2,), (-1,)), ((2, 3), (-1, 1)), ((-1,), (-1,)), ((3, 2), (1, -2))])
def test_empty_strided_with_a_negative_stride_overflows_as_torchs(size, stride):
    same_error(lambda L: L.empty_strided(size, stride))


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


# ----------------------------------------------------------------------------- dtype arguments
DTYPE_SPELLINGS = [float, int, bool, complex, np.float32, np.dtype("float32"), np.dtype("int8"), "float32", 5, object,
                   type(None), collections.OrderedDict(), fractions.Fraction(1)]


@pytest.mark.parametrize("dtype", DTYPE_SPELLINGS)
@pytest.mark.parametrize("op", [lambda L, d: L.tensor([1, 2], dtype=d), lambda L, d: L.as_tensor([1, 2], dtype=d),
                                lambda L, d: L.zeros(2, dtype=d), lambda L, d: L.ones(2).cumsum(0, dtype=d),
                                lambda L, d: L.full((2,), 1, dtype=d), lambda L, d: L.ones(2).new_ones(2, dtype=d)])
def test_a_dtype_argument_is_a_dtype_or_a_python_type(dtype, op):
    """torch's parser takes a dtype or ``float``/``int``/``bool``/``complex`` and names any other
    type by its C ``tp_name`` (``numpy.dtypes.Float32DType``, ``collections.OrderedDict``).
    internals' ``tensor``/``as_tensor`` raised AttributeError, ``complex`` was refused, and NumPy's
    dtype classes lost their module."""
    same_or_same_error(lambda L: op(L, dtype))


# ----------------------------------------------------------------------------- autograd.grad's options
@pytest.mark.parametrize("allow_unused", [None, False, True])
@pytest.mark.parametrize("materialize_grads", [False, True])
@pytest.mark.parametrize("which", ["unused", "used", "not_a_leaf_input", "same_twice", "not_requiring"])
def test_grad_checks_materialize_grads_against_allow_unused_first(allow_unused, materialize_grads, which):
    """``materialize_grads=True`` with ``allow_unused=False`` is a ValueError before anything
    else; internals went on and raised the engine's RuntimeError, or returned."""
    def fn(L):
        x, z = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        y = (x * 3).sum()
        inputs = {"unused": [x, z], "used": [x], "not_a_leaf_input": [x, L.ones(2)], "same_twice": [x, x],
                  "not_requiring": [x]}[which]
        out = L.ones(1).sum() if which == "not_requiring" else y
        kwargs = {"materialize_grads": materialize_grads}
        if allow_unused is not None:
            kwargs["allow_unused"] = allow_unused
        return L.autograd.grad(out, inputs, **kwargs)
    same_or_same_error(fn)


# ----------------------------------------------------------------------------- threads
def _draws(L, g):
    return [L.randn(5, generator=g).tolist(), L.randint(0, 1000, (4,), generator=g).tolist(),
            L.randperm(7, generator=g).tolist(), L.rand(3, dtype=L.float64, generator=g).tolist(),
            L.empty(4).uniform_(-2, 2, generator=g).tolist(), L.empty(3).normal_(1., 2., generator=g).tolist()]


def test_private_generators_on_eight_threads_give_torchs_streams():
    """Eight threads each draw from their own seeded Generator while the default one is used
    from all of them at once: every private stream is torch's for that seed (the shared default
    generator's state is locked, so nothing races)."""
    expected = {k: _draws(torch, torch.Generator().manual_seed(k)) for k in range(8)}
    got = {}

    def work(k):
        g = internals.Generator().manual_seed(k)
        draws = []
        for _ in range(3):
            internals.randn(7)          # the shared default generator, from every thread
            draws.append(_draws(internals, g))
        got[k] = draws

    errors = in_threads(work, 8)
    assert not errors
    for k in range(8):
        g = torch.Generator().manual_seed(k)
        assert got[k] == [_draws(torch, g) for _ in range(3)], k
    assert got[3][0] == expected[3]


def test_backward_into_one_shared_module_from_eight_threads_accumulates_every_gradient():
    model = internals.nn.Linear(3, 2)
    theirs = torch.nn.Linear(3, 2)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(model.weight.detach().numpy()))
        theirs.bias.copy_(torch.from_numpy(model.bias.detach().numpy()))

    def work(k):
        for _ in range(5):
            model(internals.full((4, 3), float(k))).pow(2).sum().backward()

    errors = in_threads(work, 8)
    assert not errors
    for k in range(8):
        for _ in range(5):
            theirs(torch.full((4, 3), float(k))).pow(2).sum().backward()
    assert_same(model.weight.grad, theirs.weight.grad, rtol=1e-5, atol=1e-4)
    assert_same(model.bias.grad, theirs.bias.grad, rtol=1e-5, atol=1e-4)
