"""How the elementwise CUDA loops launch, against ``CUDALoops.cuh``, ``Loops.cuh`` and
``TensorIterator.cpp``.

torch's CPU wheel runs no CUDA kernel, so the choices themselves (which kernel, which vector
width, which pieces) are checked against torch's rules as its source states them, transcribed
here independently of the package; the values every path computes are checked against torch's
CPU results. The split into 32-bit-indexable pieces is checked on fake tensors of more than
2**31 elements, which hold no memory.
"""
import math
import random

import pytest
import torch
from helpers import assert_same

import internals
from internals._meta_registrations import TensorMeta
from internals._subclasses.fake_tensor import FakeTensor
from internals.aten.empty_tensor import meta_execution
from internals.aten.native.copy import _copy_iterator
from internals.aten.native.cuda import loops
from internals.aten.tensor_iterator import INT32_MAX, Geometry, TensorIterator, coalesce, with_32bit_indexing
from internals.c10 import scalar_type as st


def cu(t):
    return internals.from_torch(t).cuda()


def plan(ours_a, ours_b):
    """The launches ``a + b`` makes on the device."""
    it = TensorIterator.binary_op(None, ours_a, ours_b)
    return loops.launch_plan(it.itemsizes(), it.geometry)


def check_add(a, b):
    ours = cu(a) + cu(b)
    assert ours.stride() == (a + b).stride()
    assert_same(ours.cpu(), a + b, rtol=0, atol=0)


# ---------------------------------------------------------------------- which kernel
# launch_vectorized_kernel: width = min(can_vectorize_up_to over operands, 16 / sizeof(out)),
# and at most 4 on a GPU other than compute capability 9.x or 10.x (the simulator's case);
# can_vectorize_up_to is the widest of 8, 4, 2 the address is aligned to (a caching-allocator
# block is 512-byte aligned, so the offset decides).
def torch_vec_size(offsets, out_itemsize, wide=False):
    aligned = min(next((v for v in (8, 4, 2) if o % v == 0), 1) for o in offsets)
    return min(aligned, 16 // out_itemsize, 8 if wide else 4)


@pytest.mark.parametrize("offsets", [(0, 0), (0, 8), (0, 4), (2, 6), (0, 1), (3, 0)])
@pytest.mark.parametrize("itemsize", [1, 2, 4, 8])
@pytest.mark.parametrize("wide", [False, True])
def test_the_vector_width_follows_torchs_rule(offsets, itemsize, wide):
    assert loops.vec_size([itemsize, itemsize], offsets, wide) == torch_vec_size(offsets, itemsize, wide)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int16, torch.int8, torch.int64])
@pytest.mark.parametrize("start", [0, 1, 2, 4])
def test_contiguous_operands_take_the_vectorized_kernel_when_aligned(dtype, start):
    x, y = (torch.arange(start + 700) % 50).to(dtype), (torch.arange(start + 700) % 30).to(dtype)
    ours_x, ours_y = cu(x)[start:], cu(y)[start:]           # sliced on the device: offset `start`
    (launch,) = plan(ours_x, ours_y)
    # the output is new (offset 0); the inputs start `start` elements into their storages
    vec = torch_vec_size([0, start, start], x.element_size())
    assert launch.vec_size == vec
    assert launch.kernel == ("vectorized_elementwise_kernel" if vec > 1 else "unrolled_elementwise_kernel")
    assert launch.elems_per_thread == 8          # io_size > 1 byte
    assert_same((ours_x + ours_y).cpu(), x[start:] + y[start:], rtol=0, atol=0)


@pytest.mark.parametrize("shape, view", [((9, 7), lambda t: t.t()), ((7, 1), lambda t: t),
                                         ((7, 18), lambda t: t[:, ::2])])
def test_strided_or_broadcast_operands_take_the_offset_calculator_kernel(shape, view):
    base, b = torch.randn(shape), torch.randn(7, 9)
    ours_a = view(cu(base))                  # made on the device, where .cuda() cannot densify it
    (launch,) = plan(ours_a, cu(b))
    assert launch.kernel == "elementwise_kernel"
    assert launch.elems_per_thread == 2          # launch_legacy_kernel<128, 2> for a 4-byte output
    ours = ours_a + cu(b)
    assert_same(ours.cpu(), view(base) + b, rtol=0, atol=0)


def test_a_tensor_of_one_element_counts_as_contiguous():
    a, b = torch.randn(3, 4)[1:2, 2:3], torch.randn(1, 1)
    (launch,) = plan(cu(a), cu(b))
    assert launch.kernel != "elementwise_kernel"


