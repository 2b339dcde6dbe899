"""Complex ``pow`` in every overload, complex math at infinite and NaN inputs,
``item()`` and the Python conversions as the operator torch's are, and what a round of
tutorial snippets found.

Complex results are compared with a tolerance where torch computes with fused multiply-adds
(the last place may differ), and exactly where torch is exact: every infinity, NaN and signed
zero it returns (C99's Annex G values, as glibc's complex functions give them) is checked part
by part. CUDA runs on Numba's simulator here, through the same per-element functions.
"""
import itertools
import math

import pytest
import torch
from helpers import COMPLEX_ULPS, LIBM_ULPS, assert_same, assert_same_error

import internals

INF, NAN = math.inf, math.nan
PARTS = (0.0, -0.0, 1.5, -2.0, INF, -INF, NAN)
SPECIAL = [complex(a, b) for a, b in itertools.product(PARTS, PARTS)]          # 49 values, 7 x 7
FINITE = [1 + 2j, -0.5 + 0.25j, 3 - 4j, -2.5 - 1.5j, 0.75j, 1 + 90j, 2 + 760j, 400 + 1j, 30 - 1j, -800 + 3j]
COMPLEX = [torch.complex64, torch.complex128]
DEVICES = ["cpu", "cuda"]
# The CUDA simulator computes with NumPy scalars, which warn of inf - inf in threads of its own
# (the launch's np.errstate does not reach them); C computes NaN silently, as the CPU loops do.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
INTERNALS = {torch.complex64: internals.complex64, torch.complex128: internals.complex128,
             torch.float32: internals.float32, torch.float64: internals.float64, torch.int64: internals.int64,
             torch.int32: internals.int32, torch.bool: internals.bool, torch.uint8: internals.uint8}


def both(values, dtype, device="cpu", shape=None):
    theirs = torch.tensor(values, dtype=dtype)
    if shape is not None:
        theirs = theirs.reshape(shape)
    return internals.from_torch(theirs).to(device), theirs


def _part_matches(ours, theirs):
    """One real part: a non-finite or zero part of torch's exactly (signs of zeros included)."""
    if not math.isfinite(theirs) or not math.isfinite(ours):
        return repr(ours) == repr(theirs)
    return ours != 0 or theirs != 0 or math.copysign(1, ours) == math.copysign(1, theirs)


def same(ours, theirs, real_ulps=None):
    """Layout and dtype; every infinity and NaN as torch's, and a zero part where torch's is
    zero too with torch's sign; complex values within ``COMPLEX_ULPS`` (torch's kernels fuse
    multiply-adds where the CPU has them). Real values are exact unless ``real_ulps`` is given
    (a library math function's last bits follow the CPU)."""
    if not theirs.dtype.is_complex:
        exact = dict(rtol=0, atol=0) if real_ulps is None else dict(ulps=real_ulps)
        return assert_same(ours, theirs, **exact)
    assert_same(ours, theirs, ulps=COMPLEX_ULPS)
    for index, (a, b) in enumerate(zip(ours.cpu().reshape(-1).tolist(), theirs.reshape(-1).tolist())):
        assert _part_matches(a.real, b.real) and _part_matches(a.imag, b.imag), (index, a, b)


def error_text(ours, theirs):
    ours_error, theirs_error = assert_same_error(ours, theirs)
    assert str(ours_error) == str(theirs_error)


