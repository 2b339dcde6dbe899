"""Same seed, same numbers: internals' random functions against torch's, bit for bit.

After ``manual_seed(s)`` in both libraries, any sequence of random calls must give exactly
torch's values (checked with rtol = atol = 0), and leave both generators in the same state (the
next draw agrees, and ``get_state`` bytes are equal). Hypothesis picks the calls, sizes (around
16, where ``randn`` changes algorithm), dtypes, ``generator=`` arguments and strided outputs.

Platform note: the expected values are torch 2.13's CPU wheel on the machine that runs the tests,
with whichever build of its kernels it picks there (``test_cpu_capability.py`` forces each
x86-64 build in turn). ``bernoulli_(float p)`` follows torch's portable kernel on every CPU:
older wheels drew it from MKL's own stream on Intel CPUs, the 2.13 wheel has no such path (its
``libtorch_cpu`` links no ``viRngBernoulli``), and its draws equal the portable kernel's there.
"""
import threading

import numpy as np
import pytest
import torch
from helpers import assert_same, assert_same_error
from hypothesis import given, settings
from hypothesis import strategies as hst

import internals
from internals.aten import dispatcher
from internals.aten.native import distributions

DTYPES = ["float32", "float64", "float16", "bfloat16"]
SIZES = hst.sampled_from([1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 40])


def same(ours, theirs):
    assert_same(ours, theirs, rtol=0, atol=0)


def both(seed):
    internals.manual_seed(seed)
    torch.manual_seed(seed)


def gens(seed):
    return internals.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------------- the generator
def test_engine_words_match_torch():
    g, t = gens(123)
    with g._lock:
        words = g.random(3000)     # crosses the 624-word regeneration several times
    assert np.array_equal(words % (1 << 31), torch.empty(3000, dtype=torch.int32).random_(generator=t).numpy())


def test_state_bytes_cross_both_ways():
    g, t = gens(5)
    internals.randn(3, generator=g)      # leaves a cached normal sample in the state
    torch.randn(3, generator=t)
    assert torch.equal(g.get_state().to_torch(), t.get_state())
    t2 = torch.Generator().set_state(g.get_state().to_torch())
    g2 = internals.Generator().set_state(internals.from_torch(t.get_state()))
    same(internals.randn(5, generator=g2), torch.randn(5, generator=t2))
    same(internals.rand(5, generator=g), torch.rand(5, generator=t))


def test_seed_api():
    g = internals.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert g.manual_seed(-1).initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    s = g.seed()
    assert g.initial_seed() == s
    internals.manual_seed(11)
    assert internals.initial_seed() == 11
    state = internals.get_rng_state()
    a = internals.rand(4)
    internals.set_rng_state(state)
    same(internals.rand(4), a.to_torch())


@pytest.mark.parametrize("kwargs", [{}, {"devices": []}, {"enabled": False}, {"device_type": "meta"}])
def test_fork_rng_puts_the_generators_back_as_torch(kwargs):
    """``torch.random.fork_rng``: draws inside the block leave the default generator where it
    was before it (unless disabled, or for the meta device, which has no generator)."""
    results = []
    for lib in (torch, internals):
        lib.manual_seed(11)
        with lib.random.fork_rng(**kwargs):
            lib.manual_seed(3)
            inside = lib.rand(3).tolist()
        results.append((inside, lib.rand(2).tolist()))
    assert results[1] == results[0]
    assert_same_error(lambda: internals.random.fork_rng(device_type="nosuch").__enter__(),
                      lambda: torch.random.fork_rng(device_type="nosuch").__enter__())

def test_bad_states_are_refused():
    g = internals.Generator()
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056"):
        g.set_state(internals.zeros(10, dtype=internals.uint8))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(internals.zeros(5056, dtype=internals.uint8))
    with pytest.raises(TypeError):
        g.set_state(internals.zeros(5056))


