"""TensorIterator's remembered plans (``BinaryOpConfig.build`` in aten/tensor_iterator.py).

A binary operator's second call over operands of the same layouts takes the first build's
decisions instead of running the build steps again. Each test makes the plan with one call and
then checks that a call which must decide otherwise (another offset, an overlap, another device,
a sparse operand) still does what torch does.
"""
import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, assert_same_error, in_threads

import internals
from internals.aten import tensor_iterator
from internals.aten.tensor_iterator import BinaryOpConfig, TensorIterator


def _both(program):
    return program(internals), program(torch)


def _planned(a, b):
    """Whether ``a + b``'s layouts have a remembered plan (after one call made it)."""
    it = BinaryOpConfig(None, a, b).build()
    key = ("plan", None, internals.get_default_dtype(), (),
           *map(tensor_iterator._layout_facts, [a, b]))
    return key in tensor_iterator._layouts and it.result is not None


def test_a_second_call_follows_the_plan_and_allocates_a_new_output():
    a, b = internals.arange(6.).view(2, 3).t(), internals.ones(3, 2)
    first = a + b
    assert _planned(a, b)
    second = a + b
    assert second._impl.storage is not first._impl.storage
    assert_same(second, torch.arange(6.).view(2, 3).t() + torch.ones(3, 2))


def test_a_followed_plan_sets_what_the_build_steps_set():
    a, b = internals.ones(4, 1), internals.ones(3)       # broadcast: no fast set-up
    built = TensorIterator(BinaryOpConfig(None, a, b)).build()
    BinaryOpConfig(None, a, b).build()
    followed = BinaryOpConfig(None, a, b).build()
    for name in ("shape", "perm", "output_strides", "operand_strides", "fast", "common_dtype",
                 "compute_dtype", "device"):
        assert getattr(followed, name) == getattr(built, name), name
    assert followed.geometry.shape.tolist() == built.geometry.shape.tolist()
    assert followed.result.stride() == built.result.stride()


@pytest.mark.parametrize("starts", [(1, 0), (0, 1), (2, 2)])
def test_views_at_other_offsets_get_their_own_plans(starts):
    def program(lib):
        base = lib.arange(8.)
        first = base[0:3] + base[4:7]           # the plan of offsets 0 and 4
        i, j = starts
        return first, base[i:i + 3] + base[j:j + 3]
    (ours_first, ours), (theirs_first, theirs) = _both(program)
    assert_same(ours_first, theirs_first)
    assert_same(ours, theirs)


def test_an_overlapping_in_place_call_is_refused_after_a_plan_of_its_layout():
    def program(lib):
        x, y = lib.arange(5.), lib.arange(5.)
        x[1:].add_(y[:-1])                       # same layouts, separate storages: allowed
        x[1:].add_(x[:-1])                       # the same storage, partly shared: torch refuses
    assert_same_error(lambda: program(internals), lambda: program(torch))


def test_an_out_argument_of_the_planned_layout_is_written():
    def program(lib):
        a, b = lib.arange(4.), lib.ones(4)
        lib.add(a, b, out=lib.empty(4))
        out = lib.zeros(4)
        result = lib.add(a, b, out=out)
        return result, out
    (ours, ours_out), (theirs, theirs_out) = _both(program)
    assert ours is ours_out
    assert_same(ours_out, theirs_out)


def test_dtype_checks_of_a_given_output_are_not_skipped():
    def program(lib):
        a = lib.ones(3)
        a.add_(lib.ones(3))
        lib.ones(3, dtype=lib.int64).add_(lib.ones(3))     # float result into int64: refused
    assert_same_error(lambda: program(internals), lambda: program(torch))


def test_mixed_dtypes_are_cast_on_every_call():
    def program(lib):
        a, b = lib.tensor([1.5, 2.5]), lib.tensor([1, 2])
        return [a + b for _ in range(3)][-1], [b * b for _ in range(3)][-1]
    (ours_sum, ours_prod), (theirs_sum, theirs_prod) = _both(program)
    assert_same(ours_sum, theirs_sum)
    assert_same(ours_prod, theirs_prod)