# ---------------------------------------------------------------------------------- complex pow
EXPONENTS = [2, 3, -2, 0.5, -0.5, -1, 2.5, 1j, 2 + 1j, -1 + 0j, 2 + 0j, 0.5 + 0j, 0j, 1 + 0j, True, 0, 1, -3]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("exponent", EXPONENTS, ids=str)
def test_complex_tensor_to_a_scalar_power(exponent, dtype, device):
    """``pow.Tensor_Scalar``: torch's short cuts (fill for 0, copy for 1, sqrt, 1 / sqrt, the
    reciprocal and products for 0.5, -0.5, -1, 2, 3, -2, also as complex numbers), else cpow."""
    x, xt = both(SPECIAL + FINITE, dtype, device)
    same(x ** exponent, xt ** exponent)
    same(internals.pow(x, exponent), torch.pow(xt, exponent))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_tensor_to_a_tensor_power(dtype, device):
    """``pow.Tensor_Tensor``: cpow for every pair, no short cut (0 ** 2 is -0j, 0 ** 0 NaN);
    broadcast, transposed and with a real exponent tensor."""
    x, xt = both(SPECIAL, dtype, device, shape=(7, 7))
    same(x ** x.t(), xt ** xt.t())
    same(x ** x[:, :1], xt ** xt[:, :1])
    e, et = both([[2.0], [0.5], [-1.0], [0.0], [3.0], [NAN], [-0.0]], torch.float32, device)
    same(x ** e, xt ** et)
    same(e.t() ** x, et.t() ** xt)
    ones, ones_t = both([[1, 2, 0, -1, 5, 3, 2]], torch.int64, device)
    same(x.t() ** ones, xt.t() ** ones_t)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("base", [2, 1j, 0, 1, 1.5 - 2j, -1, 2.5, True], ids=str)
def test_scalar_to_a_complex_tensor_power(base, dtype, device):
    """``pow.Scalar``: a Python number raised to a tensor; 1 ** x is a fill with ones (even for
    NaN exponents), True is not 1 there. (Exponents of large imaginary parts are left out: the
    phase b * log(a) of several hundred radians keeps only float32's digits in torch's cpowf.)"""
    x, xt = both(SPECIAL + FINITE[:5], dtype, device)
    same(base ** x, base ** xt)
    same(internals.pow(base, x), torch.pow(base, xt))


@pytest.mark.parametrize("exponent", [1j, 2 + 0.5j, 2, 0.5])
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.bool, torch.float32, torch.float64])
def test_real_tensors_to_complex_powers_promote(dtype, exponent):
    """An integer or bool tensor with a complex exponent becomes complex64, a float64 one
    complex128; a real tensor raised to a complex tensor takes the complex dtype."""
    x, xt = both([0, 1, 2, 3], dtype)
    same(x ** exponent, xt ** exponent, real_ulps=LIBM_ULPS)       # a float64 ** 0.5 calls pow, not sqrt
    c, ct = both([1j, 0.5 + 0j, -1 + 1j, 2], torch.complex128)
    same(x ** c, xt ** ct)
    same(c ** x, ct ** xt)
    same(exponent ** x if dtype is not torch.bool else x ** 2, exponent ** xt if dtype is not torch.bool else xt ** 2,
         real_ulps=LIBM_ULPS)


def test_complex_scalar_powers_under_a_float64_default():
    torch.set_default_dtype(torch.float64)
    internals.set_default_dtype(internals.float64)
    try:
        x, xt = both([1, 2, 3], torch.int64)
        same(x ** 1j, xt ** 1j)
        same(1j ** x, 1j ** xt)
    finally:
        torch.set_default_dtype(torch.float32)
        internals.set_default_dtype(internals.float32)


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_complex_pow(device):
    """``__ipow__`` and ``pow_``: in place, the same tensor back; a real tensor cannot hold a
    complex result (torch's cast check)."""
    for exponent in (2, 1j, -1, 0.5, 2.5 - 1j):
        x, xt = both(SPECIAL, torch.complex64, device)
        before = x
        x **= exponent
        xt **= exponent
        assert x is before
        same(x, xt)
    x, xt = both(FINITE, torch.complex128, device)
    same(x.pow_(x.flip(0)), xt.pow_(xt.flip(0)))
    for dtype in (torch.float32, torch.int64):
        r, rt = both([1, 2], dtype, device)
        error_text(lambda r=r: r.pow_(1j), lambda rt=rt: rt.pow_(1j))
        error_text(lambda r=r: r.pow_(internals.tensor([1j], device=device)), lambda rt=rt: rt.pow_(torch.tensor([1j])))


def test_complex_pow_keeps_torchs_errors():
    x, xt = both([1j, 2], torch.complex64)
    error_text(lambda: x ** internals.ones(3), lambda: xt ** torch.ones(3))
    i, it = both([1, 2], torch.int64)
    error_text(lambda: i ** -1, lambda: it ** -1)
    same(i ** (-1 + 0j), it ** (-1 + 0j))       # a complex exponent is no integer: no error


