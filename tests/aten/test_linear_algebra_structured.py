"""The linear-algebra operators torch declares structured (``_linalg_det``, ``_linalg_slogdet``,
``linalg_lu_factor_ex``, ``linalg_inv_ex``, ``_linalg_solve_ex``, ``linalg_cholesky_ex``,
``linalg_qr``, ``_linalg_svd``, ``_linalg_eigh``, ``linalg_cross``): each functional form derived
from its out= overload's meta and impl steps, the outputs laid out as torch's meta functions lay
them out (column-major factors), and the out= overloads checked against torch's: resized with
torch's warning and torch's strides, kept strides, refused dtypes, fake tensors.

LAPACK's last bits follow the library (MKL in torch's wheel, OpenBLAS here), so values are
compared within a few hundred epsilons; layouts, dtypes, warnings and errors exactly. Vectors
unique only up to a sign (Q, U, Vh, eigenvectors) are compared by layout alone here; their values
are the decompositions' tests' (``test_linear_algebra_decompositions.py``).
"""
import warnings

import pytest
import torch
from helpers import assert_derived_from_structured_out, assert_fake_matches_real, assert_same, same_error

import internals
from internals.aten.native import batch_linear_algebra, cross

TOL = {torch.float32: 2e-5, torch.float64: 1e-12, torch.complex64: 2e-5, torch.complex128: 1e-12}

STRUCTURED = [
    ("_linalg_det", "result", batch_linear_algebra), ("_linalg_slogdet", "sign", batch_linear_algebra),
    ("linalg_lu_factor_ex", "out", batch_linear_algebra), ("linalg_inv_ex", "inverse", batch_linear_algebra),
    ("_linalg_solve_ex", "result", batch_linear_algebra), ("linalg_cholesky_ex", "L", batch_linear_algebra),
    ("linalg_qr", "out", batch_linear_algebra), ("_linalg_svd", "U", batch_linear_algebra),
    ("_linalg_eigh", "eigenvalues", batch_linear_algebra), ("linalg_cross", "out", cross),
]


@pytest.mark.parametrize("name, out, module", STRUCTURED)
def test_functional_form_is_derived_from_the_structured_out_kernel(name, out, module):
    assert_derived_from_structured_out(name, out, module)


def _square(*batch, dtype=torch.float64):
    """Well-conditioned square matrices (a diagonal of 4 over entries of at most 1)."""
    count = 9
    for n in batch:
        count *= n
    A = torch.arange(count, dtype=torch.float64).sin().reshape(*batch, 3, 3) + 4 * torch.eye(3, dtype=torch.float64)
    if dtype.is_complex:
        A = A + 1j * A.cos()
    return A.to(dtype)


def _rect(m, n, dtype=torch.float64):
    return torch.arange(m * n, dtype=torch.float64).cos().reshape(m, n).to(dtype)


def _spd(*batch, dtype=torch.float64):
    A = _square(*batch, dtype=dtype)
    return A @ A.mH + torch.eye(3, dtype=dtype)


def _to(lib, value):
    if isinstance(value, torch.Tensor) and lib is internals:
        return internals.from_torch(value)
    if isinstance(value, tuple):
        return tuple(_to(lib, v) for v in value)
    return value


def _compare(ours, theirs, values):
    """Each output's layout and dtype as torch's, and its values within ``TOL`` where ``values``
    says it is unique."""
    if isinstance(theirs, torch.Tensor):
        ours, theirs, values = (ours,), (theirs,), (values,)
    assert len(ours) == len(theirs)
    for o, t, v in zip(ours, theirs, values, strict=True):
        if v:
            tol = TOL.get(t.dtype, 0)
            assert_same(o, t, rtol=tol, atol=tol)
        else:
            assert (tuple(o.shape), o.stride(), o.storage_offset(), str(o.dtype).split(".")[-1]) == (
                tuple(t.shape), t.stride(), t.storage_offset(), str(t.dtype).split(".")[-1])


