"""The tensor core against torch: dtypes, storage, TensorImpl metadata, the version counter,
factories, NumPy interop, ``tolist``/``item`` and the torch round trip; then ``torch.Size``
(slices, concatenations, ``broadcast_shapes``) and the public names of Tensor, Size, dtype and
device (at the end).

Tests ``internals._tensor_base`` and ``internals.c10`` (c10/core/TensorImpl.h, torch/_C's Size)."""
import pickle

import numpy as np
import pytest
import torch
from helpers import (
    DTYPE_PAIRS,
    TO_TORCH,
    assert_same,
    assert_same_error,
    compare_gradients_and_nodes,  # noqa: F401
    same_outcome,
)
from hypothesis import given
from hypothesis import strategies as st
from strategies import dtype_pairs, shapes, torch_tensors, view_chains

import internals

FLOAT_PAIRS = [(o, t) for o, t in DTYPE_PAIRS if t.is_floating_point]
NUMPY_TYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]


def same_error_and_message(fn_ours, fn_theirs):
    ours, theirs = assert_same_error(fn_ours, fn_theirs)
    assert str(ours) == str(theirs)


# ------------------------------------------------------------------------------------- dtypes

@pytest.mark.parametrize("ours, theirs", DTYPE_PAIRS, ids=[str(t) for _, t in DTYPE_PAIRS])
def test_dtype_properties(ours, theirs):
    assert ours.itemsize == theirs.itemsize
    assert ours.is_floating_point == theirs.is_floating_point
    assert ours.is_signed == theirs.is_signed
    assert ours.is_complex == theirs.is_complex
    assert repr(ours) == repr(theirs).replace("torch.", "internals.")
    assert str(ours).split(".")[-1] == str(theirs).split(".")[-1]
    assert getattr(internals, str(theirs).split(".")[-1]) is ours


@pytest.mark.parametrize("alias", ["half", "float", "double", "short", "int", "long"])
def test_dtype_aliases(alias):
    assert TO_TORCH[getattr(internals, alias)] is getattr(torch, alias)


def test_default_dtype():
    assert internals.get_default_dtype() is internals.float32
    assert TO_TORCH[internals.get_default_dtype()] is torch.get_default_dtype()


