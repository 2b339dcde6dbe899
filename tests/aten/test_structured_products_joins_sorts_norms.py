"""The BLAS products (``mm``, ``bmm``, ``addmm``, ``addmv``, ``baddbmm``), ``cat``, ``index.Tensor``,
``sort.stable`` and the vector norms (``linalg_vector_norm``, ``norm.ScalarOpt_dim`` and its
overloads with a dtype, ``norm.ScalarOpt_dim_dtype`` and ``norm.ScalarOpt_dtype``) declared as
torch declares them (``aten/native/blas.py``, ``linear_algebra.py``, ``tensor_shape.py``,
``indexing.py``, ``sorting.py``, ``reduce_ops_math.py``): an out= kernel with a meta and an impl
step, the functional and in-place kernels derived from it. Compared with torch: the derived
kernels' steps, OpInfo's samples written into empty outs, out= results with their layouts and
resize warnings, the in-place and dtype refusals, and fake tensors laid out by the meta step.
"""
import pytest
import torch
from helpers import (
    MATMUL_TOL,
    Adapter,
    assert_fake_matches_real,
    assert_ops_out_resized_with_torchs_warning,
    assert_out_variant_matches_torch,
    assert_same,
    both_with_warnings,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    compare_into_empty_outs,
    native_entries,
    opinfo_cases,
    same_error,
)

import internals
from internals._subclasses.fake_tensor import FakeTensorMode
from internals.aten import dispatcher
from internals.c10.dispatch_key import DispatchKey

DERIVED = {
    "mm": "mm.out", "bmm": "bmm.out", "addmm": "addmm.out", "addmm_": "addmm.out", "addmv": "addmv.out",
    "addmv_": "addmv.out", "baddbmm": "baddbmm.out", "baddbmm_": "baddbmm.out", "cat": "cat.out",
    "index.Tensor": "index.Tensor_out", "sort.stable": "sort.values_stable",
    "linalg_vector_norm": "linalg_vector_norm.out", "norm.ScalarOpt_dim": "norm.out",
    "norm.ScalarOpt_dim_dtype": "norm.dtype_out",
}


def _cpu_kernel(name):
    return dispatcher.find(name).table[DispatchKey.CPU][0].fn


@pytest.mark.parametrize("name", DERIVED)
def test_derived_kernels_run_the_declared_meta_and_impl(name):
    entry = next(e for e in native_entries().values() if e["func"].startswith(name + "("))
    assert entry["structured_delegate"] == DERIVED[name]
    out_kernel = _cpu_kernel(DERIVED[name])
    assert _cpu_kernel(name).__wrapped__ is out_kernel.meta
    assert out_kernel.meta.__name__.startswith("meta_") and out_kernel.impl.__name__.startswith("impl_")


def _adapter(ours, kwargs=(), tol=None):
    return Adapter(ours, kwargs=kwargs, tol=tol)


ADAPTERS = {name: _adapter(getattr(internals, name), ("beta", "alpha"), MATMUL_TOL)
            for name in ("mm", "bmm", "addmm", "addmv", "baddbmm")}
ADAPTERS["cat"] = _adapter(internals.cat, ("dim",))
ADAPTERS["sort"] = _adapter(internals.sort, ("dim", "descending", "stable"))
ADAPTERS["linalg.vector_norm"] = _adapter(internals.linalg.vector_norm, ("ord", "dim", "keepdim", "dtype"),
                                          {torch.float32: (1.3e-6, 1e-5)})


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64)))
def test_opinfo_samples_into_out(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name], compare=compare_into_empty_outs)


