"""addcmul and addcdiv (``PointwiseOps.cpp``), and lerp (``Lerp.cpp``), compared with torch: OpInfo samples, the bits of
each floating dtype (hypothesis; lerp's too, the optimizers' third fused update), type promotion,
out= and in-place variants, errors, gradients and nodes (first and second order), and the
operators a logging mode sees."""
import warnings

import hypothesis
import hypothesis.strategies as st
import pytest
import torch
from helpers import (
    FLOAT_DTYPES,
    TORCH_DTYPES,
    Adapter,
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    check_opinfo_samples,
    logging_modes,
    native_entries,
    opinfo_cases,
    same_or_same_error,
)

import internals
from internals.aten import dispatcher
from internals.aten.native import binary_ops, pointwise_ops
from internals.c10.dispatch_key import DispatchKey

ADAPTERS = {name: Adapter(getattr(internals, name), name, kwargs=("value",)) for name in ("addcmul", "addcdiv")}
# Real dtypes are compared bit for bit (torch's kernel and ours round the same operations);
# complex products may differ in the last bit, with assert_close's default tolerance.
EXACT = {dtype: (0, 0) for dtype in TORCH_DTYPES if not dtype.is_complex}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, TORCH_DTYPES))
def test_opinfo_samples(name, dtype):
    adapter = Adapter(ADAPTERS[name].ours, name, kwargs=("value",), tol=EXACT)
    check_opinfo_samples(name, dtype, adapter)


FINITE = st.floats(-1e3, 1e3, allow_nan=False, width=16)      # representable in every float dtype


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(name=st.sampled_from(["addcmul", "addcdiv"]), dtype=st.sampled_from(FLOAT_DTYPES),
                  values=st.lists(st.tuples(FINITE, FINITE, FINITE), min_size=1, max_size=40),
                  value=st.floats(-10, 10, allow_nan=False), in_place=st.booleans())
def test_bits_match_torch(name, dtype, values, value, in_place):
    """``self + value * t1 * t2`` (one fma) and ``self + value * t1 / t2``, in the opmath type
    with ``value`` rounded to it, one rounding to the 16-bit types: torch's bits, on the vector
    loop's lanes and on its scalar tail (up to 40 elements: a whole vector and a remainder)."""
    def run(lib):
        s, t1, t2 = (lib.tensor(column, dtype=getattr(lib, str(dtype)[6:])) for column in zip(*values))
        op = getattr(s, name + "_") if in_place else (lambda *a, **k: getattr(lib, name)(s, *a, **k))
        return op(t1, t2, value=value)
    assert_same(run(internals), run(torch), rtol=0, atol=0)


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(dtype=st.sampled_from(FLOAT_DTYPES),
                  values=st.lists(st.tuples(FINITE, FINITE), min_size=1, max_size=40),
                  weight=st.floats(-2, 2, allow_nan=False), in_place=st.booleans())
def test_lerp_scalar_bits_match_torch(dtype, values, weight, in_place):
    """``lerp.Scalar``, the optimizers' running average: one fma from the nearer end (``lerp_vec``)."""
    def run(lib):
        start, end = (lib.tensor(column, dtype=getattr(lib, str(dtype)[6:])) for column in zip(*values))
        return start.lerp_(end, weight) if in_place else lib.lerp(start, end, weight)
    assert_same(run(internals), run(torch), rtol=0, atol=0)


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(dtype=st.sampled_from(FLOAT_DTYPES),
                  values=st.lists(st.tuples(FINITE, FINITE, st.floats(-2, 2, allow_nan=False, width=16)),
                                  min_size=1, max_size=40),
                  in_place=st.booleans())
def test_lerp_tensor_bits_match_torch(dtype, values, in_place):
    """``lerp.Tensor``, a weight per element: the same fma from the nearer end, in the opmath type."""
    def run(lib):
        start, end, weight = (lib.tensor(column, dtype=getattr(lib, str(dtype)[6:])) for column in zip(*values))
        return start.lerp_(end, weight) if in_place else lib.lerp(start, end, weight)
    assert_same(run(internals), run(torch), rtol=0, atol=0)


