"""Differential tests of the CPU kernels' fast paths against torch (``cpu/reduce.py``, ``cpu/linalg.py``).

The reductions pick a loop by layout (contiguous, columns, strided) and fold long inputs in
blocks and a ladder of partial sums; matmul packs ``w`` transposed and runs a tiled kernel whose
edge tiles store only part of their products. These inputs reach every path and every edge: sizes
past one block, strip or tile and not a multiple of it, transposed, sliced and expanded operands.
"""
import numpy as np
import pytest
import torch
from helpers import assert_same

import internals

LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.t(),
    "sliced": lambda t: t[1::2, ::3],
    "expanded": lambda t: t[:1].expand(t.shape[0], -1),
    "offset": lambda t: t[1:, 2:],
}
# Past BLOCK (2048) and WIDTH (1024) of cpu/reduce.py, and past its ladder (FAN = 16 rows, twice); the
# second is past GRAIN (the parallel loops), even sliced to every other row or column.
SHAPES = [(7, 5), (2050, 1030), (1100, 9), (2, 4100)]
PARALLEL = (2050, 1030)


def _values(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.rand(shape, generator=g, dtype=torch.float64).to(dtype) * 2 - 1
    return torch.randint(-5, 6, shape, generator=g).to(dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name, dim", [(name, dim) for name in ("sum", "mean", "amax", "amin", "prod")
                                       for dim in (0, 1, (0, 1), None) if name != "prod" or dim != (0, 1)], ids=str)
def test_reduction_paths(name, dim, shape, layout):
    t = LAYOUTS[layout](_values(shape, torch.float32, 0))
    if name == "prod":
        t = t.sign()                # products of +-1 and 0: exact in any order
    kwargs = {} if dim is None else {"dim": dim}
    # float32 sums of up to ~10^4 values in [-1, 1], added in another order than torch's
    assert_same(getattr(internals.from_torch(t), name)(**kwargs), getattr(t, name)(**kwargs), rtol=1e-5, atol=1e-4)


# One dtype of each kind: the loops are the same code for every width of a kind (int32 would run
# int64's code again: three more loops to compile on a cold run, for no new path).
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.float64, torch.bool])
@pytest.mark.parametrize("dim", [0, 1])
def test_reduction_paths_other_dtypes(dtype, dim):
    t = _values((1100, 1030), dtype, 1)
    for name in ("sum", "amax"):
        assert_same(getattr(internals.from_torch(t), name)(dim), getattr(t, name)(dim))


@pytest.mark.parametrize("shape", [(7, 5), PARALLEL], ids=str)    # the serial and the parallel loop
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_arg_reductions_serial_and_parallel(name, dim, shape):
    t = _values(shape, torch.float32, 2)
    kwargs = {} if dim is None else {"dim": dim}
    assert_same(getattr(internals.from_torch(t), name)(**kwargs), getattr(t, name)(**kwargs))


@pytest.mark.parametrize("dim, strided", [(0, False), (1, False), (1, True)])
def test_long_float_sum_is_as_accurate_as_torch(dim, strided):
    """A cascade keeps float32 sums of many values close to the exact (float64) sum: within
    twice torch's own error plus one unit in the last place of the result (errors this small come
    in whole ulps; a plain running float32 sum of 10^5 values is off by hundreds of them). The
    strided loop (every other column) folds the same way."""
    g = torch.Generator().manual_seed(dim)
    t = torch.rand(100_000, 3, generator=g) if dim == 0 else torch.rand(3, 200_000 if strided else 100_000, generator=g)
    t = t[:, ::2] if strided else t
    exact = t.double().sum(dim)
    ulp = float(np.spacing(np.float32(exact.max().item())))
    theirs = (t.sum(dim).double() - exact).abs().max().item()
    ours = (internals.from_torch(t).sum(dim).to_torch().double() - exact).abs().max().item()
    assert ours <= 2 * theirs + ulp


MM_SIZES = [(1, 1, 1), (1, 200, 1), (1, 70, 300), (300, 70, 1), (5, 0, 3), (67, 130, 129), (36, 257, 200),
            (70, 1030, 9), (37, 10, 130), (10, 256, 300)]


# int64 for exact integer products, int8 for products that wrap: int32 would run int64's code
# again (seven more loops to compile on a cold run, gemm and transpose twins among them, no new path).
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int8])
@pytest.mark.parametrize("M, K, N", MM_SIZES, ids=str)
@pytest.mark.parametrize("layouts", [("row", "row"), ("column", "row"), ("row", "column"), ("column", "column"),
                                     ("sliced", "sliced")])
def test_mm_tiles_and_edges(M, K, N, dtype, layouts):
    """Sizes not multiples of the tile (4 x 4) or the transpose's blocks (16), past a task's rows
    (64), columns (128) and a k block (1024), 1xN, Nx1, K = 0, K short enough for rank-1 updates;
    operands row-major, column-major (read as they lie) or neither (copied); integer products are
    exact (int8 sums wrap, as torch's do), float ones within the usual reordering tolerance."""
    a, b = (_laid_out(_values(shape, dtype, seed), layout)
            for shape, seed, layout in (((M, K), 2, layouts[0]), ((K, N), 3, layouts[1])))
    ours = internals.from_torch(a) @ internals.from_torch(b)
    tol = {} if not dtype.is_floating_point else {"rtol": 1e-5, "atol": 1e-5}
    assert_same(ours, a @ b, **tol)