OUT_CASES = {
    "mm, kept column-major out": lambda L: L.mm(L.arange(4.).reshape(2, 2), L.arange(6.).reshape(2, 3),
                                                out=L.empty(3, 2).t()),
    "mm, out at an offset": lambda L: L.mm(L.arange(4.).reshape(2, 2), L.arange(6.).reshape(2, 3),
                                           out=L.empty(10)[2:8].view(2, 3)),
    "mm, resized": lambda L: L.mm(L.arange(4.).reshape(2, 2), L.arange(6.).reshape(2, 3), out=L.empty(7)),
    "mm of empty bools": lambda L: L.mm(L.ones(2, 0, dtype=L.bool), L.ones(0, 2, dtype=L.bool)),
    "bmm, kept strides": lambda L: L.bmm(L.arange(8.).reshape(2, 2, 2), L.ones(2, 2, 3),
                                         out=L.empty(3, 2, 2).transpose(0, 2)),
    "bmm of integers": lambda L: L.bmm(L.arange(8).reshape(2, 2, 2), L.ones(2, 2, 3, dtype=L.int64),
                                       out=L.empty(0, dtype=L.int64)),
    "addmm, kept strides": lambda L: L.addmm(L.arange(2.), L.arange(6.).reshape(2, 3), L.arange(6.).reshape(3, 2),
                                             beta=2, alpha=3, out=L.empty(3, 3).t()),
    "addmm, beta 0": lambda L: L.addmm(L.full((2,), float("nan")), L.arange(6.).reshape(2, 3),
                                       L.arange(6.).reshape(3, 2), beta=0, alpha=3, out=L.empty(0)),
    "addmm of float16, resized": lambda L: L.addmm(L.arange(2., dtype=L.float16),
                                                   L.arange(6., dtype=L.float16).reshape(2, 3),
                                                   L.arange(6., dtype=L.float16).reshape(3, 2), beta=2, alpha=3,
                                                   out=L.empty(5, dtype=L.float16)),
    "addmm of integers": lambda L: L.addmm(L.arange(2), L.arange(6).reshape(2, 3), L.arange(6).reshape(3, 2),
                                           beta=2, alpha=3, out=L.empty(0, dtype=L.int64)),
    "addmm_": lambda L: L.arange(4.).reshape(2, 2).addmm_(L.ones(2, 3), L.ones(3, 2), alpha=2),
    "addmv, strided out": lambda L: L.addmv(L.ones(1), L.arange(4.).reshape(2, 2), L.ones(2), beta=2,
                                            out=L.ones(4)[::2]),
    "addmv, resized": lambda L: L.addmv(L.ones(2), L.ones(2, 2), L.ones(2), out=L.ones(3)),
    "addmv of integers, float scalars": lambda L: L.addmv(L.ones(2, dtype=L.long), L.ones(2, 2, dtype=L.long),
                                                          L.ones(2, dtype=L.long), beta=0.5, alpha=1.7),
    "addmv of empty bools": lambda L: L.addmv(L.ones(0, dtype=L.bool), L.ones(0, 2, dtype=L.bool),
                                              L.ones(2, dtype=L.bool)),
    "mv into out": lambda L: L.mv(L.ones(2, 2), L.ones(2), out=L.empty(0)),
    "baddbmm, kept strides": lambda L: L.baddbmm(L.ones(2, 1, 2), L.arange(8.).reshape(2, 2, 2), L.ones(2, 2, 2),
                                                 beta=3, out=L.ones(2, 2, 2).transpose(0, 2)),
    "baddbmm, resized": lambda L: L.baddbmm(L.ones(2), L.arange(8.).reshape(2, 2, 2), L.ones(2, 2, 2),
                                            out=L.empty(1)),
    "baddbmm of integers, a float alpha": lambda L: L.baddbmm(*(L.ones(2, 2, 2, dtype=L.long),) * 3, alpha=0.5),
    "cat into a wider out": lambda L: L.cat([L.ones(2, 3), L.zeros(2, 1)], -1, out=L.empty(0, dtype=L.float64)),
    "cat, kept strides": lambda L: L.cat([L.ones(2, 3), L.zeros(2, 1)], 1, out=L.empty(4, 2).t()),
    "cat, resized": lambda L: L.cat([L.ones(2, 3), L.zeros(2, 1)], 1, out=L.empty(9)),
    "cat of skipped empties": lambda L: L.cat([L.empty(0), L.empty(0)], out=L.empty(3)),
    "cat channels-last into out": lambda L: L.cat([L.ones(2, 3, 4, 5).to(memory_format=L.channels_last)] * 2, 1,
                                                  out=L.empty(0)),
    "cat channels-last with an empty vector": lambda L: L.cat(
        [L.ones(2, 3, 4, 5).to(memory_format=L.channels_last), L.empty(0)], 1),
    "stack into out": lambda L: L.stack([L.ones(2), L.zeros(2)], out=L.empty(0)),
    # cat's aliases and the stacks take out= as torch's do, through cat.out's rules
    "concat into out": lambda L: L.concat([L.ones(2, 3), L.zeros(2, 1)], 1, out=L.empty(0)),
    "concatenate into a wider out": lambda L: L.concatenate([L.ones(2), L.zeros(3)], out=L.empty(0, dtype=L.float64)),
    "hstack, resized": lambda L: L.hstack([L.ones(2), L.arange(3.)], out=L.empty(9)),
    "hstack of matrices, kept strides": lambda L: L.hstack([L.ones(2, 3), L.zeros(2, 1)], out=L.empty(4, 2).t()),
    "vstack into out": lambda L: L.vstack([L.arange(3.), L.ones(2, 3)], out=L.empty(0)),
    "row_stack into out": lambda L: L.row_stack([L.arange(3), L.ones(1, 3, dtype=L.long)],
                                                out=L.empty(0, dtype=L.long)),
    "dstack into out": lambda L: L.dstack([L.ones(2, 3), L.arange(6.).reshape(2, 3)], out=L.empty(0)),
    "column_stack into a wider out": lambda L: L.column_stack([L.arange(2.), L.ones(2, 2)],
                                                              out=L.empty(0, dtype=L.float64)),
    "index, kept strides": lambda L: L.ops.aten.index.Tensor_out(L.arange(6.).reshape(2, 3), [None, L.tensor([1, 0])],
                                                                 out=L.empty(2, 2).t()),
    "vector_norm into out": lambda L: L.linalg.vector_norm(L.tensor([[3., 4.], [1., 0.]]), 2, 1, True,
                                                           out=L.empty(5)),
    "vector_norm of a dtype": lambda L: L.linalg.vector_norm(L.tensor([[3., 4.], [1., 0.]]), 0.5, (0, 1),
                                                             dtype=L.float64, out=L.empty(2, 2, dtype=L.float64).t()),
    "vector_norm over an empty dim": lambda L: L.linalg.vector_norm(L.empty(0, 3), -1, 1),
    "torch.norm into out": lambda L: L.norm(L.tensor([[3., 4.], [1., 0.]]), 2, 0, out=L.empty(0)),
    # norm's overloads with a dtype: computed in it (linalg_vector_norm.out with the dtype)
    "norm.dtype_out": lambda L: L.ops.aten.norm.dtype_out(L.tensor([[3., 4.], [1., 0.]]), 1, [0], True,
                                                          dtype=L.float64, out=L.empty(0, dtype=L.float64)),
    "norm.dtype_out, kept strides": lambda L: L.ops.aten.norm.dtype_out(
        L.arange(8.).reshape(2, 2, 2), 3, [1], False, dtype=L.float64, out=L.empty(2, 2, dtype=L.float64).t()),
    "norm.ScalarOpt_dim_dtype": lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(L.tensor([[3., 4.], [1., 0.]]), None,
                                                                              [1], False, dtype=L.float64),
    "Tensor.norm with a dim and a dtype": lambda L: L.tensor([[3., 4.], [1., 0.]]).norm(float("inf"), [0], False,
                                                                                       dtype=L.float64),
    "norm.ScalarOpt_dtype": lambda L: L.ops.aten.norm.ScalarOpt_dtype(L.tensor([[3., 4.], [1., 0.]]), 0.5,
                                                                      dtype=L.float64),
    "norm.ScalarOpt_dtype, p None": lambda L: L.ops.aten.norm.ScalarOpt_dtype(L.arange(6.).reshape(2, 3), None,
                                                                              dtype=L.float32),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variant_matches_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


SORT_CASES = {
    "sort.stable": lambda L: tuple(L.sort(L.tensor([3., 1., 2., 1.]), stable=True,
                                          out=(L.empty(0), L.empty(0, dtype=L.long)))),
    "sort.stable, kept strides": lambda L: tuple(L.sort(L.tensor([[3., 1.], [2., 0.]]), stable=False, out=(
        L.empty(2, 2).t(), L.empty(2, 2, dtype=L.int64)))),
    "sort.stable, resized": lambda L: tuple(L.sort(L.tensor([3, 1, 2]), stable=True, descending=True,
                                                   out=(L.empty(5, dtype=L.int64), L.empty(3, dtype=L.int64)))),
    "sort.stable of a strided input": lambda L: tuple(L.sort(L.arange(12.).reshape(3, 4)[:, ::2], stable=True)),
    "sort.stable of a 0-dim": lambda L: tuple(L.sort(L.tensor(3.), stable=True)),
}


@pytest.mark.parametrize("case", SORT_CASES)
def test_sort_stable_into_out_matches_torch(case):
    """Both outputs, values and indices, with their layouts, and the same warnings."""
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(SORT_CASES[case])
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t)
    assert our_warnings == their_warnings


