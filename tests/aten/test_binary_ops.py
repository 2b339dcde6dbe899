"""Binary operators against torch: ``gcd`` and ``lcm`` (integer loops only), ``rsub`` of two
tensors, ``floor_divide``'s out= form, and the out= forms of the operators that rename another
(``true_divide``, ``subtract``, ``multiply``): values, dtypes, strides, errors, grad_fn names and
gradients; NumPy's names (``subtract``, ``multiply``, ``true_divide``), ``float_power``,
``isreal``, ``is_nonzero`` and ``pow.Scalar_out``; and ``pow``'s short cuts for real tensors (x ** 2,
x ** -1, ...) bit for bit.

Tests ``internals.aten.native.binary_ops`` and its scalar kernels in ``scalar_ops``
(aten/src/ATen/native/BinaryOps.cpp)."""

import math

import pytest
import torch
from helpers import (
    Adapter,
    assert_same,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    opinfo_cases,
    run_described,
    same,
)
from helpers import run_everyday_call as _run

import internals

ADAPTERS = {
    "gcd": Adapter(internals.gcd, "gcd"), "lcm": Adapter(internals.lcm, "lcm"),
    "rsub": Adapter(internals.rsub, kwargs=("alpha",)),
}


# NumPy's names and the compositions torch writes over pow and eq
NUMPY_NAME_ADAPTERS = {
    "float_power": Adapter(internals.float_power, "float_power"),
    "isreal": Adapter(internals.isreal, "isreal"),
    "true_divide": Adapter(internals.true_divide, "true_divide"),
}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.int8, torch.int64, torch.float32))
                         + opinfo_cases(NUMPY_NAME_ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool)))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, {**ADAPTERS, **NUMPY_NAME_ADAPTERS}[name])


