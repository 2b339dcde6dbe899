"""NumPy's names and small compositions torch writes in C++ over other
operators -- ``negative``, ``absolute``, ``subtract``, ``multiply``, ``true_divide``,
``float_power`` (pow in double precision), ``swapdims``, ``atleast_3d``, ``hsplit``/``vsplit``/
``dsplit``, ``isreal``, ``is_nonzero``, ``is_same_size``, ``linalg.matrix_power``/``matrix_power``
(repeated squaring), ``Tensor.H``/``mH``/``adjoint`` -- with ``pow.Scalar_out`` and the varargs
``atleast_*d``. PyTorch's OpInfo samples, then everyday programs compared with torch's results,
nodes, warnings and errors. (A complex tensor's ``H`` is a lazy conjugate view, as torch's.)
"""
import warnings

import pytest
import torch
from helpers import PRODUCT_ULPS, Adapter, check_opinfo_samples, opinfo_cases

import internals
from internals.testing import assert_within_ulps

ADAPTERS = {
    "float_power": Adapter(internals.float_power, "float_power"),
    "atleast_3d": Adapter(internals.atleast_3d),
    "hsplit": Adapter(internals.hsplit, "hsplit"), "vsplit": Adapter(internals.vsplit, "vsplit"),
    "dsplit": Adapter(internals.dsplit, "dsplit"), "isreal": Adapter(internals.isreal, "isreal"),
    "linalg.matrix_power": Adapter(internals.linalg.matrix_power, tol={torch.float32: (1e-5, 1e-5),
                                                                      torch.float64: (1e-12, 1e-12)}),
    "true_divide": Adapter(internals.true_divide, "true_divide"),
    "H": Adapter(lambda x: x.H), "mH": Adapter(lambda x: x.mH),
}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool)))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


def _describe(lib, result):
    if isinstance(result, (tuple, list)):
        return [_describe(lib, r) for r in result]
    if isinstance(result, lib.Tensor):
        return (result.tolist(), tuple(result.shape), result.stride(), result.storage_offset(),
                str(result.dtype).split(".")[-1], type(result.grad_fn).__name__ if result.grad_fn else None,
                result._base is not None)
    return repr(result)