OPS_OUT_CASES = {
    "index, resized": lambda L: L.ops.aten.index.Tensor_out(L.arange(6.).reshape(2, 3), [None, L.tensor([1, 0])],
                                                            out=L.empty(3, 2).t()),
    "index with a mask, resized": lambda L: L.ops.aten.index.Tensor_out(
        L.arange(6.).reshape(2, 3), [L.tensor([True, False])], out=L.empty(2)),
    "norm.out, resized": lambda L: L.ops.aten.norm.out(L.tensor([[3., 4.], [1., 0.]]), None, [0], True,
                                                       out=L.empty(3)),
}


@pytest.mark.parametrize("case", OPS_OUT_CASES)
def test_ops_out_variant_matches_torch(case, capfd):
    assert_ops_out_resized_with_torchs_warning(OPS_OUT_CASES[case], capfd)


ERROR_CASES = {
    "mm out of another dtype": lambda L: L.mm(L.ones(2, 2), L.ones(2, 2), out=L.ones(2, 2, dtype=L.double)),
    "bmm of two dtypes": lambda L: L.bmm(L.ones(2, 2, 2), L.ones(2, 2, 2, dtype=L.double)),
    "addmm: self's dtype before mat1's dims": lambda L: L.addmm(L.ones(2, 2, dtype=L.double), L.ones(2),
                                                                L.ones(2, 2)),
    "addmm of mat1's dtype": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 2, dtype=L.double), L.ones(2, 2)),
    "addmm_ into a smaller self": lambda L: L.ones(2, 1).addmm_(L.ones(2, 2), L.ones(2, 2)),
    "addmm_ of another dtype": lambda L: L.ones(2, 2, dtype=L.long).addmm_(L.ones(2, 3), L.ones(3, 2)),
    "addmm out of another dtype": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 2), L.ones(2, 2),
                                                    out=L.ones(2, 2, dtype=L.double)),
    "addmv of two dtypes": lambda L: L.addmv(L.ones(2, dtype=L.double), L.ones(2, 2), L.ones(2)),
    "addmv_ into a one-element self": lambda L: L.ones(1).addmv_(L.ones(2, 2), L.ones(2)),
    "addmv of bools": lambda L: L.addmv(L.ones(2, dtype=L.bool), L.ones(2, 2, dtype=L.bool), L.ones(2, dtype=L.bool)),
    "mv of two dtypes": lambda L: L.mv(L.ones(2, 2), L.ones(2, dtype=L.double)),
    "baddbmm of self's dtype": lambda L: L.baddbmm(L.ones(2, 2, 2, dtype=L.double), L.ones(2, 2, 2), L.ones(2, 2, 2)),
    "baddbmm of a self that cannot broadcast": lambda L: L.baddbmm(L.ones(3, 2, 2), L.ones(2, 2, 2), L.ones(2, 2, 2)),
    "baddbmm_ into a smaller self": lambda L: L.ones(2, 1, 2).baddbmm_(L.ones(2, 2, 2), L.ones(2, 2, 2)),
    "baddbmm out of another dtype": lambda L: L.baddbmm(L.ones(2, 2, 2), L.ones(2, 2, 2), L.ones(2, 2, 2),
                                                        out=L.ones(2, 2, 2, dtype=L.double)),
    "cat into a narrower out": lambda L: L.cat([L.ones(2, 3), L.zeros(2, 1)], -1, out=L.empty(0, dtype=L.int64)),
    "cat into an input": lambda L: (lambda x: L.cat([x, x], out=x))(L.ones(2)),
    "cat into an out that overlaps itself": lambda L: L.cat([L.ones(2)], out=L.ones(1).expand(2)),
    "hstack into a narrower out": lambda L: L.hstack([L.ones(2), L.zeros(1)], out=L.empty(0, dtype=L.int64)),
    "vstack into its inputs' base": lambda L: (lambda x: L.vstack([x[:1], x[1:]], out=x))(L.ones(2, 2)),
    "concat into an out that overlaps itself": lambda L: L.concat([L.ones(2)], out=L.ones(1).expand(2)),
    "dstack of no tensors into out": lambda L: L.dstack([], out=L.empty(0)),
    "index out of another dtype": lambda L: L.ops.aten.index.Tensor_out(L.arange(6.).reshape(2, 3), [L.tensor([1, 0])],
                                                                        out=L.empty(0, dtype=L.double)),
    "index into an out that overlaps itself": lambda L: L.ops.aten.index.Tensor_out(
        L.arange(6.).reshape(2, 3), [L.tensor([1, 0])], out=L.empty(1).expand(2, 3)),
    "index into its index": lambda L: (lambda i: L.ops.aten.index.Tensor_out(L.arange(6.), [i], out=i))(
        L.tensor([1, 0])),
    "index with too many indices": lambda L: L.ops.aten.index.Tensor_out(L.arange(6.).reshape(2, 3),
                                                                         [L.tensor([1, 0])] * 3, out=L.empty(0)),
    "sort.stable out of another dtype": lambda L: L.sort(L.tensor([3, 1, 2]), stable=True, out=(
        L.empty(3), L.empty(3, dtype=L.int64))),
    "sort.stable indices of another dtype": lambda L: L.sort(L.tensor([3, 1, 2]), stable=True, out=(
        L.empty(3, dtype=L.int64), L.empty(3, dtype=L.int32))),
    "sort.stable into its input, transposed": lambda L: (lambda x: L.sort(x, stable=True, dim=0, out=(
        x.t(), L.empty(0, dtype=L.int64))))(L.tensor([[3., 1.], [2., 0.]])),
    "vector_norm out of another dtype": lambda L: L.linalg.vector_norm(L.ones(2), out=L.empty(0, dtype=L.double)),
    "vector_norm narrowing dtype": lambda L: L.linalg.vector_norm(L.ones(2), dtype=L.half),
    "vector_norm integral dtype": lambda L: L.linalg.vector_norm(L.ones(2), dtype=L.int64),
    "vector_norm complex dtype of a real input": lambda L: L.linalg.vector_norm(L.ones(2), dtype=L.complex64),
    "vector_norm inf of an empty tensor": lambda L: L.linalg.vector_norm(L.empty(0, 3), float("inf")),
    "vector_norm -1 over an empty dim": lambda L: L.linalg.vector_norm(L.empty(0, 3), -1, 0),
    "vector_norm -1.5 over an empty dim": lambda L: L.linalg.vector_norm(L.empty(0, 3), -1.5, [1, 0]),
    "norm of integers": lambda L: L.ops.aten.norm.ScalarOpt_dim(L.ones(2, dtype=L.long), 2, [0]),
    "norm.out of complex into complex": lambda L: L.ops.aten.norm.out(L.ones(2, dtype=L.complex64), 2, [0],
                                                                      out=L.empty(0, dtype=L.complex64)),
    "norm of an integral dtype": lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(L.ones(2), 2, [0], False,
                                                                               dtype=L.int64),
    "norm of a complex dtype (its output made in it)": lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(
        L.tensor([[3 + 4j, 1j], [1, 0]]), 2, [0, 1], True, dtype=L.complex128),
    "norm.dtype_out of a complex dtype": lambda L: L.ops.aten.norm.dtype_out(
        L.tensor([3 + 4j, 1j]), 2, [0], False, dtype=L.complex128, out=L.empty(0, dtype=L.complex128)),
    "norm of a real dtype for a complex input": lambda L: L.ops.aten.norm.ScalarOpt_dtype(
        L.tensor([3 + 4j, 1j]), 2, dtype=L.float64),
    "norm of a narrowing dtype": lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(L.ones(2), 2, [0], False,
                                                                               dtype=L.half),
    "norm of integers, a float dtype": lambda L: L.ops.aten.norm.ScalarOpt_dtype(L.ones(2, dtype=L.long), 2,
                                                                                dtype=L.float32),
    "norm.dtype_out of another dtype": lambda L: L.ops.aten.norm.dtype_out(L.ones(2), 2, [0], False, dtype=L.double,
                                                                           out=L.empty(0)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


def _operands():
    return (internals.arange(12.).reshape(4, 3), internals.ones(3, 2), internals.ones(2, 4, 3))


FAKE_PROGRAMS = {
    "mm": lambda L, x, y, b: L.mm(x, y),
    "mm into out": lambda L, x, y, b: L.mm(x, y, out=L.empty(2, 4).t()),
    "addmm": lambda L, x, y, b: L.addmm(y[0], x, y),
    "addmv": lambda L, x, y, b: L.addmv(x[:, 0], x, y[:, 0]),
    "bmm": lambda L, x, y, b: L.bmm(b, b.transpose(1, 2)),
    "baddbmm_": lambda L, x, y, b: L.ones(2, 4, 4).baddbmm_(b, b.transpose(1, 2)),
    "cat": lambda L, x, y, b: L.cat([x, b[0]], 1),
    "sort.stable": lambda L, x, y, b: L.sort(x.t(), stable=True, dim=0),
    "vector_norm": lambda L, x, y, b: L.linalg.vector_norm(x, 3, 0, True),
    "norm": lambda L, x, y, b: x.norm(2, 1),
    "norm with a dtype": lambda L, x, y, b: L.ops.aten.norm.ScalarOpt_dim_dtype(x.t(), 3, [1], True, dtype=L.float64),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program], _operands)


