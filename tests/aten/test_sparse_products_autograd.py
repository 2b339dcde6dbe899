"""Gradients through ``mm`` and ``addmm`` with a sparse operand (COO, CSR, CSC, BSR), against torch.

torch's formulas (``mm_mat1_backward`` / ``mm_mat2_backward``) save the operands' strides through
``strides_or_error``, which saves none for a sparse operand (a compressed tensor has no strides to
read), and keep the column-major shortcut for all-strided operands only: a sparse operand gets the
general formula, ``grad @ mat2^T`` or ``mat1^T @ grad``, whose transpose of a compressed operand
is the other compressed layout (CSR^T is CSC). The gradient of a sparse operand comes back dense,
as torch's does. Every value here is a small integer and every product exact, so results are
compared bit for bit; where torch refuses, the error class and message are compared.
"""
import pytest
import torch
from helpers import assert_same, outcome

import internals

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

EXACT = dict(rtol=0, atol=0)
LAYOUTS = {
    "coo": lambda x: x.to_sparse(),
    "csr": lambda x: x.to_sparse_csr(),
    "csc": lambda x: x.to_sparse_csc(),
    "bsr": lambda x: x.to_sparse_bsr((1, 1)),
}


def _matrix(lib):
    return lib.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], dtype=lib.float64)


def _dense(lib, shape, column_major=False):
    n = torch.Size(shape).numel()
    x = lib.arange(float(n), dtype=lib.float64).reshape(shape) - 2.0
    if column_major:
        x = x.t().contiguous().t()
    return x.requires_grad_()


PROGRAMS = {
    "sparse@dense": lambda lib, s: (lib.mm(s, _dense(lib, (3, 2))),),
    "dense@sparse": lambda lib, s: (lib.mm(_dense(lib, (4, 2)), s),),
    "sparse@column-major": lambda lib, s: (lib.mm(s, _dense(lib, (3, 2), column_major=True)),),
    "addmm": lambda lib, s: (lib.addmm(_dense(lib, (2, 2)), s, _dense(lib, (3, 2))),),
    "addmm-scaled": lambda lib, s: (lib.addmm(_dense(lib, (1, 2)), s, _dense(lib, (3, 2)), beta=2, alpha=-3),),
    "matmul": lambda lib, s: (s.matmul(_dense(lib, (3, 2))),),
}


def _run(lib, layout, name, sparse_grad=True):
    s = LAYOUTS[layout](_matrix(lib))
    if sparse_grad:
        s.requires_grad_()
    (out,) = PROGRAMS[name](lib, s)
    leaves = [s] + [t for t in _leaves(out.grad_fn) if t is not s]
    weights = lib.arange(float(out.numel()), dtype=lib.float64).reshape(out.shape) + 1
    grads = lib.autograd.grad((out * weights).sum(), [t for t in leaves if t.requires_grad])
    return (out, type(out.grad_fn).__name__, out.grad_fn._saved_self_sym_strides
            if hasattr(out.grad_fn, "_saved_self_sym_strides") else None, *grads)


def _leaves(node):
    """The leaves under a node, first met first (their AccumulateGrad nodes' variables)."""
    found = []
    for f, _ in node.next_functions:
        if f is None:
            continue
        if type(f).__name__ == "AccumulateGrad":
            found.append(f.variable)
        else:
            found.extend(_leaves(f))
    return found


def _compare(ours, theirs):
    if isinstance(theirs[0], str):           # ("error", class name, message)
        assert ours == theirs
        return
    assert not isinstance(ours[0], str), ours
    out_i, node_i, strides_i, *grads_i = ours
    out_t, node_t, strides_t, *grads_t = theirs
    assert (node_i, strides_i) == (node_t, tuple(strides_t) if strides_t is not None else None)
    assert_same(out_i, out_t, **EXACT)
    assert len(grads_i) == len(grads_t)
    for g_i, g_t in zip(grads_i, grads_t):
        assert str(g_i.layout).split(".")[-1] == str(g_t.layout).split(".")[-1]
        assert_same(g_i, g_t, **EXACT)


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_gradients_of_a_sparse_operand_and_the_dense_one(layout, name):
    _compare(outcome(lambda lib: _run(lib, layout, name), internals),
             outcome(lambda lib: _run(lib, layout, name), torch))


@pytest.mark.parametrize("name", ["sparse@dense", "dense@sparse", "addmm"])
@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
def test_only_the_dense_operand_needs_a_gradient(layout, name):
    """A sparse operand that needs no gradient: its strides are not read (torch saves none)."""
    _compare(outcome(lambda lib: _run(lib, layout, name, sparse_grad=False), internals),
             outcome(lambda lib: _run(lib, layout, name, sparse_grad=False), torch))


def test_strided_operands_keep_the_column_major_shortcut():
    """With every operand strided, a column-major input still gets a column-major gradient."""
    def program(lib):
        a, b = _dense(lib, (2, 3), column_major=True), _dense(lib, (3, 2))
        (g,) = lib.autograd.grad(lib.mm(a, b).sum(), a)
        return g, lib.mm(a, b).grad_fn._saved_self_sym_strides
    (g_i, s_i), (g_t, s_t) = program(internals), program(torch)
    assert tuple(s_i) == tuple(s_t)
    assert_same(g_i, g_t, **EXACT)


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
@pytest.mark.parametrize("self_layout", ["coo", "csr"])
def test_addmm_refuses_a_sparse_self(layout, self_layout):
    def program(lib):
        return lib.addmm(LAYOUTS[self_layout](lib.ones(2, 2, dtype=lib.float64)), LAYOUTS[layout](_matrix(lib)),
                         _dense(lib, (3, 2)).detach())
    assert outcome(program, internals) == outcome(program, torch)