A = "lib.tensor([12, -18, 0, 7, -5, 0, 2 ** 40], dtype=lib.int64)"
B = "lib.tensor([8, 27, 6, 0, -15, 0, 2 ** 20], dtype=lib.int64)"
PROGRAMS = [
    f"lib.gcd({A}, {B})", f"lib.lcm({A}, {B})", f"lib.gcd({A}.to(lib.int8), {B}.to(lib.int8))",
    f"lib.lcm({A}.to(lib.int16), {B}.to(lib.int16))", f"lib.gcd({A}.to(lib.uint8), {B}.to(lib.uint8))",
    f"lib.gcd({A}.to(lib.int32), {B})", f"lib.gcd({A}.reshape(7, 1), {B})", f"lib.lcm({A}[::2], {B}[1::2])",
    f"{A}.gcd({B})", f"{A}.lcm_({B})", f"{A}.gcd_({B})", f"lib.gcd_({A}, {B})", f"lib.lcm_({A}, {B})",
    f"lib.gcd({A}, {B}, out=lib.empty(0, dtype=lib.int64))", f"lib.lcm({A}, {B}, out=lib.empty(7))",
    f"lib.gcd({A}, {B}, out=lib.empty(0, dtype=lib.int8))", f"lib.gcd({A}.reshape(7, 1).t(), {B})",
    # torch's refusals: a loop compiled for the five integer types only, in-place promotion
    f"lib.gcd({A}.float(), {B})", f"lib.lcm({A}.bool(), {B}.bool())", f"lib.gcd({A}.double(), {B}.double())",
    f"lib.gcd({A}.to(lib.uint16), {B}.to(lib.uint16))", f"lib.lcm({A}.to(lib.int32), lib.tensor(2.))",
    f"{A}.to(lib.int32).gcd_({B})", f"lib.gcd({A}, {B}[:3])",
    # rsub of two tensors: other - alpha * self, sub's checks
    "lib.rsub(lib.tensor([1., 2.]), lib.tensor([3., 4.]))",
    "lib.rsub(lib.tensor([1., 2.]), lib.tensor([3., 4.]), alpha=2)",
    "lib.rsub(lib.tensor([1, 2]), lib.tensor([3., 4.]), alpha=3)", "lib.rsub(lib.tensor([1, 2]), lib.tensor(5))",
    "lib.rsub(lib.tensor([True]), lib.tensor([True]))", "lib.rsub(lib.tensor([1, 2]), lib.tensor([1, 2]), alpha=1.5)",
    "lib.rsub(lib.tensor([1., 2.]), lib.tensor([[3.], [4.]]))", "lib.rsub(lib.tensor([1., 2.]), 3.)",
    "lib.rsub(lib.tensor([1., 2.]), lib.tensor([1., 2., 3.]))",
    # floor_divide into out=, and in place
    "lib.floor_divide(lib.tensor([7, -7]), lib.tensor([2, 2]), out=lib.empty(0, dtype=lib.int64))",
    "lib.floor_divide(lib.tensor([7., -7.]), lib.tensor([2., 2.]), out=lib.empty(2, dtype=lib.float64))",
    "lib.floor_divide(lib.tensor([7., -7.]), lib.tensor([2., 2.]), out=lib.empty(2, dtype=lib.int64))",
    "lib.floor_divide(lib.tensor([7, -7]), lib.tensor([0, 2]), out=lib.empty(2, dtype=lib.int64))",
    "lib.floor_divide(lib.tensor([True]), lib.tensor([True]), out=lib.empty(1, dtype=lib.bool))",
    "lib.floor_divide(lib.tensor([7, -7]), lib.tensor([2, 2]), out=lib.empty(5, dtype=lib.int64))",
    "lib.tensor([7, -7]).floor_divide_(lib.tensor([2, 3]))", "lib.tensor([7, -7]).floor_divide_(2.5)",
    # the renamed operators' out= forms: the out= checks of div, sub and mul
    "lib.true_divide(lib.tensor([1., 2.]), lib.tensor([2., 4.]), out=lib.empty(2, dtype=lib.float64))",
    "lib.true_divide(lib.tensor([1, 2]), lib.tensor([2, 4]), out=lib.empty(2, dtype=lib.int64))",
    "lib.true_divide(lib.tensor([1., 2.]), 2, out=lib.empty(2, dtype=lib.complex64))",
    "lib.true_divide(lib.tensor([1., 2.]), lib.tensor([2., 4.]), out=lib.empty(2, dtype=lib.bool))",
    "lib.subtract(lib.tensor([1., 2.]), lib.tensor([2., 4.]), alpha=2, out=lib.empty(2, dtype=lib.float64))",
    "lib.subtract(lib.tensor([1., 2.]), lib.tensor([2., 4.]), out=lib.empty(2, dtype=lib.int64))",
    "lib.multiply(lib.tensor([1, 2]), lib.tensor([2, 4]), out=lib.empty(2, dtype=lib.float16))",
    "lib.multiply(lib.tensor([1., 2.]), lib.tensor([2., 4.]), out=lib.empty(2, dtype=lib.int32))",
    # heaviside: a complex out is refused as complex first
    "lib.heaviside(lib.tensor([1., 0.]), lib.tensor([2., 2.]), out=lib.empty(2, dtype=lib.complex64))",
    "lib.heaviside(lib.tensor([1, 0]), lib.tensor([2, 2]), out=lib.empty(2, dtype=lib.cfloat))",
]


# NumPy's names (subtract, multiply, true_divide), float_power (pow in double precision), isreal,
# is_nonzero and pow.Scalar_out
X = "lib.arange(12.).reshape(3, 4)"
G = "lib.ones(2, 2, requires_grad=True)"
NUMPY_NAME_PROGRAMS = [
    f"lib.subtract({X}, {X}, alpha=2)", f"{X}.subtract(1)", f"{X}.subtract_({X})", f"lib.subtract({X}, 1, 2)",
    f"lib.subtract({X}, {X}, out=lib.empty(0))", f"lib.multiply({X}, {X})", f"{X}.multiply(2)", f"{X}.multiply_(2)",
    f"lib.multiply({X}, 2, out=lib.empty(0))", "lib.true_divide(lib.tensor([1, 2]), 2)",
    "lib.true_divide(lib.tensor([1, 2]), lib.tensor([2, 4]))", "lib.tensor([1., 2.]).true_divide_(2)",
    "lib.tensor([1, 2]).true_divide_(2)", "lib.float_power(lib.tensor([1, 2]), 2)",
    "lib.float_power(2, lib.tensor([1., 2.]))", "lib.float_power(lib.tensor([1., 2.]), lib.tensor([2, 3]))",
    "lib.tensor([1., 2.]).float_power_(2)", "lib.tensor([1., 2.], dtype=lib.float64).float_power_(2)",
    "lib.float_power(lib.tensor([1., 2.]), 2, out=lib.empty(2))",
    "lib.float_power(lib.tensor([1., 2.]), 2, out=lib.empty(2, dtype=lib.float64))",
    "lib.float_power(lib.tensor([1., 2.]), 1j)", "lib.float_power(lib.tensor([4.]), 0.5)",
    "lib.isreal(lib.tensor([1 + 0j, 1j]))", "lib.isreal(lib.ones(2, dtype=lib.int8))", f"{X}.isreal()",
    "lib.ones(1).is_nonzero()", "lib.zeros(1, 1).is_nonzero()", "lib.zeros(0).is_nonzero()",
    "lib.ones(2).is_nonzero()", "lib.tensor([1j]).is_nonzero()", "lib.tensor(False).is_nonzero()",
    "lib.is_nonzero(lib.tensor([float('nan')]))", f"lib.multiply({G}, {G})", f"lib.subtract({G}, 1)",
    f"lib.true_divide({G}, 2)", f"lib.float_power({G}, 2)", f"lib.float_power(2, {G})", f"lib.float_power({G}, {G})",
    "lib.float_power(2, lib.tensor([1., 2.]), out=lib.empty(2, dtype=lib.float64))",
    "lib.pow(2, lib.tensor([1., 2.]), out=lib.empty(2))",
    "lib.pow(2, lib.tensor([1., 2.]), out=lib.empty(2, dtype=lib.long))",
    "lib.float_power(2, lib.tensor([1., 2.]), out=lib.empty(2))",
]