def test_generator_is_thread_safe():
    """Two threads drawing at once each get a whole block of consecutive words: together exactly
    the words one thread would have drawn, in two runs of 5000."""
    g = internals.Generator().manual_seed(0)
    results = {}

    def draw(name):
        results[name] = internals.empty(5000, dtype=internals.int32).random_(generator=g).numpy()

    threads = [threading.Thread(target=draw, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = torch.empty(10000, dtype=torch.int32).random_(generator=torch.Generator().manual_seed(0)).numpy()
    first, second = (results["a"], results["b"]) if results["a"][0] == expected[0] else (results["b"], results["a"])
    assert np.array_equal(np.concatenate([first, second]), expected)


# ---------------------------------------------------------------------- each distribution
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 5, 15, 16, 17, 32, 33, 100])
def test_randn_both_paths(n, dtype):
    both(n)
    for _ in range(2):       # the second call starts from the scalar path's cached sample
        same(internals.randn(n, dtype=getattr(internals, dtype)), torch.randn(n, dtype=getattr(torch, dtype)))
    same(internals.randn(3), torch.randn(3))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [1, 3, 8, 9, 20])
def test_complex_randn_draws_both_parts_as_one_real_tensor(n, dtype):
    """torch fills a complex tensor through its real view (twice the length, so 8 complex values
    take the 16-value vector path and 7 the scalar one), each part with std/sqrt(2)."""
    both(2)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    same(internals.randn(n, dtype=di), torch.randn(n, dtype=dt))
    same(internals.empty(n, dtype=di).normal_(0.5, 3.0), torch.empty(n, dtype=dt).normal_(0.5, 3.0))
    same(internals.randn_like(internals.zeros(2, n, dtype=di).t()), torch.randn_like(torch.zeros(2, n, dtype=dt).t()))


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "complex32"])
def test_complex_uniform_draws_both_parts_as_one_real_tensor(dtype):
    """rand, rand_like and uniform_ of a complex tensor fill its real view: real and imaginary
    parts in turn from one stream, each in [from, to), and the generator left where torch's is."""
    both(4)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)

    def widened(ours, theirs):      # no comparison runs on complex32: each compared as complex64
        same(ours.to(internals.complex64), theirs.to(torch.complex64))
        assert ours.dtype == di and theirs.dtype == dt and ours.stride() == theirs.stride()
    widened(internals.rand(5, dtype=di), torch.rand(5, dtype=dt))
    widened(internals.empty(9, dtype=di).uniform_(-2.5, 4.0), torch.empty(9, dtype=dt).uniform_(-2.5, 4.0))
    widened(internals.rand_like(internals.zeros(2, 3, dtype=di).t()), torch.rand_like(torch.zeros(2, 3, dtype=dt).t()))
    same(internals.rand(3), torch.rand(3))


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3, dtype=lib.complex64).uniform_(2.0, 1.0),
    lambda lib: lib.empty(3, dtype=lib.complex32).uniform_(0.0, 1e6),
    lambda lib: lib.empty(3, dtype=lib.complex64).bernoulli_(0.5),
    lambda lib: lib.empty(3, dtype=lib.complex64).bernoulli_(1.5),
    lambda lib: lib.bernoulli(lib.full((3,), 0.5, dtype=lib.complex64)),
    lambda lib: lib.empty(3).bernoulli_(lib.full((3,), 0.5, dtype=lib.complex128)),
    lambda lib: lib.nn.functional.dropout(lib.ones(4, dtype=lib.complex64), 0.5),
    lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 2, 2, dtype=lib.complex64), 0.5),
    lambda lib: lib.empty(3, dtype=lib.complex64).random_(),
    lambda lib: lib.empty(3, dtype=lib.complex64).random_(5),
    lambda lib: lib.empty(0, dtype=lib.complex64).random_(1, 5),
    lambda lib: lib.empty(3, dtype=lib.complex64).random_(5, 1),
    lambda lib: lib.empty(3, dtype=lib.complex64).random_(1, None),
    lambda lib: lib.empty(3, dtype=lib.complex64).random_(-(1 << 63), None),
    lambda lib: lib.randint(0, 5, (3,), dtype=lib.complex64),
    lambda lib: lib.randint_like(lib.zeros(3, dtype=lib.complex128), 5),
    lambda lib: lib.randperm(0, dtype=lib.complex64),
    lambda lib: lib.normal(0.0, lib.ones(3, dtype=lib.complex64)),
    lambda lib: lib.normal(lib.zeros(3, dtype=lib.complex64), lib.ones(3, dtype=lib.complex64)),
    lambda lib: lib.empty(3, dtype=lib.complex64).exponential_(),
])
def test_complex_fills_torch_refuses_raise_its_error(call):
    ours, theirs = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(0, dtype=lib.complex64).bernoulli_(0.5),
    lambda lib: lib.empty(0, dtype=lib.complex64).random_(),
    lambda lib: lib.empty(0, dtype=lib.complex64).exponential_(),
    lambda lib: lib.nn.functional.dropout(lib.ones(2, dtype=lib.complex64), 1.0),
    lambda lib: lib.normal(lib.zeros(3, dtype=lib.complex64), lib.ones(3)),
])
def test_complex_fills_torch_accepts(call):
    """An empty tensor reaches no kernel, so no dtype check; a certain dropout draws nothing."""
    both(5)
    same(call(internals), call(torch))