def test_set_default_dtype_changes_what_floats_become():
    internals.set_default_dtype(internals.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert_same(internals.tensor([1.5]), torch.tensor([1.5]))
        assert_same(internals.zeros(2), torch.zeros(2))
        assert_same(internals.arange(0.5, 2), torch.arange(0.5, 2))
        assert_same(internals.full((2,), 1.5), torch.full((2,), 1.5))
    finally:
        internals.set_default_dtype(internals.float32)
        torch.set_default_dtype(torch.float32)
    assert internals.get_default_dtype() is internals.float32


def test_set_default_dtype_refuses_integers():
    assert_same_error(lambda: internals.set_default_dtype(internals.int64),
                      lambda: torch.set_default_dtype(torch.int64))


# ---------------------------------------------------------------------------- storage, metadata

@given(view_chains())
def test_views_share_one_storage_object(chain):
    ours, theirs, ours_base, theirs_base = chain.run()
    assert ours.untyped_storage() is ours_base.untyped_storage()
    assert theirs.untyped_storage() is theirs_base.untyped_storage()
    assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
    assert ours.untyped_storage().data_ptr() == ours_base.untyped_storage().data_ptr()
    assert (ours.untyped_storage().data_ptr() == 0) == (theirs.untyped_storage().data_ptr() == 0)


@given(torch_tensors())
def test_storage_of_a_fresh_tensor(t):
    ours = internals.from_torch(t)
    storage = ours.untyped_storage()
    assert storage.nbytes() == t.untyped_storage().nbytes() == t.numel() * t.element_size()
    assert str(storage.device) == str(t.untyped_storage().device) == "cpu"
    assert (storage.data_ptr() == 0) == (t.untyped_storage().data_ptr() == 0)
    assert ours.untyped_storage() is storage


def test_separate_tensors_have_separate_storages():
    a, b = internals.zeros(3), internals.zeros(3)
    assert a.untyped_storage() is not b.untyped_storage()
    assert a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr()
    assert a.clone().untyped_storage().data_ptr() != a.untyped_storage().data_ptr()


@given(view_chains())
def test_metadata_matches_torch(chain):
    ours, theirs, _, _ = chain.run()
    assert ours.shape == theirs.shape and isinstance(ours.shape, tuple)
    assert ours.size() == theirs.size()
    assert ours.stride() == theirs.stride()
    for d in range(-ours.dim(), ours.dim()):
        assert ours.size(d) == theirs.size(d)
        assert ours.stride(d) == theirs.stride(d)
    assert ours.storage_offset() == theirs.storage_offset()
    assert TO_TORCH[ours.dtype] is theirs.dtype
    assert str(ours.device) == str(theirs.device) == "cpu"
    assert ours.layout is internals.strided and theirs.layout is torch.strided
    assert ours.dim() == ours.ndim == theirs.dim()
    assert ours.numel() == theirs.numel()
    assert ours.element_size() == ours.itemsize == theirs.element_size()
    assert ours.nbytes == theirs.nbytes
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.is_floating_point() == theirs.is_floating_point()
    assert internals.is_tensor(ours) and not internals.is_tensor(theirs.tolist())
    if theirs.dim():
        assert len(ours) == len(theirs)


@given(torch_tensors())
def test_size_and_stride_reject_bad_dims(t):
    ours = internals.from_torch(t)
    n = t.dim()
    for d in (n, -n - 1, n + 1) if n else (0, -1, 1):
        same_error_and_message(lambda d=d: ours.size(d), lambda d=d: t.size(d))
        same_error_and_message(lambda d=d: ours.stride(d), lambda d=d: t.stride(d))


def test_size_repr():
    assert repr(internals.zeros(2, 3).shape) == "internals.Size([2, 3])"
    assert internals.zeros(2, 3).shape == torch.Size([2, 3])
    assert internals.zeros(2, 3).shape.numel() == torch.Size([2, 3]).numel()


def test_len_of_0_dim_tensor():
    assert_same_error(lambda: len(internals.tensor(1.0)), lambda: len(torch.tensor(1.0)))


# ------------------------------------------------------------------------------ version counter

def _fresh_pairs():
    """Tensors just made by a factory or an out-of-place op, in both libraries."""
    o, t = internals.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    return [
        (internals.zeros(2, 3), torch.zeros(2, 3)), (internals.ones(2), torch.ones(2)),
        (internals.full((2,), 3), torch.full((2,), 3)), (internals.empty(2), torch.empty(2)),
        (internals.arange(5), torch.arange(5)), (internals.linspace(0, 1, 5), torch.linspace(0, 1, 5)),
        (internals.eye(3), torch.eye(3)), (internals.tensor([1, 2]), torch.tensor([1, 2])),
        (internals.rand(3), torch.rand(3)), (internals.randn(3), torch.randn(3)),
        (internals.zeros_like(o), torch.zeros_like(t)), (internals.ones_like(o), torch.ones_like(t)),
        (internals.full_like(o, 2), torch.full_like(t, 2)), (internals.rand_like(o), torch.rand_like(t)),
        (o.clone(), t.clone()), (o.t().contiguous(), t.t().contiguous()), (o.to(internals.int32), t.to(torch.int32)),
        (o + 1, t + 1), (o.sum(0), t.sum(0)), (o.reshape(-1), t.reshape(-1)), (o.t().reshape(-1), t.t().reshape(-1)),
        (internals.from_numpy(np.zeros(3)), torch.from_numpy(np.zeros(3))), (o, t),
    ]


def test_fresh_tensors_start_at_version_0():
    for ours, theirs in _fresh_pairs():
        assert ours._version == theirs._version == 0


INPLACE_STEPS = [
    ("add_", lambda x: x.add_(1)), ("add_ alpha", lambda x: x.add_(x, alpha=2)), ("sub_", lambda x: x.sub_(1)),
    ("mul_", lambda x: x.mul_(2)), ("div_", lambda x: x.div_(2)), ("fill_", lambda x: x.fill_(3)),
    ("zero_", lambda x: x.zero_()), ("copy_", lambda x: x.copy_(x * 2)), ("exp_", lambda x: x.exp_()),
    ("relu_", lambda x: x.relu_()), ("setitem", lambda x: x.__setitem__(0, 5)),
    ("setitem slice", lambda x: x.__setitem__((slice(None), 1), 7)), ("iadd", lambda x: x.__iadd__(1)),
    ("imul", lambda x: x.__imul__(2)), ("view add_", lambda x: x[1:].add_(1)),
    ("t view fill_", lambda x: x.t().fill_(1)),
]


def test_each_inplace_op_bumps_the_version_once():
    ours, theirs = internals.from_torch(torch.arange(6.0).reshape(2, 3)), torch.arange(6.0).reshape(2, 3)
    for name, step in INPLACE_STEPS:
        before = theirs._version
        step(ours)
        step(theirs)
        assert ours._version == theirs._version == before + 1, name
        assert_same(ours, theirs)


def test_out_of_place_ops_leave_the_version_alone():
    ours, theirs = internals.from_torch(torch.arange(6.0).reshape(2, 3)), torch.arange(6.0).reshape(2, 3)
    for fn in [lambda x: x + 1, lambda x: x.exp(), lambda x: x.sum(), lambda x: x.clone(), lambda x: x.t(),
               lambda x: x.contiguous(), lambda x: x.t().contiguous(), lambda x: x.to(internals.float64)
               if isinstance(x, internals.Tensor) else x.to(torch.float64), lambda x: x.numpy(), lambda x: x.tolist(),
               lambda x: x[0, 1].item(), lambda x: x.reshape(3, 2), lambda x: x.t().reshape(6)]:
        fn(ours)
        fn(theirs)
        assert ours._version == theirs._version == 0


@given(view_chains())
def test_version_counter_is_shared_by_all_views(chain):
    ours, theirs, ours_base, theirs_base = chain.run()
    sibling_ours, sibling_theirs = ours_base.view(-1), theirs_base.view(-1)
    for step in range(1, 3):
        ours_base.fill_(step)
        theirs_base.fill_(step)
        assert ours._version == sibling_ours._version == ours_base._version == step
        assert theirs._version == sibling_theirs._version == step
    copy_ours, copy_theirs = ours.clone(), theirs.clone()
    assert copy_ours._version == copy_theirs._version == 0


def test_failed_inplace_op_does_not_bump_the_version():
    ours, theirs = internals.arange(3, dtype=internals.int32), torch.arange(3, dtype=torch.int32)
    same_error_and_message(lambda: ours.add_(1.5), lambda: theirs.add_(1.5))
    assert ours._version == theirs._version == 0


def test_inplace_on_expanded_view_refused_and_not_counted():
    ours, theirs = internals.zeros(3, 1), torch.zeros(3, 1)
    same_error_and_message(lambda: ours.expand(3, 4).add_(1), lambda: theirs.expand(3, 4).add_(1))
    assert ours._version == theirs._version == 0


# ------------------------------------------------------------------------------------ factories

def _size_forms(shape):
    """The ways a size can be passed: f(2, 3), f((2, 3)), f([2, 3])."""
    forms = [(tuple(shape),), (list(shape),)]
    if shape:
        forms.append(tuple(shape))
    return forms


@given(shapes(), dtype_pairs)
def test_zeros_ones_empty(shape, pair):
    ours_dtype, theirs_dtype = pair
    for args in _size_forms(shape):
        assert_same(internals.zeros(*args, dtype=ours_dtype), torch.zeros(*args, dtype=theirs_dtype))
        assert_same(internals.ones(*args, dtype=ours_dtype), torch.ones(*args, dtype=theirs_dtype))
        ours, theirs = internals.empty(*args, dtype=ours_dtype), torch.empty(*args, dtype=theirs_dtype)
        assert (ours.shape, ours.stride(), ours.storage_offset()) == (theirs.shape, theirs.stride(), 0)
        assert TO_TORCH[ours.dtype] is theirs.dtype
        assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
    assert_same(internals.zeros(*args), torch.zeros(*args))       # default dtype


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_negative_sizes(name):
    same_error_and_message(lambda: getattr(internals, name)(2, -1), lambda: getattr(torch, name)(2, -1))


@given(shapes(), st.data())
def test_empty_strided(shape, data):
    stride = tuple(data.draw(st.lists(st.integers(0, 7), min_size=len(shape), max_size=len(shape))))
    ours, theirs = internals.empty_strided(shape, stride), torch.empty_strided(shape, stride)
    assert (ours.shape, ours.stride(), ours.storage_offset()) == (theirs.shape, theirs.stride(), 0)
    assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
    assert ours.is_contiguous() == theirs.is_contiguous()


@pytest.mark.parametrize("value", [True, False, 0, 3, -7, 2.5, -0.0, 1e10])
def test_full_infers_dtype_from_the_fill_value(value):
    assert_same(internals.full((2, 3), value), torch.full((2, 3), value))
    assert_same(internals.full([0], value), torch.full([0], value))
    assert_same(internals.full((), value), torch.full((), value))


@given(dtype_pairs, st.sampled_from([0, 1, 7, -3, True, 2.0]))
def test_full_with_dtype(pair, value):
    ours_dtype, theirs_dtype = pair
    if not theirs_dtype.is_signed and value == -3:
        value = 3
    assert_same(internals.full((2, 2), value, dtype=ours_dtype), torch.full((2, 2), value, dtype=theirs_dtype))


ARANGE_CASES = [(5,), (0,), (1, 6), (6, 1, -1), (0, 10, 3), (10, 0, -3), (-5, 5, 2), (2.5,), (1, 2.5), (0, 1, 0.1),
                (0, 1, 0.3), (-1.0, 1.0, 0.25), (0, 10, 0.3), (-1.5, 2.2, 0.5), (1.0, 0.0, -0.1), (0, 1e-3, 1e-4),
                (3, 3), (3, 3.0, 0.5), (0.1, 0.7, 0.2), (-3.3, 7.1, 0.7), (0, 100, 7), (np.int32(4),), (0, 2, 1.0)]


@pytest.mark.parametrize("args", ARANGE_CASES, ids=[repr(a) for a in ARANGE_CASES])
def test_arange_length_dtype_and_values(args):
    """Length and dtype exactly as torch. Values to assert_close's tolerance: torch's vectorised
    loop forms ``base + i * step`` per block of 8 or 16 and can round differently by one ulp."""
    assert_same(internals.arange(*args), torch.arange(*args))


@pytest.mark.parametrize("args", [(0, 5), (0, 3, 0.5), (5, 0, -1)])
def test_arange_with_dtype(args):
    for ours_dtype, theirs_dtype in DTYPE_PAIRS:
        if theirs_dtype is torch.bool or (not theirs_dtype.is_floating_point and isinstance(args[-1], float)):
            continue
        assert_same(internals.arange(*args, dtype=ours_dtype), torch.arange(*args, dtype=theirs_dtype))


def test_arange_errors():
    for args in [(0, 1, 0), (0, 1, -1), (1, 0), (0, 1.0, -0.5)]:
        same_error_and_message(lambda args=args: internals.arange(*args), lambda args=args: torch.arange(*args))


LINSPACE_ENDS = st.one_of(st.integers(-20, 20), st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False),
                          st.sampled_from([0.1, 0.7, -3.3, 1e-3, 123.456]))