_NUMBERS = [2, -3, 2.5, True, 2**63 + 5, 1e39, 2049, 3 + 1j]
_NUMBER_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "uint8", "bool", "complex64"]


@pytest.mark.parametrize("dtype", _NUMBER_DTYPES)
def test_a_wrapped_number_is_cast_again_on_every_followed_call(dtype):
    """``x * 2`` plans the 2's cast to x's dtype; each later call casts its own number (another
    value of the same type) as the first did, or is refused as torch refuses it."""
    def program(lib, op):
        x = lib.ones(3, dtype=getattr(lib, dtype))
        results = []
        for number in _NUMBERS:
            try:
                results.append((op(x, number), op(x, number)))
            except RuntimeError as e:
                results.append(type(e).__name__)
        return results
    for op in (lambda x, n: x * n, lambda x, n: n * x, lambda x, n: x + n, lambda x, n: x.mul(n)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # NumPy's and torch's overflow warnings (1e39)
            ours, theirs = program(internals, op), program(torch, op)
        for o, t in zip(ours, theirs):
            if isinstance(t, str):
                assert o == t
            else:
                for a, b in zip(o, t):
                    assert_same(*_comparable(a, b))


def _comparable(ours, theirs):
    """complex32 results as complex64 (torch compares no complex32 tensors), with their dtype checked."""
    if theirs.dtype != torch.complex32:
        return ours, theirs
    assert ours.dtype is internals.complex32
    return ours.to(internals.complex64), theirs.to(torch.complex64)


def test_a_number_planned_for_float16_is_read_at_its_own_precision():
    """``mul`` reads a one-element input at opmath precision (float16 ``x * 2.3`` uses 2.3f,
    not 2.3 rounded to float16 first): its builds are not planned through the common dtype."""
    def program(lib):
        x = lib.full((3,), 1.5, dtype=lib.float16)
        return [x * 2.3 for _ in range(3)] + [x * lib.tensor(2.3) for _ in range(3)]
    for ours, theirs in zip(*_both(program)):
        assert_same(ours, theirs)


def test_a_product_of_tensors_is_planned():
    a, b = internals.ones(2, 3), internals.ones(2, 3)
    a * b
    key = ("plan", None, internals.get_default_dtype(), (1,), *map(tensor_iterator._layout_facts, [a, b]))
    assert key in tensor_iterator._layouts
    assert_same(a * b, torch.ones(2, 3) * torch.ones(2, 3))


def _reduction_operands(lib):
    base = lib.arange(24.).view(4, 6)
    return [base, base.t(), base[1:, 2:], lib.arange(9.).view(3, 3), lib.arange(5, dtype=lib.int32),
            lib.ones(1), lib.tensor(3.)]


def test_reductions_follow_the_plans_of_their_layouts_and_dims():
    """A reduction's build is planned by its operands' layouts and its dims: each second call
    over the same layouts (a square input's sum over 0 and over 1 have the same ones) gets
    torch's result."""
    def program(lib):
        results = []
        for x in _reduction_operands(lib):
            for dims in [None, 0, -1, 1, (0, 1), (1, 0)] * 2:
                try:
                    results.append((x.sum() if dims is None else x.sum(dims), x.float().mean(dims)))
                except IndexError as e:             # 1 or (0, 1) of a 1-dim tensor: out of range
                    results.append(str(e))
        return results
    for ours, theirs in zip(*_both(program)):
        if isinstance(theirs, str):
            assert ours == theirs
        else:
            for a, b in zip(ours, theirs):
                assert_same(a, b)


def test_a_reduction_plan_is_kept_under_its_dims():
    x = internals.arange(6.).view(2, 3)
    x.sum(1)
    out = internals.empty(2)
    key = ("reduce", (1,), True, None, *map(tensor_iterator._layout_facts, [out, x]))
    assert key in tensor_iterator._layouts
    assert_same(x.sum(1), torch.arange(6.).view(2, 3).sum(1))


def test_a_sparse_operand_is_refused_as_torch_refuses_it():
    def program(lib):
        dense = lib.ones(2, 2)
        lib.atan2(dense, dense)
        lib.atan2(dense, lib.eye(2).to_sparse_csr())     # "unsupported tensor layout: SparseCsr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # torch's (once a process): CSR support is in beta
        assert_same_error(lambda: program(internals), lambda: program(torch))


def test_an_in_place_call_on_a_sparse_tensor_is_refused_after_a_plan():
    def program(lib):
        dense = lib.ones(2, 2)
        dense.clone().sub_(dense)
        lib.eye(2).to_sparse_csr().sub_(dense)      # "unsupported tensor layout: SparseCsr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = assert_same_error(lambda: program(internals), lambda: program(torch))
    assert str(ours) == str(theirs)


def test_a_plan_made_on_the_cpu_is_not_followed_for_a_cuda_operand():
    a = internals.ones(3)
    a + a
    c = internals.ones(3, device="cuda")
    result = c + c
    assert result.device == internals.device("cuda", 0)
    assert result.cpu().tolist() == [2.0, 2.0, 2.0]


def test_fake_tensors_of_a_planned_layout_stay_fake():
    from internals._subclasses.fake_tensor import FakeTensorMode
    a = internals.ones(2, 3)
    a + a
    with FakeTensorMode() as mode:
        fa = mode.from_tensor(a)
        out = fa + fa
    assert type(out).__name__ == "FakeTensor" and out.shape == (2, 3) and out.stride() == (3, 1)


def test_threads_building_many_layouts_at_once_get_torchs_results():
    shapes = [(3,), (2, 3), (2, 1), (1, 3), (4, 2, 3)]

    def operands(lib, k, n):
        x = lib.arange(float(k + n), float(k + n) + 6).view(2, 3)
        if n % 2:
            return x.t(), lib.ones(3, 1).expand(3, 2)
        return x, lib.ones(shapes[n % len(shapes)])

    def work(k):
        for n in range(40):
            ours, theirs = operands(internals, k, n), operands(torch, k, n)
            ours, theirs = ours[0] + ours[1], theirs[0] + theirs[1]
            assert ours.tolist() == theirs.tolist() and ours.stride() == theirs.stride()

    assert in_threads(work) == []


def _fields(obj):
    """Every slot of ``obj`` and its class's parents, by name (unset slots left out)."""
    names = {n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ()) if n != "__weakref__"}
    return {n: getattr(obj, n) for n in names if hasattr(obj, n)}