NORM_GRADIENTS = {
    "norm.ScalarOpt_dim_dtype": lambda L, x, t: L.ops.aten.norm.ScalarOpt_dim_dtype(x * t, 3, [1], True,
                                                                                    dtype=L.float64),
    "norm.ScalarOpt_dtype": lambda L, x, t: L.ops.aten.norm.ScalarOpt_dtype(x * t, None, dtype=L.float64),
}


@pytest.mark.parametrize("case", NORM_GRADIENTS)
def test_norm_with_a_dtype_differentiates_as_torch(case):
    """Their nodes (NormBackward3, NormBackward2) and gradients, twice, as torch's."""
    compare_gradients_and_nodes(NORM_GRADIENTS[case])


# mm, addmm and bmm have no meta function of their own: a fake runs the structured meta step. It
# refuses what the real kernel refuses, with the real kernel's error (addmm's self that cannot be
# broadcast too, which the real kernel finds in its impl step).
FAKE_REFUSALS = {
    "mm of matrices that cannot be multiplied": lambda L, x, y, b: L.mm(x, x),
    "mm of a vector": lambda L, x, y, b: L.mm(x[0], y),
    "bmm of batches that cannot be multiplied": lambda L, x, y, b: L.bmm(b, b),
    "addmm of a self that cannot be broadcast": lambda L, x, y, b: L.addmm(L.ones(4), x, y),
    "addmm_ into a self of other sizes": lambda L, x, y, b: L.ones(4, 3).addmm_(x, y),
}


@pytest.mark.parametrize("case", FAKE_REFUSALS)
def test_fake_products_refuse_as_the_real_kernels(case):
    program = FAKE_REFUSALS[case]
    with pytest.raises(RuntimeError) as real:
        program(internals, *_operands())
    with FakeTensorMode() as mode, pytest.raises(RuntimeError) as fake:
        program(internals, *(mode.from_tensor(t) for t in _operands()))
    assert str(fake.value) == str(real.value)