@given(LINSPACE_ENDS, LINSPACE_ENDS, st.one_of(st.integers(0, 60), st.sampled_from([97, 100, 255, 1000, 4097])))
def test_linspace_bit_exact_for_float32_and_float64(start, end, steps):
    """torch's kernel counts up from start for the first half and down from end for the second,
    each value one fused multiply-add: ours must give the same bits, not just close values."""
    for ours_dtype, theirs_dtype in [(internals.float32, torch.float32), (internals.float64, torch.float64)]:
        ours = internals.linspace(start, end, steps, dtype=ours_dtype)
        theirs = torch.linspace(start, end, steps, dtype=theirs_dtype)
        assert_same(ours, theirs)
        assert torch.equal(ours.to_torch(), theirs), (start, end, steps, theirs_dtype)
    assert_same(internals.linspace(start, end, steps), torch.linspace(start, end, steps))


@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(0, 40))
def test_linspace_integer_dtypes_exact(start, end, steps):
    for ours_dtype, theirs_dtype in [(internals.int64, torch.int64), (internals.int32, torch.int32),
                                     (internals.int16, torch.int16)]:
        ours = internals.linspace(start, end, steps, dtype=ours_dtype)
        theirs = torch.linspace(start, end, steps, dtype=theirs_dtype)
        assert_same(ours, theirs)


