"""Operators tutorial snippets reach for -- ``index_fill``/``index_copy``/
``masked_scatter`` (and their in-place forms), ``diff``, ``histc``, ``logcumsumexp``, ``ravel``,
``aminmax``, ``searchsorted``/``bucketize``, ``triu_indices``/``tril_indices``, ``tensordot``,
``cross``/``linalg.cross``, ``rot90``, ``msort``, ``column_stack``, ``dstack``, ``randint_like``,
``kron``, ``block_diag``, ``cartesian_prod``, ``cdist`` -- and the out= overloads of ``cumprod``,
``kthvalue``, ``median``, ``mode``, ``any``, ``all``, ``rand``, ``randn``, ``eye``, ``randint``.

As ``tests/aten/test_pooling.py``'s avg_pool2d tests: PyTorch's OpInfo samples (as given and non-contiguous), then
everyday calls compared for values, strides, dtypes, grad_fn names, warnings and error messages,
gradients and nodes (``compare_gradients_and_nodes``), and the CUDA kernels against the CPU ones.
"""
import warnings

import pytest
import torch
from helpers import (
    Adapter,
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    opinfo_cases,
    same_error,
)
from helpers import describe_sample as _describe
from helpers import run_out_variant as _run_out

import internals
from internals.aten.native import indexing
from internals.aten.native.dispatch_stub import fma_contracted

