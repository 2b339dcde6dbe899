"""An eighth round of hostile inputs (issue 15): each case differed from torch 2.13 before its fix.

This round tried about 8,000 cases (scripts outside the repository): ops on tensors after
``resize_``/``set_``/``as_strided`` on shared storage, in-place ops on overlapping operands,
``out=`` of the wrong dtype, shape or overlap, every everyday op over bool, uint8, int8, int16,
complex and float16 tensors, Python scalars at the edges (ints in [2**63, 2**64), nan, inf,
bools, complex), autograd misuse, ``save``/``load`` of views and dtypes, the byte API of
``UntypedStorage``, and threads.
"""
import io
import warnings

import numpy as np
import pytest
import torch
from conftest import assert_same, same_error, same_or_same_error
from test_hostile import in_threads

import internals

U64 = [2**63, 2**63 + 2**40 + 1, 2**64 - 2**11, 2**64 - 1]


# ----------------------------------------------------------------------------- uint64 Python ints
@pytest.mark.parametrize("value", U64)
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "float32", "float64", "float16", "complex64",
                                   "bool"])
@pytest.mark.parametrize("op", [
    lambda L, x, v: x + v, lambda L, x, v: v + x, lambda L, x, v: x - v, lambda L, x, v: v - x,
    lambda L, x, v: x * v, lambda L, x, v: x / v, lambda L, x, v: v / x, lambda L, x, v: x // v,
    lambda L, x, v: x % v, lambda L, x, v: x ** v, lambda L, x, v: v ** x, lambda L, x, v: x == v,
    lambda L, x, v: x < v, lambda L, x, v: x & v, lambda L, x, v: x.clone().add_(v),
    lambda L, x, v: L.add(x, v, out=L.empty(0, dtype=x.dtype)), lambda L, x, v: x.clamp(min=v),
    lambda L, x, v: L.where(x == x, x, v), lambda L, x, v: x.clone().fill_(v),
])
def test_a_python_int_past_int64_is_a_uint64_scalar(value, dtype, op):
    """torch reads such an int as a uint64 Scalar: an integer tensor sees its bits (2**63 is
    -2**63 in int64, 0 in uint8), a float one its unsigned value, and bool refuses to promote.
    internals raised Python's OverflowError for all of them."""
    same_or_same_error(lambda L: op(L, L.tensor([1, 2, 0], dtype=getattr(L, dtype)), value))


@pytest.mark.parametrize("value", [2**63, 2**64 - 1])
def test_a_uint64_scalar_joining_a_cuda_op_keeps_its_unsigned_value(value):
    x = internals.tensor([1., 2., 0.], device="cuda")
    theirs = torch.tensor([1., 2., 0.])
    for op in (lambda x: x + value, lambda x: x / value, lambda x: value - x, lambda x: x >= value):
        assert_same(op(x).cpu(), op(theirs))


# ----------------------------------------------------------------------------- 16-bit fills and alpha
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("value", [70000, 1e39, 2.0**63, 2**63, float("inf"), 1e-9])
@pytest.mark.parametrize("op", [
    lambda L, d, v: L.zeros(1, dtype=d).fill_(v), lambda L, d, v: L.zeros(2, dtype=d).fill_(v),
    lambda L, d, v: L.scalar_tensor(v, dtype=d), lambda L, d, v: L.full((1,), v, dtype=d),
    lambda L, d, v: L.where(L.tensor([False]), L.zeros(1, dtype=d), v),
    lambda L, d, v: L.zeros(1, dtype=d).masked_fill(L.tensor([True]), v),
    lambda L, d, v: L.add(L.ones(2, dtype=d), L.ones(2, dtype=d), alpha=v),
])
def test_a_16_bit_float_checks_a_scalar_where_torch_does(dtype, value, op):
    """torch's one-element CPU fill (``scalar_fill``) reads the value as a double and casts it
    unchecked, so ``scalar_tensor``, ``full`` and ``where`` give inf; ``masked_fill`` and a
    two-element fill check it, and so does ``alpha`` (as the 16-bit type, not as float)."""
    same_or_same_error(lambda L: op(L, getattr(L, dtype), value))


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8"])
def test_a_complex_fill_names_the_type_it_was_read_as(n, dtype):
    """One CPU element reads the value as a double first: ``type double`` in the message."""
    same_error(lambda L: L.zeros(n, dtype=getattr(L, dtype)).fill_(1 + 1j))


