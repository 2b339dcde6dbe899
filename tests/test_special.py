"""``internals.special`` (torch.special) against torch: the functions that rename operators
internals has (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ...) and ``ndtr``, composed of
``erf``, as torch composes it.

PyTorch's OpInfo samples of each renamed operator run through the torch.special name (torch
lists those names as the OpInfo's aliases), at float32 and every other sample (``step=2``: the
name only adds a dispatcher hop over the loops ``tests/aten`` sweeps in full); then everyday calls
compared for values, strides, dtypes, grad_fn names and errors, and gradients twice.
"""

import pytest
import torch
from helpers import Adapter, check_opinfo_samples, compare_gradients_and_nodes, opinfo_cases
from helpers import run_everyday_call as _run

import internals

S = internals.special
# torch's float CPU loops call SLEEF's vectorized exp, expm1, exp2, log1p and lgamma (1-ulp
# bounds), internals the C library's: a last-bit difference on some inputs (as in
# tests/aten/test_pointwise_special_functions.py). digamma's float32 series is summed in another
# order; erfinv's Newton steps round differently near |y| -> 1.
LAST_BIT = {torch.float32: (3e-7, 1e-7), torch.float64: (1e-14, 1e-15)}
ALIASES = {     # torch.special's name -> the OpInfo of the operator it renames
    "expit": "sigmoid", "erf": "erf", "erfinv": "erfinv", "gammaln": "lgamma", "digamma": "digamma",
    "psi": "digamma", "exp2": "exp2", "expm1": "expm1", "log1p": "log1p", "logit": "logit", "xlogy": "xlogy",
    "logsumexp": "logsumexp", "round": "round.decimals_3", "softmax": "softmax.with_dtype",
    "log_softmax": "log_softmax.with_dtype", "ndtr": "special.ndtr",
}
KWARGS = {"logit": ("eps",), "round": ("decimals",), "softmax": ("dtype",), "log_softmax": ("dtype",),
          "logsumexp": ("keepdim",)}
CASES = [pytest.param(name, case.values[1], id=f"{name}-{str(case.values[1])[6:]}")
         for name in ALIASES for case in opinfo_cases([ALIASES[name]], (torch.float32,))]


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples_through_the_special_name(name, dtype):
    adapter = Adapter(getattr(S, name), kwargs=KWARGS.get(name, ()), tol=LAST_BIT)
    check_opinfo_samples(ALIASES[name], dtype, adapter, step=2)


X = "lib.tensor([[-2.0, -0.5, -0.0], [0.0, 1.5, 3.0]])"
P = "lib.tensor([0.0, 0.25, 0.5, 1.0, 1.5, -0.1])"
PROGRAMS = [
    f"lib.special.ndtr({X})", "lib.special.ndtr(lib.tensor([-1, 0, 2]))", f"lib.special.ndtr({X}.t())",
    "lib.special.ndtr(lib.tensor([float('inf'), float('-inf'), float('nan'), -40.0]))",
    "lib.special.ndtr(lib.tensor([0.5], dtype=lib.float64), out=lib.empty(1, dtype=lib.float64))",
    f"lib.special.ndtr({X}.requires_grad_())", f"lib.special.expit({X}.requires_grad_())",
    "lib.special.expit(lib.tensor([1, 2]))", "lib.special.expit(lib.tensor([0.0]), out=lib.empty(1))",
    f"lib.special.gammaln({X}.requires_grad_())", f"lib.special.psi({X}.requires_grad_())",
    f"lib.special.erf({X}, out=lib.empty(0))", "lib.special.erfinv(lib.tensor([0.0, 0.5, 1.0, 2.0]))",
    "lib.special.exp2(lib.tensor([3, -1]))", f"lib.special.log1p({X}.requires_grad_())",
    f"lib.special.logit({P}, 0.1)", f"lib.special.logit({P}, eps=None)",
    f"lib.special.round({X}.requires_grad_(), decimals=1)", "lib.special.round(lib.tensor([1.25]), decimals=-1)",
    f"lib.special.xlogy({X}.requires_grad_(), 2)", f"lib.special.xlogy(2, {X}.requires_grad_())",
    f"lib.special.xlogy({X}, {X}.t().t())", "lib.special.xlogy(2, lib.tensor([3.0]), out=lib.empty(1))",
    f"lib.special.logsumexp({X}.requires_grad_(), 1)", f"lib.special.logsumexp({X}, (0, 1), keepdim=True)",
    f"lib.special.logsumexp({X}, 0, out=lib.empty(3))",
    f"lib.special.softmax({X}.requires_grad_(), 1)", f"lib.special.log_softmax({X}, 0, dtype=lib.float64)",
    # errors: torch's classes (complex inputs, a dim out of range, out= of a narrower dtype)
    "lib.special.ndtr(lib.tensor([1j]))", "lib.special.expit(lib.tensor([1.0]), out=lib.empty(1, dtype=lib.int64))",
    f"lib.special.softmax({X}, 2)", "lib.special.gammaln(lib.tensor([1j]))",
]
# Programs whose values come from SLEEF-backed loops in torch (see LAST_BIT); all else the same bits.
CLOSE = ("expit", "gammaln", "psi", "log1p", "logsumexp", "softmax", "logit", "xlogy", "exp2", "ndtr", "erf")


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls_match_torch(program):
    ours, theirs = _run(internals, program), _run(torch, program)
    if theirs[0] == "error" or not any(name in program for name in CLOSE):
        assert ours == theirs
        return
    (meta_i, messages_i), (meta_t, messages_t) = ours, theirs
    assert (meta_i[:3], meta_i[4], messages_i) == (meta_t[:3], meta_t[4], messages_t)
    rtol, atol = LAST_BIT[getattr(torch, meta_t[0])]
    torch.testing.assert_close([float(v) for v in meta_i[3]], [float(v) for v in meta_t[3]], rtol=rtol, atol=atol,
                               equal_nan=True)


@pytest.mark.parametrize("build", [
    lambda lib, x, t: lib.special.ndtr(x) * t,
    lambda lib, x, t: lib.special.expit(x) * t,
    lambda lib, x, t: lib.special.xlogy(t, x.exp()),
    lambda lib, x, t: lib.special.logsumexp(x * t, 1),
    lambda lib, x, t: lib.special.log_softmax(x * t, 0),
], ids=["ndtr", "expit", "xlogy", "logsumexp", "log_softmax"])
def test_gradients_twice_match_torch(build):
    compare_gradients_and_nodes(build)


def test_every_name_is_torchs():
    assert set(S.__all__) <= set(dir(torch.special))