PROGRAMS = [
    # type promotion across the three inputs; a 0-dim tensor and a wrapped number take part as usual
    "lib.addcmul(lib.arange(3), lib.arange(3), lib.arange(3), value=2)",
    "lib.addcmul(lib.arange(3), lib.arange(3), lib.arange(3), value=0.5)",
    "lib.addcmul(lib.arange(3), lib.ones(3), lib.arange(3))",
    "lib.addcmul(lib.ones(3), lib.ones(3), lib.tensor(2.5, dtype=lib.float64))",
    "lib.addcmul(lib.ones(3, dtype=lib.float16), lib.ones(3, dtype=lib.float16), lib.tensor(2.5, dtype=lib.float64))",
    "lib.addcmul(lib.ones(3, dtype=lib.float16), lib.ones(3), lib.ones(3), value=1e-4)",
    "lib.addcdiv(lib.arange(3), lib.ones(3), lib.arange(3))",
    "lib.addcdiv(lib.ones(3), lib.arange(3.), lib.arange(3))",
    "lib.addcdiv(lib.ones(3), lib.zeros(3), lib.zeros(3))",
    "lib.addcmul(lib.ones(2, 1, 3), lib.arange(3.), lib.ones(4, 1), value=-1.5)",
    "lib.addcmul(lib.ones(3, 2).t(), lib.ones(2, 3), lib.ones(2, 3))",
    "lib.addcdiv(lib.ones(3), lib.arange(3.), lib.arange(1., 4.), value=True)",
    "lib.ones(2, 3).addcmul(lib.arange(3.), lib.arange(3.), value=3)",
    "lib.ones(2, 3).addcdiv(lib.arange(3.), lib.arange(1., 4.), value=3)",
    # in place: self keeps its dtype and layout, and must hold the broadcast shape
    "lib.ones(2, 3).addcmul_(lib.arange(3.), lib.arange(3.), value=0.5)",
    "lib.ones(3, 2).t().addcdiv_(lib.arange(3.), lib.arange(1., 4.))",
    "lib.ones(3, dtype=lib.float64).addcmul_(lib.ones(3), lib.ones(3, dtype=lib.float16), value=0.1)",
    "lib.ones(3).addcmul_(lib.ones(2, 3), lib.ones(3))",
    "lib.arange(3).addcmul_(lib.ones(3), lib.ones(3))",
    # out=: cast to a wider out, resized when empty, refused when the result cannot be cast into it
    "lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3), value=2, out=lib.empty(3, dtype=lib.float64))",
    "lib.addcdiv(lib.ones(2, 3), lib.ones(3), lib.ones(3), out=lib.empty(0))",
    "lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3), out=lib.empty(3, dtype=lib.int64))",
    "lib.addcdiv(lib.ones(3), lib.ones(3), lib.ones(3), out=lib.empty(3, dtype=lib.float16))",
    # errors: torch's classes and messages
    "lib.addcdiv(lib.ones(3), lib.arange(3), lib.arange(3))",
    "lib.addcdiv(lib.arange(3), lib.arange(3), lib.ones(3, dtype=lib.bool))",
    "lib.addcmul(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool))",
    "lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3), value=1j)",
    "lib.addcmul(lib.ones(3, dtype=lib.int8), lib.ones(3, dtype=lib.int8), lib.ones(3, dtype=lib.int8), value=300)",
    "lib.addcmul(lib.ones(3), lib.ones(2), lib.ones(3))",
    "lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3), 2)",
    "(lambda x: lib.addcmul(x, x, x, out=x[1:]))(lib.ones(4))",
    # lerp: end (and a weight that is not 0-dim) of the input's dtype; a 0-dim weight is promoted
    "lib.lerp(lib.ones(3), lib.zeros(3), lib.tensor(0.5, dtype=lib.float64))",
    "lib.lerp(lib.ones(3), lib.arange(3.), lib.tensor(0.5j))",
    "lib.lerp(lib.ones(3), lib.ones(3), lib.ones(3), out=lib.empty(3, dtype=lib.float64))",
    "lib.lerp(lib.ones(3), lib.ones(3), lib.tensor([0.5], dtype=lib.float64))",
    "lib.lerp(lib.ones(3), lib.ones(3, dtype=lib.float64), 0.5)",
    "lib.lerp(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64), lib.tensor(1))",
    "lib.lerp(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64), 1)",
    "lib.ones(3).lerp_(lib.ones(3), lib.tensor(0.5j))",
    "lib.ones(3).lerp_(lib.ones(2, 3), lib.tensor(0.5))",
    "lib.lerp(lib.tensor([1+2j, 3j]), lib.tensor([2j, 1+0j]), lib.tensor([0.2+0.1j, 0.9-0.4j]))",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_calls_match_torch(program):
    same_or_same_error(lambda lib: eval(program, {"lib": lib}))


def test_resized_out_warns_as_torch():
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3), out=lib.empty(2))
        return [(w.category, str(w.message).split(" (Triggered")[0]) for w in caught]
    ours, theirs = run(internals), run(torch)
    assert [str(m) for _, m in ours] == [str(m) for _, m in theirs] and len(ours) == 1