@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform_and_normal_with_parameters(dtype):
    both(1)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    same(internals.empty(37, dtype=di).uniform_(-3.7, 2.1), torch.empty(37, dtype=dt).uniform_(-3.7, 2.1))
    same(internals.empty(37, dtype=di).normal_(1.5, 0.3), torch.empty(37, dtype=dt).normal_(1.5, 0.3))
    same(internals.empty(9, dtype=di).normal_(-2.0, 4.0), torch.empty(9, dtype=dt).normal_(-2.0, 4.0))
    same(internals.empty(20, dtype=di).exponential_(0.5), torch.empty(20, dtype=dt).exponential_(0.5))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", *DTYPES])
def test_random_(dtype):
    both(2)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    same(internals.empty(25, dtype=di).random_(), torch.empty(25, dtype=dt).random_())
    same(internals.empty(25, dtype=di).random_(2), torch.empty(25, dtype=dt).random_(2))
    if dtype != "bool":
        same(internals.empty(25, dtype=di).random_(3, 100), torch.empty(25, dtype=dt).random_(3, 100))
        same(internals.empty(25, dtype=di).random_(5), torch.empty(25, dtype=dt).random_(5))
    if dtype in ("int64", "float32", "float64", "bfloat16"):
        lo = -(1 << 63)
        same(internals.empty(9, dtype=di).random_(lo, None), torch.empty(9, dtype=dt).random_(lo, None))


# cauchy_ (tan) and log_normal_ (exp) end in a C library function: their last bit follows the
# machine's libm, so they are compared within LIBM_ULPS; the draws (and so the generator state after
# them) are exact, and so are geometric_'s and poisson's whole numbers.
LIBM_ULPS = 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_cauchy_(dtype):
    both(11)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    assert_same(internals.empty(41, dtype=di).cauchy_(), torch.empty(41, dtype=dt).cauchy_(), ulps=LIBM_ULPS)
    assert_same(internals.empty(5, 8, dtype=di).t().cauchy_(-1.5, 0.25),
                torch.empty(5, 8, dtype=dt).t().cauchy_(-1.5, 0.25), ulps=LIBM_ULPS)
    g, t = gens(12)
    assert_same(internals.empty(9, dtype=di).cauchy_(2.0, 3.0, generator=g),
                torch.empty(9, dtype=dt).cauchy_(2.0, 3.0, generator=t), ulps=LIBM_ULPS)
    same(internals.rand(3), torch.rand(3))
    assert torch.equal(g.get_state().to_torch(), t.get_state())