# (program over lib and its inputs, inputs, which outputs have unique values)
FUNCTIONAL = {
    "det": (lambda L, A: L._linalg_det(A), (_square(2),), (True, True, True)),
    "det row-major complex": (lambda L, A: L._linalg_det(A), (_square(dtype=torch.complex128),), (True, True, True)),
    "det column-major": (lambda L, A: L._linalg_det(A), (_square(2).mT,), (True, True, True)),
    "det of none": (lambda L, A: L._linalg_det(A), (_square(0),), (True, True, True)),
    "slogdet": (lambda L, A: L._linalg_slogdet(A), (_square(2, 1),), (True,) * 4),
    "slogdet complex": (lambda L, A: L._linalg_slogdet(A), (_square(dtype=torch.complex64),), (True,) * 4),
    "lu_factor_ex": (lambda L, A: L.linalg.lu_factor_ex(A), (_square(2, dtype=torch.float32),), (True,) * 3),
    "inv_ex": (lambda L, A: L.linalg.inv_ex(A), (_square(2),), (True, True)),
    "inv_ex complex": (lambda L, A: L.linalg.inv_ex(A), (_square(dtype=torch.complex128),), (True, True)),
    "solve_ex": (lambda L, A, B: L._linalg_solve_ex(A, B), (_square(2), _rect(3, 2)), (True,) * 4),
    "solve_ex vector": (lambda L, A, B: L._linalg_solve_ex(A, B), (_square(2), _rect(2, 3)), (True,) * 4),
    "solve_ex right": (lambda L, A, B: L._linalg_solve_ex(A, B, left=False), (_square(), _rect(2, 3)), (True,) * 4),
    "solve_ex complex": (lambda L, A, B: L._linalg_solve_ex(A, B), (_square(dtype=torch.complex128),
                                                                     _rect(3, 1, torch.complex128)), (True,) * 4),
    "cholesky_ex": (lambda L, A: L.linalg.cholesky_ex(A), (_spd(2),), (True, True)),
    "cholesky_ex upper": (lambda L, A: L.linalg.cholesky_ex(A, upper=True), (_spd(),), (True, True)),
    "cholesky_ex of a failing matrix": (lambda L, A: L.linalg.cholesky_ex(A), (-_spd(2),), (True, True)),
    "qr tall": (lambda L, A: L.linalg.qr(A), (_rect(4, 3),), (False, False)),
    "qr wide complete": (lambda L, A: L.linalg.qr(A, "complete"), (_rect(2, 3),), (False, False)),
    "qr tall complete": (lambda L, A: L.linalg.qr(A, "complete"), (_rect(4, 3),), (False, False)),
    "qr r": (lambda L, A: L.linalg.qr(A, "r"), (_rect(4, 3),), (False, False)),
    "qr of none": (lambda L, A: L.linalg.qr(A), (_rect(0, 3),), (False, False)),
    "svd tall": (lambda L, A: L._linalg_svd(A), (_rect(4, 3),), (False, True, False)),
    "svd wide full": (lambda L, A: L._linalg_svd(A, True), (_rect(2, 3),), (False, True, False)),
    "svd values only": (lambda L, A: L._linalg_svd(A, False, False), (_rect(4, 3),), (True, True, True)),
    "svd complex": (lambda L, A: L._linalg_svd(A), (_rect(3, 2, torch.complex64),), (False, True, False)),
    "eigh": (lambda L, A: L._linalg_eigh(A), (_spd(2),), (True, False)),
    "eigh upper values only": (lambda L, A: L._linalg_eigh(A, "U", False), (_spd(),), (True, True)),
    "eigh complex": (lambda L, A: L._linalg_eigh(A), (_spd(dtype=torch.complex128),), (True, False)),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), (_rect(4, 3), _rect(1, 3)), True),
    "cross along dim 0": (lambda L, a, b: L.linalg.cross(a, b, dim=0), (_rect(3, 4), _rect(3, 1)), True),
}


@pytest.mark.parametrize("case", list(FUNCTIONAL))
def test_functional_outputs_have_torchs_layout(case):
    program, operands, values = FUNCTIONAL[case]
    _compare(program(internals, *_to(internals, operands)), program(torch, *operands), values)


def _empty(lib, spec):
    """An out= tensor: (sizes, dtype name) or (sizes, dtype name, transposed)."""
    sizes, dtype, *transposed = spec
    t = lib.empty(sizes, dtype=getattr(lib, dtype))
    return t.mT if transposed else t


