"""The cuda device: every CUDA kernel checked against torch's CPU results.

Inputs are made by torch on the CPU and moved with ``internals.from_torch(t).cuda()``; the op runs
through the ``@cuda.jit`` kernels in ``internals/aten/native/cuda`` (on Numba's CUDA simulator when
there is no GPU, as here); the result must have on the device the strides torch's CPU result has
(the same TensorIterator rules pick them), and torch's values once brought back with ``.cpu()``.

The simulator runs every CUDA thread as a Python thread, so shapes stay tiny and hypothesis runs
few examples. The last two tests compile the kernels to PTX for real, in a process without the
simulator (that is how a machine without a GPU checks that they type-check for one), and check
that the PTX kept from an earlier run is read back only while nothing that decides it changed.
"""
import hashlib
import math
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from helpers import DTYPE_PAIRS, TO_INTERNALS, assert_same, assert_same_error
from hypothesis import given, settings
from hypothesis import strategies as hst

import internals

# The simulator runs each CUDA thread as a Python thread, with NumPy scalars: an integer power
# that wraps around, or exp(100) in float32, makes NumPy warn in those threads, where the
# launcher's ``np.errstate`` does not reach. The values are still checked against torch's.
pytestmark = [pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]

SAME_DEVICE = r"Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
EXACT = dict(rtol=0, atol=0)


def cu(t):
    """A torch CPU tensor as an internals cuda tensor (``.cuda()`` keeps a dense layout, as torch's)."""
    return internals.from_torch(t).cuda()


def check_cuda(ours, theirs, **tolerance):
    """``ours`` lives on cuda with torch's strides, and ``.cpu()`` brings back torch's values."""
    assert ours.device == internals.device("cuda", 0), ours.device
    assert ours.stride() == theirs.stride(), (ours.stride(), theirs.stride())
    host = ours.cpu()
    assert host.device.type == "cpu"
    assert_same(host, theirs, **tolerance)


def bits(t):
    """The bit patterns of a 16-bit float tensor, as a torch int16 tensor (for exact checks)."""
    return t.view(torch.int16)


def assert_same_bits(ours, theirs):
    """A 16-bit float result equals torch's bit for bit, NaN aside: torch's own NaN pattern depends
    on its code path (its vectorised float -> bfloat16 gives 0xFFFF, the scalar one 0x7FC0), so
    there only "is NaN" is compared."""
    ours = ours.cpu().to_torch()
    nan = theirs.isnan()
    assert torch.equal(ours.isnan(), nan)
    assert torch.equal(bits(ours)[~nan], bits(theirs)[~nan])


# ----------------------------------------------------------------------------- the device itself
def test_cuda_is_available_and_says_whether_simulated():
    assert internals.cuda.is_available() is True
    assert internals.cuda.is_simulated() == (os.environ.get("NUMBA_ENABLE_CUDASIM") == "1")
    from numba import config
    assert internals.cuda.is_simulated() == bool(config.ENABLE_CUDASIM)
    if not _driver_present():
        assert internals.cuda.is_simulated()


def _driver_present():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _stderr_of(program):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(program)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stderr


def test_simulator_is_announced_once_per_process():
    stderr = _stderr_of("""
        import sys
        import internals
        (internals.ones(3) + 1).sum().item()           # CPU work says nothing
        print("-- first cuda tensor --", file=sys.stderr)
        a = internals.zeros(2, device="cuda")
        b = internals.ones(3, device="cuda")
        assert (a.sum() + b.sum()).item() == 3
    """)
    cpu_part, cuda_part = stderr.split("-- first cuda tensor --")
    notice = "runs on Numba's CUDA simulator"
    assert notice not in cpu_part
    assert cuda_part.count(notice) == (1 if internals.cuda.is_simulated() else 0), stderr


# ----------------------------------------------------------------------------- elementwise
SPECIALS = torch.tensor([[-2.5, -0.0, 0.0, 1.5], [math.inf, -math.inf, math.nan, 80.0],
                         [1e-3, -100.0, 3.0, 0.5]])


@pytest.mark.parametrize("name", ["neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid", "tanh"])
def test_unary_float(name):
    t = SPECIALS.t()                        # transposed: the output keeps the (1, 4) strides
    check_cuda(getattr(cu(t), name)(), getattr(t, name)())
    t64 = torch.randn(2, 5, dtype=torch.float64)
    check_cuda(getattr(cu(t64), name)(), getattr(t64, name)())


@pytest.mark.parametrize("name", ["neg", "abs", "relu", "exp", "sqrt"])
@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64])
def test_unary_integer(name, dtype):
    t = torch.tensor([[-7, 0, 3], [100, -100, 1]], dtype=dtype)   # exp, sqrt turn them into float32
    check_cuda(getattr(cu(t), name)(), getattr(t, name)())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ["neg", "exp", "sigmoid", "tanh"])
def test_unary_reduced_float(name, dtype):
    # Computed in float32 and rounded once, as ATen's opmath does: torch's defaults for the dtype.
    t = torch.randn(3, 4).to(dtype)
    check_cuda(getattr(cu(t), name)(), getattr(t, name)())


def test_unary_in_place_on_cuda():
    t = torch.randn(3, 4)
    x = cu(t)
    before = x._version
    assert x.exp_() is x
    assert x.relu_() is x
    assert x._version == before + 2
    check_cuda(x, t.exp().relu())


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "pow"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_float_broadcast(name):
    a = torch.randn(4, 3).t()                                   # (3, 4), strides (1, 3)
    a[0, 1], a[2, 3] = math.nan, 2.0
    b = torch.randn(4).abs()
    b[2], b[3] = math.nan, 2.0                                  # NaN meets a number, equal values meet
    check_cuda(getattr(cu(a), name)(cu(b)), getattr(a, name)(b))
    check_cuda(getattr(cu(b), name)(cu(a)), getattr(b, name)(a))