def test_linspace_negative_steps():
    same_error_and_message(lambda: internals.linspace(0, 1, -1), lambda: torch.linspace(0, 1, -1))


@pytest.mark.parametrize("n, m", [(0, None), (1, None), (3, None), (5, None), (2, 4), (4, 2), (3, 0), (0, 3), (5, 5)])
def test_eye(n, m):
    args = (n,) if m is None else (n, m)
    for ours_dtype, theirs_dtype in DTYPE_PAIRS:
        assert_same(internals.eye(*args, dtype=ours_dtype), torch.eye(*args, dtype=theirs_dtype))
    assert_same(internals.eye(*args), torch.eye(*args))


def test_eye_negative():
    same_error_and_message(lambda: internals.eye(-1), lambda: torch.eye(-1))
    same_error_and_message(lambda: internals.eye(2, -1), lambda: torch.eye(2, -1))


TENSOR_DATA = [
    3, -2, 2.5, True, False, [], [[]], [[], []], [1, 2, 3], [1.0, 2], [True, False], [True, 1], [True, 2.5],
    [[1, 2], [3, 4]], ((1, 2), (3, 4)), [[1.5, 2], [True, False]], [[[1], [2]], [[3], [4]]], (1, 2.0),
    np.float64(2.5), np.float32(2.5), np.int32(3), np.int16(-3), np.uint8(200), np.bool_(True), np.float16(0.5),
    [np.float32(1), 2], [np.int32(1), 2], [np.int16(1), np.int8(2)], [1.5, np.float64(2)], [np.float16(1), True],
    [np.uint8(1), np.int8(-1)], [np.bool_(True), np.bool_(False)],
    np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(6.0).reshape(3, 2).T, np.array(3, dtype=np.uint8),
    np.zeros((2, 0), dtype=np.float16), np.array([True, False]), np.arange(4, dtype=np.int8)[::2],
]