@pytest.mark.parametrize("inference", [False, True])
def test_a_planned_output_has_the_fields_the_constructors_set(inference):
    """``empty_planned`` makes the storage, the impl and the tensor in one step: each must have
    every field, and the same values, as the one ``empty_strided_generic`` makes through the
    three constructors (their byte arrays aside, which are each tensor's own)."""
    from internals.aten.empty_tensor import empty_planned, empty_strided_generic
    from internals.c10.allocator import cpu_allocator
    cpu = internals.device("cpu")
    with internals.inference_mode(inference):
        before = cpu_allocator.num_allocs
        planned = empty_planned((2, 3), (3, 1), internals.float32, cpu, 24)
        assert cpu_allocator.num_allocs == before + 1
        made = empty_strided_generic((2, 3), (3, 1), internals.float32, cpu)
    assert type(planned) is type(made) is internals.Tensor
    assert planned.is_inference() == made.is_inference() == inference
    for ours, theirs in ((planned, made), (planned._impl, made._impl), (planned._impl.storage, made._impl.storage)):
        ours, theirs = _fields(ours), _fields(theirs)
        assert ours.keys() == theirs.keys()
        for name in ours.keys() - {"_impl", "storage", "_data", "_typed", "version_counter"}:
            assert ours[name] == theirs[name], name
    storage = planned._impl.storage
    assert storage._data.dtype == np.uint8 and storage._data.nbytes == 24
    assert list(storage._typed) == [internals.float32]
    assert storage._typed[internals.float32].base is storage._data
    assert planned._impl.version_counter is not made._impl.version_counter
    assert planned._impl.version_counter.version == 0
    frees = cpu_allocator.num_frees
    del planned, storage
    assert cpu_allocator.num_frees == frees + 1      # the storage gives its bytes back
