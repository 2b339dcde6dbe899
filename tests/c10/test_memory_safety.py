"""Memory safety: no view reaches outside its storage, and no kernel writes outside its view.

Kernels index raw buffers without bounds checks, as ATen's do. What makes that safe is the
metadata: every TensorImpl is checked against its storage when it is made (torch's
``setStorage`` check), so a view that could reach past the end is refused before any kernel
exists to run on it. And TensorIterator refuses an in-place write to a tensor whose elements
share memory, before it writes anything. Both are checked here against torch, on the CPU and on
the cuda device.
"""
import numpy as np
import pytest
import torch
from helpers import assert_same, assert_same_error
from hypothesis import given
from hypothesis import strategies as hst

import internals

SENTINEL = -777.0
INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location. Please clone() the tensor before performing the operation.")
PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                   "a single memory location. Please clone() the tensor before performing the operation.")


def on(device, t):
    """A torch CPU tensor as an internals tensor on ``device`` (same storage layout on the CPU)."""
    ours = internals.from_torch(t)
    return ours if device == "cpu" else ours.cuda()


def same_message(fn_ours, fn_theirs):
    ours, theirs = assert_same_error(fn_ours, fn_theirs)
    assert str(ours) == str(theirs)


# ----------------------------------------------------------------------------- as_strided and friends
@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("args", [
    ((4, 4), (4, 1)),                  # the course's example: 64 bytes wanted, 48 there
    ((2,), (1,), 11),                  # one element past the end
    ((2,), (1,), 12),                  # an offset at the end
    ((3, 5), (5, 1), 0),
    ((13,), (1,)),
    ((2, 2), (0, 6), 7),
    ((2,), (-1,)),                     # negative stride
    ((2,), (1,), -1),                  # negative offset
], ids=str)
def test_as_strided_out_of_storage_has_torchs_message(device, args):
    t = torch.arange(12.0)
    x = on(device, t)
    same_message(lambda: x.as_strided(*args), lambda: t.as_strided(*args))


@pytest.mark.parametrize("args", [((-1,), (1,)), ((2, -3), (1, 1))], ids=str)
def test_as_strided_negative_size_is_refused(args):
    t = torch.arange(12.0)
    same_message(lambda: internals.from_torch(t).as_strided(*args), lambda: t.as_strided(*args))


@pytest.mark.parametrize("args", [((0, -1), (1, 1)), ((-1, 0), (1, 1))], ids=str)
def test_a_negative_size_beside_a_zero_is_refused_too(args):
    # A deliberate difference: torch 2.x lets these through (a zero size ends its storage-size
    # arithmetic before the negative one is seen) and makes a tensor of size (0, -1). Nothing can
    # be read through it, but no tensor should have a negative size, so internals refuses.
    t = torch.arange(12.0)
    assert tuple(t.as_strided(*args).shape) == args[0]
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        internals.from_torch(t).as_strided(*args)


def test_empty_views_may_sit_anywhere():
    # Nothing is reachable through a view with no elements, so torch accepts any offset for it.
    t = torch.arange(12.0)
    x = internals.from_torch(t)
    for args in [((0,), (1,), 100), ((0, 3), (1, 1), 13), ((3, 0), (100, 7), 12)]:
        assert_same(x.as_strided(*args), t.as_strided(*args))


def test_factories_refuse_negative_sizes_before_allocating():
    assert_same_error(lambda: internals.empty(-1), lambda: torch.empty(-1))
    assert_same_error(lambda: internals.empty(2, -3, device="cuda"), lambda: torch.empty(2, -3))
    assert_same_error(lambda: internals.zeros(-2), lambda: torch.zeros(-2))
    assert_same_error(lambda: internals.empty_strided((2, 3), (-1, 1)), lambda: torch.empty_strided((2, 3), (-1, 1)))
    assert_same_error(lambda: internals.empty_strided((2, 3), (-5, 1)), lambda: torch.empty_strided((2, 3), (-5, 1)))