@pytest.mark.parametrize("name", [n for n in BINARY if n != "pow"])
def test_binary_integer_promotion(name):
    a = torch.tensor([[3, -4, 0, 7], [100, -128, 5, 5]], dtype=torch.int32)
    b = torch.tensor([5, -4, 1, 2], dtype=torch.int64)
    check_cuda(getattr(cu(a), name)(cu(b)), getattr(a, name)(b))   # int32 op int64 -> int64
    u = torch.tensor([0, 200, 255, 7], dtype=torch.uint8)
    s = torch.tensor([-1, 100, -128, 7], dtype=torch.int8)
    check_cuda(getattr(cu(u), name)(cu(s)), getattr(u, name)(s))   # uint8 op int8 -> int16


def test_pow_integer_and_float():
    base = torch.tensor([[2, -3, 0, 1], [-1, 5, 7, -2]], dtype=torch.int64)
    exponent = torch.tensor([0, 1, 3, 5], dtype=torch.int64)
    check_cuda(cu(base).pow(cu(exponent)), base.pow(exponent))
    check_cuda(cu(base) ** 3, base ** 3)
    big = torch.tensor([3, -3, 2], dtype=torch.int64)
    check_cuda(cu(big) ** 41, big ** 41)                           # wraps around, as C does
    small = torch.tensor([2, -3, 4], dtype=torch.int8)
    check_cuda(cu(small) ** 5, small ** 5)
    f = torch.rand(2, 3) * 4
    g = torch.randn(2, 3)
    check_cuda(cu(f).pow(cu(g)), f.pow(g))
    check_cuda(cu(f) ** 2.5, f ** 2.5)
    check_cuda(cu(base) ** 0.5, base ** 0.5)                       # int ** float -> float32
    check_cuda(2 ** cu(exponent), 2 ** exponent)


def test_alpha():
    a, b = torch.randn(3, 4), torch.randn(4)
    check_cuda(cu(a).add(cu(b), alpha=2.5), a.add(b, alpha=2.5))
    check_cuda(cu(a).sub(cu(b), alpha=-3), a.sub(b, alpha=-3))
    i, j = torch.tensor([1, 2, 3]), torch.tensor([10, 20, 30])
    check_cuda(cu(i).add(cu(j), alpha=3), i.add(j, alpha=3))
    check_cuda(cu(i).sub(cu(j), alpha=2), i.sub(j, alpha=2))
    assert_same_error(lambda: cu(i).add(cu(j), alpha=0.5), lambda: i.add(j, alpha=0.5))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_binary_reduced_float_is_exact(name, dtype):
    # One rounding of the exact float32 result: the same bits as torch.
    a, b = torch.randn(3, 5).to(dtype), torch.randn(3, 5).to(dtype)
    ours = getattr(cu(a), name)(cu(b))
    theirs = getattr(a, name)(b)
    check_cuda(ours, theirs, **EXACT)
    assert_same_bits(ours, theirs)


def test_where():
    cond = torch.tensor([[True, False, True], [False, False, True]])
    a = torch.randn(2, 3)
    b = torch.arange(3)
    check_cuda(internals.where(cu(cond), cu(a), cu(b)), torch.where(cond, a, b))
    check_cuda(internals.where(cu(cond.t()), cu(a.t()), cu(a.t()) * 2), torch.where(cond.t(), a.t(), a.t() * 2))
    zero_dim = torch.tensor(7.0, dtype=torch.float64)
    check_cuda(internals.where(cu(cond), cu(a), internals.from_torch(zero_dim)), torch.where(cond, a, zero_dim))


# ----------------------------------------------------------------------------- copies and casts
def _values_for(src, dst):
    """Values that convert the same way everywhere: no float -> int conversion out of range."""
    if src is torch.bool:
        return torch.tensor([True, False, True, True, False, False, True, False])
    if src.is_floating_point:
        values = torch.tensor([0.0, 1.0, 2.5, -3.75, 100.25, 0.3, 65.5, -0.0])
        if dst in (torch.uint8, torch.bool):
            values = values.abs()     # a negative float to uint8 is undefined in C and in torch
        return values.to(src)
    if src is torch.uint8:
        return torch.tensor([0, 1, 2, 3, 100, 127, 200, 255], dtype=src)
    if src is torch.int8:
        return torch.tensor([0, 1, -2, 3, 100, 127, -128, -7], dtype=src)
    if src is torch.int16:
        return torch.tensor([0, 1, -2, 3, 300, -300, 32767, -7], dtype=src)
    return torch.tensor([0, 1, -2, 3, 300, 70000, -70000, -7], dtype=src)   # int32, int64: wrap when narrowed


@pytest.mark.parametrize("dst", [theirs for _, theirs in DTYPE_PAIRS], ids=str)
@pytest.mark.parametrize("src", [theirs for _, theirs in DTYPE_PAIRS], ids=str)
def test_copy_casts_between_all_dtypes(src, dst):
    t = _values_for(src, dst).reshape(2, 4).t()               # a strided source
    out = internals.empty(4, 2, dtype=TO_INTERNALS[dst], device="cuda")
    out.copy_(cu(t))
    theirs = torch.empty(4, 2, dtype=dst).copy_(t)
    check_cuda(out, theirs, **EXACT)
    if dst in (torch.float16, torch.bfloat16):
        assert_same_bits(out, theirs)
    check_cuda(cu(t).to(TO_INTERNALS[dst]), t.to(dst), **EXACT)   # .to keeps the (1, 4) strides