@pytest.mark.parametrize("data", TENSOR_DATA, ids=[f"{type(d).__name__}-{i}" for i, d in enumerate(TENSOR_DATA)])
def test_tensor_infers_dtype_like_torch(data):
    """Python bool/int/float -> bool/int64/default dtype; NumPy scalars and arrays keep their dtype;
    a list promotes over its items."""
    assert_same(internals.tensor(data), torch.tensor(data))


@pytest.mark.parametrize("data", [[1, 2.5], [[True, False]], np.arange(4), 7])
def test_tensor_with_dtype(data):
    for ours_dtype, theirs_dtype in DTYPE_PAIRS:
        assert_same(internals.tensor(data, dtype=ours_dtype), torch.tensor(data, dtype=theirs_dtype))


def test_tensor_is_a_copy():
    array = np.arange(3.0)
    ours = internals.tensor(array)
    array[0] = 100
    assert ours[0].item() == 0.0
    source = internals.arange(3)
    copy = internals.tensor(source)
    source.fill_(9)
    assert copy.tolist() == [0, 1, 2]


def test_tensor_from_tensor_keeps_dtype():
    for _ours_dtype, theirs_dtype in DTYPE_PAIRS:
        t = torch.arange(4).to(theirs_dtype)
        with pytest.warns(UserWarning):
            theirs = torch.tensor(t)
        assert_same(internals.tensor(internals.from_torch(t)), theirs)


@pytest.mark.parametrize("data", [[[1, 2], [3]], "a", ["a"], [None], None, [object()]],
                         ids=["ragged", "str", "list-of-str", "list-of-None", "None", "object"])
def test_tensor_bad_data(data):
    assert_same_error(lambda: internals.tensor(data), lambda: torch.tensor(data))


LIKE_FACTORIES = [
    ("empty_like", lambda m, x, **kw: m.empty_like(x, **kw), False),
    ("zeros_like", lambda m, x, **kw: m.zeros_like(x, **kw), True),
    ("ones_like", lambda m, x, **kw: m.ones_like(x, **kw), True),
    ("full_like", lambda m, x, **kw: m.full_like(x, 7, **kw), True),
    ("rand_like", lambda m, x, **kw: m.rand_like(x, **kw), False),
    ("randn_like", lambda m, x, **kw: m.randn_like(x, **kw), False),
]