# ---------------------------------------------------------------------- everyday calls
X = "lib.arange(6.).reshape(2, 3)"
V = "lib.tensor([1.0, 3.0, 3.0, 5.0, 7.0])"
PROGRAMS = [
    # index_fill, index_copy, masked_scatter
    f"lib.index_fill({X}, 1, lib.tensor([0, 2]), -1.0)", f"{X}.t().index_fill(1, lib.tensor([1]), -1.0)",
    f"{X}.index_fill_(0, lib.tensor([-1]), 7)", f"{X}.index_fill(1, lib.tensor(2), lib.tensor(5.0))",
    "lib.index_fill(lib.tensor(3.), 0, lib.tensor(0), -1.)", "lib.arange(3).index_fill(0, lib.tensor([0]), 2.5)",
    f"lib.index_fill({X}, 0, lib.tensor([0], dtype=lib.int32), 1.)", f"lib.index_fill({X}, 1, lib.tensor([3]), 1.)",
    f"lib.index_fill({X}, 1, lib.tensor([-4]), 1.)", f"lib.index_fill({X}, 1, lib.tensor([[1]]), 1.)",
    f"lib.index_fill({X}, 1, lib.tensor([1]), 1j)", f"lib.index_fill({X}, 1, lib.tensor([1]), lib.ones(2))",
    f"lib.index_fill({X}, 2, lib.tensor([1]), 1.)", "lib.zeros(2).expand(3, 2).index_fill_(0, lib.tensor([1]), 1.)",
    f"lib.index_copy({X}, 1, lib.tensor([2, 0]), lib.ones(2, 2) * 9)", f"{X}.t().index_copy(0, lib.tensor([0]), "
    "lib.ones(1, 2))", f"{X}.index_copy_(0, lib.tensor([1]), lib.full((1, 3), 4.0))",
    "lib.index_copy(lib.zeros(3), 0, lib.tensor([1]), lib.tensor(5.))",
    f"lib.index_copy({X}, 1, lib.tensor([3]), lib.ones(2, 1))",
    f"lib.index_copy({X}, 1, lib.tensor([-1]), lib.ones(2, 1))",
    f"lib.index_copy({X}, 1, lib.tensor([0], dtype=lib.int32), lib.ones(2, 1))",
    f"lib.index_copy({X}, 1, lib.tensor([0]), lib.ones(2, 1, dtype=lib.float64))",
    f"lib.index_copy({X}, 1, lib.tensor([0, 1]), lib.ones(2, 1))", f"lib.index_copy({X}, 1, lib.tensor([[0]]), "
    "lib.ones(2, 1))", f"lib.index_copy({X}, 1, lib.tensor([0, 1]), lib.tensor(1.))",
    f"lib.index_copy({X}, 1, lib.tensor([0]), lib.ones(2))", "lib.index_copy(lib.zeros(3, 2), 0, lib.tensor([1]), "
    "lib.ones(1, 3))", f"lib.index_copy({X}, 0, lib.tensor([1]), lib.ones(1, 3), out=lib.empty(0))",
    f"{X}.masked_scatter({X} > 2, lib.arange(10., 20.))", f"{X}.t().masked_scatter(lib.tensor([True, False]), "
    "lib.arange(10.))", "lib.zeros(3).masked_scatter(lib.ones(2, 3, dtype=lib.bool), lib.arange(10.))",
    f"{X}.masked_scatter_({X} < 2, lib.tensor([[-1.0, -2.0]]))", f"{X}.masked_scatter({X} > 2, lib.zeros(2))",
    f"{X}.masked_scatter({X} > 2, lib.zeros(5, dtype=lib.int64))",
    f"{X}.masked_scatter(({X} > 2).byte(), lib.zeros(5))",
    f"{X}.masked_scatter(lib.ones(3), lib.zeros(5))", f"{X}.masked_scatter(lib.tensor([True, False]), lib.zeros(5))",
    f"{X}.masked_scatter_(lib.ones(2, 2, 3, dtype=lib.bool), lib.zeros(12))",
    # diff, ravel, msort, column_stack, dstack
    f"lib.diff({X})", f"{X}.diff(dim=0)", f"lib.diff({X}, 2, prepend=lib.ones(2, 1), append=lib.zeros(2, 2))",
    f"lib.diff({X}, 0)", f"lib.diff({X}, 5)", "lib.diff(lib.tensor([True, False, False]))", f"lib.diff({X}.t(), 1, 0)",
    "lib.diff(lib.tensor([1, 5, 2]))", "lib.diff(lib.tensor(1.))", f"lib.diff({X}, -1)",
    f"lib.diff({X}, prepend=lib.ones(3))", f"lib.diff({X}, prepend=lib.ones(3, 1))",
    f"lib.diff({X}, out=lib.empty(0))", f"lib.ravel({X}.t())", f"{X}.ravel()", f"lib.ravel({X})._base is not None",
    f"lib.msort({X}.t())", f"{X}.flip(0).msort()", f"lib.msort({X}, out=lib.empty(0))",
    f"lib.column_stack([{X}, lib.ones(2), lib.zeros(2, 1)])", "lib.column_stack([lib.tensor(1.), lib.tensor(2.)])",
    f"lib.column_stack([{X}[0], {X}[1]])", "lib.column_stack([])", f"lib.column_stack([{X}, {X}], out=lib.empty(0))",
    f"lib.dstack([{X}, {X}])", "lib.dstack([lib.ones(3), lib.zeros(3)])", "lib.dstack([lib.tensor(1), lib.tensor(2)])",
    "lib.dstack([])", f"lib.dstack([{X}, lib.ones(2)])",
    # histc, logcumsumexp, aminmax
    f"lib.histc({X})", f"lib.histc({X}, 4, 1, 3)", f"{X}.histc(3, -1, 10)", f"lib.histc({X}.half(), 4)",
    f"lib.histc({X}.double() / 7, 5)", "lib.histc(lib.tensor([]), 3)", "lib.histc(lib.tensor([2.0, 2.0]), 3)",
    "lib.histc(lib.tensor([0.1, 0.2, 0.3, 0.7, 0.9, 1.0, -0.1, 1.1]), 10, 0, 1)",
    "lib.histc(lib.arange(5), 3)", f"lib.histc({X}, 0)", f"lib.histc({X}, 3, 2, 1)",
    f"lib.histc({X}, 3, float('inf'), 1)",
    "lib.histc(lib.tensor([1., float('nan')]), 2)", f"lib.histc({X}, 3, out=lib.empty(0))",
    f"lib.logcumsumexp({X}, 1)", f"{X}.t().logcumsumexp(0)", f"lib.logcumsumexp({X}.double() * 100, 0)",
    "lib.logcumsumexp(lib.tensor([float('-inf'), float('-inf'), 0.0, float('inf'), 1.0, float('nan'), 2.0]), 0)",
    "lib.logcumsumexp(lib.tensor([float('inf'), float('-inf'), float('inf')]), 0)",
    f"lib.logcumsumexp({X}.half(), 1)", "lib.logcumsumexp(lib.tensor(2.), 0)", "lib.logcumsumexp(lib.arange(3), 0)",
    f"lib.logcumsumexp({X}, 2)", f"lib.logcumsumexp({X}, 1, out=lib.empty(0))",
    f"lib.aminmax({X})", f"lib.aminmax({X}, dim=1)", f"{X}.t().aminmax(dim=0, keepdim=True)",
    f"lib.aminmax({X}, keepdim=True)", "lib.aminmax(lib.tensor([True, False]))",
    "lib.aminmax(lib.tensor(3.), dim=0, keepdim=True)", "lib.aminmax(lib.tensor([1.0, float('nan')]))",
    "lib.aminmax(lib.tensor([]))", "lib.aminmax(lib.zeros(2, 0), dim=1)", "lib.aminmax(lib.zeros(0, 2), dim=1)",
    "lib.aminmax(lib.tensor([1j]))", f"lib.aminmax({X}, dim=1, min=lib.empty(0), max=lib.empty(0))",
    # searchsorted, bucketize
    f"lib.searchsorted({V}, lib.tensor([[3.0, 6.0, 9.0], [0.0, 5.0, 1.0]]))",
    f"lib.searchsorted({V}, lib.tensor([3.0, 6.0, 7.0]), right=True)",
    f"lib.searchsorted({V}, lib.tensor([3.0, 7.0]), side='right', out_int32=True)",
    f"lib.searchsorted({V}, 3)", f"lib.searchsorted({V}, 3.5, right=True)",
    "lib.searchsorted(lib.tensor([[1, 3, 5], [2, 4, 6]]), lib.tensor([[3, 6], [1, 7]]))",
    "lib.searchsorted(lib.tensor([[1, 3, 5], [2, 4, 6]]), lib.tensor([[3.5], [4.0]]))",
    "lib.searchsorted(lib.tensor([5.0, 1.0, 3.0]), lib.tensor([2.0, 4.0]), sorter=lib.tensor([1, 2, 0]))",
    "lib.searchsorted(lib.tensor([1.0, 2.0, float('nan')]), lib.tensor([float('nan'), 2.0]))",
    "lib.searchsorted(lib.tensor([1, 2, 3]), lib.tensor([1.5, 2.5]))",
    "lib.searchsorted(lib.tensor([1, 2]), lib.tensor([]))",
    f"lib.searchsorted({V}, lib.tensor([1.0]), side='middle')",
    f"lib.searchsorted({V}, lib.tensor([1.0]), side='left', right=True)",
    f"lib.searchsorted({V}, lib.tensor(1.0).reshape(()), sorter=lib.tensor([0, 1]))",
    f"lib.searchsorted({V}, lib.tensor([1.0]), sorter=lib.tensor([0, 1, 2, 3, 9]))",
    f"lib.searchsorted({V}, lib.tensor([1.0]), sorter=lib.tensor([0, 1, 2, 3, 4], dtype=lib.int32))",
    "lib.searchsorted(lib.ones(2, 3), lib.tensor(1.0))", "lib.searchsorted(lib.tensor(1.0), lib.tensor([1.0]))",
    "lib.searchsorted(lib.ones(2, 3), lib.ones(3, 3))", "lib.searchsorted(lib.tensor([True]), lib.tensor([True]))",
    f"lib.searchsorted({V}, lib.tensor([2.0]), out=lib.empty(0, dtype=lib.long))",
    f"lib.bucketize(lib.tensor([[3.0, 6.0], [9.0, 0.0]]), {V})", f"lib.bucketize(lib.tensor([3, 5]), {V}, right=True)",
    f"lib.bucketize(4, {V}, out_int32=True)", "lib.bucketize(lib.tensor([1.0]), lib.ones(2, 2))",
    # triu_indices, tril_indices, randint_like
    "lib.triu_indices(3, 4, 1)", "lib.tril_indices(4, 3)", "lib.tril_indices(3, 3, -1, dtype=lib.int32)",
    "lib.triu_indices(3, 3, 10)", "lib.tril_indices(3, 3, -5)", "lib.tril_indices(0, 3)", "lib.tril_indices(-1, 3)",
    "lib.triu_indices(3, 4, 1, dtype=lib.float32)", "lib.tril_indices(3, -2)",
    # tensordot, kron, cross, rot90, block_diag, cartesian_prod
    f"lib.tensordot({X}, {X}.t(), 1)", f"lib.tensordot({X}, {X}, ([0], [0]))", f"lib.tensordot({X}, {X}, 2)",
    "lib.tensordot(lib.arange(24.).reshape(2, 3, 4), lib.arange(12.).reshape(4, 3), ([1, 2], [1, 0]))",
    "lib.tensordot(lib.ones(2, 1), lib.ones(3, 4), ([1], [0]))", f"lib.tensordot({X}, {X}, 0)",
    f"lib.tensordot({X}, {X}, 3)", f"lib.tensordot({X}, {X}, -1)", f"lib.tensordot({X}, {X}.int(), 1)",
    f"lib.tensordot({X}, {X}, ([0], [0, 1]))", f"lib.tensordot({X}, {X}, ([0, 0], [0, 1]))",
    f"lib.tensordot({X}, {X}, 'a')",
    f"lib.tensordot({X}, {X}, ([0, 0], [0, 0]))", f"lib.tensordot({X}, {X}.t(), 1, out=lib.empty(0))",
    f"lib.kron({X}, lib.tensor([[1.0, -1.0], [2.0, 0.5]]))", f"{X}.kron(lib.tensor(2.))",
    f"lib.kron({X}.int(), lib.ones(2))",
    "lib.kron(lib.arange(3), lib.arange(4).reshape(2, 2))", f"lib.kron({X}.t(), {X})",
    f"lib.kron({X}, {X}, out=lib.empty(0))",
    "lib.linalg.cross(lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]]), lib.tensor([[4.0, 5.0, 6.0]]))",
    "lib.cross(lib.arange(9.).reshape(3, 3), lib.ones(3, 3), dim=0)",
    "lib.arange(6.).reshape(3, 2).cross(lib.ones(3, 2))",
    "lib.linalg.cross(lib.ones(2, 1, 3), lib.ones(1, 4, 3))",
    "lib.linalg.cross(lib.tensor([1, 2, 3]), lib.tensor([4, 5, 7]))",
    "lib.linalg.cross(lib.ones(2, 3), lib.ones(2, 3).double())", "lib.linalg.cross(lib.ones(2, 3), lib.ones(3))",
    "lib.linalg.cross(lib.ones(2, 4), lib.ones(2, 4))", "lib.cross(lib.ones(2, 2), lib.ones(2, 2))",
    "lib.linalg.cross(lib.ones(3).bool(), lib.ones(3).bool())",
    "lib.linalg.cross(lib.ones(3), lib.ones(3), out=lib.empty(0))",
    "lib.cross(lib.ones(3), lib.ones(3), dim=0, out=lib.empty(3))",
    f"lib.rot90({X})", f"lib.rot90({X}, 2)", f"lib.rot90({X}, -1)", f"{X}.rot90(0)", f"lib.rot90({X}, 5, [1, 0])",
    "lib.rot90(lib.arange(24).reshape(2, 3, 4), 1, [0, 2])", f"lib.rot90({X}, 1, [0])", "lib.rot90(lib.ones(3), 1)",
    f"lib.rot90({X}, 1, [0, 0])", f"lib.rot90({X}, 1, [0, -2])", f"lib.rot90({X}, 1, [0, 2])",
    f"lib.block_diag({X}, lib.tensor(7), lib.tensor([1.0, 2.0]))", "lib.block_diag()",
    "lib.block_diag(lib.ones(2, 2, 2))", f"lib.block_diag(lib.zeros(0), {X})", "lib.block_diag(lib.tensor([1, 2]), "
    "lib.tensor([[True]]))", "lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5]))",
    "lib.cartesian_prod(lib.tensor([1.0, 2.0]))", f"lib.cartesian_prod({X})",
    "lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3.0]), lib.tensor([4, 5]))",
    # cdist
    "lib.cdist(lib.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, -1.5]]), lib.tensor([[1.0, 0.0], [3.0, 4.0]]))",
    "lib.cdist(lib.arange(12.).reshape(2, 3, 2) / 7, lib.arange(8.).reshape(4, 2) / 3, p=1)",
    "lib.cdist(lib.arange(12.).reshape(2, 3, 2) / 7, lib.arange(8.).reshape(4, 2) / 3, p=0)",
    "lib.cdist(lib.arange(12.).reshape(3, 4) / 7, lib.arange(8.).reshape(2, 4) / 3, p=float('inf'))",
    "lib.cdist(lib.arange(12.).reshape(3, 4).double() / 7, lib.arange(8.).reshape(2, 4).double() / 3, p=3)",
    "lib.cdist(lib.arange(12.).reshape(3, 4) / 7, lib.arange(8.).reshape(2, 4) / 3, p=0.5)",
    "lib.cdist(lib.ones(3, 0), lib.ones(2, 0))", "lib.cdist(lib.ones(0, 2), lib.ones(2, 2))",
    "lib.cdist(lib.ones(3), lib.ones(2, 3))", "lib.cdist(lib.ones(3, 2), lib.ones(2, 3))",
    "lib.cdist(lib.ones(3, 2), lib.ones(2, 2), p=-1)", "lib.cdist(lib.ones(3, 2, dtype=lib.long), lib.ones(2, 2))",
    "lib.cdist(lib.ones(3, 2), lib.ones(2, 2), compute_mode='fast')",
]