def test_views_of_views_of_offset_storages():
    t = torch.arange(20.0)
    base, ours = t[3:], internals.from_torch(t)[3:]            # storage offset 3
    inner, ours_inner = base[2:], ours[2:]                     # offset 5
    for args in [((8,), (2,)), ((3, 5), (5, 1)), ((2, 2), (1, 1), 17), ((1,), (1,), 19)]:
        assert_same(ours_inner.as_strided(*args), inner.as_strided(*args))     # just fits
    for args in [((9,), (2,)), ((3, 6), (5, 1)), ((2, 2), (1, 1), 18), ((1,), (1,), 20)]:
        same_message(lambda args=args: ours_inner.as_strided(*args), lambda args=args: inner.as_strided(*args))
    chain, ours_chain = inner.view(3, 5)[1:, 2:].t(), ours_inner.view(3, 5)[1:, 2:].t()
    assert_same(ours_chain, chain)
    same_message(lambda: ours_chain.as_strided((4, 4), (5, 1)), lambda: chain.as_strided((4, 4), (5, 1)))
    assert_same(ours_chain.as_strided((1, 3), (5, 1)), chain.as_strided((1, 3), (5, 1)))


VIEW_CALLS = {
    "narrow past the end": lambda x: x.narrow(1, 2, 3),
    "narrow negative start": lambda x: x.narrow(1, -1, 1),
    "narrow negative length": lambda x: x.narrow(1, 0, -1),
    "select past the end": lambda x: x.select(1, 4),
    "select negative": lambda x: x.select(1, -5),
    "index past the end": lambda x: x[3],
    "index negative": lambda x: x[-4],
    "index of transpose": lambda x: x.t()[4],
    "slice far right": lambda x: x[:, 100:],
    "slice far left": lambda x: x[:, -100:2],
    "unfold too large": lambda x: x.unfold(1, 5, 1),
    "unfold step 0": lambda x: x.unfold(1, 2, 0),
    "diagonal far": lambda x: x.diagonal(7),
    "diagonal far below": lambda x: x.diagonal(-7),
    "expand non-singleton": lambda x: x.expand(3, 8),
    "view wrong numel": lambda x: x.view(5, 3),
}


@pytest.mark.parametrize("name", list(VIEW_CALLS))
def test_other_views_stay_inside_or_fail_like_torch(name):
    t = torch.arange(12.0).reshape(3, 4)
    x = internals.from_torch(t)
    try:
        theirs = VIEW_CALLS[name](t)
    except Exception:
        assert_same_error(lambda: VIEW_CALLS[name](x), lambda: VIEW_CALLS[name](t))
    else:
        assert_same(VIEW_CALLS[name](x), theirs)


# ----------------------------------------------------------------------------- from_numpy
@pytest.mark.parametrize("make", [lambda: np.arange(5.0)[::-1], lambda: np.arange(12).reshape(3, 4)[:, ::-2],
                                  lambda: np.arange(12, dtype=np.float32).reshape(3, 4)[::-1, 1:]])
def test_from_numpy_refuses_negative_strides_like_torch(make):
    same_message(lambda: internals.from_numpy(make()), lambda: torch.from_numpy(make()))


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")   # broadcast_to's is read-only
@pytest.mark.parametrize("make", [
    lambda: np.arange(30.0).reshape(5, 6)[1:4, 1::2],           # offset into a bigger buffer, gaps
    lambda: np.arange(24, dtype=np.int16).reshape(2, 3, 4).transpose(2, 0, 1)[1:],
    lambda: np.broadcast_to(np.arange(3, dtype=np.float32), (4, 3)),      # stride 0
    lambda: np.arange(10, dtype=np.int64)[7:],
    lambda: np.empty((0, 3)),
])
def test_from_numpy_spans_exactly_the_array(make):
    array = make()
    ours, theirs = internals.from_numpy(array), torch.from_numpy(array)
    assert_same(ours, theirs, exact_layout=False)
    assert ours.shape == theirs.shape and ours.stride() == theirs.stride()
    assert ours.data_ptr() == (array.ctypes.data if array.size else 0) == theirs.data_ptr()   # shares its memory
    span = 0 if array.size == 0 else sum((n - 1) * s for n, s in zip(array.shape, array.strides)) + array.itemsize
    assert ours.untyped_storage().nbytes() == span                # no byte beyond the array's last element


# ----------------------------------------------------------------------------- random as_strided
@hst.composite
def strided_requests(draw):
    dtype = draw(hst.sampled_from([torch.float32, torch.int16, torch.float64, torch.bool]))
    n = draw(hst.integers(0, 24))
    start = draw(hst.integers(0, n))
    ndim = draw(hst.integers(0, 3))
    sizes = draw(hst.lists(hst.integers(-1, 5), min_size=ndim, max_size=ndim))
    strides = draw(hst.lists(hst.integers(-1, 7), min_size=ndim, max_size=ndim))
    offset = draw(hst.one_of(hst.none(), hst.integers(-1, 26)))
    return dtype, n, start, sizes, strides, offset