# (program over lib, its inputs and its outs; inputs; outs; which outputs have unique values)
OUT = {
    "det, all resized from empty": (lambda L, A, o: L._linalg_det(A, out=o), (_square(2),),
                                    [((0,), "float64"), ((0,), "float64"), ((0,), "int32")], (True,) * 3),
    "det, LU resized with a warning": (lambda L, A, o: L._linalg_det(A, out=o), (_square(2),),
                                       [((2,), "float64"), ((5,), "float64"), ((2, 3), "int32")], (True,) * 3),
    "det, a row-major LU kept": (lambda L, A, o: L._linalg_det(A, out=o), (_square(),),
                                 [((), "float64"), ((3, 3), "float64"), ((3,), "int32")], (True,) * 3),
    "slogdet": (lambda L, A, o: L._linalg_slogdet(A, out=o), (_square(2, dtype=torch.complex128),),
                [((0,), "complex128"), ((0,), "float64"), ((0,), "complex128"), ((0,), "int32")], (True,) * 4),
    "lu_factor_ex, a row-major LU kept": (lambda L, A, o: L.linalg.lu_factor_ex(A, out=o), (_square(2),),
                                          [((2, 3, 3), "float64"), ((0,), "int32"), ((2,), "int32")], (True,) * 3),
    "lu_factor_ex, pivots resized": (lambda L, A, o: L.linalg.lu_factor_ex(A, out=o), (_square(),),
                                     [((0,), "float64"), ((4,), "int32"), ((0,), "int32")], (True,) * 3),
    "inv_ex, resized to column-major": (lambda L, A, o: L.linalg.inv_ex(A, out=o), (_square(2),),
                                        [((2, 3), "float64"), ((0,), "int32")], (True, True)),
    "inv_ex, column-major kept": (lambda L, A, o: L.linalg.inv_ex(A, out=o), (_square(),),
                                  [((3, 3), "float64", True), ((), "int32")], (True, True)),
    "solve_ex": (lambda L, A, B, o: L._linalg_solve_ex(A, B, out=o), (_square(2), _rect(3, 2)),
                 [((3, 2), "float64"), ((0,), "float64"), ((0,), "int32"), ((0,), "int32")], (True,) * 4),
    "solve_ex right": (lambda L, A, B, o: L._linalg_solve_ex(A, B, left=False, out=o), (_square(), _rect(2, 3)),
                       [((0,), "float64"), ((0,), "float64"), ((0,), "int32"), ((0,), "int32")], (True,) * 4),
    "cholesky_ex": (lambda L, A, o: L.linalg.cholesky_ex(A, out=o), (_spd(2),),
                    [((2, 3, 3), "float64"), ((3,), "int32")], (True, True)),
    "qr": (lambda L, A, o: L.linalg.qr(A, out=o), (_rect(4, 3),), [((0,), "float64"), ((1,), "float64")],
           (False, False)),
    "qr r, Q resized to nothing": (lambda L, A, o: L.linalg.qr(A, "r", out=o), (_rect(4, 3),),
                                   [((2,), "float64"), ((3, 3), "float64")], (True, False)),
    "svd values only": (lambda L, A, o: L._linalg_svd(A, False, False, out=o), (_rect(4, 3),),
                        [((0,), "float64"), ((0,), "float64"), ((0,), "float64")], (True,) * 3),
    "svd": (lambda L, A, o: L._linalg_svd(A, out=o), (_rect(2, 3),),
            [((0,), "float64"), ((2,), "float64"), ((2, 3), "float64")], (False, True, False)),
    "eigh": (lambda L, A, o: L._linalg_eigh(A, out=o), (_spd(),), [((0,), "float64"), ((0,), "float64")],
             (True, False)),
    "cross, resized": (lambda L, a, b, o: L.linalg.cross(a, b, out=o[0]), (_rect(4, 3), _rect(1, 3)),
                       [((5,), "float64")], (True,)),
    "cross, strides kept": (lambda L, a, b, o: L.linalg.cross(a, b, out=o[0]), (_rect(4, 3), _rect(1, 3)),
                            [((3, 4), "float64", True)], (True,)),
}