def _describe_any(lib, result):
    tensors = result if isinstance(result, tuple) and not isinstance(result, lib.Size) else (result,)
    if all(isinstance(t, lib.Tensor) for t in tensors):
        return _describe(result), type(result).__name__
    return repr(result).replace("internals", "torch")


def _run(lib, program):
    """A program's result (tensors described exactly), its warnings, or its error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval(program, {"lib": lib})
        except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
            # A NaN's sign bit is the CPU's accident (torch's generic build prints histc's NaN
            # range as "-nan", its AVX builds as "nan"): the message is compared without it.
            message = str(exc).replace("internals.", "torch.").replace("-nan", "nan")
            return "error", type(exc).__name__, message
    messages = [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught]
    return _describe_any(lib, result), messages


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


# ---------------------------------------------------------------------- gradients and nodes
def _i(lib, *values):
    return lib.tensor(list(values))


GRAD_CASES = {
    "index_fill": lambda lib, x, t: (x * t).index_fill(1, _i(lib, 0, 2), 3.0),
    "index_fill, a tensor value": lambda lib, x, t: (x * t).index_fill(1, _i(lib, 2, 0, 2), (t * t).sum()),
    "index_fill_": lambda lib, x, t: (x * t).index_fill_(0, _i(lib, -1), -1.0),
    "index_copy": lambda lib, x, t: (x * x).index_copy(1, _i(lib, 2, 0), t[:, :2] * t[:, 1:]),
    "index_copy_": lambda lib, x, t: (x * 2).index_copy_(0, _i(lib, 1), (t * x)[:1]),
    "masked_scatter": lambda lib, x, t: (x * x).masked_scatter(x > 0, (t * 3).reshape(-1)),
    "masked_scatter_": lambda lib, x, t: (x + 0).masked_scatter_(x < 1, t.t() * x.t()),
    "diff": lambda lib, x, t: lib.diff(x * x * t, 2, dim=1, prepend=t[:, :1]),
    "diff along 0": lambda lib, x, t: (x * t).diff(dim=0),
    "logcumsumexp": lambda lib, x, t: lib.logcumsumexp(x * t, 1),
    "logcumsumexp along 0": lambda lib, x, t: (x * x).logcumsumexp(0) * t,
    "ravel": lambda lib, x, t: (x * t).t().ravel(),
    "aminmax": lambda lib, x, t: lib.stack(lib.aminmax(x * t, dim=1)),
    "aminmax of all, min used": lambda lib, x, t: lib.aminmax(x * x * t).min,
    "aminmax, ties": lambda lib, x, t: lib.stack(lib.aminmax((x * 0 + 1) * t, dim=0, keepdim=True)),
    "tensordot": lambda lib, x, t: lib.tensordot(x * t, x.t(), 1),
    "tensordot over two dims": lambda lib, x, t: lib.tensordot(x, t, 2),
    "kron": lambda lib, x, t: lib.kron(x * t, t[:, :2]),
    "linalg.cross": lambda lib, x, t: lib.linalg.cross(x * x, t),
    "cross along 0": lambda lib, x, t: lib.cross(x.t() * t.t(), x.t(), dim=0),
    "rot90": lambda lib, x, t: lib.rot90(x * t),
    "rot90 twice": lambda lib, x, t: (x * t).rot90(2, [1, 0]),
    "msort": lambda lib, x, t: lib.msort(x * t),
    "column_stack": lambda lib, x, t: lib.column_stack([x * t, x[:, 0] * 2]),
    "dstack": lambda lib, x, t: lib.dstack([x * t, t]),
    "block_diag": lambda lib, x, t: lib.block_diag(x * t, x[0], t[1, 1]),
    "cartesian_prod": lambda lib, x, t: lib.cartesian_prod(x[0] * t[0], x[1]),
    "cdist, matrix products": lambda lib, x, t: lib.cdist(x * t, x + 1, compute_mode="use_mm_for_euclid_dist"),
    "cdist, matrix products for 26 rows": lambda lib, x, t: lib.cdist((x * t).repeat(13, 1), x.flip(0) * t),
}
# _cdist_forward's gradient has no derivative in torch (``not_implemented``): first order only
CDIST_CASES = {
    "p=2": lambda lib, x, t: lib.cdist(x * t, t.flip(1) * 2),
    "p=2, a zero distance": lambda lib, x, t: lib.cdist(x * t, (x * t)[:1]),
    "p=1, batched": lambda lib, x, t: lib.cdist((x * t).reshape(2, 1, 3), x + 1, p=1),
    "p=0": lambda lib, x, t: lib.cdist(x * t, x.flip(0), p=0),
    "p=0.5, a zero difference": lambda lib, x, t: lib.cdist(x * t, x.flip(0) * (t > 0.4), p=0.5),
    "p=1.5": lambda lib, x, t: lib.cdist(x * t, x.flip(0), p=1.5),
    "p=3": lambda lib, x, t: lib.cdist(x * t, x.flip(0), p=3),
    "p=inf": lambda lib, x, t: lib.cdist(x * t, x.flip(1), p=float("inf")),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """compare_gradients_and_nodes's comparison (t[0, 0] is 0.3 here); a second derivative may not reach x."""
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-12, allow_unused=True)