@pytest.mark.parametrize("dtype", DTYPES)
def test_log_normal_shares_the_kept_normal_with_normal_(dtype):
    """log_normal_ draws Box-Muller pairs as the scalar normal_ path does, whatever its size, and
    the second normal of a pair is kept in the generator for the next normal or log-normal."""
    both(13)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    assert_same(internals.empty(40, dtype=di).log_normal_(), torch.empty(40, dtype=dt).log_normal_(),
                ulps=LIBM_ULPS)
    assert_same(internals.empty(7, dtype=di).log_normal_(0.5, 0.25), torch.empty(7, dtype=dt).log_normal_(0.5, 0.25),
                ulps=LIBM_ULPS)
    same(internals.empty(3, dtype=di).normal_(), torch.empty(3, dtype=dt).normal_())
    assert_same(internals.empty(4, 3, dtype=di).t().log_normal_(-1.0, 0.5),
                torch.empty(4, 3, dtype=dt).t().log_normal_(-1.0, 0.5), ulps=LIBM_ULPS)
    assert torch.equal(internals.get_rng_state().to_torch(), torch.get_rng_state())


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", *DTYPES])
def test_geometric_(dtype):
    both(14)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    for p in (0.5, 0.05, 0.9):
        same(internals.empty(33, dtype=di).geometric_(p), torch.empty(33, dtype=dt).geometric_(p))
    same(internals.empty(6, 5, dtype=di).t().geometric_(0.3), torch.empty(6, 5, dtype=dt).t().geometric_(0.3))
    same(internals.rand(3), torch.rand(3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_poisson(dtype):
    """Small rates take Knuth's product of uniforms, rates of 10 and more Hoermann's rejection
    loop: how many words a sample draws depends on the draws, and the stream must stay in step."""
    both(15)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    rates = [0.0, 0.3, 2.5, 9.9, 10.0, 37.0, 500.0, 1e5]
    ri, rt = internals.tensor(rates * 5, dtype=di), torch.tensor(rates * 5, dtype=dt)
    same(internals.poisson(ri), torch.poisson(rt))
    same(internals.poisson(ri.reshape(5, 8).t()), torch.poisson(rt.reshape(5, 8).t()))
    g, t = gens(16)
    same(internals.poisson(ri, g), torch.poisson(rt, t))
    same(internals.poisson(ri, generator=g), torch.poisson(rt, generator=t))
    same(internals.rand(3), torch.rand(3))
    assert torch.equal(g.get_state().to_torch(), t.get_state())


def test_poisson_of_an_infinite_rate_is_x86_64s_integer_indefinite():
    """An infinite rate accepts its first pair of draws with k = (int64_t) floor(inf), which x86-64
    makes INT64_MIN; the float result is that integer."""
    both(17)
    same(internals.poisson(internals.tensor([float("inf"), 3.0])), torch.poisson(torch.tensor([float("inf"), 3.0])))


def test_a_bad_poisson_rate_stops_the_kernel_after_the_draws_before_it():
    both(18)
    for lib in (internals, torch):
        with pytest.raises(RuntimeError, match="invalid Poisson rate"):
            lib.poisson(lib.tensor([4.0, 20.0, -1.0, 3.0]))
    assert torch.equal(internals.get_rng_state().to_torch(), torch.get_rng_state())


def test_randint_overloads_and_large_ranges():
    both(3)
    same(internals.randint(10, (3, 4)), torch.randint(10, (3, 4)))
    same(internals.randint(-5, 5, (7,)), torch.randint(-5, 5, (7,)))
    same(internals.randint(0, 1 << 40, (6,)), torch.randint(0, 1 << 40, (6,)))      # 64-bit words
    same(internals.randint(3, (5,), dtype=internals.float32), torch.randint(3, (5,), dtype=torch.float32))
    g, t = gens(4)
    same(internals.randint(2, 9, (4,), generator=g), torch.randint(2, 9, (4,), generator=t))


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000])
def test_randperm(n):
    both(n)
    same(internals.randperm(n), torch.randperm(n))
    same(internals.randperm(n, dtype=internals.float32), torch.randperm(n, dtype=torch.float32))