# ---------------------------------------------------------------------------------- special values
UNARY = ["sin", "cos", "tan", "tanh", "sigmoid", "exp", "log", "sqrt"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", UNARY)
def test_complex_functions_at_infinities_and_nans(name, dtype, device):
    """Every pair of parts from {0, -0, 1.5, -2, inf, -inf, nan}: Annex G's values as glibc gives
    them (csin(inf + i inf) is nan + i inf, ctanh(inf + iy) is 1 with the sign of sin 2y, ...),
    torch's own ``1 / (1 + exp(-z))`` for sigmoid; and values near the overflow thresholds of
    float32 (88) and float64 (709), where sinh and cosh are scaled."""
    x, xt = both(SPECIAL + FINITE, dtype, device)
    same(getattr(x, name)(), getattr(xt, name)())
    same(getattr(internals, name)(x[::2]), getattr(torch, name)(xt[::2]))


@pytest.mark.parametrize("name", UNARY)
def test_complex_functions_of_random_values(name):
    """Finite values, in a short tensor (torch's scalar loop; a long one is vectorised, to the
    same values within the tolerance)."""
    torch.manual_seed(0)
    for dtype in COMPLEX:
        xt = torch.randn(6, 7, dtype=dtype) * 3
        x = internals.from_torch(xt)
        same(getattr(x, name)(), getattr(xt, name)())
        same(getattr(x.t(), name)(), getattr(xt.t(), name)())


# ---------------------------------------------------------------------------------- item and friends
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int64", "int8", "uint8", "bool",
                                   "complex64", "complex128"])
def test_item_reads_the_element_as_torch(dtype, device):
    """``_local_scalar_dense`` (what ``item()`` calls): the element at the storage offset, of
    torch's Python type, the 16-bit floats widened exactly."""
    theirs = torch.tensor([1.5, -2.7, 3.0, 0.1]).to(getattr(torch, dtype))
    ours = internals.from_torch(theirs).to(device)
    for index in (1, 3):
        value, expected = ours[index].item(), theirs[index].item()
        assert type(value) is type(expected) and value == expected
        assert internals.ops.aten._local_scalar_dense(ours[index]) == torch.ops.aten._local_scalar_dense(theirs[index])
    assert ours.reshape(2, 2).t()[1, 0].item() == theirs.reshape(2, 2).t()[1, 0].item()


@pytest.mark.parametrize("convert", [float, int, complex, bool, lambda t: t.item()], ids=["float", "int", "complex",
                                                                                            "bool", "item"])
@pytest.mark.parametrize("make", [lambda lib: lib.ones(2), lambda lib: lib.ones(0), lambda lib: lib.ones(1, 1),
                                  lambda lib: lib.tensor([1.5 + 1j]), lambda lib: lib.tensor(2.5),
                                  lambda lib: lib.tensor([[3]])])
def test_python_conversions_and_their_errors(make, convert):
    """``float()``, ``int()`` and ``complex()`` refuse several elements with a ValueError of their
    own; ``item()`` and ``bool()`` with torch's RuntimeErrors."""
    try:
        expected = convert(make(torch))
    except Exception:
        return error_text(lambda: convert(make(internals)), lambda: convert(make(torch)))
    value = convert(make(internals))
    assert type(value) is type(expected) and value == expected


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


# ---------------------------------------------------------------------------------- floor, ceil, trunc, frac
ROUNDING = ["floor", "ceil", "trunc", "frac", "fix"]
ROUNDED_VALUES = [-2.5, -0.5, -0.0, 0.0, 0.3, 1.5, 2.7, -1e20, 3e15 + 0.5, INF, -INF, NAN]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_functions(name, dtype, device):
    """Values (signed zeros: ceil(-0.5) is -0.0), dtype, strides of a transposed input, and the
    in-place variant returning its input."""
    xt = torch.tensor(ROUNDED_VALUES, dtype=dtype).reshape(3, 4)
    x = internals.from_torch(xt).to(device)
    for ours, theirs in ((x, xt), (x.t(), xt.t()), (x[:, ::2], xt[:, ::2])):
        assert_same(getattr(internals, name)(ours), getattr(torch, name)(theirs), rtol=0, atol=0)
        assert_same(getattr(ours, name)(), getattr(theirs, name)(), rtol=0, atol=0)
        signs = getattr(ours, name)().cpu().to(internals.float64).reshape(-1).tolist()
        expected = getattr(theirs, name)().double().reshape(-1).tolist()
        assert [math.copysign(1, v) for v in signs if v == v] == [math.copysign(1, v) for v in expected if v == v]
    y, yt = x.clone(), xt.clone()
    assert getattr(y, name + "_")() is y
    getattr(torch, name + "_")(yt)
    assert_same(y, yt, rtol=0, atol=0)