@pytest.mark.parametrize("name, make, compare_values", LIKE_FACTORIES, ids=[n for n, _, _ in LIKE_FACTORIES])
@given(chain=view_chains())
def test_like_factories_keep_torchs_layout(name, make, compare_values, chain):
    """``*_like`` keeps a permuted input's strides and infers dense strides for a sliced or
    expanded one, as torch's preserve_format does."""
    ours, theirs, _, _ = chain.run()
    floating = [(internals.float64, torch.float64)] if name in ("rand_like", "randn_like") else []
    dtype_kw = [({}, {})] if theirs.is_floating_point() or not floating else []
    dtype_kw += [({"dtype": o}, {"dtype": t}) for o, t in floating + [(internals.float32, torch.float32)]]
    for ours_kw, theirs_kw in dtype_kw:
        got, expected = make(internals, ours, **ours_kw), make(torch, theirs, **theirs_kw)
        if compare_values:
            assert_same(got, expected)
        else:
            assert (got.shape, got.stride(), got.storage_offset()) == (expected.shape, expected.stride(), 0)
            assert TO_TORCH[got.dtype] is expected.dtype
        assert got.untyped_storage().nbytes() == expected.untyped_storage().nbytes()
        assert got._version == expected._version == 0


@pytest.mark.parametrize("name", ["rand_like", "randn_like"])
def test_random_like_refuses_integer_dtypes(name):
    for ours_dtype, theirs_dtype in DTYPE_PAIRS:
        if not theirs_dtype.is_floating_point:
            assert_same_error(lambda ours_dtype=ours_dtype:
                              getattr(internals, name)(internals.zeros(2), dtype=ours_dtype),
                              lambda theirs_dtype=theirs_dtype:
                              getattr(torch, name)(torch.zeros(2), dtype=theirs_dtype))


@given(shapes())
def test_rand_randn_shapes_and_dtypes(shape):
    for ours_dtype, theirs_dtype in FLOAT_PAIRS:
        for name in ("rand", "randn"):
            ours = getattr(internals, name)(*_size_forms(shape)[0], dtype=ours_dtype)
            theirs = getattr(torch, name)(*_size_forms(shape)[0], dtype=theirs_dtype)
            assert (ours.shape, ours.stride(), ours.storage_offset()) == (theirs.shape, theirs.stride(), 0)
            assert TO_TORCH[ours.dtype] is theirs.dtype
    values = internals.rand(*_size_forms(shape)[0]).to_torch()
    assert ((values >= 0) & (values < 1)).all()


@pytest.mark.parametrize("name", ["rand", "randn"])
def test_rand_refuses_non_float_dtypes(name):
    for ours_dtype, theirs_dtype in DTYPE_PAIRS:
        if not theirs_dtype.is_floating_point:
            same_error_and_message(lambda ours_dtype=ours_dtype: getattr(internals, name)(2, dtype=ours_dtype),
                                   lambda theirs_dtype=theirs_dtype: getattr(torch, name)(2, dtype=theirs_dtype))


@pytest.mark.parametrize("name", ["rand", "randn"])
def test_manual_seed_makes_random_factories_repeat(name):
    make = getattr(internals, name)
    internals.manual_seed(1234)
    first = [make(3, 4).to_torch(), make(5).to_torch()]
    internals.manual_seed(1234)
    again = [make(3, 4).to_torch(), make(5).to_torch()]
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0].flatten()[:5], first[1])     # the stream moves on between calls
    internals.manual_seed(4321)
    assert not torch.equal(make(3, 4).to_torch(), first[0])


def test_generator_argument():
    g = internals.Generator().manual_seed(7)
    a = internals.rand(4, generator=g).to_torch()
    g.manual_seed(7)
    assert torch.equal(internals.rand(4, generator=g).to_torch(), a)
    assert g.initial_seed() == 7


# -------------------------------------------------------------------------------------- NumPy

@pytest.mark.parametrize("np_type", NUMPY_TYPES, ids=[t.__name__ for t in NUMPY_TYPES])
def test_from_numpy_dtypes(np_type):
    array = (np.arange(12) % 2).astype(np_type).reshape(3, 4)
    assert_same(internals.from_numpy(array), torch.from_numpy(array))


