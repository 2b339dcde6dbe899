"""``_softmax``, ``_log_softmax`` and their ``_backward_data`` operators
(``aten/native/softmax.py``), declared structured as torch's ``SoftMax.cpp`` declares them: a meta
step (the dim checked, the output laid out contiguous in its dtype, or ``out`` checked and
resized) and an impl step; the ``.out`` overload primary, the functional one derived from it.
Last, the ``nn.Softmax``/``nn.LogSoftmax`` modules (reprs and values).
"""


import pytest
import torch
from helpers import (
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    same_error,
)

import internals
from internals.aten.native import softmax

OPERATORS = ("_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data")


@pytest.mark.parametrize("name", OPERATORS)
def test_the_functional_form_is_derived_from_the_structured_out_kernel(name):
    assert_derived_from_structured_out(name, "out", softmax)


def _x(L):
    return L.arange(12.).reshape(3, 4) / 5


FUNCTIONAL_CASES = {
    "softmax along rows": lambda L: L._softmax(_x(L), 1, False),
    "log_softmax of a transposed input": lambda L: L._log_softmax(_x(L).t(), 0, False),
    "a 0-dim input": lambda L: L._log_softmax(L.tensor(2.), 0, False),
    "float64": lambda L: L._softmax(_x(L).double(), -1, False),
    "backward along rows": lambda L: L._softmax_backward_data(_x(L), _x(L).softmax(1), 1, L.float32),
    "backward keeps grad_output's dtype": lambda L: L._softmax_backward_data(_x(L), _x(L).softmax(1), 0, L.float64),
    "log backward, transposed": lambda L: L._log_softmax_backward_data(_x(L).t(), _x(L).t() - 1, 1, L.float32),
    "backward of float16": lambda L: L._softmax_backward_data(_x(L).half(), _x(L).half(), 1, L.float32),
}


@pytest.mark.parametrize("case", FUNCTIONAL_CASES)
def test_functional_forms_match_torch(case):
    ours, theirs = FUNCTIONAL_CASES[case](internals), FUNCTIONAL_CASES[case](torch)
    assert_same(ours, theirs, ulps=4)


OUT_CASES = {
    "resized, warns": lambda L: L._log_softmax(_x(L), 1, False, out=L.empty(5)),
    "resized from empty": lambda L: L._softmax(_x(L).t(), 1, False, out=L.empty(0)),
    "an empty input only resizes": lambda L: L._softmax(L.empty(0, 3), 1, False, out=L.empty(2)),
    "backward into a wrong-sized grad_input": lambda L: L._softmax_backward_data(_x(L), L.ones(3, 4) / 4, 0,
                                                                                 L.float32, grad_input=L.empty(1)),
    "log backward out": lambda L: L._log_softmax_backward_data(_x(L), _x(L) - 2, 1, L.float32, out=L.empty(0)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variants_match_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


ERROR_CASES = {
    "half to float on the CPU": lambda L: L._softmax(_x(L), 0, True),
    "dim out of range": lambda L: L._softmax(_x(L), 2, False),
    "out of another dtype": lambda L: L._softmax(_x(L), 1, False, out=L.empty(3, 4, dtype=L.float64)),
    "integers": lambda L: L._softmax(L.tensor([1, 2]), 0, False),
    "integers into an integer out": lambda L: L._log_softmax(L.tensor([1, 2]), 0, False, out=L.empty(2, dtype=L.long)),
    "backward sizes differ": lambda L: L._softmax_backward_data(L.ones(3, 4), L.ones(2, 4), 1, L.float32),
    "backward output of another dtype": lambda L: L._softmax_backward_data(L.ones(3, 4), L.ones(3, 4).double(), 1,
                                                                           L.float32),
    "backward of float32 for a float16 input": lambda L: L._log_softmax_backward_data(L.ones(3, 4), L.ones(3, 4), 1,
                                                                                      L.float16),
    "backward out of another dtype": lambda L: L._log_softmax_backward_data(
        L.ones(3, 4), L.ones(3, 4), 1, L.float32, out=L.empty(1, dtype=L.float64)),
    "out= of an input that requires grad": lambda L: L._softmax(L.ones(3, 4, requires_grad=True), 1, False,
                                                                out=L.empty(3, 4)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_gradients_and_nodes_match_torch(name):
    def run(L):
        x = L.tensor([[0.5, -1., 2.], [3., 0., 1.]], dtype=L.float64, requires_grad=True)
        y = getattr(x * 2, name)(1)
        (g,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        return [y.grad_fn.name(), g.grad_fn.name()], [y, g, gg]
    (our_nodes, ours), (their_nodes, theirs) = run(internals), run(torch)
    assert our_nodes == their_nodes
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o.detach(), t.detach(), rtol=1e-12, atol=1e-12)    # second derivatives cancel near 0


FAKE_PROGRAMS = {
    "functional": lambda L, x: L._softmax(x.t(), 0, False),
    "out resized": lambda L, x: L._log_softmax(x, 1, False, out=L.empty(0)),
    "backward": lambda L, x: L._softmax_backward_data(x, x, 1, L.float32),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])


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