@pytest.mark.parametrize("name", ROUNDING)
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.int32, torch.bool, torch.complex64])
def test_rounding_functions_of_integers_and_their_errors(name, dtype):
    """An integer tensor is its own floor (a copy; itself in place); frac refuses integers; bool
    and complex are refused with torch's messages."""
    xt = torch.tensor([[1, 0, 3]]).to(dtype).t()
    x = internals.from_torch(xt)
    try:
        theirs = getattr(torch, name)(xt)
    except (NotImplementedError, RuntimeError):
        error_text(lambda: getattr(internals, name)(x), lambda: getattr(torch, name)(xt))
        return error_text(lambda: getattr(x, name + "_")(), lambda: getattr(xt, name + "_")())
    ours = getattr(internals, name)(x)
    assert_same(ours, theirs, rtol=0, atol=0)
    assert ours.data_ptr() != x.data_ptr()
    assert getattr(x, name + "_")() is x


@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_functions_gradients(name):
    """floor, ceil and trunc pass no gradient (zeros); frac passes it through; torch's node names."""
    xt = torch.tensor([1.5, -2.25, 0.75], dtype=torch.float64, requires_grad=True)
    x = internals.from_torch(xt.detach()).requires_grad_()
    out, out_t = getattr(x, name)(), getattr(xt, name)()
    assert type(out.grad_fn).__name__ == type(out_t.grad_fn).__name__
    (out * internals.tensor([1.0, 2.0, 3.0], dtype=internals.float64)).sum().backward()
    (out_t * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert_same(x.grad, xt.grad, rtol=0, atol=0)
    assert internals.autograd.gradcheck(lambda t: getattr(t, name)() * t, (x.detach().requires_grad_(),))


# ---------------------------------------------------------------------------------- snippets' protocol
def test_tensor_type_and_nelement():
    """``x.type()`` names the legacy class (internals' module name in place of torch's);
    ``x.type(dtype)`` and ``x.type("torch.IntTensor")`` convert; bad names are torch's errors."""
    for make in (lambda lib: lib.tensor([1.5]), lambda lib: lib.tensor([True]), lambda lib: lib.tensor([1j]),
                 lambda lib: lib.tensor([1.5]).bfloat16(), lambda lib: lib.tensor([[1, 2]])):
        ours, theirs = make(internals), make(torch)
        assert ours.type() == theirs.type().replace("torch.", "internals.")
        assert ours.nelement() == theirs.nelement()
    x, xt = both([1.5, -2.5], torch.float32)
    assert_same(x.type(internals.int32), xt.type(torch.int32))
    assert_same(x.type("torch.IntTensor"), xt.type("torch.IntTensor"))
    assert x.type(internals.float32) is x and x.type("internals.FloatTensor") is x
    assert x.type("torch.cuda.DoubleTensor").device.type == "cuda"
    assert x.cuda().type() == "internals.cuda.FloatTensor"
    for bad in ("foo", "torch.FooTensor", 3):
        error_text(lambda bad=bad: x.type(bad), lambda bad=bad: xt.type(bad))


def test_softmax_modules():
    torch.manual_seed(0)
    xt = torch.randn(3, 5)
    x = internals.from_torch(xt)
    for name in ("Softmax", "LogSoftmax"):
        for dim in (0, 1, -1):
            ours, theirs = getattr(internals.nn, name)(dim=dim), getattr(torch.nn, name)(dim=dim)
            assert repr(ours) == repr(theirs)
            assert_same(ours(x), theirs(xt), rtol=1e-6, atol=1e-7)
    seq = internals.nn.Sequential(internals.nn.Linear(5, 2), internals.nn.Softmax(dim=1))
    assert repr(seq).endswith("(1): Softmax(dim=1)\n)")


def test_custom_function_node_repr_names_its_module():
    """The node class of an autograd.Function is a Python class in torch: its repr is object's,
    with the module (``<torch.autograd.function.MyFnBackward object at 0x...>``)."""
    def make(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
        return Double.apply(lib.ones(1, requires_grad=True)).grad_fn
    ours, theirs = make(internals), make(torch)
    assert repr(ours).split(" at ")[0] == repr(theirs).split(" at ")[0].replace("torch.", "internals.")
    assert repr(internals.ones(1, requires_grad=True).exp().grad_fn).startswith("<ExpBackward0 object at ")


@pytest.mark.parametrize("name", ["round", "floor", "ceil", "trunc"])
def test_integer_results_are_laid_out_by_tensor_iterator(name):
    """An integer input is copied into the output TensorIterator lays out (dense strides of the
    input's order), not cloned with the input's own strides: a (3, 1) view of strides (1, 3)
    gives strides (1, 1), as torch's."""
    xt = torch.tensor([[1, 0, 3]]).t()
    assert_same(getattr(internals, name)(internals.from_torch(xt)), getattr(torch, name)(xt), rtol=0, atol=0)
    xt = torch.arange(12).reshape(3, 4)[:, ::2].t()
    assert_same(getattr(internals, name)(internals.from_torch(xt)), getattr(torch, name)(xt), rtol=0, atol=0)
    if name == "round":        # sign of a bool tensor is the same kind of copy
        xt = torch.tensor([[True, False, True]]).t()
        assert_same(internals.sign(internals.from_torch(xt)), torch.sign(xt), rtol=0, atol=0)


def test_new_tensor():
    """The source tensor's dtype and device unless given; from a tensor, a copy and torch's warning."""
    for make in (lambda lib, x: x.new_tensor([1, 2]), lambda lib, x: x.new_tensor([1, 2], dtype=lib.int32),
                 lambda lib, x: x.new_tensor(3), lambda lib, x: x.new_tensor([[1.5]], requires_grad=True)):
        ours = make(internals, internals.tensor([1.0], dtype=internals.float64))
        theirs = make(torch, torch.tensor([1.0], dtype=torch.float64))
        assert_same(ours, theirs, rtol=0, atol=0)
        assert ours.requires_grad == theirs.requires_grad
    source, source_t = both([1, 2], torch.int64)
    with pytest.warns(UserWarning) as ours:
        copy = internals.ones(1).new_tensor(source)
    with pytest.warns(UserWarning) as theirs:
        expected = torch.ones(1).new_tensor(source_t)
    assert str(ours[0].message) == str(theirs[0].message)
    assert_same(copy, expected, rtol=0, atol=0)
    assert internals.ones(1).cuda().new_tensor([2]).device.type == "cuda"


PRINT_OPTIONS = [dict(precision=2), dict(threshold=5), dict(profile="short"), dict(sci_mode=True),
                 dict(sci_mode=False), dict(profile="full"), dict(linewidth=40, edgeitems=1, threshold=10),
                 dict(precision=6, sci_mode=True), dict(profile="default")]
PRINTED = [lambda lib: lib.tensor([1.23456, 2.34567]), lambda lib: lib.arange(10), lambda lib: lib.arange(2000.0) / 3,
           lambda lib: lib.tensor([1.5, 20.0]), lambda lib: lib.tensor([1e-9, 1e9]), lambda lib: lib.arange(1200),
           lambda lib: lib.arange(100.0).reshape(10, 10), lambda lib: lib.tensor([1.5 + 1j, -2j]),
           lambda lib: lib.tensor([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5], dtype=lib.float64)]


@pytest.mark.parametrize("options", PRINT_OPTIONS, ids=str)
def test_set_printoptions(options):
    """precision, threshold, edgeitems, linewidth, the three profiles and sci_mode, as torch's
    ``set_printoptions`` sets them (sci_mode left out goes back to the formatter's choice)."""
    try:
        internals.set_printoptions(**options)
        torch.set_printoptions(**options)
        assert internals._tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
        for make in PRINTED:
            assert repr(make(internals)) == repr(make(torch)).replace("torch.", "internals.")
    finally:
        internals.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