def _run(lib, program):
    """The result described (values, shape, strides, offset, dtype, node, view or not), or the
    error; and the warnings, without the C++ location torch appends."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = _describe(lib, eval(program, {"lib": lib}))
        except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
            result = (type(exc).__name__, str(exc).replace("internals", "torch"))
    return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]


X = "lib.arange(12.).reshape(3, 4)"
G = "lib.ones(2, 2, requires_grad=True)"
PROGRAMS = [
    f"lib.negative({X})", f"{X}.negative_()", f"lib.negative({X}, out=lib.empty(0))", f"lib.absolute(-{X})",
    f"(-{X}).absolute_()", f"lib.absolute({X}, out=lib.empty(1))", f"lib.subtract({X}, {X}, alpha=2)",
    f"{X}.subtract(1)", f"{X}.subtract_({X})", f"lib.subtract({X}, 1, 2)",
    f"lib.subtract({X}, {X}, out=lib.empty(0))", f"lib.multiply({X}, {X})", f"{X}.multiply(2)", f"{X}.multiply_(2)",
    f"lib.multiply({X}, 2, out=lib.empty(0))", "lib.true_divide(lib.tensor([1, 2]), 2)",
    "lib.true_divide(lib.tensor([1, 2]), lib.tensor([2, 4]))", "lib.tensor([1., 2.]).true_divide_(2)",
    "lib.tensor([1, 2]).true_divide_(2)", "lib.float_power(lib.tensor([1, 2]), 2)",
    "lib.float_power(2, lib.tensor([1., 2.]))", "lib.float_power(lib.tensor([1., 2.]), lib.tensor([2, 3]))",
    "lib.tensor([1., 2.]).float_power_(2)", "lib.tensor([1., 2.], dtype=lib.float64).float_power_(2)",
    "lib.float_power(lib.tensor([1., 2.]), 2, out=lib.empty(2))",
    "lib.float_power(lib.tensor([1., 2.]), 2, out=lib.empty(2, dtype=lib.float64))",
    "lib.float_power(lib.tensor([1., 2.]), 1j)", "lib.float_power(lib.tensor([4.]), 0.5)", f"lib.swapdims({X}, 0, 1)",
    f"{X}.swapdims(1, 0)", f"{X}.swapdims_(0, 1)", f"lib.atleast_3d({X})", "lib.atleast_3d(lib.tensor(1.))",
    "lib.atleast_3d(lib.ones(3))", "lib.atleast_3d(lib.ones(1, 2, 3, 4))",
    "lib.atleast_3d([lib.ones(2), lib.tensor(3.)])", "lib.atleast_3d(lib.ones(2), lib.ones(3, 3))",
    "lib.atleast_2d()", "lib.atleast_1d([lib.ones(2)])", "lib.atleast_2d(lib.tensor(1.), lib.ones(2))",
    f"lib.hsplit({X}, 2)", f"lib.hsplit({X}, [1, 3])", f"{X}.hsplit(3)", "lib.hsplit(lib.tensor(1.), 2)",
    f"lib.hsplit({X}, 0)", "lib.hsplit(lib.arange(6), 3)", f"lib.vsplit({X}, 3)", f"lib.vsplit({X}, [1])",
    "lib.vsplit(lib.ones(3), 1)", f"lib.vsplit({X}, 2)", "lib.dsplit(lib.ones(2, 2, 4), [1, 3])",
    "lib.dsplit(lib.ones(2, 2, 4), 2)", f"lib.dsplit({X}, 2)", "lib.isreal(lib.tensor([1 + 0j, 1j]))",
    "lib.isreal(lib.ones(2, dtype=lib.int8))", f"{X}.isreal()", "lib.ones(1).is_nonzero()",
    "lib.zeros(1, 1).is_nonzero()", "lib.zeros(0).is_nonzero()", "lib.ones(2).is_nonzero()",
    "lib.tensor([1j]).is_nonzero()", "lib.tensor(False).is_nonzero()", "lib.is_nonzero(lib.tensor([float('nan')]))",
    f"lib.is_same_size({X}, {X}.t())", f"{X}.is_same_size({X} + 1)", f"lib.matrix_power({G}, 0)",
    f"lib.matrix_power({G}, 1)", f"lib.matrix_power({G}, 2)", f"lib.matrix_power({G}, 3)",
    f"lib.matrix_power({G} * 0.5, 5)", f"lib.matrix_power({G} * 0.5, 12)",
    "lib.matrix_power(lib.tensor([[2., 1.], [1., 3.]], dtype=lib.float64), -2)",
    "lib.linalg.matrix_power(lib.tensor([[2., 1.], [1., 3.]]), 4)", "lib.matrix_power(lib.ones(2, 3), 2)",
    "lib.matrix_power(lib.ones(3), 2)", "lib.matrix_power(lib.ones(2, 2, dtype=lib.long), -1)",
    "lib.matrix_power(lib.ones(2, 2, dtype=lib.long), 0)", "lib.matrix_power(lib.ones(2, 2, dtype=lib.long), 7)",
    "lib.matrix_power(lib.ones(3, 2, 2), 3)", "lib.ones(2, 2).matrix_power(2)",
    "lib.matrix_power(lib.ones(2, 2), 2, out=lib.empty(0))",
    "lib.linalg.matrix_power(lib.ones(2, 2), 3, out=lib.empty(2, 2))", "lib.matrix_power(lib.ones(0, 2, 2), 3)",
    f"{X}.H", f"{X}.mH", f"{X}.adjoint()", f"lib.adjoint({X})", "lib.ones(2, 3, 4).mH", "lib.ones(2, 3, 4).H",
    "lib.ones(3).H", "lib.ones(3).mH", "lib.ones(3).adjoint()", "lib.tensor(1.).H", "lib.tensor(1.).mH", f"{G}.H",
    f"{G}.mH", f"{X}.cfloat()", f"{X}.cdouble()", f"{X}.ndimension()", f"{X}.is_signed()",
    "lib.ones(2, dtype=lib.uint8).is_signed()", "lib.ones(2, dtype=lib.bool).is_signed()",
    "lib.negative(lib.tensor([True]))", "lib.absolute(lib.tensor([True]))", f"lib.negative({G})",
    f"lib.absolute({G})", f"lib.multiply({G}, {G})", f"lib.subtract({G}, 1)", f"lib.true_divide({G}, 2)",
    f"lib.float_power({G}, 2)", f"lib.float_power(2, {G})", f"lib.float_power({G}, {G})", f"lib.swapdims({G}, 0, 1)",
    f"lib.atleast_3d({G})", f"lib.hsplit({G}, 2)",
    "lib.float_power(2, lib.tensor([1., 2.]), out=lib.empty(2, dtype=lib.float64))",
    "lib.pow(2, lib.tensor([1., 2.]), out=lib.empty(2))",
    "lib.pow(2, lib.tensor([1., 2.]), out=lib.empty(2, dtype=lib.long))",
    "lib.float_power(2, lib.tensor([1., 2.]), out=lib.empty(2))",
]


# A negative power inverts the matrix with LAPACK's LU solve, whose roundings follow MKL's
# kernel for the CPU: those values are compared within ulps, the rest of the description exactly.
WITHIN_ULPS = {"lib.matrix_power(lib.tensor([[2., 1.], [1., 3.]], dtype=lib.float64), -2)": PRODUCT_ULPS}


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    ours, theirs = _run(internals, program), _run(torch, program)
    if program in WITHIN_ULPS:
        (ours_values, *ours_rest), ours_warnings = ours
        (their_values, *their_rest), their_warnings = theirs
        assert_within_ulps(ours_values, their_values, WITHIN_ULPS[program])
        ours, theirs = (ours_rest, ours_warnings), (their_rest, their_warnings)
    assert ours == theirs