def _run_out(lib, program, operands, specs):
    outs = tuple(_empty(lib, s) for s in specs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = program(lib, *_to(lib, operands), outs)
    if not isinstance(result, tuple):
        result = (result,)
    assert all(r is o for r, o in zip(result, outs, strict=True))    # the outs themselves come back
    return result, [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]


@pytest.mark.parametrize("case", list(OUT))
def test_out_variant_matches_torch(case):
    program, operands, specs, values = OUT[case]
    ours, our_warnings = _run_out(internals, program, operands, specs)
    theirs, their_warnings = _run_out(torch, program, operands, specs)
    _compare(ours, theirs, values)
    assert our_warnings == their_warnings
    if len(theirs) > 1:
        assert type(ours).__name__ == type(theirs).__name__


OUT_ERRORS = {
    "det, a float LU for double": lambda L: L._linalg_det(
        L.eye(3, dtype=L.float64), out=(L.empty(0, dtype=L.float64), L.empty(0), L.empty(0, dtype=L.int32))),
    "det, int64 pivots": lambda L: L._linalg_det(
        L.eye(3), out=(L.empty(0), L.empty(0), L.empty(0, dtype=L.int64))),
    "slogdet, a complex logabsdet": lambda L: L._linalg_slogdet(L.eye(2, dtype=L.complex64), out=(
        L.empty(0, dtype=L.complex64), L.empty(0, dtype=L.complex64), L.empty(0, dtype=L.complex64),
        L.empty(0, dtype=L.int32))),
    "lu_factor_ex, int64 pivots": lambda L: L.linalg.lu_factor_ex(
        L.eye(3), out=(L.empty(0), L.empty(0, dtype=L.int64), L.empty(0, dtype=L.int32))),
    "inv_ex, a wider inverse": lambda L: L.linalg.inv_ex(L.eye(3), out=(L.empty(0, dtype=L.float64),
                                                                        L.empty(0, dtype=L.int32))),
    "inv_ex, int64 info": lambda L: L.linalg.inv_ex(L.eye(3), out=(L.empty(0), L.empty(0, dtype=L.int64))),
    "inv_ex, half": lambda L: L.linalg.inv_ex(L.eye(3, dtype=L.float16)),
    "solve_ex, a float result for double": lambda L: L._linalg_solve_ex(
        L.eye(3, dtype=L.float64), L.ones(3, 1, dtype=L.float64),
        out=(L.empty(0), L.empty(0, dtype=L.float64), L.empty(0, dtype=L.int32), L.empty(0, dtype=L.int32))),
    "cholesky_ex, int64 info": lambda L: L.linalg.cholesky_ex(L.eye(3), out=(L.empty(0),
                                                                             L.empty(0, dtype=L.int64))),
    "qr, a double R for float": lambda L: L.linalg.qr(L.eye(3), out=(L.empty(0), L.empty(0, dtype=L.float64))),
    "qr, an unknown mode": lambda L: L.linalg.qr(L.eye(3), "full", out=(L.empty(0), L.empty(0))),
    "svd, a double S for float": lambda L: L._linalg_svd(L.eye(3), out=(
        L.empty(0), L.empty(0, dtype=L.float64), L.empty(0))),
    "svd, a driver on the CPU": lambda L: L._linalg_svd(L.eye(3), driver="gesvd"),
    "eigh, a complex eigenvalue": lambda L: L._linalg_eigh(L.eye(3, dtype=L.complex64), out=(
        L.empty(0, dtype=L.complex64), L.empty(0, dtype=L.complex64))),
    "eigh, a bad UPLO": lambda L: L._linalg_eigh(L.eye(3), "X"),
    "cross, a double out for float": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(2, 3),
                                                              out=L.empty(0, dtype=L.float64)),
    "cross, out is an input": lambda L: (lambda x: L.linalg.cross(x, L.ones(2, 3), out=x))(L.ones(2, 3)),
    "cross, out overlaps itself": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(2, 3), out=L.empty(3).expand(2, 3)),
    "cross, inputs of two dtypes": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(2, 3, dtype=L.float64),
                                                            out=L.empty(0)),
}


@pytest.mark.parametrize("case", list(OUT_ERRORS))
def test_out_variant_errors_match_torch(case):
    same_error(OUT_ERRORS[case])


FAKE = {
    "det": (lambda L, A: L._linalg_det(A), lambda: (internals.from_torch(_square(2)),)),
    "slogdet": (lambda L, A: L._linalg_slogdet(A), lambda: (internals.from_torch(_square(2)),)),
    "lu_factor_ex": (lambda L, A: L.linalg.lu_factor_ex(A), lambda: (internals.from_torch(_square(2)),)),
    "inv_ex": (lambda L, A: L.linalg.inv_ex(A), lambda: (internals.from_torch(_square(2)),)),
    "solve_ex": (lambda L, A, B: L._linalg_solve_ex(A, B, left=False),
                 lambda: (internals.from_torch(_square()), internals.from_torch(_rect(2, 3)))),
    "cholesky_ex": (lambda L, A: L.linalg.cholesky_ex(A), lambda: (internals.from_torch(_spd(2)),)),
    "qr": (lambda L, A: L.linalg.qr(A, "complete"), lambda: (internals.from_torch(_rect(2, 3)),)),
    "svd": (lambda L, A: L._linalg_svd(A), lambda: (internals.from_torch(_rect(4, 3)),)),
    "eigh": (lambda L, A: L._linalg_eigh(A), lambda: (internals.from_torch(_spd(2)),)),
    "cross": (lambda L, a, b: L.linalg.cross(a, b),
              lambda: (internals.from_torch(_rect(4, 3)), internals.from_torch(_rect(1, 3)))),
}


@pytest.mark.parametrize("case", list(FAKE))
def test_fake_tensors_get_the_meta_steps_layout(case):
    program, operands = FAKE[case]
    assert_fake_matches_real(program, operands)