def test_randperm_large_n_algorithm():
    """Above 2**32 / 20 torch switches to an inside-out shuffle with 64-bit words; checked on the kernel."""
    from internals.aten.native.cpu.distribution_kernels import shuffle_inside_out
    words = np.array([5, 7, 1, 12], np.uint64)
    assert shuffle_inside_out(words, 4).tolist() == [3, 2, 1, 0]   # by hand: z = 0, 1, 1, 0


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "bool"])
def test_bernoulli(dtype):
    both(6)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    same(internals.empty(30, dtype=di).bernoulli_(0.3), torch.empty(30, dtype=dt).bernoulli_(0.3))
    for pdtype in ("float32", "float64", "float16"):
        pi, pt = internals.rand(30, dtype=getattr(internals, pdtype)), torch.rand(30, dtype=getattr(torch, pdtype))
        same(internals.empty(30, dtype=di).bernoulli_(pi), torch.empty(30, dtype=dt).bernoulli_(pt))
    pi, pt = internals.rand(4, 1), torch.rand(4, 1)      # broadcast along the rows
    same(internals.empty(4, 6, dtype=di).bernoulli_(pi), torch.empty(4, 6, dtype=dt).bernoulli_(pt))
    same(internals.bernoulli(internals.rand(5, 3)), torch.bernoulli(torch.rand(5, 3)))
    same(internals.bernoulli(internals.rand(5), 0.7), torch.bernoulli(torch.rand(5), 0.7))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_multinomial(dtype):
    both(7)
    di, dt = getattr(internals, dtype), getattr(torch, dtype)
    pi, pt = internals.rand(3, 20, dtype=di), torch.rand(3, 20, dtype=dt)
    same(internals.multinomial(pi, 5), torch.multinomial(pt, 5))
    same(internals.multinomial(pi, 1), torch.multinomial(pt, 1))
    same(internals.multinomial(pi, 40, True), torch.multinomial(pt, 40, True))
    same(pi[0].multinomial(7, replacement=True), pt[0].multinomial(7, replacement=True))


def test_nn_linear_init_matches_torch():
    both(0)
    ours, theirs = internals.nn.Linear(3, 4), torch.nn.Linear(3, 4)
    same(ours.weight.detach(), theirs.weight.detach())
    same(ours.bias.detach(), theirs.bias.detach())


@pytest.mark.parametrize("name, args", [
    ("uniform_", (-0.5, 0.5)), ("normal_", (0.0, 0.02)), ("xavier_uniform_", (2.0,)), ("xavier_normal_", ()),
    ("kaiming_uniform_", (0.1,)), ("kaiming_normal_", ()), ("zeros_", ()), ("ones_", ()), ("constant_", (0.25,))])
def test_nn_init(name, args):
    both(9)
    ours, theirs = internals.empty(6, 5), torch.empty(6, 5)
    same(getattr(internals.nn.init, name)(ours, *args), getattr(torch.nn.init, name)(theirs, *args))