STRIDED_ARRAYS = {
    "step": lambda a: a[::2], "transpose": lambda a: a.T, "offset": lambda a: a[1:, 1:], "column": lambda a: a[:, 2],
    "step-offset": lambda a: a[1:, ::3], "zero-size": lambda a: a[:0], "0-dim": lambda a: a[1, 2, ...],
    "broadcast": lambda a: np.broadcast_to(a[:1], (4, 6)), "3d": lambda a: a.reshape(2, 2, 6).transpose(2, 0, 1),
}


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")   # the broadcast one
@pytest.mark.parametrize("name", STRIDED_ARRAYS)
def test_from_numpy_strided_arrays(name):
    array = STRIDED_ARRAYS[name](np.arange(24, dtype=np.float32).reshape(4, 6))
    ours, theirs = internals.from_numpy(array), torch.from_numpy(array)
    assert_same(ours, theirs)
    assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()


def test_from_numpy_shares_memory_both_ways():
    array = np.arange(12, dtype=np.int64).reshape(3, 4)[:, 1:]
    ours = internals.from_numpy(array)
    array[0, 0] = 100
    assert ours[0, 0].item() == 100
    ours[2, 1] = -5
    assert array[2, 1] == -5
    ours.add_(1)
    assert array[0, 0] == 101
    assert ours.data_ptr() == array.ctypes.data


def test_from_numpy_keeps_the_array_alive():
    ours = internals.from_numpy(np.arange(5.0))
    import gc
    gc.collect()
    assert ours.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_from_numpy_negative_strides():
    array = np.arange(6.0)[::-1]
    same_error_and_message(lambda: internals.from_numpy(array), lambda: torch.from_numpy(array))
    square = np.arange(6.0).reshape(2, 3)[:, ::-1]
    same_error_and_message(lambda: internals.from_numpy(square), lambda: torch.from_numpy(square))


def test_from_numpy_bad_inputs():
    assert_same_error(lambda: internals.from_numpy([1, 2]), lambda: torch.from_numpy([1, 2]))
    objects = np.array([object()])
    assert_same_error(lambda: internals.from_numpy(objects), lambda: torch.from_numpy(objects))


@given(view_chains())
def test_numpy_matches_torch_and_shares_memory(chain):
    ours, theirs, ours_base, _ = chain.run()
    if theirs.dtype is torch.bfloat16:
        same_error_and_message(lambda: ours.numpy(), lambda: theirs.numpy())
        return
    ours_array, theirs_array = ours.numpy(), theirs.numpy()
    assert ours_array.dtype == theirs_array.dtype
    assert ours_array.shape == theirs_array.shape
    assert ours_array.strides == theirs_array.strides
    np.testing.assert_array_equal(ours_array, theirs_array)
    if ours.numel():
        assert ours_array.ctypes.data == ours.data_ptr()
    # A write through the base shows in the array.
    ours_base.fill_(1)
    np.testing.assert_array_equal(ours_array, np.ones_like(theirs_array))


def test_numpy_writes_reach_the_tensor():
    ours = internals.zeros(2, 3)
    array = ours.t().numpy()
    array[1, 0] = 5
    assert ours[0, 1].item() == 5.0
    assert array.flags.writeable


# --------------------------------------------------------------------------- tolist, item, interop

@given(view_chains())
def test_tolist_matches_torch(chain):
    ours, theirs, _, _ = chain.run()
    got, expected = ours.tolist(), theirs.tolist()
    assert got == expected
    flat = lambda x: [x] if not isinstance(x, list) else [y for item in x for y in flat(item)]  # noqa: E731
    assert [type(v) for v in flat(got)] == [type(v) for v in flat(expected)]


@given(torch_tensors(shape=shapes(max_side=1)))
def test_item_matches_torch(t):
    ours = internals.from_torch(t)
    if t.numel() != 1:
        same_error_and_message(lambda: ours.item(), lambda: t.item())
        return
    assert ours.item() == t.item()
    assert type(ours.item()) is type(t.item())


def test_item_of_special_values():
    for value in [float("inf"), float("-inf"), 1e-45, 65504.0, 3.140625]:
        for _ours_dtype, theirs_dtype in FLOAT_PAIRS:
            t = torch.tensor(value, dtype=theirs_dtype)
            assert internals.from_torch(t).item() == t.item()
    assert np.isnan(internals.tensor(float("nan")).item())