def test_a_converting_copy_is_never_vectorized():
    src = torch.randn(1000)
    ours = internals.empty(1000, dtype=internals.float64, device="cuda")
    it = _copy_iterator(ours, cu(src))      # copy_'s iterator: float32 read, float64 written
    (launch,) = loops.launch_plan(it.itemsizes(), it.geometry, casting=True)
    assert (launch.kernel, launch.elems_per_thread) == ("unrolled_elementwise_kernel", 4)
    ours.copy_(cu(src))
    assert_same(ours.cpu(), src.double(), rtol=0, atol=0)


@pytest.mark.parametrize("n", [1, 255, 256, 257, 1000])
def test_every_path_computes_torchs_values_at_block_edges(n):
    """Sizes around one block of work (simulated: 32 threads x 8 elements): the full blocks go
    vectorized, the last partial one element by element."""
    a, b = torch.randn(n + 1), torch.randn(n + 1)
    check_add(a[:n], b[:n])              # vectorized
    ours = cu(a)[1:] + cu(b)[1:]         # unrolled, vector width 1
    assert_same(ours.cpu(), a[1:] + b[1:], rtol=0, atol=0)
    ours = cu(a[:n]).exp()
    assert_same(ours.cpu(), a[:n].exp(), ulps=4)
    filled = internals.empty(n, dtype=internals.bool, device="cuda").fill_(True)
    assert_same(filled.cpu(), torch.ones(n, dtype=torch.bool))


# ---------------------------------------------------------------------- 32-bit splitting
class TorchSplit:
    """torch's ``TensorIteratorBase`` split rules, transcribed in bytes as torch keeps them:
    ``can_use_32bit_indexing``, ``get_dim_to_split``, ``split``, ``narrow`` (which coalesces a dim
    narrowed to one) and ``SplitUntil32Bit``'s stack of iterators."""

    def __init__(self, shape, stride_bytes, data, max_value):
        self.shape, self.stride_bytes, self.data, self.max_value = list(shape), stride_bytes, data, max_value

    def copy(self):
        return TorchSplit(self.shape, [list(s) for s in self.stride_bytes], list(self.data), self.max_value)

    def can_use_32bit_indexing(self):
        if math.prod(self.shape) > self.max_value:
            return False
        return all(1 + sum((n - 1) * s for n, s in zip(self.shape, op)) <= self.max_value
                   for op in self.stride_bytes)

    def get_dim_to_split(self):
        max_extent, dim_to_split = -1, -1
        for dim in range(len(self.shape) - 1, -1, -1):
            if self.shape[dim] == 0:
                continue
            for op in self.stride_bytes:
                extent = (self.shape[dim] - 1) * abs(op[dim])
                if extent > max_extent:
                    max_extent, dim_to_split = extent, dim
        return dim_to_split

    def narrow(self, dim, start, size):
        self.shape[dim] = size
        self.data = [d + op[dim] * start for d, op in zip(self.data, self.stride_bytes)]
        if size == 1:
            self.shape, self.stride_bytes = coalesce(self.shape, self.stride_bytes)

    def split(self, dim):
        copy = self.copy()
        copy_size = self.shape[dim] // 2
        copy.narrow(dim, 0, copy_size)
        self.narrow(dim, copy_size, self.shape[dim] - copy_size)
        return copy

    def with_32bit_indexing(self):
        vec = [self.copy(), None]
        while True:
            vec.pop()
            while vec and not vec[-1].can_use_32bit_indexing():
                vec.append(vec[-1].split(vec[-1].get_dim_to_split()))
            if not vec:
                return
            yield vec[-1]