# ---------------------------------------------------------------------- any mix of calls
def _call(kind, n, dtype, use_gen, strided, lib, gen):
    kw = {"generator": gen} if use_gen else {}
    d = getattr(lib, dtype)
    if kind == "randn":
        return lib.randn(n, dtype=d, **kw)
    if kind == "rand":
        return lib.rand(n, dtype=d, **kw)
    if kind in ("normal_", "uniform_"):
        out = lib.empty(n, 3, dtype=d)
        out = out.t() if strided else out     # a transposed output is filled in memory order
        return getattr(out, kind)(0.5, 2.0, **kw) if kind == "normal_" else out.uniform_(-1.0, 3.0, **kw)
    if kind == "randint":
        return lib.randint(-3, 17, (n,), **kw)
    if kind == "randperm":
        return lib.randperm(n, **kw)
    if kind == "exponential_":
        return lib.empty(n, dtype=d).exponential_(1.5, **kw)
    if kind == "bernoulli":
        return lib.empty(n, dtype=d).bernoulli_(0.4, **kw)
    if kind == "log_normal_":       # shares the kept normal with normal_'s scalar path
        return lib.empty(n, dtype=d).log_normal_(0.5, 0.75, **kw)
    if kind == "cauchy_":
        return lib.empty(n, dtype=d).cauchy_(0.5, 2.0, **kw)
    if kind == "geometric_":
        return lib.empty(n, dtype=d).geometric_(0.25, **kw)
    if kind == "poisson":
        return lib.poisson(lib.linspace(0.0, 30.0, n, dtype=d), **kw)
    return lib.multinomial(lib.ones(n), min(n, 3), **kw)


KINDS = ["randn", "rand", "normal_", "uniform_", "randint", "randperm", "exponential_", "multinomial",
         "bernoulli", "log_normal_", "cauchy_", "geometric_", "poisson"]
CALL = hst.tuples(hst.sampled_from(KINDS), SIZES, hst.sampled_from(DTYPES), hst.booleans(), hst.booleans())


@settings(max_examples=25, deadline=None)
@given(seed=hst.integers(0, 2 ** 32 - 1), calls=hst.lists(CALL, min_size=1, max_size=6))
def test_any_sequence_matches_torch(seed, calls):
    both(seed)
    g, t = gens(seed + 1)
    for kind, n, dtype, use_gen, strided in calls:
        ours, theirs = _call(kind, n, dtype, use_gen, strided, internals, g), _call(kind, n, dtype, use_gen, strided,
                                                                                   torch, t)
        assert_same(ours, theirs, ulps=LIBM_ULPS) if kind in ("log_normal_", "cauchy_") else same(ours, theirs)
    assert torch.equal(internals.get_rng_state().to_torch(), torch.get_rng_state())
    assert torch.equal(g.get_state().to_torch(), t.get_state())


# ---------------------------------------------------------------------- errors, autograd, dispatch
@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3).uniform_(2.0, 1.0),
    lambda lib: lib.empty(3).normal_(0.0, -1.0),
    lambda lib: lib.empty(3, dtype=lib.int64).normal_(),
    lambda lib: lib.empty(3, dtype=lib.int64).uniform_(),
    lambda lib: lib.empty(3).exponential_(0.0),
    lambda lib: lib.empty(3).exponential_(float("nan")),
    lambda lib: lib.empty(3, dtype=lib.int32).exponential_(),
    lambda lib: lib.empty(3).cauchy_(0.0, 0.0),
    lambda lib: lib.empty(3).cauchy_(0.0, float("nan")),
    lambda lib: lib.empty(3, dtype=lib.int64).cauchy_(),
    lambda lib: lib.empty(0, dtype=lib.int32).cauchy_(),         # checked before an empty tensor returns
    lambda lib: lib.empty(3, dtype=lib.complex64).cauchy_(),
    lambda lib: lib.empty(3).log_normal_(1.0, 0.0),
    lambda lib: lib.empty(3).log_normal_(1.0, -2.0),
    lambda lib: lib.empty(3, dtype=lib.int32).log_normal_(),
    lambda lib: lib.empty(3, dtype=lib.complex64).log_normal_(),
    lambda lib: lib.empty(3).geometric_(0.0),
    lambda lib: lib.empty(3).geometric_(1.0),
    lambda lib: lib.empty(3).geometric_(float("nan")),
    lambda lib: lib.empty(3, dtype=lib.bool).geometric_(0.5),
    lambda lib: lib.empty(3, dtype=lib.uint16).geometric_(0.5),
    lambda lib: lib.empty(3, dtype=lib.complex64).geometric_(0.5),
    lambda lib: lib.poisson(lib.tensor([1.0, -1.0])),
    lambda lib: lib.poisson(lib.tensor([float("nan")])),
    lambda lib: lib.poisson(lib.tensor([1, 2])),
    lambda lib: lib.poisson(lib.zeros(0, dtype=lib.int8)),          # the dtype is checked on no element too
    lambda lib: lib.poisson(lib.tensor([1j])),
    lambda lib: lib.empty(3).bernoulli_(1.5),
    lambda lib: lib.empty(3).random_(5, 2),
    lambda lib: lib.empty(3, dtype=lib.int8).random_(0, 1000),
    lambda lib: lib.randperm(-1),
    lambda lib: lib.multinomial(lib.ones(3), 5),
    lambda lib: lib.multinomial(lib.zeros(3), 1),
    lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1, True),
    # drawing with replacement checks entry by entry: NaN fails "not below zero" first, inf the finite check
    lambda lib: lib.multinomial(lib.tensor([1.0, float("nan")]), 3, True),
    lambda lib: lib.multinomial(lib.tensor([[1.0, 2.0], [float("inf"), -1.0]]), 3, True),
    lambda lib: lib.empty(3).expand(2, 3).bernoulli_(0.5),
    lambda lib: lib.rand(3, generator=lib.Generator(device="cuda")),
])
def test_errors_match_torch(call):
    if "cuda" in str(call.__code__.co_consts) and not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator"):
            call(internals)
        return
    ours, theirs = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(ours).split(",")[0] == str(theirs).split(",")[0]