# ----------------------------------------------------------------------------- var and std
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("values", [[65504., -0.5, 1e-4], [300., -300., 1000.], [1.]])
@pytest.mark.parametrize("op", [
    lambda L, x: x.std(), lambda L, x: x.var(), lambda L, x: x.std(0, keepdim=True),
    lambda L, x: x.var(correction=0), lambda L, x: L.std_mean(x), lambda L, x: L.var_mean(x, 0)])
def test_var_and_std_of_16_bit_and_complex_tensors(dtype, values, op):
    """float16 std took the root of a variance already rounded to float16 (inf for a variance
    past 65504, where torch gives 37824); a complex tensor was refused with a message naming
    complex dtypes as supported (torch: the real-valued variance of both parts)."""
    def run(L):
        x = L.tensor(values, dtype=getattr(L, dtype)) * (1 + 2j if "complex" in dtype else 1)
        return op(L, x)
    same_or_same_error(run)


# ----------------------------------------------------------------------------- TypeMeta names
@pytest.mark.parametrize("call", [
    lambda L: setattr(L.ones(2, requires_grad=True), "grad", L.ones(2, dtype=L.complex64)),
    lambda L: L.mm(L.ones(2, 2), L.ones(2, 2), out=L.empty(0, dtype=L.complex64)),
    lambda L: L.argmax(L.ones(2, 2), 0, out=L.empty(0, dtype=L.complex128)),
    lambda L: L.lerp(L.ones(2, dtype=L.complex64), L.ones(2, dtype=L.bool), 0.5),
])
def test_complex_dtypes_are_named_as_caffe2_names_them(call):
    """A complex dtype in a TypeMeta message is ``c10::complex<float>``; internals raised
    KeyError (a gradient, lerp) or printed ``ComplexFloat``."""
    same_error(call)


# ----------------------------------------------------------------------------- overlap
@pytest.mark.parametrize("pair", ["shift", "rev", "same", "expand", "zero_stride", "t"])
@pytest.mark.parametrize("bounds", [
    lambda b: {"min": b}, lambda b: {"max": b}, lambda b: {"min": b, "max": b}, lambda b: {"min": 2, "max": 5}])
def test_clamp_in_place_checks_its_bounds_for_overlap(pair, bounds):
    """``clamp_(x, min=x_shifted)`` reads bounds the loop has already written: torch refuses a
    partial overlap (and a self-overlapping ``x``); internals clamped into a copy and wrote back."""
    def run(L):
        s = L.arange(1., 9.)
        a, b = {"shift": (s[1:7], s[0:6]), "rev": (s, s.flip(0)), "same": (s, s), "expand": (s[:1].expand(4), s[:4]),
                "zero_stride": (s.as_strided((4,), (0,)), s[:4]),
                "t": (s[:4].view(2, 2), s[:4].view(2, 2).t())}[pair]
        return a.clamp_(**bounds(b)), s
    same_or_same_error(run)


# ----------------------------------------------------------------------------- unclear errors
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("call", [
    lambda x: x.bitwise_not(), lambda x: ~x, lambda x: x.bitwise_not_()])
def test_bitwise_not_of_a_complex_tensor_is_refused_as_torch_refuses(dtype, call):
    """internals said ``internals: None is not implemented for complex tensors``."""
    same_error(lambda L: call(L.ones(2, dtype=getattr(L, dtype))))


@pytest.mark.parametrize("out", [
    lambda L, x: x.t(), lambda L, x: L.empty(1, 2).expand(2, 2), lambda L, x: L.arange(8.)[1:5].view(2, 2),
    lambda L, x: x[0], lambda L, x: L.empty(1).expand(2), lambda L, x: L.empty(0)])