def pieces_as_torch(geometry, itemsizes, max_value):
    """Each piece's sizes, strides (elements) and offsets (elements), by torch's rules."""
    stride_bytes = [[s * size for s in row] for row, size in zip(geometry.strides.tolist(), itemsizes)]
    data = [o * size for o, size in zip(geometry.offsets.tolist(), itemsizes)]
    out = []
    for it in TorchSplit(geometry.shape.tolist(), stride_bytes, data, max_value).with_32bit_indexing():
        out.append((it.shape, [[s // size for s in row] for row, size in zip(it.stride_bytes, itemsizes)],
                    [d // size for d, size in zip(it.data, itemsizes)]))
    return out


def ours(pieces):
    return [(p.shape.tolist(), p.strides.tolist(), p.offsets.tolist()) for p in pieces]


def fake(shape, strides, dtype=st.float32, offset=0):
    return FakeTensor.from_meta(TensorMeta(shape, strides, dtype, internals.device("cuda")), offset)


def test_more_than_two_gigabytes_splits_into_torchs_pieces_without_memory():
    """A 65536 x 65536 float32 add spans 2**34 bytes. torch halves the rows until the last
    element's first byte, plus one, fits in int32: 8192 rows are 2**31 bytes, whose last float
    starts 4 bytes below 2**31, so it stops there: 8 pieces."""
    a = fake((2**16, 2**16), (2**16, 1))
    b = fake((2**16,), (1,))
    with meta_execution():
        it = TensorIterator.binary_op(None, a, b)
    assert not it.can_use_32bit_indexing()
    pieces = it.with_32bit_indexing()
    assert ours(pieces) == pieces_as_torch(it.geometry, it.itemsizes(), INT32_MAX)
    assert [p.shape.tolist() for p in pieces] == [[2**16, 2**13]] * 8
    assert [p.offsets[0] for p in pieces] == [k * 2**13 * 2**16 for k in range(8)]
    launches = loops.launch_plan(it.itemsizes(), it.geometry)
    assert [launch.geometry.offsets.tolist() for launch in launches] == [p.offsets.tolist() for p in pieces]


def test_more_elements_than_int32_split_even_when_bytes_fit_per_operand():
    a = fake((3, 2**31), (0, 0), dtype=st.bool_)        # an expanded bool: no byte is far away
    with meta_execution():
        it = TensorIterator.unary_op(None, a.logical_not())
    assert ours(it.with_32bit_indexing()) == pieces_as_torch(it.geometry, it.itemsizes(), INT32_MAX)


@pytest.mark.parametrize("seed", range(40))
def test_random_geometries_split_as_torch_splits_them(seed):
    """Small geometries under a small limit: sizes of 1 to 7 (an odd size halves unevenly and a
    half of one is coalesced away), permuted and broadcast strides, offsets."""
    rng = random.Random(seed)
    ndim = rng.randint(1, 4)
    shape = [rng.randint(1, 7) for _ in range(ndim)]
    strides = [[rng.choice([0, 1, 2, 3, 5, 8, 13]) for _ in shape] for _ in range(3)]
    strides[0] = [math.prod(shape[:d]) for d in range(ndim)]          # the output: dense
    geometry = Geometry(shape, strides, [0, rng.randint(0, 9), rng.randint(0, 9)])
    itemsizes = [4, rng.choice([1, 2, 4, 8]), 4]
    max_value = rng.randint(12, 200)
    pieces = list(with_32bit_indexing(geometry, itemsizes, max_value))
    assert ours(pieces) == pieces_as_torch(geometry, itemsizes, max_value)
    assert sum(math.prod(p.shape.tolist()) for p in pieces) == math.prod(shape)


def test_an_op_split_into_pieces_computes_torchs_values(monkeypatch):
    """With the limit lowered to 1 KiB, small tensors take several launches, each a piece."""
    monkeypatch.setattr(loops, "MAX_INDEX", 1024)
    a, b = torch.randn(40, 30), torch.randn(30, 40)
    launches = plan(cu(a), cu(b).t())
    assert len(launches) > 1
    assert sum(launch.numel for launch in launches) == a.numel()
    assert_same((cu(a) + cu(b).t()).cpu(), a + b.t(), rtol=0, atol=0)
    check_add(torch.randn(2000), torch.randn(2000))
    assert_same(cu(a).sin().cpu(), a.sin(), ulps=4)


def test_a_metadata_only_iterator_still_has_its_geometry_to_split():
    """Under ``meta_execution`` nothing is allocated and no loop runs, but an iterator over
    concrete sizes keeps its loop geometry, so a 2**32-element problem can be split into 32-bit
    pieces without its bytes (chapter 4b shows it). Only a traced (symbolic) size leaves none."""
    def fake(shape, strides):
        return FakeTensor.from_meta(TensorMeta(shape, strides, internals.float32, internals.device("cuda")))

    with meta_execution():
        it = TensorIterator.binary_op(None, fake((2**16, 2**16), (2**16, 1)), fake((2**16,), (1,)))
    assert not it.can_use_32bit_indexing()
    pieces = it.with_32bit_indexing()
    assert [p.shape.tolist() for p in pieces] == [[2**16, 2**13]] * 8
    assert [p.offsets[0] for p in pieces] == [k * 2**29 for k in range(8)]