def _hard_floats():
    """float32 values that test rounding to 16 bits: ties, subnormals, overflow, NaN of both signs."""
    scaled = torch.randn(24) * torch.pow(2.0, torch.randint(-30, 30, (24,)).float())
    special = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 65504.0, 65519.0, 65520.0, 1e6,
                            6e-8, 3e-8, 2.9e-8, 1e-5, -6.1e-5, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11,
                            1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, 3.4e38, 1e-40, -1e-45, 2.0 ** -14])
    return torch.cat([scaled, special, -torch.tensor([math.nan])])


@pytest.mark.parametrize("wide", [torch.float32, torch.float64])
@pytest.mark.parametrize("narrow", [torch.float16, torch.bfloat16])
def test_16_bit_float_conversions_match_torch_bit_for_bit(wide, narrow):
    t = _hard_floats().to(wide)
    down = cu(t).to(TO_INTERNALS[narrow])
    assert_same_bits(down, t.to(narrow))
    every_pattern = torch.arange(-2 ** 15, 2 ** 15, 97, dtype=torch.int32).to(torch.int16).view(narrow)
    up = cu(every_pattern).to(TO_INTERNALS[wide])
    check_cuda(up, every_pattern.to(wide), **EXACT)
    other = torch.bfloat16 if narrow is torch.float16 else torch.float16
    across = cu(every_pattern).to(TO_INTERNALS[other])      # through float32, as torch goes
    assert_same_bits(across, every_pattern.to(other))


@pytest.mark.parametrize("ours_dtype, dtype", DTYPE_PAIRS, ids=str)
def test_fill_a_strided_view_on_cuda(ours_dtype, dtype):
    value = True if dtype is torch.bool else (-3 if dtype is not torch.uint8 else 250)
    if dtype.is_floating_point:
        value = 2.71875
    base = torch.zeros(4, 6, dtype=dtype)
    ours = cu(base)
    ours[1:3, ::2].fill_(value)
    base[1:3, ::2].fill_(value)
    check_cuda(ours, base, **EXACT)
    check_cuda(internals.full((2, 3), value, dtype=ours_dtype, device="cuda"), torch.full((2, 3), value, dtype=dtype))


# ----------------------------------------------------------------------------- reductions
REDUCE_DIMS = [(None, False), (0, True), (-1, False), ((0, 2), True), ((2, 0, 1), False)]


@pytest.mark.parametrize("dim, keepdim", REDUCE_DIMS, ids=str)
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin"])
def test_reductions(name, dim, keepdim):
    torch.manual_seed(1)
    t = (torch.rand(5, 3, 4) + 0.5).transpose(0, 2)     # (4, 3, 5) strided; 60 elements > one block
    kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    if dim is None and name in ("amax", "amin"):
        kwargs = {"dim": (), "keepdim": keepdim}
    if name == "prod" and not isinstance(dim, int):    # torch's prod takes one dim or none
        return check_cuda(cu(t).prod(), t.prod())
    check_cuda(getattr(cu(t), name)(**kwargs), getattr(t, name)(**kwargs))


@pytest.mark.parametrize("dim", [None, 1])
def test_integer_and_bool_reductions(dim):
    t = torch.tensor([[3, -1, 7, 7], [0, 9, -5, 9], [2, 2, 2, 2]], dtype=torch.int32)
    kw = {} if dim is None else {"dim": dim}
    check_cuda(cu(t).sum(**kw), t.sum(**kw))                    # int32 sums in int64
    check_cuda(cu(t).prod(**kw), t.prod(**kw))
    check_cuda(cu(t).amax(**kw), t.amax(**kw))
    check_cuda(cu(t).sum(**kw, dtype=internals.float64), t.sum(**kw, dtype=torch.float64))
    check_cuda(cu(t).argmax(**kw), t.argmax(**kw))              # ties: the first index
    check_cuda(cu(t).argmin(**kw), t.argmin(**kw))
    m = t > 2
    check_cuda(cu(m).sum(**kw), m.sum(**kw))
    check_cuda(cu(m).amax(**kw), m.amax(**kw))
    if dim is not None:
        ours, theirs = cu(m).max(dim), m.max(dim)               # bool values, positions as uint8
        check_cuda(ours.values, theirs.values)
        check_cuda(ours.indices, theirs.indices)