@pytest.mark.parametrize("name", list(CDIST_CASES))
def test_cdist_gradients(name):
    """Values, node names and both inputs' gradients of ``_cdist_forward`` (CdistBackward0), exact:
    its backward kernel sums each pair's share in torch's order. For p < 1 torch's backward takes
    SLEEF's vectorized ``pow`` (1-ulp), internals the C library's: the last bit may differ."""
    results = []
    for lib in (torch, internals):
        x = lib.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([[0.3, 1.0, 1.0], [0.2, 1.0, 0.5]], dtype=lib.float64, requires_grad=True)
        y = CDIST_CASES[name](lib, x, t)
        (y * lib.arange(1.0, y.numel() + 1, dtype=lib.float64).reshape(y.shape)).sum().backward()
        results.append((type(y.grad_fn).__name__, y.detach(), x.grad, t.grad))
    (node_t, *values_t), (node_i, *values_i) = results
    assert node_i == node_t
    rtol = 4.5e-16 if "p=0.5" in name else 0
    for ours, theirs in zip(values_i, values_t):
        assert_same(ours, theirs, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cdist_rounds_as_torchs_kernel(dtype):
    """p = 2 without matrix products: torch's compiled loop rounds each square of its vectorized
    blocks and fuses the multiply-add in the tail; every width of row gives torch's bits."""
    gen = torch.Generator().manual_seed(0)
    for m in (1, 2, 3, 5, 6, 7, 9, 13):
        a, b = torch.randn(9, m, generator=gen, dtype=dtype), torch.randn(7, m, generator=gen, dtype=dtype)
        ours = internals.cdist(internals.from_torch(a), internals.from_torch(b),
                               compute_mode="donot_use_mm_for_euclid_dist")
        assert_same(ours, torch.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"), rtol=0, atol=0)


# ---------------------------------------------------------------------- out= overloads
# Not here: randn(out=) and rand(generator=, out=), where torch's ``out`` counts two version bumps
# (internals one), and kron(out=), whose ``out`` torch writes through an ``_unsafe_view`` (no bump).
OUT_CASES = {
    "cumprod": "lib.cumprod(x + 1, 1, out=e(0))",
    "cumprod into float64": "lib.cumprod(x, 0, out=e(0, dtype=lib.float64))",
    "cumprod of ints into float": "lib.cumprod(l, 1, out=e(0))",
    "cumprod with a dtype into another": "lib.cumprod(x, 1, dtype=lib.float64, out=e(0))",
    "cumprod resized with a warning": "lib.cumprod(x, 1, out=e(4))",
    "kthvalue": "lib.kthvalue(x, 2, 1, out=(e(0), e(0, dtype=lib.long)))",
    "kthvalue keepdim": "lib.kthvalue(xt, 1, 0, True, out=(e(0), e(0, dtype=lib.long)))",
    "kthvalue into float64": "lib.kthvalue(x, 2, out=(e(0, dtype=lib.float64), e(0, dtype=lib.long)))",
    "median": "lib.median(x, 1, out=(e(0), e(0, dtype=lib.long)))",
    "median keepdim": "lib.median(m, 0, keepdim=True, out=(e(0), e(0, dtype=lib.long)))",
    "median indices as int": "lib.median(x, 1, out=(e(0), e(0, dtype=lib.int32)))",
    "median values as float64": "lib.median(x, 1, out=(e(0, dtype=lib.float64), e(0, dtype=lib.long)))",
    "kthvalue indices as int": "lib.kthvalue(x, 1, out=(e(0), e(0, dtype=lib.int32)))",
    "mode indices as int": "lib.mode(x, out=(e(0), e(0, dtype=lib.int32)))",
    "all into float": "lib.all(x, 1, out=e(0))", "all of ints into uint8": "lib.all(l, 1, out=e(0, dtype=lib.uint8))",
    "mode": "lib.mode(lib.tensor([[1, 2, 2], [3, 3, 1]]), 1, out=(e(0, dtype=lib.long), e(0, dtype=lib.long)))",
    "mode into float": "lib.mode(l, out=(e(0), e(0, dtype=lib.long)))",
    "any": "lib.any(x > 2, 1, out=e(0, dtype=lib.bool))", "any of all": "lib.any(x, out=e(0, dtype=lib.bool))",
    "any dims keepdim": "lib.any(x, (0, 1), keepdim=True, out=e(0, dtype=lib.bool))",
    "any into uint8": "lib.any(l, 0, out=e(0, dtype=lib.uint8))", "any into float": "lib.any(x, 0, out=e(0))",
    "all": "lib.all(x > 0, 0, out=e(0, dtype=lib.bool))", "all of all": "lib.all(x, out=e(0, dtype=lib.bool))",
    "all dims": "lib.all(x, [1], out=e(0, dtype=lib.bool))",
    "eye": "lib.eye(3, out=e(0))", "eye rectangular into long": "lib.eye(2, 4, out=e(0, dtype=lib.long))",
    "eye into a bigger out": "lib.eye(2, out=e(3, 3))", "eye negative": "lib.eye(-1, out=e(0))",
    "rand": "(lib.manual_seed(3), lib.rand(2, 3, out=e(0)))[1]",
    "rand of a size": "(lib.manual_seed(3), lib.rand((4,), out=e(0, dtype=lib.float64)))[1]",
    "randint": "(lib.manual_seed(3), lib.randint(10, (2, 3), out=e(0, dtype=lib.long)))[1]",
    "randint low": "(lib.manual_seed(3), lib.randint(-5, 5, (7,), out=e(0)))[1]",
    "randint, a generator": "lib.randint(3, 9, (4,), generator=lib.Generator().manual_seed(1), "
                            "out=e(0, dtype=lib.int32))",
    "randint_like": "(lib.manual_seed(3), lib.randint_like(x, 10))[1]",
    "randint_like low, dtype": "(lib.manual_seed(3), lib.randint_like(xt, -3, 3, dtype=lib.int16))[1]",
    "index_copy": "lib.index_copy(x, 1, i, g[:, :2], out=e(0))", "msort": "lib.msort(xt, out=e(0))",
    "diff": "lib.diff(x, append=g, out=e(0))", "logcumsumexp": "lib.logcumsumexp(x, 0, out=e(0))",
    "logcumsumexp into float64": "lib.logcumsumexp(x, 0, out=e(0, dtype=lib.float64))",
    "histc": "lib.histc(x, 4, out=e(0))", "aminmax": "lib.aminmax(x, dim=0, min=e(0), max=e(0))",
    "searchsorted": "lib.searchsorted(lib.tensor([1.0, 3.0]), x, out=e(0, dtype=lib.long))",
    "bucketize": "lib.bucketize(x, lib.tensor([1.0, 3.0]), out_int32=True, out=e(0, dtype=lib.int32))",
    "tensordot": "lib.tensordot(x, xt, 1, out=e(0))",
    "linalg.cross": "lib.linalg.cross(lib.ones(2, 3), x, out=e(0))", "cross": "lib.cross(g, x, dim=1, out=e(0))",
    "column_stack": "lib.column_stack([x, g], out=e(0))", "dstack": "lib.dstack([x, g], out=e(0))",
}


@pytest.mark.parametrize("program", list(OUT_CASES.values()), ids=list(OUT_CASES))
def test_out_variants(program):
    """As ``tests/aten/test_out_variants.py``: ``out`` returned, its dtype, sizes, strides, version
    bumps, warnings, errors, and the values."""
    expected, got = _run_out(torch, program), _run_out(internals, program)
    assert got == expected


# ---------------------------------------------------------------------- CUDA (simulated here)
CUDA_PROGRAMS = {
    "searchsorted": lambda lib, d: lib.searchsorted(lib.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], device=d),
                                                    lib.tensor([[3.0, 6.0], [1.0, 7.0]], device=d), right=True),
    "searchsorted, a sorter": lambda lib, d: lib.searchsorted(lib.tensor([5.0, 1.0, 3.0], device=d),
                                                              lib.tensor([2.0, 4.0, 9.0], device=d),
                                                              sorter=lib.tensor([1, 2, 0], device=d)),
    "bucketize": lambda lib, d: lib.bucketize(lib.arange(6, device=d), lib.tensor([1, 3, 3], device=d)),
    "logcumsumexp": lambda lib, d: lib.logcumsumexp(lib.arange(12.0, device=d).reshape(3, 4) / 3, 1),
    "cdist": lambda lib, d: lib.cdist(lib.arange(12.0, device=d).reshape(4, 3) / 7, lib.ones(2, 3, device=d)),
    "cdist, p=1.5": lambda lib, d: lib.cdist(lib.arange(12.0, device=d).reshape(4, 3) / 7, lib.ones(2, 3, device=d),
                                             p=1.5),
    "index_fill": lambda lib, d: lib.arange(6.0, device=d).reshape(2, 3).index_fill(1, lib.tensor([2], device=d), 0),
    "index_copy": lambda lib, d: lib.zeros(3, 2, device=d).index_copy(0, lib.tensor([2, 0], device=d),
                                                                    lib.ones(2, 2, device=d)),
    "masked_scatter": lambda lib, d: lib.zeros(2, 3, device=d).masked_scatter(
        lib.tensor([[True, False, True], [False, True, False]], device=d), lib.arange(5.0, device=d)),
    "histc": lambda lib, d: lib.histc(lib.arange(10.0, device=d), 4),
    "triu_indices": lambda lib, d: lib.triu_indices(3, 4, 1, device=d),
    "linalg.cross": lambda lib, d: lib.linalg.cross(lib.arange(6.0, device=d).reshape(2, 3), lib.ones(2, 3, device=d)),
}