@given(view_chains())
def test_from_torch_to_torch_round_trip(chain):
    """Both directions keep sizes, strides, offset, dtype and the whole storage."""
    ours, theirs, _, _ = chain.run()
    assert_same(internals.from_torch(theirs), theirs)
    back = ours.to_torch()
    assert back.shape == theirs.shape and back.stride() == theirs.stride()
    assert back.storage_offset() == theirs.storage_offset()
    assert back.dtype is theirs.dtype
    assert back.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
    assert torch.equal(back, theirs)
    again = internals.from_torch(back)
    assert (again.shape, again.stride(), again.storage_offset()) == (ours.shape, ours.stride(), ours.storage_offset())


def test_from_torch_copies():
    t = torch.zeros(3)
    ours = internals.from_torch(t)
    t.fill_(1)
    assert ours.tolist() == [0.0, 0.0, 0.0]
    ours.fill_(2)
    assert t.tolist() == [1.0, 1.0, 1.0]


@given(dtype_pairs)
def test_to_changes_dtype_like_torch(pair):
    ours_dtype, theirs_dtype = pair
    base = torch.arange(-3, 9).reshape(3, 4).t()
    for _source_ours, source_theirs in DTYPE_PAIRS:
        t = base.to(source_theirs)
        if not theirs_dtype.is_signed and source_theirs.is_signed:
            t = t.abs()
        ours = internals.from_torch(t)
        assert_same(ours.to(ours_dtype), t.to(theirs_dtype))
        assert (ours.to(ours.dtype) is ours) and (t.to(t.dtype) is t)


# ------------------------------------------------------------------------------ torch.Size and public names
SIZE_PROGRAMS = ["s[1:]", "s[::-1]", "s[0]", "s[-1]", "s + (5,)", "(5,) + s", "s + s", "s * 2", "2 * s", "s[:0]",
                 "s[1:] + ()", "s + [1]", "s == (2, 3, 4)", "s[1:] == (3, 4)", "s.numel()", "len(s[:2])"]


@pytest.mark.parametrize("program", SIZE_PROGRAMS)
def test_size_operations(program):
    """Slicing, concatenating and repeating a Size give a Size (an index an int); a list is
    refused in torch's words (the type's name its library's)."""
    results = []
    for lib in (torch, internals):
        try:
            value = eval(program, {"s": lib.Size([2, 3, 4])})
            results.append((type(value).__name__, repr(value).replace(lib.__name__ + ".", "")))
        except TypeError as exc:
            results.append(("TypeError", str(exc).replace(lib.__name__ + ".", "")))
    assert results[1] == results[0]


def test_public_names_print_as_torchs():
    """``type(x)``, ``type(x.shape)``, ``type(x.dtype)``, ``type(x.device)`` name the package, as
    torch's do (``<class 'torch.Tensor'>``), and still pickle."""
    for lib in (torch, internals):
        x = lib.ones(2, 3)
        names = [str(type(v)) for v in (x, x.shape, x.dtype, x.device)]
        assert names == [f"<class '{lib.__name__}.{n}'>" for n in ("Tensor", "Size", "dtype", "device")]
        for value in (x.shape, x.shape[1:], x.dtype, x.device):
            copy = pickle.loads(pickle.dumps(value))
            assert copy == value and type(copy) is type(value)


@pytest.mark.parametrize("shapes", ["(2, 3), (4,)", "(3,), (2, 1, 4)", "(2, 3), (2, 3, 3)", "(5, 1), (3,)",
                                    "3, None, (2, 1)", "", "(0,), (2,)", "[2, 3], [3]", "(2, -1)", "(1,), (-1,)",
                                    "5, (3,)", "(2,), 2.5", "torch.Size([2, 3]), lib.Size([4])"])
def test_broadcast_shapes_as_torch(shapes):
    """torch.broadcast_shapes: None passed over, an int a one-dim shape; a mismatch names the
    argument as given (a Size printed torch's way) and the common shape grown so far."""
    same_outcome(lambda lib: list(eval(f"lib.broadcast_shapes({shapes})", {"lib": lib, "torch": torch})))