def test_in_place_fills_record_their_backward():
    fills = [("normal_", ()), ("uniform_", ()), ("exponential_", ()), ("random_", ()), ("bernoulli_", (0.5,)),
             ("cauchy_", ()), ("log_normal_", ()), ("geometric_", (0.5,))]
    for name, args in fills:
        x = internals.ones(3, requires_grad=True).clone()
        y = getattr(x, name)(*args)
        assert type(y.grad_fn).__name__ == type(getattr(torch.ones(3, requires_grad=True).clone(), name)(*args)
                                                .grad_fn).__name__
    p = internals.rand(3, requires_grad=True)
    assert type(internals.bernoulli(p).grad_fn).__name__ == "BernoulliBackward0"
    assert type(internals.poisson(p).grad_fn).__name__ == "PoissonBackward0"
    internals.poisson(p).sum().backward()        # a sample's rate gets a zero gradient
    theirs = torch.rand(3, requires_grad=True)
    torch.poisson(theirs).sum().backward()
    same(p.grad, theirs.grad)
    assert internals.multinomial(p, 2).grad_fn is None


def test_the_random_factories_are_operators():
    kernels = {n.split("::")[1] for n, op in dispatcher.operators.items()
               if any(getattr(k.fn, "__module__", None) == distributions.__name__ for k in op.kernels.values())}
    assert {"rand", "rand.generator", "randn", "randn.generator", "randint", "randint.generator", "randint.low",
            "randint.low_generator", "randperm", "randperm.generator", "rand_like", "randn_like"} <= kernels


# ---------------------------------------------------------------------- dropout
def test_dropout_matches_torch():
    both(12)
    xi, xt = internals.randn(6, 7, requires_grad=True), torch.randn(6, 7, requires_grad=True)
    a, b = internals.nn.Dropout(0.3)(xi), torch.nn.Dropout(0.3)(xt)
    same(a.detach(), b.detach())
    assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__ == "MulBackward0"
    a.sum().backward()
    b.sum().backward()
    same(xi.grad, xt.grad)
    same(internals.nn.functional.dropout(xi.detach(), 0.5), torch.nn.functional.dropout(xt.detach(), 0.5))
    same(internals.nn.functional.dropout(xi.detach(), 1.0), torch.nn.functional.dropout(xt.detach(), 1.0))
    yi, yt = xi.detach().clone(), xt.detach().clone()
    same(internals.nn.functional.dropout(yi, 0.2, inplace=True), torch.nn.functional.dropout(yt, 0.2, inplace=True))
    same(yi, yt)