@given(strided_requests())
def test_as_strided_accepts_exactly_what_torch_accepts(request):
    dtype, n, start, sizes, strides, offset = request
    t = (torch.arange(n) % 7).to(dtype)[start:]            # a storage with an offset view on it
    x = internals.from_torch(t)
    if any(size < 0 for size in sizes):
        # Always refused here; torch refuses too unless a zero size hides the negative one
        # (see test_a_negative_size_beside_a_zero_is_refused_too).
        with pytest.raises(RuntimeError):
            x.as_strided(sizes, strides, offset)
        if 0 not in sizes:
            with pytest.raises(RuntimeError):
                t.as_strided(sizes, strides, offset)
        return
    try:
        theirs = t.as_strided(sizes, strides, offset)
    except Exception:
        assert_same_error(lambda: x.as_strided(sizes, strides, offset),
                          lambda: t.as_strided(sizes, strides, offset))
        return
    ours = x.as_strided(sizes, strides, offset)
    assert_same(ours, theirs)
    assert ours.untyped_storage() is x.untyped_storage()
    if ours.numel():                                        # an empty tensor's data_ptr is 0, as in torch
        assert ours.data_ptr() == x.untyped_storage().data_ptr() + ours.storage_offset() * ours.element_size()


# ----------------------------------------------------------------------------- writes stay inside
VIEWS = {
    "block": lambda b: b[1:4, 2:6],
    "strided": lambda b: b[1:5:2, 1::3],
    "transposed": lambda b: b.t()[1:5:3, 2:],
    "row piece": lambda b: b[2, 1:6],
    "as_strided": lambda b: b.as_strided((2, 3), (8, 2), 9),
}
WRITES = {
    "fill_": lambda v, src: v.fill_(1.5),
    "zero_": lambda v, src: v.zero_(),
    "copy_": lambda v, src: v.copy_(src),
    "copy_ broadcast": lambda v, src: v.copy_(src[..., :1]),
    "setitem": lambda v, src: v.__setitem__(Ellipsis, 3.0),
    "add_": lambda v, src: v.add_(src, alpha=2),
    "sub_ scalar": lambda v, src: v.sub_(1),
    "mul_": lambda v, src: v.mul_(src),
    "div_": lambda v, src: v.div_(4),
    "exp_": lambda v, src: v.exp_(),
    "relu_": lambda v, src: v.relu_(),
}


def _write_through_view(device, dtype, view, write):
    base = torch.full((6, 7), SENTINEL, dtype=dtype)
    theirs_view = VIEWS[view](base)
    src = torch.randn(theirs_view.shape).to(dtype)
    ours_base = on(device, base)
    WRITES[write](VIEWS[view](ours_base), on(device, src))
    WRITES[write](theirs_view, src)
    assert_same(ours_base.cpu(), base)
    inside = torch.zeros(base.shape, dtype=torch.bool)
    VIEWS[view](inside).fill_(True)
    outside = ours_base.cpu().to_torch()[~inside]
    assert outside.numel() > 0 and bool((outside == SENTINEL).all())


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("view", list(VIEWS))
def test_writes_through_a_view_leave_the_rest_of_the_storage_alone_cpu(view, write):
    _write_through_view("cpu", torch.float32, view, write)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("write", ["fill_", "copy_", "add_", "exp_"])
def test_writes_through_a_view_of_other_dtypes_cpu(write, dtype):
    # float16/bfloat16 go through a float32 temporary and a converting copy back into the view.
    _write_through_view("cpu", dtype, "strided", write)


@pytest.mark.parametrize("view, write, dtype", [
    ("strided", "fill_", torch.float32), ("transposed", "copy_", torch.float32), ("as_strided", "add_", torch.float32),
    ("row piece", "exp_", torch.float32), ("block", "setitem", torch.float32), ("strided", "mul_", torch.float32),
    ("strided", "fill_", torch.float16), ("transposed", "add_", torch.bfloat16), ("block", "copy_", torch.float64),
])
def test_writes_through_a_view_leave_the_rest_of_the_storage_alone_cuda(view, write, dtype):
    _write_through_view("cuda", dtype, view, write)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_casting_copy_into_an_integer_view(device):
    base = torch.full((5, 6), -9, dtype=torch.int32)
    src = torch.tensor([[1.5, -2.5, 300.25], [7.0, 8.9, -0.5]])
    ours = on(device, base)
    ours[1:5:2, ::2].copy_(on(device, src))
    base[1:5:2, ::2].copy_(src)
    assert_same(ours.cpu(), base)