@pytest.mark.parametrize("program", PROGRAMS + NUMPY_NAME_PROGRAMS)
def test_everyday_calls(program):
    """The NumPy names' results described with their offset and whether they are views, the
    others' exactly (torch warns once a process of what a NumPy name does, so each program
    runs once)."""
    run = run_described if program in NUMPY_NAME_PROGRAMS else _run
    assert run(internals, program) == run(torch, program)


@pytest.mark.parametrize("program", ["lib.gcd(lib.empty(3, device='meta', dtype=lib.int64), lib.empty(1, "
                                     "device='meta', dtype=lib.int64))",
                                     "lib.rsub(lib.empty(2, 1, device='meta'), lib.empty(3, device='meta'))",
                                     "lib.floor_divide(lib.empty(3, device='meta'), lib.empty(3, device='meta'), "
                                     "out=lib.empty(0, device='meta'))"])
def test_meta_outputs(program):
    def shapes(lib):
        t = eval(program, {"lib": lib})
        return tuple(t.shape), t.stride(), str(t.dtype).split(".")[-1], t.device.type
    assert shapes(internals) == shapes(torch)


@pytest.mark.parametrize("build", [
    lambda lib, x, t: lib.rsub(x * t, t), lambda lib, x, t: lib.rsub(x, t * x, alpha=2.5),
    lambda lib, x, t: lib.rsub(x * t, t[0]),
], ids=["rsub", "rsub_alpha", "rsub_broadcast"])
def test_rsub_gradients_and_nodes(build):
    compare_gradients_and_nodes(build, allow_unused=True)


INF, NAN = math.inf, math.nan
DEVICES = ["cpu", "cuda"]


# ---------------------------------------------------------------------------------- real pow short cuts
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("exponent", [2, 3, -2, -1, -0.5, 2.0, -1.0])
def test_float_powers_take_torchs_short_cuts(exponent, dtype, device):
    """x ** 3 is x * x * x in the tensor's type (two roundings), x ** -2 is 1 / (x * x), x ** -1
    the reciprocal, x ** -0.5 one over sqrt, as ``pow_tensor_scalar_optimized_kernel``: bit for
    bit, where pow's one rounding differs in the last place for a third of these values. (x ** 0.5
    is sqrt, whose own last place differs from torch's vectorised one: see test_sqrt_is_pow_half.)"""
    xt = torch.cat([torch.linspace(-math.pi, math.pi, 200, dtype=dtype),
                    torch.tensor([0.0, -0.0, INF, -INF, NAN, 1e-30, 3e15], dtype=dtype)])
    x = internals.from_torch(xt).to(device)
    same(x ** exponent, xt ** exponent)
    same(x[::3].pow(exponent), xt[::3].pow(exponent))
    y, yt = x.clone(), xt.clone()
    y **= exponent
    yt **= exponent
    same(y, yt)


def test_sqrt_is_pow_half():
    """x ** 0.5 takes sqrt's kernel, in internals as in torch: both libraries agree with themselves."""
    xt = torch.linspace(0, 10, 300)
    x = internals.from_torch(xt)
    assert internals.equal(x ** 0.5, x.sqrt())
    assert torch.equal(xt ** 0.5, xt.sqrt())
    assert_same(x ** 0.5, xt ** 0.5)