def test_dropout_eval_and_repr():
    m, t = internals.nn.Dropout(0.25), torch.nn.Dropout(0.25)
    assert repr(m) == repr(t)
    m.eval()
    x = internals.randn(3)
    assert m(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        internals.nn.Dropout(1.5)


# ---------------------------------------------------------------------- cuda: Philox bookkeeping
def test_cuda_generator_state_and_offsets():
    """The seed/offset bookkeeping of torch's CUDA generator: each kernel moves the offset by its
    threads' curand4 calls times 4 (see internals.cuda.random)."""
    g = internals.Generator(device="cuda").manual_seed(0)
    assert g.get_state().tolist() == [0] * 16
    internals.rand(5, device="cuda", generator=g)
    seed, offset = g.get_state().numpy().view(np.uint64)
    assert (seed, offset) == (0, 4)
    internals.randn(256 * 1056 * 4 + 1, device="cpu")     # a CPU draw leaves the CUDA stream alone
    assert g.get_state().numpy().view(np.uint64)[1] == 4


def test_cuda_rand_known_values():
    """torch.manual_seed(0); torch.rand(5, device="cuda") on any GPU (one thread per element: the
    grid does not matter for 5 values) is the widely quoted [0.3990, 0.5167, 0.0249, 0.9401, 0.9459]."""
    internals.manual_seed(0)
    values = internals.rand(5, device="cuda").cpu()
    assert np.allclose(values.numpy(), [0.3990, 0.5167, 0.0249, 0.9401, 0.9459], atol=5e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cuda_rrelu_draws_one_uniform_per_element(dtype):
    """rrelu in training on cuda (torch's RreluWithNoise.cu): every element, whatever its sign,
    takes the uniform that ``rand`` would put there, cast to the dtype and scaled to
    [lower, upper] in double; elements <= 0 are multiplied by it, the slope (the gradient) of
    the others is 1; the generator moves on as ``rand``'s does."""
    g = internals.Generator(device="cuda").manual_seed(7)
    state = g.get_state()
    uniform_dtype = internals.float64 if dtype == "float64" else internals.float32
    u = internals.rand(6, device="cuda", dtype=uniform_dtype, generator=g).cpu().numpy()
    after = g.get_state().tolist()
    g.set_state(state)
    values = [-1.0, 2.0, -0.0, float("nan"), -3.0, 0.5]
    x = internals.tensor(values, dtype=getattr(internals, dtype), device="cuda", requires_grad=True)
    y = internals.rrelu(x, 0.125, 0.375, True, g)       # a range of 1/4: no rounding before the sum
    y.sum().backward()
    assert g.get_state().tolist() == after
    typ = getattr(np, dtype)
    r = (u.astype(typ).astype(np.float64) * 0.25 + 0.125).astype(typ)
    xs = np.array(values, dtype=typ)
    slopes = np.where(xs <= 0, r, typ(1))
    expected = (xs.astype(np.float64) * slopes).astype(typ)
    assert y.detach().cpu().numpy().tobytes() == expected.tobytes()
    assert x.grad.cpu().numpy().tobytes() == slopes.tobytes()


def test_cuda_bernoulli_and_dropout_use_the_uniform_stream():
    """bernoulli_ on cuda compares cuRAND's uniforms with p (torch's bernoulli_scalar_cuda_)."""
    g = internals.Generator(device="cuda").manual_seed(5)
    state = g.get_state()
    u = internals.rand(20, device="cuda", generator=g).cpu().numpy()
    g.set_state(state)
    b = internals.empty(20, device="cuda").bernoulli_(0.3, generator=g)
    assert b.cpu().numpy().tolist() == (u < np.float32(0.3)).astype(np.float32).tolist()
    y = internals.nn.functional.dropout(internals.ones(8, device="cuda"), 0.5)
    assert set(y.cpu().numpy().tolist()) <= {0.0, 2.0}