@pytest.mark.parametrize("op", [
    lambda L, x, o: L.cumsum(x, 0, out=o), lambda L, x, o: L.sort(x, 0, out=(o, L.empty(0, dtype=L.int64))),
    lambda L, x, o: L.topk(x, 1, 0, out=(o, L.empty(0, dtype=L.int64))),
    lambda L, x, o: L.max(x, 0, out=(o, L.empty(0, dtype=L.int64)))])
def test_scans_and_sorts_check_their_resized_out_for_overlap(out, op):
    """``cumsum(x, 0, out=x.t())`` and an expanded ``out`` are refused by torch's kernels once
    ``out`` has its size; internals wrote them."""
    def run(L):
        x = L.arange(4.).view(2, 2)
        r = op(L, x, out(L, x))
        return (*r, x) if isinstance(r, tuple) else (r, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the resize warning
        same_or_same_error(run)


@pytest.mark.parametrize("dtype", ["bool", "float32", "float16", "int64"])
@pytest.mark.parametrize("value", [True, 1j, complex(float("nan"), 0), 1 + 0j, 0.5])
@pytest.mark.parametrize("bounds", [
    lambda v, t: {"min": v}, lambda v, t: {"max": v}, lambda v, t: {"min": v, "max": v},
    lambda v, t: {"min": t}, lambda v, t: {"max": t}, lambda v, t: {"min": t, "max": t}])
def test_clamp_reads_its_bounds_as_torchs_kernels_do(dtype, value, bounds):
    """A float tensor's Python bounds are doubles (a complex one with an imaginary part fails to
    convert, ``1+0j`` is 1); a bool tensor names the kernel it lacks (``clamp_min_scalar_cpu``)
    and takes one tensor bound (``maximum``). internals refused all complex bounds as complex
    clamps and named ``clamp_cpu`` for every bool case."""
    def run(L):
        x = L.tensor([1, 0], dtype=getattr(L, dtype))
        t = L.tensor([value.real if isinstance(value, complex) else value] * 2).to(x.dtype)
        return x.clamp(**bounds(value, t))
    same_or_same_error(run)


# ----------------------------------------------------------------------------- out= and autograd
@pytest.mark.parametrize("call", [
    lambda L, rg: L.eq(L.ones(2), L.ones(2), out=rg(L.bool)), lambda L, rg: L.lt(L.ones(2), 1, out=rg(L.float32)),
    lambda L, rg: L.ge(L.ones(2, requires_grad=True), 1, out=L.empty(0, dtype=L.bool)),
    lambda L, rg: L.argmax(L.ones(2, 2), 0, out=rg(L.float32)),
    lambda L, rg: L.argmin(L.ones(2, requires_grad=True), out=L.empty(0, dtype=L.int64)),
    lambda L, rg: L.zeros(2, out=rg(L.float32)), lambda L, rg: L.mm(L.ones(2, 2), L.ones(2, 2), out=rg(L.float32)),
])
def test_out_of_a_non_differentiable_operator_may_require_grad(call):
    """torch generates no out= grad check for operators whose outputs are never differentiable
    (comparisons, argmax): the out is written, or refused for its dtype. internals refused it
    for requiring grad."""
    same_or_same_error(lambda L: call(L, lambda d: L.empty(0, dtype=d, requires_grad=d.is_floating_point)))


# ----------------------------------------------------------------------------- leftovers
@pytest.mark.parametrize("size", [(2,), (2, 2), (3, 3), (0,)])
@pytest.mark.parametrize("template", [
    lambda L, s: L.zeros(s), lambda L, s: L.zeros(s).t() if len(s) == 2 else L.zeros(s),
    lambda L, s: L.zeros(s, dtype=L.int64)])
@pytest.mark.parametrize("how", ["method", "function", "channels_last", "preserve"])
def test_resize_as_takes_the_templates_sizes_not_its_strides(size, template, how):
    def run(L):
        x = L.arange(4.)
        t = template(L, size)
        if how == "function":
            return L.resize_as_(x, t).reshape(-1)[:min(4, x.numel())]
        if how == "channels_last":
            t = L.zeros(1, *size, 1) if len(size) == 2 else L.zeros(1, 2, 2, *size)
            return x.resize_as_(t, memory_format=L.channels_last).stride(), x.shape
        if how == "preserve":
            t = L.zeros(1, 3, 2, 2).permute(0, 2, 3, 1).permute(0, 3, 1, 2)
            return x.resize_as_(t, memory_format=L.preserve_format).stride(), x.shape
        r = x.resize_as_(t)
        return r.shape, r.stride(), r.reshape(-1)[:min(4, r.numel())]
    same_or_same_error(run)


def test_resize_as_of_a_tensor_that_requires_grad_is_refused():
    same_error(lambda L: L.ones(4, requires_grad=True).resize_as_(L.zeros(2)))


def test_module_apply_visits_children_before_parents():
    def run(L):
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.ReLU(), L.nn.Sequential(L.nn.Linear(2, 1)))
        seen = []

        def init(mod):
            seen.append(type(mod).__name__)
            if isinstance(mod, L.nn.Linear):
                L.nn.init.constant_(mod.weight, 0.5)
                mod.bias.data.fill_(0.1)
        assert m.apply(init) is m
        return seen, m(L.ones(1, 2)).detach()
    (names, out), (names_t, out_t) = run(internals), run(torch)
    assert names == names_t
    assert_same(out, out_t)