# ----------------------------------------------------------------------------- overlapping writes
OVERLAPPING_WRITES = {
    "add_": lambda e: e.add_(1),
    "sub_": lambda e: e.sub_(1),
    "mul_": lambda e: e.mul_(2),
    "div_": lambda e: e.div_(2),
    "exp_": lambda e: e.exp_(),
    "relu_": lambda e: e.relu_(),
    "copy_": lambda e: e.copy_(torch_or_internals(e).ones(3, 4)),
    "copy_ 0-dim": lambda e: e.copy_(torch_or_internals(e).tensor(1.0)),
    "setitem all": lambda e: e.__setitem__(slice(None), 5.0),
}


def torch_or_internals(t):
    """The module ``t`` comes from, so one lambda serves both sides."""
    if isinstance(t, torch.Tensor):
        return torch
    def ones(*shape):
        return internals.ones(*shape, device=t.device)
    def tensor(value):
        return internals.tensor(value)          # a 0-dim CPU tensor may join any device
    return type("module", (), {"ones": staticmethod(ones), "tensor": staticmethod(tensor)})


# On cuda, ``x[...] = number`` is a fill, not a copy: torch's setitem makes the number a CPU
# tensor for a cuda ``x``, and ``fill_.Tensor`` from another device fills without copy_'s overlap
# check (see the test after this one).
@pytest.mark.parametrize("name, device", [(name, device) for name in OVERLAPPING_WRITES for device in ("cpu", "cuda")
                                          if (name, device) != ("setitem all", "cuda")])
def test_in_place_on_an_expanded_tensor_fails_before_writing(name, device):
    base = torch.arange(12.0)
    ours_base = on(device, base)
    write = OVERLAPPING_WRITES[name]
    expanded, ours_expanded = base[4:8].expand(3, 4), ours_base[4:8].expand(3, 4)
    ours, _ = assert_same_error(lambda: write(ours_expanded), lambda: write(expanded))
    assert str(ours) == INTERNAL_OVERLAP
    assert_same(ours_base.cpu(), torch.arange(12.0), rtol=0, atol=0)     # not one element written
    assert ours_base._version == 0


def test_setitem_of_a_number_into_an_expanded_cuda_tensor_fills_it():
    base = on("cuda", torch.arange(12.0))
    base[4:8].expand(3, 4)[:] = 5.0
    assert base.cpu().tolist() == [0.0, 1.0, 2.0, 3.0] + [5.0] * 4 + [8.0, 9.0, 10.0, 11.0]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_fill_of_an_expanded_tensor_is_allowed_as_in_torch(device):
    # Every shared element receives the same value, so torch lets fill_ and zero_ through.
    base = torch.arange(12.0)
    ours_base = on(device, base)
    ours_base[4:8].expand(3, 4).fill_(-1.0)
    base[4:8].expand(3, 4).fill_(-1.0)
    ours_base[:2].expand(5, 2).zero_()
    base[:2].expand(5, 2).zero_()
    assert_same(ours_base.cpu(), base)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("name", ["copy_", "add_", "mul_"])
def test_in_place_with_a_partially_overlapping_input_fails_before_writing(name, device):
    base = torch.arange(10.0)
    ours_base = on(device, base)
    ours, _ = assert_same_error(lambda: getattr(ours_base[1:], name)(ours_base[:-1]),
                                lambda: getattr(base[1:], name)(base[:-1]))
    assert str(ours) == PARTIAL_OVERLAP
    assert_same(ours_base.cpu(), torch.arange(10.0), rtol=0, atol=0)
    assert ours_base._version == 0


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_in_place_on_itself_is_fine(device):
    base = torch.arange(10.0)
    ours = on(device, base)
    ours.add_(ours)
    ours[::2].mul_(ours[::2])
    base.add_(base)
    base[::2].mul_(base[::2])
    assert_same(ours.cpu(), base)