@pytest.mark.parametrize("dim, keepdim", [(0, True), (-1, False)])
def test_max_min_with_indices(dim, keepdim):
    t = torch.tensor([[1.0, 5.0, 5.0, -2.0, 0.5], [4.0, 4.0, -1.0, -1.0, 9.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    for name in ("max", "min"):
        ours, theirs = getattr(cu(t), name)(dim, keepdim), getattr(t, name)(dim, keepdim)
        check_cuda(ours.values, theirs.values)
        check_cuda(ours.indices, theirs.indices)
    check_cuda(cu(t).max(), t.max())
    check_cuda(cu(t).argmax(dim, keepdim), t.argmax(dim, keepdim))


@pytest.mark.parametrize("nan_at", [[1, 3], [7, 33], [33], [39, 38], [0]])
def test_argmax_nan_first_index_rule(nan_at):
    # 40 elements: each of 32 simulated threads folds a strided share, then the shared-memory
    # tree combines them; the first NaN must win in both stages.
    t = torch.arange(40.0) % 13
    t[list(nan_at)] = math.nan
    for name in ("argmax", "argmin"):
        check_cuda(getattr(cu(t), name)(), getattr(t, name)())
        check_cuda(getattr(cu(t.reshape(2, 20)), name)(1), getattr(t.reshape(2, 20), name)(1))
    check_cuda(cu(t).amax(), t.amax())
    check_cuda(cu(t).max(0).indices, t.max(0).indices)


def test_argmax_ties_go_to_the_first_index_across_threads():
    t = torch.zeros(70)
    t[[5, 37, 69]] = 3.0                      # maxima held by different simulated threads
    t[[2, 34, 66]] = -3.0
    check_cuda(cu(t).argmax(), t.argmax())
    check_cuda(cu(t).argmin(), t.argmin())
    i = torch.tensor([4, 9, 9, 1, 9], dtype=torch.int64)
    check_cuda(cu(i).argmax(), i.argmax())


# ----------------------------------------------------------------------------- matrix products
@pytest.mark.parametrize("m, k, n, dtype", [(1, 1, 1, torch.float32), (5, 7, 3, torch.float32),
                                             (4, 4, 4, torch.float32), (9, 13, 6, torch.float64),
                                             (17, 3, 18, torch.int64)])
def test_mm_odd_sizes(m, k, n, dtype):
    # The tile is 4 (simulated) or 16: none of these sizes needs to be a multiple of it.
    a = (torch.randn(m, k) * 4).to(dtype)
    b = (torch.randn(k, n) * 4).to(dtype)
    check_cuda(cu(a).mm(cu(b)), a.mm(b))
    column_major = b.t().contiguous().t()                      # same values, strides (1, k)
    check_cuda(cu(a.t().contiguous().t()) @ cu(column_major), a @ column_major)


def test_mm_reduced_float():
    a, b = torch.randn(5, 6).half(), torch.randn(6, 3).half()
    check_cuda(cu(a) @ cu(b), a @ b)          # float32 accumulation, one rounding: torch's defaults for half


def test_bmm_and_matmul():
    a, b = torch.randn(3, 5, 7), torch.randn(3, 7, 2)
    check_cuda(cu(a).bmm(cu(b)), a.bmm(b))
    x, y = torch.randn(2, 1, 3, 5), torch.randn(4, 5, 2)
    check_cuda(internals.matmul(cu(x), cu(y)), torch.matmul(x, y))     # broadcast batch dims
    v, w = torch.randn(5), torch.randn(5)
    check_cuda(cu(v) @ cu(w), v @ w)
    m = torch.randn(3, 5)
    check_cuda(cu(m) @ cu(v), m @ v)
    check_cuda(cu(v) @ cu(m.t()), v @ m.t())
    check_cuda(cu(x) @ cu(v), x @ v)


# ----------------------------------------------------------------------------- softmax
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name, dim):
    t = torch.randn(3, 5) * 50                     # large values: the max is subtracted first
    check_cuda(getattr(cu(t), name)(dim), getattr(t, name)(dim))
    t64 = torch.randn(4, 2, dtype=torch.float64)
    check_cuda(getattr(cu(t64), name)(dim), getattr(t64, name)(dim))
    check_cuda(getattr(cu(t), name)(dim, dtype=internals.float64), getattr(t, name)(dim, dtype=torch.float64))


# ----------------------------------------------------------------------------- views and moves
VIEWS = {
    "t": lambda x: x.t(),
    "slice": lambda x: x[1:, ::2],
    "narrow": lambda x: x.narrow(1, 2, 3),
    "select": lambda x: x.select(0, 2),
    "view": lambda x: x.view(6, 4),
    "reshape": lambda x: x.reshape(2, 12),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "expand": lambda x: x.expand(2, 4, 6),
    "diagonal": lambda x: x.diagonal(1),
    "as_strided": lambda x: x.as_strided((3, 3), (6, 1), 2),
    "permute": lambda x: x.permute(1, 0),
    "unfold": lambda x: x.unfold(1, 2, 2),
    "getitem": lambda x: x[..., None, 3],
    "view of view": lambda x: x[1:][:, 2:].t()[1],
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views_on_cuda_are_metadata_only(name):
    tb = torch.arange(24.0).reshape(4, 6)
    base = cu(tb)
    v = VIEWS[name](base)
    theirs = VIEWS[name](tb)
    assert v.device == base.device
    assert v.untyped_storage() is base.untyped_storage()             # no data moved or copied
    assert v.data_ptr() == base.data_ptr() + v.storage_offset() * v.element_size()
    assert_same(v, theirs)                                             # sizes, strides, offset, values
    assert_same(v.cpu(), theirs.clone())                               # .cpu() lays out like clone


def test_writes_through_a_cuda_view_reach_the_base():
    tb = torch.arange(24.0).reshape(4, 6)
    base = cu(tb)
    base[1].fill_(7.0)
    tb[1].fill_(7.0)
    base[:, 2].mul_(-2)
    tb[:, 2].mul_(-2)
    base.t()[3:5].add_(cu(torch.ones(4)))
    tb.t()[3:5].add_(torch.ones(4))
    check_cuda(base, tb)


@pytest.mark.parametrize("ours_dtype, dtype", DTYPE_PAIRS, ids=str)
def test_cpu_cuda_round_trip(ours_dtype, dtype):
    t = (torch.randn(3, 4) * 50).to(dtype)
    x = internals.from_torch(t)
    on_device = x.cuda()
    assert on_device.device.type == "cuda" and on_device.is_cuda
    assert on_device.cuda() is on_device and on_device.to("cuda") is on_device
    back = on_device.cpu()
    assert back.device.type == "cpu" and back.cpu() is back
    assert_same(back, t, **EXACT)
    for view in (t.t(), t[:, 1:3], t[::2]):
        moved = internals.from_torch(view).cuda()
        assert moved.stride() == view.clone().stride()       # dense kept, the rest made contiguous
        assert_same(moved.cpu(), view.clone(), **EXACT)


def test_to_device_and_dtype():
    t = torch.randn(3, 4).t()
    x = internals.from_torch(t)
    check_cuda(x.to("cuda", internals.float64), t.to(torch.float64))
    check_cuda(x.to(device="cuda", dtype=internals.int32), t.to(torch.int32))
    check_cuda(x.to(internals.device("cuda")), t)
    check_cuda(x.to(internals.zeros(1, dtype=internals.float16, device="cuda")), t.to(torch.float16))
    y = x.cuda()
    back = y.to("cpu", internals.bfloat16)
    assert back.device.type == "cpu"
    assert_same(back, t.to(torch.bfloat16))
    check_cuda(y.double(), t.double())


def test_numpy_of_a_cuda_tensor_raises_type_error():
    x = internals.ones(3, device="cuda")
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. Use Tensor\.cpu\(\)"):
        x.numpy()
    assert x.cpu().numpy().tolist() == [1.0, 1.0, 1.0]


# ----------------------------------------------------------------------------- mixing devices
MIXED = {
    "add": lambda g, c: g + c,
    "radd": lambda g, c: c + g,
    "mul": lambda g, c: g.mul(c),
    "maximum": lambda g, c: g.maximum(c),
    "lt": lambda g, c: g < c,
    "add_": lambda g, c: g.add_(c),
    "where": lambda g, c: internals.where(c > 0, g, g),
    "mm": lambda g, c: g.reshape(1, 3).mm(c.reshape(3, 1)),
    "matmul": lambda g, c: c.reshape(1, 3) @ g.reshape(3, 1),
}


@pytest.mark.parametrize("name", list(MIXED))
def test_cuda_with_cpu_tensor_of_dim_above_zero_raises(name):
    gpu = internals.ones(3, device="cuda")
    cpu = internals.ones(3)
    before = gpu.cpu().tolist()
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        MIXED[name](gpu, cpu)
    assert gpu.cpu().tolist() == before and gpu._version == 0


def test_cuda_zero_dim_with_cpu_tensor_raises():
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        internals.tensor(2.0, device="cuda") + internals.ones(3)


def test_cpu_zero_dim_tensor_and_python_scalars_join_cuda():
    t = torch.tensor([[1, -2, 3]], dtype=torch.int32)
    g = cu(t)
    for scalar in (torch.tensor(2.5, dtype=torch.float64), torch.tensor(4), torch.tensor(True)):
        check_cuda(g * internals.from_torch(scalar), t * scalar)
        check_cuda(internals.from_torch(scalar).maximum(g), scalar.maximum(t))
    check_cuda(g + 5, t + 5)                          # int32 stays int32
    check_cuda(g + 5.5, t + 5.5)                      # -> float32
    check_cuda(g / 2, t / 2)
    check_cuda(2 - g, 2 - t)
    inplace = cu(t.float())
    inplace.mul_(internals.tensor(3.0))
    check_cuda(inplace, t.float() * 3)


# ----------------------------------------------------------------------------- hypothesis, sparingly
small_shape = hst.lists(hst.integers(1, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=10)
@given(shape=small_shape, drop=hst.integers(0, 3), ones=hst.lists(hst.booleans(), min_size=3, max_size=3),
       name=hst.sampled_from(["add", "mul", "maximum", "ge", "div"]),
       dtypes=hst.sampled_from([(torch.float32, torch.float32), (torch.int32, torch.float64),
                                (torch.int64, torch.uint8), (torch.bool, torch.int16)]),
       transpose=hst.booleans())
def test_hypothesis_binary_broadcast(shape, drop, ones, name, dtypes, transpose):
    other = tuple(1 if one else n for n, one in zip(shape[drop:], ones))
    a = (torch.randn(shape) * 5).to(dtypes[0])
    b = (torch.randn(other) * 5).to(dtypes[1])
    if transpose and a.dim() >= 2:
        a = a.transpose(0, 1).contiguous().transpose(0, 1)      # same shape, column-major layout
    check_cuda(getattr(cu(a), name)(cu(b)), getattr(a, name)(b))


@settings(max_examples=10)
@given(shape=hst.lists(hst.integers(1, 4), min_size=1, max_size=3).map(tuple), data=hst.data(),
       name=hst.sampled_from(["sum", "amax", "amin", "argmax", "argmin", "mean"]), keepdim=hst.booleans())
def test_hypothesis_reductions(shape, data, name, keepdim):
    dim = data.draw(hst.integers(-len(shape), len(shape) - 1))
    t = torch.randn(shape)
    check_cuda(getattr(cu(t), name)(dim, keepdim), getattr(t, name)(dim, keepdim))


# ----------------------------------------------------------------------------- real PTX
PTX_PROGRAM = r'''
import os, sys, types as pytypes
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"      # compile for real: the simulator cannot make PTX
import numba.cuda.dispatcher
from numba import cuda, types
from numba.np.numpy_support import as_dtype
import internals
from internals.aten.native import scalar_ops as ops
from internals.aten.native.cuda import linalg, loops, reduce
assert not internals.cuda.is_simulated()

CC = (7, 5)    # sm_75 (a T4, Colab's GPU): the oldest architecture CUDA 13 still compiles for
# A kernel that calls a @cuda.jit(device=True) function asks the current GPU for its compute
# capability while compiling it; this machine has none, so name one.
numba.cuda.dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=CC)

def smoke(a):
    a[0] = 1

try:
    cuda.compile_ptx(smoke, (types.float32[::1],), cc=CC)
except Exception as e:
    print("TOOLCHAIN MISSING:", type(e).__name__, str(e).strip().splitlines()[0])
    sys.exit(0)

f32, f64, i64, i8, u8, b1 = types.float32, types.float64, types.int64, types.int8, types.uint8, types.boolean
u16, u32 = types.uint16, types.uint32
c64, c128 = types.complex64, types.complex128
arr = lambda t: t[::1]                        # a launch passes C-contiguous device arrays
GEOMETRY = (i64, arr(i64), types.int64[:, ::1], arr(i64))        # n, shape, strides, offsets
# The elementwise kernels of cuda/loops.py: the one with an OffsetCalculator for every op, and
# the vectorized one (whose tail is the unrolled kernel) for the ops named in VECTORIZED.
OFFSET_CALCULATOR = loops.Launch("elementwise_kernel", 1, 2, 0, None)
VECTORIZED = loops.Launch("vectorized_elementwise_kernel", 4, 8, 0, None)

def loop_kernel(element, launch=OFFSET_CALCULATOR):
    return loops._kernel(element, launch).py_func

def operands(out, *inputs):     # a loop kernel takes four arrays: unused slots repeat the output
    return tuple(arr(t) for t in (out,) + inputs + (out,) * (3 - len(inputs)))
REDUCE_GEOMETRY = (i64, i64, arr(i64), arr(i64), arr(i64), arr(i64), i64)
failures, compiled = [], 0

# PTX already compiled from the same sources by the same compilers is read back (see ptx_cache.py)
sys.path.insert(0, sys.argv[1])
from ptx_cache import PTXCache, toolchain
ptx_cache = PTXCache(CC, sys.argv[2], toolchain())

def compile_(name, fn, signature, must_contain=()):
    global compiled
    try:
        ptx = ptx_cache.compile(name, signature, lambda: cuda.compile_ptx(fn, signature, cc=CC)[0])
    except Exception as e:
        failures.append(f"{name}: {type(e).__name__}: {' '.join(str(e).split())[:400]}")
        return
    compiled += 1
    for text in (".entry",) + tuple(must_contain):
        if text not in ptx:
            failures.append(f"{name}: no {text!r} in its PTX")

BITS = {ops.FLOAT_BITS_TO_HALF: (u16, u32), ops.FLOAT_BITS_TO_BF16: (u16, u32),
        ops.HALF_BITS_TO_FLOAT: (u32, u16), ops.BF16_BITS_TO_FLOAT: (u32, u16)}
COMPARISONS = (ops.EQ, ops.NE, ops.LT, ops.LE, ops.GT, ops.GE)     # a bool output
FLOATING = (ops.EXP, ops.LOG, ops.SQRT, ops.SIGMOID, ops.TANH, ops.FLOOR, ops.CEIL, ops.TRUNC, ops.FRAC,
            ops.ASIN, ops.ACOS, ops.ATAN, ops.SINH, ops.COSH, ops.ASINH, ops.ACOSH, ops.ATANH, ops.LOG2, ops.LOG10,
            ops.EXPM1, ops.EXP2, ops.LGAMMA, ops.LOG_SIGMOID, ops.EXP_NEG_ABS, ops.ERFINV, ops.DIGAMMA,
            ops.I0, ops.I0E, ops.I1, ops.I1E, ops.SINC, ops.ERFC, ops.NDTRI, ops.ERFCX, ops.LOG_NDTR, ops.TRIGAMMA)
COMPLEX = {ops.REAL_PART: [(f32, c64), (f64, c128)], ops.NONZERO: [(b1, c64)], ops.ANGLE_COMPLEX: [(f32, c64)],
           **{op: [(c64, c64), (c128, c128)] for op in (ops.CONJ, ops.EXP_COMPLEX, ops.LOG_COMPLEX, ops.SQRT_COMPLEX,
                                                        ops.SIN_COMPLEX, ops.COS_COMPLEX, ops.TAN_COMPLEX,
                                                        ops.TANH_COMPLEX, ops.SIGMOID_COMPLEX, ops.ASIN_COMPLEX,
                                                        ops.ACOS_COMPLEX, ops.ATAN_COMPLEX, ops.ASINH_COMPLEX,
                                                        ops.ACOSH_COMPLEX, ops.ATANH_COMPLEX, ops.SINH_COMPLEX,
                                                        ops.COSH_COMPLEX, ops.EXPM1_COMPLEX, ops.LOG1P_COMPLEX,
                                                        ops.RSQRT_COMPLEX, ops.LOG2_COMPLEX, ops.LOG10_COMPLEX,
                                                        ops.EXP2_COMPLEX, ops.SINC_COMPLEX)}}
for op in range(len(ops.UNARY)):
    if op in BITS:
        pairs = [BITS[op]]
    elif op in COMPLEX:                     # complex numbers only (NEG and ABS take them too)
        pairs = COMPLEX[op]
    elif op == ops.LOGICAL_NOT:
        pairs = [(b1, b1)]
    elif op in (ops.SIGNBIT, ops.SIGNBIT_INT):      # a bool output
        pairs = [(b1, f32), (b1, f64)] if op == ops.SIGNBIT else [(b1, i64), (b1, i8)]
    elif op == ops.BITWISE_NOT:             # integers only
        pairs = [(i64, i64), (i8, i8)]
    elif op in FLOATING:
        pairs = [(f32, f32), (f64, f64)]
    else:
        pairs = [(f32, f32), (i64, i64)]
    for out, a in pairs:
        compile_(f"unary op {op} {a}", loop_kernel(loops._unary_element(op)), operands(out, a) + (i64,) + GEOMETRY)
compile_("exp, vectorized", loop_kernel(loops._unary_element(ops.EXP), VECTORIZED),
         operands(f32, f32) + (i64,) + GEOMETRY)

for op in range(len(ops.BINARY)):
    if op in (ops.POW, ops.DIV, ops.POW_FLOAT_SCALAR, ops.ATAN2, ops.COPYSIGN, ops.HYPOT, ops.XLOGY,
              ops.LOGADDEXP, ops.LOGADDEXP2, ops.LOGIT, ops.XLOG1PY, ops.ZETA, ops.POLYGAMMA):
        kinds = [f32, f64]
    elif op in (ops.DIV_COMPLEX, ops.POW_COMPLEX, ops.POW_COMPLEX_SCALAR):
        kinds = [c64, c128]
    elif op in (ops.INT_POW, ops.BITWISE_AND, ops.BITWISE_OR, ops.BITWISE_XOR, ops.LSHIFT, ops.RSHIFT):
        kinds = [i64, i8]                   # integers only
    elif op in COMPARISONS or op == ops.ADD:
        kinds = [f32, i64, b1] + ([c64] if op in (ops.ADD, ops.EQ, ops.NE) else [])
    else:
        kinds = [f32, i64]
    for t in kinds:
        out = b1 if op in COMPARISONS else t
        compile_(f"binary op {op} {t}", loop_kernel(loops._binary_element(op)), operands(out, t, t) + (t,) + GEOMETRY)
compile_("add, vectorized", loop_kernel(loops._binary_element(ops.ADD), VECTORIZED),
         operands(f32, f32, f32) + (f32,) + GEOMETRY)

for t in (f32, i64, b1, c64):      # where: its condition first, no number (0)
    compile_(f"where {t}", loop_kernel(loops._ternary_element(ops.WHERE)), operands(t, b1, t, t) + (i64,) + GEOMETRY)
for op in (ops.ADDCMUL, ops.ADDCDIV, ops.LOG_SIGMOID_BACKWARD):
    for t in (f32, f64):
        compile_(f"ternary op {op} {t}", loop_kernel(loops._ternary_element(op)),
                 operands(t, t, t, t) + (t,) + GEOMETRY)
for t in (f32, i64, b1, u16):
    compile_(f"fill {t}", loop_kernel(loops._fill_element, VECTORIZED), operands(t) + (t,) + GEOMETRY)
for src, dst in [(f32, b1), (f32, u8), (i64, i8), (f64, i64), (b1, f32), (i64, f32), (f32, f64), (u16, u16)]:
    element = loops._copy_element(as_dtype(dst).type)
    compile_(f"copy {src}->{dst}", loop_kernel(element), operands(dst, src) + (i64,) + GEOMETRY)

for op in (ops.SUM, ops.PROD, ops.AMAX, ops.AMIN):
    for t in (f32, i64) + ((b1,) if op in (ops.AMAX, ops.AMIN) else (c64,)):
        compile_(f"reduce op {op} {t}", reduce._build_reduce(op, t).py_func,
                 (arr(t), arr(t), t) + REDUCE_GEOMETRY, must_contain=(".shared", "bar.sync"))
for op in (ops.ARGMAX, ops.ARGMIN):
    for t in (f32, i64, u8):
        compile_(f"arg-reduce op {op} {t}", reduce._build_arg_reduce(op, t).py_func,
                 (arr(i64), arr(t)) + REDUCE_GEOMETRY, must_contain=(".shared", "bar.sync"))
for t in (f32, f64, i64):
    compile_(f"mm {t}", linalg._build_mm(t).py_func, (arr(t), arr(t), arr(t), i64, i64, i64, b1, b1),
             must_contain=(".shared", "bar.sync"))

from internals.aten.native.cuda import im2col, pooling
SIZES = (i64,) * 13                          # C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW
for t in (f32, f64):
    compile_(f"im2col {t}", im2col._im2col.py_func, (arr(t), arr(t)) + SIZES)
    compile_(f"col2im {t}", im2col._col2im.py_func, (arr(t), arr(t)) + SIZES)
for t in (f32, i64):
    compile_(f"max_pool2d {t}", pooling._max_pool2d.py_func, (arr(t), arr(i64), arr(t)) + SIZES[1:])
    compile_(f"max_pool2d_backward {t}", pooling._max_pool2d_backward.py_func, (arr(t), arr(t), arr(i64), i64, i64))
for t in (f32, f64):      # H, W, OH, OW, windows, divisor, per_dim
    avg = (i64,) * 4 + (arr(i64), i64, b1)
    compile_(f"avg_pool2d {t}", pooling._avg_pool2d.py_func, (arr(t), arr(t)) + avg)
    compile_(f"avg_pool2d_backward {t}", pooling._avg_pool2d_backward.py_func, (arr(t), arr(t)) + avg)
VOLUME = (i64,) * 6                          # T, H, W, OT, OH, OW
for t in (f32, i64, u8):      # 3-d max pooling: kernel sizes, strides, paddings and dilations in one array
    compile_(f"max_pool3d {t}", pooling._max_pool3d.py_func, (arr(t), arr(i64), arr(t)) + VOLUME + (arr(i64),))
for t in (f32, f64):          # the adaptive windows, as the 3-d average reads them
    compile_(f"adaptive_max_pool3d {t}", pooling._adaptive_max_pool3d.py_func,
             (arr(t), arr(i64), arr(t)) + VOLUME + (arr(i64),))
for t in (f32, f64, u16):     # max unpooling moves values: the 16-bit floats as their bits
    compile_(f"max_unpool {t}", pooling._max_unpool.py_func, (arr(t), arr(t), arr(i64), i64, i64))

from internals.aten.native.cuda import indexing
for name in ("_copy_indexed", "_add_indexed", "_mul_indexed", "_max_indexed", "_min_indexed"):
    for t in (f32, i64):
        compile_(f"indexed {name} {t}", getattr(indexing, name).py_func, (arr(t), arr(t), arr(i64), arr(i64)))

from internals.aten.native.cuda import bucketization, cross, distance, scan
for t in (f32, f64):
    compile_(f"linalg_cross {t}", cross._cross.py_func, (arr(t), arr(t), arr(t), i64))
for t in (f32, f64, i64):     # out, values, count, boundaries, sorter, n, per_row, right, use_sorter
    compile_(f"searchsorted {t}", bucketization._search.py_func,
             (arr(i64), arr(t), i64, arr(t), arr(i64), i64, i64, b1, b1))
for t, acc in ((f32, f64), (f64, f64), (f32, f32)):
    compile_(f"logcumsumexp {t} in {acc}", scan._log_scan.py_func, (arr(t), arr(t), i64, i64, acc, acc))
for t in (f32, f64):          # batches, r1, r2, m, then p, one, kind (and where p = 2 starts fusing)
    compile_(f"cdist {t}", distance._cdist.py_func, (arr(t),) * 3 + (i64,) * 4 + (t, t, i64, i64))
    compile_(f"cdist_backward {t}", distance._cdist_backward.py_func, (arr(t),) * 5 + (i64,) * 4 + (t, t, i64))

from internals.aten.native.cuda import batch_linalg
for t in (f32, f64, c64, c128):     # LU with pivots, and the inverse from it: real and complex
    compile_(f"lu_factor {t}", batch_linalg._lu_factor.py_func,
             (arr(t), arr(types.int32), arr(types.int32), i64, i64))
    compile_(f"lu_inverse {t}", batch_linalg._lu_inverse.py_func,
             (arr(t), arr(t), arr(types.int32), i64, b1, i64))

from internals.aten.native.cuda import loss_ctc
for t in (f32, f64):          # the CTC recursions, one thread per sequence: targets int64 or int32
    for tg in (i64, types.int32):
        strides = (i64,) * 4                   # the log-probs' offset and strides
        targets = (arr(tg), arr(i64), i64, arr(i64), arr(i64))       # storage, offsets, stride, lengths
        compile_(f"ctc_loss_alpha {t} {tg}", loss_ctc._ctc_loss_alpha.py_func,
                 (arr(t),) * 3 + strides + targets + (i64,) * 3 + (t, t))
        compile_(f"ctc_loss_backward {t} {tg}", loss_ctc._ctc_loss_backward.py_func,
                 (arr(t),) * 6 + strides + targets + (i64,) * 4 + (b1, t, t))

print("COMPILED", compiled, "of which read back", ptx_cache.hits)
for line in failures:
    print("FAILED", line)
'''


@pytest.mark.slow
def test_every_cuda_kernel_compiles_to_ptx():
    """The simulator runs kernels as Python, so it accepts code a GPU compiler would reject (and
    no GPU is at hand): compile each kernel, for representative argument types, to real PTX.
    PTX compiled by an earlier run from the same sources, with the same compilers and for the same
    target, is read back from beside Numba's kernel cache (``ptx_cache.py``); the checks below read
    it either way.

    Needs libNVVM (found through CUDA_HOME or /usr/local/cuda, or the pip package
    ``nvidia-cuda-nvcc-cu12``) and libNVRTC (``nvidia-cuda-nvrtc-cu12`` from pip, or a CUDA toolkit on
    LD_LIBRARY_PATH), which Numba asks which architectures it supports.
    """
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    program_hash = hashlib.sha256(PTX_PROGRAM.encode()).hexdigest()
    result = subprocess.run([sys.executable, "-c", PTX_PROGRAM, os.path.dirname(__file__), program_hash],
                            capture_output=True, text=True, env=env,
                            timeout=1800)       # a few minutes quiet and cold; far longer on a busy machine
    assert result.returncode == 0, result.stdout + result.stderr
    if "TOOLCHAIN MISSING" in result.stdout:
        pytest.skip("no CUDA compiler toolchain (libNVVM + libNVRTC) on this machine: "
                    + result.stdout.strip())
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
    assert not failed, "\n".join(failed)
    compiled = int(result.stdout.split("COMPILED")[1].split()[0])
    assert compiled > 60, result.stdout


def test_a_changed_kernel_source_misses_the_ptx_cache(tmp_path):
    """The test above reads back PTX compiled before only while nothing that decides it changed:
    an edited kernel source, another compute capability, compiler or program compiles again, and
    a failed compilation stores nothing."""
    import shutil
    from pathlib import Path

    from ptx_cache import PTXCache
    package = tmp_path / "internals"
    shutil.copytree(Path(internals.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    compiled = []

    def compile_ptx():
        compiled.append(1)
        return f".entry kernel_{len(compiled)}"

    def cache(cc=(7, 5), program="program", toolchain="nvvm 2.0"):
        return PTXCache(cc, program, toolchain, root=tmp_path / "cache", package=package)
    signature = ("float32[::1]", "int64")
    first = cache()
    assert first.compile("kernel", signature, compile_ptx) == ".entry kernel_1" and first.hits == 0
    again = cache()
    assert again.compile("kernel", signature, compile_ptx) == ".entry kernel_1" and again.hits == 1
    assert again.compile("kernel", ("float64[::1]", "int64"), compile_ptx) == ".entry kernel_2"
    assert again.compile("other kernel", signature, compile_ptx) == ".entry kernel_3"
    for other in (cache(cc=(8, 0)), cache(program="program 2"), cache(toolchain="nvvm 2.1")):
        assert other.compile("kernel", signature, compile_ptx) == f".entry kernel_{len(compiled)}"
        assert other.hits == 0
    with open(package / "aten" / "native" / "cuda" / "loops.py", "a") as f:
        f.write("\n# an edited kernel source\n")
    edited = cache()
    assert edited.directory != first.directory
    assert edited.compile("kernel", signature, compile_ptx) == f".entry kernel_{len(compiled)}" == ".entry kernel_7"
    assert edited.hits == 0

    def failing():
        raise RuntimeError("NVVM rejected it")
    with pytest.raises(RuntimeError):
        edited.compile("failing kernel", signature, failing)
    assert not edited.path("failing kernel", signature).exists()
    assert sorted(p.suffix for p in edited.directory.iterdir()) == [".ptx"]