# nvcc contracts ``a * b + c`` into one rounding; torch's x86-64 ``default`` CPU build rounds twice.
CUDA_VS_CPU = dict(rtol=0, atol=0) if fma_contracted() else dict(rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels_match_the_cpu_ones(name):
    """The CUDA kernels (simulated here) give the CPU kernels' values, which torch's CPU gives:
    bit for bit where torch's CPU build fuses multiply-adds as nvcc does, else within rounding."""
    ours = CUDA_PROGRAMS[name](internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), CUDA_PROGRAMS[name](torch, "cpu"), **CUDA_VS_CPU)


def test_cdist_backward_on_cuda():
    xt = (torch.arange(12.0).reshape(4, 3) / 7).requires_grad_()
    torch.cdist(xt, torch.ones(2, 3), p=3).sum().backward()
    x = (internals.arange(12.0).reshape(4, 3) / 7).to("cuda").requires_grad_()
    internals.cdist(x, internals.ones(2, 3, device="cuda"), p=3).sum().backward()
    assert_same(x.grad.cpu(), xt.grad, rtol=0, atol=0)


# ---------------------------------------------------------------------- OpInfo samples
# Matrix products (tensordot, cdist's products): torch's BLAS sums in another order.
MM_TOL = {torch.float32: (1.3e-6, 1e-4), torch.float64: (1e-12, 1e-12)}
ADAPTERS = {
    "index_fill": Adapter(internals.index_fill, "index_fill"),
    "index_copy": Adapter(internals.index_copy, "index_copy"),
    "masked_scatter": Adapter(internals.masked_scatter, "masked_scatter"),
    "diff": Adapter(internals.diff, "diff", kwargs=("n", "dim", "prepend", "append")),
    "histc": Adapter(internals.histc, "histc", kwargs=("bins", "min", "max")),
    "logcumsumexp": Adapter(internals.logcumsumexp, "logcumsumexp"),
    "ravel": Adapter(internals.ravel, "ravel"),
    "aminmax": Adapter(internals.aminmax, "aminmax", kwargs=("dim", "keepdim")),
    "searchsorted": Adapter(internals.searchsorted, kwargs=("out_int32", "right", "side", "sorter")),
    "bucketize": Adapter(internals.bucketize, kwargs=("out_int32", "right")),
    "tensordot": Adapter(internals.tensordot, kwargs=("dims",), tol=MM_TOL),
    "cross": Adapter(internals.cross, "cross", kwargs=("dim",)),
    "linalg.cross": Adapter(internals.linalg.cross, kwargs=("dim",)),
    "rot90": Adapter(internals.rot90, "rot90"),
    "msort": Adapter(internals.msort, "msort"),
    "column_stack": Adapter(internals.column_stack),
    "dstack": Adapter(internals.dstack),
    "kron": Adapter(internals.kron, "kron"),
    "block_diag": Adapter(lambda *tensors: internals.block_diag(*tensors)),
    "cartesian_prod": Adapter(lambda *tensors: internals.cartesian_prod(*tensors)),
    "cdist": Adapter(internals.cdist, kwargs=("p", "compute_mode"), tol=MM_TOL),
}
OPINFO_CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cross_rounds_as_torchs_kernel(dtype):
    """Each component is ``a_j * b_k - a_k * b_j`` with the first product fused where torch's
    compiled kernel fuses it (both products rounded on x86-64 ``default``): random values, along the
    last dim and along a strided first dim, on CPU and CUDA."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(40, 3, generator=gen, dtype=dtype), torch.randn(40, 3, generator=gen, dtype=dtype)
    x, y = internals.from_torch(a), internals.from_torch(b)
    assert_same(internals.linalg.cross(x, y), torch.linalg.cross(a, b), rtol=0, atol=0)
    assert_same(internals.cross(x.t(), y.t(), dim=0), torch.cross(a.t(), b.t(), dim=0), rtol=0, atol=0)
    assert_same(internals.linalg.cross(x[:4].cuda(), y[:4].cuda()).cpu(), torch.linalg.cross(a[:4], b[:4]),
                **CUDA_VS_CPU)


# ---------------------------------------------------------------- index_copy, declared structured
@pytest.mark.parametrize("name", ["index_copy", "index_copy_"])
def test_index_copy_is_derived_from_its_structured_out(name):
    assert_derived_from_structured_out(name, "out", indexing)


def _index_copy_operands(L):
    return L.arange(12.).reshape(3, 4), L.tensor([3, 0]), L.arange(6.).reshape(3, 2) - 9


INDEX_COPY_OUT_CASES = {
    "into an empty out": lambda L, x, i, s: L.index_copy(x, 1, i, s, out=L.empty(0)),
    "resized, warns": lambda L, x, i, s: L.index_copy(x, 1, i, s, out=L.empty(5)),
    "keeps out's strides": lambda L, x, i, s: L.index_copy(x, 1, i, s, out=L.empty(4, 3).t()),
    "into self": lambda L, x, i, s: L.index_copy(x, 1, i, s, out=x),
    "a 0-d source": lambda L, x, i, s: L.index_copy(x[0], 0, i[:1], L.tensor(7.), out=L.empty(0)),
}


@pytest.mark.parametrize("case", INDEX_COPY_OUT_CASES)
def test_index_copy_out_matches_torch(case):
    assert_out_variant_matches_torch(lambda L: INDEX_COPY_OUT_CASES[case](L, *_index_copy_operands(L)))


INDEX_COPY_OUT_ERRORS = {
    "out of another dtype": lambda L, x, i, s: L.index_copy(x, 1, i, s, out=L.empty(0, dtype=L.int64)),
    "out is the index": lambda L, x, i, s: L.index_copy(i, 0, i[:1], i[1:], out=i),
    "out overlaps itself": lambda L, x, i, s: L.index_copy(x, 1, i, s, out=L.empty(1).expand(3, 4)),
    # a source that partly overlaps (a non-dense one would be too hard for torch's check to tell)
    "in place over its source": lambda L, x, i, s: (lambda v: v.index_copy_(0, i, v[4:6]))(x.reshape(-1)),
    "an index out of range into out": lambda L, x, i, s: L.index_copy(x, 1, i + 1, s, out=L.empty(0)),
    "a source of another dtype into out": lambda L, x, i, s: L.index_copy(x, 1, i, s.double(), out=L.empty(0)),
}


@pytest.mark.parametrize("case", INDEX_COPY_OUT_ERRORS)
def test_index_copy_out_errors(case):
    same_error(lambda L: INDEX_COPY_OUT_ERRORS[case](L, *_index_copy_operands(L)))


def test_index_copy_meta_step_lays_out_fakes():
    assert_fake_matches_real(lambda L, x, i, s: x.index_copy_(1, i, s), lambda: _index_copy_operands(internals))