GRAD_CASES = {
    "addcmul": lambda lib, s, a, b: lib.addcmul(s, a, b),
    "addcmul, value and broadcasting": lambda lib, s, a, b: lib.addcmul(s, a[0], b[:, :1], value=-0.75),
    "addcdiv": lambda lib, s, a, b: lib.addcdiv(s, a, b),
    "addcdiv, value and broadcasting": lambda lib, s, a, b: lib.addcdiv(s[:1], a, b[:, 2:], value=2.5),
    "addcmul_ of a clone": lambda lib, s, a, b: (s * 1).addcmul_(a, b, value=3),
    "addcdiv_ of a clone": lambda lib, s, a, b: (s * 1).addcdiv_(a, b, value=0.5),
    # rsub.Tensor: other - alpha * self, both operands differentiable (a 0-d other included: the
    # binding takes the Tensor overload first, as torch's)
    "rsub of two tensors": lambda lib, s, a, b: lib.rsub(s, a * b, alpha=0.5),
    "rsub, a 0-d other": lambda lib, s, a, b: lib.rsub(s * b, a.sum()),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """AddcmulBackward0 / AddcdivBackward0 / RsubBackward0 with torch's gradients, first and second order."""
    results = []
    for lib in (torch, internals):
        s, a, b = (lib.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=lib.float64) * k + c
                   for k, c in ((1, 0), (0.5, 1), (-1, 4)))
        leaves = [t.requires_grad_() for t in (s, a, b)]
        y = GRAD_CASES[name](lib, *leaves)
        grads = lib.autograd.grad((y * y).sum(), leaves, create_graph=True)
        second = lib.autograd.grad(sum(g.sum() for g in grads), leaves)
        results.append((type(y.grad_fn).__name__, *grads, *second))
    (node_t, *values_t), (node_i, *values_i) = results
    assert node_i == node_t
    for ours, theirs in zip(values_i, values_t):
        assert_same(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_gradcheck(name):
    internals.manual_seed(0)
    args = [(internals.rand(2, 3, dtype=internals.float64) + 0.5).requires_grad_() for _ in range(3)]
    assert internals.autograd.gradcheck(lambda s, a, b: getattr(internals, name)(s, a, b, value=0.7), args)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_cuda_matches_cpu(name):
    """The same ternary loop on internals' cuda device (simulated here) gives the CPU's values."""
    torch.manual_seed(0)
    s, a, b = (torch.randn(3, 5) for _ in range(3))
    cpu = getattr(torch, name)(s, a, b, value=0.3)
    cuda = getattr(internals, name)(*(internals.from_torch(t).cuda() for t in (s, a, b)), value=0.3)
    assert cuda.device.type == "cuda"
    torch.testing.assert_close(cuda.cpu().to_torch(), cpu)


def test_logged_operators():
    """Forward, in place, out= and backward: the operators a logging mode sees are torch's."""
    def program(lib):
        s = lib.ones(2, 3, requires_grad=True)
        a, b = lib.full((3,), 2.0, requires_grad=True), lib.full((2, 1), 3.0, requires_grad=True)
        (lib.addcmul(s, a, b, value=0.5) + lib.addcdiv(s, a, b, value=2)).sum().backward()
        lib.addcmul(s.detach(), a.detach(), b.detach(), out=lib.empty(2, 3))
        return lib.ones(3).addcdiv_(lib.ones(3), lib.full((3,), 2.0), value=-1)

    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    with mode_t:
        theirs = program(torch)
    with mode_i:
        ours = program(internals)
    assert log_i == log_t
    assert_same(ours, theirs)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv", "lerp.Scalar", "lerp.Tensor"])
def test_declared_structured_as_torch_declares_them(name):
    """``addcmul.out`` is the primary kernel (a meta and an impl step); the functional and in-place
    forms are derived from it, as torchgen derives them from ``structured_delegate:``."""
    if name.startswith("lerp"):
        overload = name.split(".")[1]
        entries = native_entries()
        out = dispatcher.find(f"lerp.{overload}_out").table[DispatchKey.CPU][0].fn
        assert entries[f"lerp.{overload}_out"]["structured"] and out.meta.__module__ == binary_ops.__name__
        for derived in (name, f"lerp_.{overload}"):
            assert entries[derived]["structured_delegate"] == f"lerp.{overload}_out"
            assert dispatcher.find(derived).table[DispatchKey.CPU][0].fn.__wrapped__ is out.meta
        return
    assert_derived_from_structured_out(name, "out", pointwise_ops)
    assert native_entries()[name + "_"]["structured_delegate"] == name + ".out"


STRUCTURED_OUT_CASES = {
    "resized, laid out as the transposed inputs": lambda L: L.addcmul(
        L.ones(3, 2).t(), L.arange(6.).reshape(3, 2).t(), L.ones(3, 2).t(), value=2, out=L.empty(5)),
    "kept strides": lambda L: L.addcdiv(L.ones(2, 3), L.arange(6.).reshape(2, 3), L.full((3,), 4.),
                                        out=L.empty(3, 2).t()),
    "lerp resized, laid out as the inputs": lambda L: L.lerp(
        L.ones(3, 2).t(), L.arange(6.).reshape(3, 2).t(), L.linspace(-1, 2, 6).reshape(3, 2).t(), out=L.empty(5)),
    "lerp by a number into an empty out": lambda L: L.lerp(L.tensor([1., 2.]), L.tensor([3., 5.]), 0.25,
                                                           out=L.empty(0)),
    "lerp by a 0-dim weight into a wider out": lambda L: L.lerp(L.ones(3), L.arange(3.), L.tensor(0.5, dtype=L.float64),
                                                                out=L.empty(3, dtype=L.float64)),
    "cast to a wider out, broadcast": lambda L: L.addcmul(L.ones(3, dtype=L.float16), L.ones(2, 1),
                                                          L.arange(3.), out=L.empty(0, dtype=L.float64)),
}


@pytest.mark.parametrize("case", STRUCTURED_OUT_CASES)
def test_structured_out_matches_torch(case):
    assert_out_variant_matches_torch(STRUCTURED_OUT_CASES[case])


FAKE_PROGRAMS = {
    "addcmul": lambda L, x, y: L.addcmul(x.t(), y[:, None], y[:, None], value=2),
    "addcdiv out resized": lambda L, x, y: L.addcdiv(x, y, x, out=L.empty(0, dtype=L.float64)),
    "addcmul_": lambda L, x, y: x.addcmul_(y, y),
    "lerp.Tensor": lambda L, x, y: L.lerp(x.t(), x.t(), y[:, None]),
    "lerp.Scalar out resized": lambda L, x, y: L.lerp(x, y, 0.3, out=L.empty(5)),
    "lerp_ by a complex 0-dim weight": lambda L, x, y: L.lerp(x, y, L.tensor(0.5j)),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_run_the_meta_step(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program],
                             lambda: (internals.arange(12.).reshape(4, 3), internals.ones(3)))