@pytest.mark.parametrize("clip", [2.5, 1, 0, -1, float("inf")])
@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_value_clamps_every_gradient(clip, foreach):
    def run(L):
        a, b, c = (L.nn.Parameter(L.tensor(v)) for v in ([1., -2.], [3.], [float("nan"), 0.]))
        a.grad, c.grad = L.tensor([5., -7.]), L.tensor([float("nan"), -0.5])
        assert L.nn.utils.clip_grad_value_([a, b, c], clip, foreach=foreach) is None
        L.nn.utils.clip_grad_value_(a, clip)      # a single tensor too
        return a.grad, c.grad, b.grad is None
    same_or_same_error(run)


def test_post_accumulate_grad_hooks_run_after_each_accumulation():
    def run(L):
        seen = []
        x = L.ones(3, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
        gone = x.register_post_accumulate_grad_hook(lambda p: seen.append(None))
        gone.remove()
        (x * 3).sum().backward()
        (x * 2).sum().backward()
        assert len(seen) == 2
        return seen[0], seen[1], x.grad
    same_or_same_error(run)


@pytest.mark.parametrize("call", [
    lambda L: (L.ones(3, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda p: None),
    lambda L: L.ones(3).register_post_accumulate_grad_hook(lambda p: None),
    lambda L: (lambda x: (x.register_post_accumulate_grad_hook(lambda p: p.grad), (x * 3).sum().backward()))(
        L.ones(3, requires_grad=True)),
])
def test_post_accumulate_grad_hooks_are_refused_as_torch_refuses(call):
    same_error(call)


STORAGE_WRITES = [
    lambda s: s.__setitem__(0, 7), lambda s: s.__setitem__(0, 256), lambda s: s.__setitem__(0, -1),
    lambda s: s.__setitem__(0, -129), lambda s: s.__setitem__(0, True), lambda s: s.__setitem__(-1, 7),
    lambda s: s.__setitem__(8, 7), lambda s: s.__setitem__(0, 1.5), lambda s: s.__setitem__(0, np.int64(3)),
    lambda s: s.__setitem__(slice(1, 3), 9), lambda s: s.__setitem__(slice(-3, None), 9),
    lambda s: s.__setitem__(slice(10, 30), 9), lambda s: s.__setitem__(slice(0, 8, 2), 9),
    lambda s: s.__setitem__("a", 9), lambda s: s.__setitem__(True, 9),
    lambda s: s.__setitem__(np.int64(1), 9), lambda s: s.__setitem__(2**63, 9),
    lambda s: s[-16], lambda s: s[-17], lambda s: s[16], lambda s: s[::2], lambda s: s["a"], lambda s: s[True],
    lambda s: s[1.0], lambda s: s[2**63], lambda s: s.fill_(3), lambda s: s.fill_(256), lambda s: s.fill_(1.5),
    lambda s: s[4:8].resize_(2),
]


@pytest.mark.parametrize("write", STORAGE_WRITES)
def test_untyped_storage_bytes_are_read_and_written_as_torch(write):
    """``THPStorage_set``: an int value kept modulo 256, an index that must lie inside (negative
    ones are refused when writing, counted from the end when reading), slices of step 1;
    internals had no item assignment, no slices and no ``fill_``."""
    def run(L):
        s = L.arange(2.).untyped_storage()
        out = write(s)
        return s.tolist(), out.tolist() if hasattr(out, "tolist") else out
    try:
        theirs = run(torch)
    except Exception:
        return same_error(lambda L: run(L))
    assert run(internals) == theirs


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_storage_slice_shares_bytes_and_outlives_its_parent(device):
    x = internals.arange(4., device=device)
    s = x.untyped_storage()
    part = s[4:8]
    assert not part.resizable() and part.nbytes() == 4
    part[3] = 64          # the float 1.0 becomes 2.0 (0x3f80 -> 0x4000 in its top bytes)
    part[2] = 0
    assert x.tolist() == [0., 2., 2., 3.]
    del x, s
    assert part.tolist() == [0, 0, 0, 64]


# ----------------------------------------------------------------------------- save / load
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_tensors_are_saved_and_loaded_by_both(dtype):
    """The pickle names ``torch.ComplexFloatStorage``; internals raised KeyError."""
    ours = internals.tensor([1 + 2j, -3j], dtype=getattr(internals, dtype))
    buf = io.BytesIO()
    internals.save([ours, ours[1:]], buf)
    buf.seek(0)
    a, b = torch.load(buf)
    assert_same(ours, a)
    assert b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    buf = io.BytesIO()
    torch.save(a, buf)
    buf.seek(0)
    assert_same(internals.load(buf), a)


# ----------------------------------------------------------------------------- threads
def test_post_accumulate_grad_hooks_on_eight_threads_with_one_shared_leaf():
    """Each accumulation runs its hooks once, under the accumulation lock, as torch's mutex does."""
    x = internals.zeros(5, requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.sum().item()))

    def work(k):
        for _ in range(10):
            (x * (k + 1)).sum().backward()
    assert in_threads(work, 8) == []
    assert len(seen) == 80 and seen == sorted(seen)       # each hook saw the grad it had just made
    assert x.grad.tolist() == [10. * sum(range(1, 9))] * 5


def test_uint64_scalars_and_storage_writes_on_eight_threads():
    t = internals.zeros(64, dtype=internals.uint8)
    s = t.untyped_storage()

    def work(k):
        for i in range(k, 64, 8):
            s[i] = i + 256 * k
            assert (internals.tensor([1, 2]) + (2**63 + i)).tolist() == (torch.tensor([1, 2]) + (2**63 + i)).tolist()
    assert in_threads(work, 8) == []
    assert t.tolist() == list(range(64))


def test_cuda_storage_slices_keep_their_block_while_other_threads_allocate():
    """A slice holds its parent storage: the caching allocator cannot hand its block to another
    tensor while the slice still reads it."""
    def work(k):
        for _ in range(5):
            x = internals.arange(8., device="cuda") + k
            part = x.untyped_storage()[4:8]
            del x
            internals.zeros(64, device="cuda")
            assert part.tolist() == list(torch.tensor([1. + k]).numpy().tobytes())
    assert in_threads(work, 4) == []


@pytest.mark.parametrize("data", [b"garbage", b"", b"\x80", b"\x80\x02", b"PK\x03\x04junk"])
def test_load_of_what_is_no_checkpoint_raises_as_torch(data):
    """internals let zipfile's BadZipFile out; torch reads a non-zip file as its legacy format
    (an unpickling error, or EOFError when it ends at once) and names a broken zip archive."""
    same_error(lambda L: L.load(io.BytesIO(data)))