def _laid_out(m, layout):
    if layout == "column":
        return m.t().contiguous().t()
    if layout == "sliced":                 # every other column of a wider matrix: no BLAS layout
        return torch.stack([m, m], dim=2).flatten(1)[:, ::2]
    return m


def test_mm_reads_transposed_operands_in_place():
    """``x @ w.t()`` (what ``linear`` computes) allocates only its result: the column-major w is
    handed to the kernel as it lies, as torch hands it to a BLAS with ``transb``. An operand that
    is neither row- nor column-major costs one more allocation: its row-major copy."""
    from internals.c10.allocator import cpu_allocator
    x, w, wide = internals.rand(8, 5), internals.rand(3, 5), internals.rand(3, 10)

    def allocations(f):
        before = cpu_allocator.num_allocs
        f()
        return cpu_allocator.num_allocs - before
    assert allocations(lambda: x @ w.t()) == 1
    assert allocations(lambda: x.t().t() @ w.t()) == 1
    assert allocations(lambda: x @ wide[:, ::2].t()) == 2


def test_bmm_uses_the_same_tiles():
    a, b = _values((3, 37, 70), torch.float32, 4), _values((3, 70, 131), torch.float32, 5)
    assert_same(internals.bmm(internals.from_torch(a), internals.from_torch(b)), torch.bmm(a, b),
                rtol=1e-5, atol=1e-5)


CACHED_PROGRAM = """
import internals
small, large = internals.ones(4), internals.ones(2_000_000)     # serial and parallel loops
(small + 1, large * large, small.exp(), large.sum(), small.sum(), large.argmax(), small.argmax(),
 internals.where(small > 0, small, 0.0))
"""


@pytest.mark.slow
def test_a_second_process_loads_every_loop_from_the_disk_cache(tmp_path):
    """``cache=True`` must work for the loops built per op (closures over the op number): a
    second process compiles nothing. A closure over another jitted function would defeat it,
    since Numba keys the cache by the closure's pickled contents and a dispatcher pickles with
    an id of its own process."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DEBUG_CACHE="1")
    runs = [subprocess.run([sys.executable, "-c", CACHED_PROGRAM], env=env, capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert "data saved" in runs[0]
    assert "data saved" not in runs[1] and "data loaded" in runs[1]


# The in-place loop paths: output is the first input (see ``_IN_PLACE`` in cpu/loops.py). Which
# branch of the loop runs depends on the operands' layout, not on the op, so the binary cases are
# all ``add_``: on the parallel shape each other op would compile its parallel loop for this test alone.
IN_PLACE = {
    "add_ tensor": lambda x, y: x.add_(y, alpha=-0.5),
    "add_ scalar": lambda x, y: x.add_(3.0),
    "add_ broadcast row": lambda x, y: x.add_(y[:1], alpha=2),
    "add_ transposed other": lambda x, y: x.add_(y.t().contiguous().t()),
    "exp_": lambda x, y: x.exp_(),
    "relu_": lambda x, y: x.relu_(),
}


@pytest.mark.parametrize("shape", [(3, 5), PARALLEL], ids=str)      # serial and parallel loops
@pytest.mark.parametrize("view", ["whole", "offset rows", "columns"])
@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_loops_write_what_torch_writes(name, view, shape):
    """The first input is the output, whole or as a view with an offset or a stride: every element
    of the storage, in the view or not, ends as torch's."""
    base_t, y_t = _values(shape, torch.float32, 3), _values(shape, torch.float32, 4)
    base_i, y_i = internals.from_torch(base_t.clone()), internals.from_torch(y_t)
    pick = {"whole": lambda t: t, "offset rows": lambda t: t[1:], "columns": lambda t: t[:, ::2]}[view]
    out_i = IN_PLACE[name](pick(base_i), pick(y_i))
    out_t = IN_PLACE[name](pick(base_t), pick(y_t))
    assert_same(out_i, out_t, rtol=1e-6, atol=1e-6)
    assert_same(base_i, base_t, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape, dim", [((1,), None), ((7,), None), ((8,), None), ((123,), None), ((2000,), None),
                                        ((30_000,), None), ((5, 7), 1), ((6, 301), 1), ((6, 301), -1),
                                        ((4, 3, 9, 9), (0, 2, 3)), ((3, 5, 40), (1, 2))], ids=str)
def test_float_sums_along_contiguous_rows_are_torchs_bits(dtype, shape, dim):
    """``cascade_sum``'s order, followed step by step: the same bits as torch's (up to 32,768
    elements, where torch stops splitting a reduction between threads); mean divides that sum."""
    t = torch.randn(shape, generator=torch.Generator().manual_seed(len(shape)), dtype=dtype)
    kwargs = {} if dim is None else {"dim": dim}
    t.view(-1)[0] = float("inf")             # and an infinity stays one (no inf - inf on the way)
    for name in ("sum", "mean"):
        assert_same(getattr(internals.from_torch(t), name)(**kwargs), getattr(t, name)(**kwargs), rtol=0, atol=0)
