"""The sparse COO factory carries autograd to its values, as torch's does.

``sparse_coo_tensor(indices, values, size)`` reaches ``_sparse_coo_tensor_with_dims_and_tensors``,
whose node (``SparseCooTensorWithDimsAndTensorsBackward0``) gives ``values`` the gradient at the
new tensor's entries: ``grad.sparse_mask(result)._values()``, an entry listed twice getting it
twice. Each program runs in both libraries; node names, the gradient's values, dtype and layout
are compared. The values here are small integers and their products exact, so the gradients are
compared bit for bit.
"""
import pytest
import torch
from helpers import assert_same, assert_same_error

import internals

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

EXACT = dict(rtol=0, atol=0)
# indices with a repeated coordinate, (0, 2), and out of order: an uncoalesced tensor
UNCOALESCED = [[0, 1, 1, 0], [2, 0, 2, 2]]
COALESCED = [[0, 0, 1], [0, 2, 1]]


def _names(node):
    """The node's name, then its inputs' names, depth first (AccumulateGrad included)."""
    if node is None:
        return []
    return [type(node).__name__, *(n for f, _ in node.next_functions for n in _names(f))]


def _leaf(lib, values, dtype=None):
    return lib.tensor(values, dtype=dtype or lib.float64, requires_grad=True)


def _weights(lib, shape):
    return lib.arange(float(torch.Size(shape).numel()), dtype=lib.float64).reshape(shape) - 2.5


# Programs from a sparse tensor s (built from the leaf v) to a dense result.
THROUGH = {
    "to_dense": lambda lib, s: s.to_dense(),
    "to_dense-weighed": lambda lib, s: s.to_dense() * _weights(lib, s.shape),
    "mm": lambda lib, s: lib.mm(s, _weights(lib, (3, 2))),
    "mm-dense-left": lambda lib, s: lib.mm(_weights(lib, (2, 2)), s),
    "sum": lambda lib, s: s.sum(),
    "coalesce-values": lambda lib, s: s.coalesce().values(),
    "mul-add": lambda lib, s: (s * 3 + s).to_dense(),
    "neg": lambda lib, s: (-s).to_dense(),
    "dense-plus-sparse": lambda lib, s: _weights(lib, s.shape) + s,
}


@pytest.mark.parametrize("indices", [UNCOALESCED, COALESCED], ids=["uncoalesced", "coalesced"])
@pytest.mark.parametrize("name", THROUGH)
def test_values_get_the_gradient(name, indices):
    def program(lib):
        nnz = len(indices[0])
        v = _leaf(lib, [1.0 + k for k in range(nnz)])
        s = lib.sparse_coo_tensor(lib.tensor(indices), v, (2, 3))
        out = THROUGH[name](lib, s)
        (g,) = lib.autograd.grad((out * _weights(lib, out.shape)).sum(), v)
        return out, g, _names(s.grad_fn), s.requires_grad, s.is_leaf, s.is_coalesced()
    (out_i, g_i, *rest_i), (out_t, g_t, *rest_t) = program(internals), program(torch)
    assert rest_i == rest_t
    assert rest_t[0] == ["SparseCooTensorWithDimsAndTensorsBackward0", "AccumulateGrad"]
    assert_same(out_i, out_t, **EXACT)
    assert g_i.layout is internals.strided
    assert_same(g_i, g_t, **EXACT)


@pytest.mark.parametrize("grad", ["dense", "sparse", "uncoalesced-sparse"])
def test_the_incoming_gradient_is_read_at_each_entry(grad):
    """The gradient of the sparse tensor itself, dense or sparse (an entry the gradient lacks gets
    zero; a gradient stored twice at one coordinate is summed), read at each entry of the tensor."""
    def program(lib):
        v = _leaf(lib, [1.0, 2.0, 3.0, 4.0])
        s = lib.sparse_coo_tensor(lib.tensor(UNCOALESCED), v, (2, 3))
        g = _weights(lib, (2, 3))
        if grad == "sparse":
            g = g.to_sparse()
        elif grad == "uncoalesced-sparse":
            g = lib.sparse_coo_tensor(lib.tensor([[1, 0, 0], [0, 2, 2]]), lib.tensor([5.0, 7.0, 1.0],
                                                                                     dtype=lib.float64), (2, 3))
        return lib.autograd.grad(s, v, g)[0]
    assert_same(program(internals), program(torch), **EXACT)


def test_hybrid_values_get_their_blocks():
    def program(lib):
        v = _leaf(lib, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
        s = lib.sparse_coo_tensor(lib.tensor(UNCOALESCED), v, (2, 3, 2))
        (g,) = lib.autograd.grad(s.to_dense().pow(2).sum(), v)
        return g
    assert_same(program(internals), program(torch), **EXACT)


@pytest.mark.parametrize("case", ["dtype", "zero-dim", "empty", "is_coalesced"])
def test_what_the_factory_records(case):
    """A cast of the values is recorded before the factory (ToCopyBackward0), a 0-dim value is
    expanded to one entry (ExpandBackward0), no entries still records the node."""
    def program(lib):
        if case == "dtype":
            v = _leaf(lib, [1.0, 2.0, 3.0, 4.0], lib.float32)
            s = lib.sparse_coo_tensor(lib.tensor(UNCOALESCED), v, (2, 3), dtype=lib.float64)
        elif case == "zero-dim":
            v = _leaf(lib, 3.0)
            s = lib.sparse_coo_tensor(lib.zeros(1, 1, dtype=lib.int64), v, (2,))
        elif case == "empty":
            v = _leaf(lib, [])
            s = lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), v, (2, 3))
        else:
            v = _leaf(lib, [1.0, 2.0])
            s = lib.sparse_coo_tensor(lib.tensor([[0, 1], [0, 2]]), v, (2, 3), is_coalesced=True)
        (g,) = lib.autograd.grad((s.to_dense() * _weights(lib, s.shape)).sum(), v)
        return g, _names(s.grad_fn), s.dtype.is_floating_point, s.is_coalesced()
    (g_i, *rest_i), (g_t, *rest_t) = program(internals), program(torch)
    assert rest_i == rest_t
    assert_same(g_i, g_t, **EXACT)


def test_no_node_without_grad_mode_or_grad():
    def program(lib):
        v = _leaf(lib, [1.0, 2.0])
        with lib.no_grad():
            a = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), v, (2,))
        b = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), v.detach(), (2,), requires_grad=True)
        return [(t.requires_grad, t.is_leaf, t.grad_fn is None) for t in (a, b)]
    assert program(internals) == program(torch)


def test_the_gradient_itself_is_not_differentiable_again():
    """torch's formula ends in ``_values()``, which records nothing: with ``create_graph`` the
    first gradient of the values does not require grad, in both libraries."""
    def program(lib):
        v = _leaf(lib, [1.0, 2.0, 3.0, 4.0])
        d = lib.sparse_coo_tensor(lib.tensor(UNCOALESCED), v, (2, 3)).to_dense().pow(2)
        (g,) = lib.autograd.grad(d.sum(), v, create_graph=True)
        return g, g.requires_grad, g.grad_fn is None
    (g_i, *rest_i), (g_t, *rest_t) = program(internals), program(torch)
    assert rest_i == rest_t
    assert_same(g_i, g_t, **EXACT)


def test_the_node_saves_the_result():
    def program(lib):
        s = lib.sparse_coo_tensor(lib.tensor(UNCOALESCED), _leaf(lib, [1.0, 2.0, 3.0, 4.0]), (2, 3))
        saved = s.grad_fn._saved_result
        return str(saved.layout).split(".")[-1], saved.is_coalesced(), saved._nnz()
    assert program(internals) == program(torch)


def test_a_dispatch_mode_sees_the_inner_operator():
    """Under a dispatch mode, the factory shows as ``_sparse_coo_tensor_with_dims_and_tensors``
    (the composite operators above it decompose), as in torch."""
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    from internals.utils._python_dispatch import TorchDispatchMode as OurMode

    def recorder(base):
        class Recorder(base):
            def __init__(self):
                super().__init__()
                self.names = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.names.append(str(func.name()))
                return func(*args, **(kwargs or {}))
        return Recorder()

    def program(lib, mode):
        v = _leaf(lib, [1.0, 2.0])
        with mode:
            lib.sparse_coo_tensor(lib.tensor([[0, 1]]), v, (2,))
        return mode.names
    assert program(internals, recorder(OurMode)) == program(torch, recorder(TorchMode))


def test_sparse_mask_of_a_sparse_tensor():
    """The formula's ``sparse_mask`` with a sparse ``self``: the mask's entries in its order, its
    flag, each with self's (summed) value there or zero."""
    def program(lib):
        g = lib.sparse_coo_tensor(lib.tensor([[1, 0, 0, 1], [0, 2, 2, 1]]), lib.tensor([5.0, 7.0, 1.0, 2.0]), (2, 3))
        mask = lib.sparse_coo_tensor(lib.tensor(UNCOALESCED), lib.ones(4), (2, 3))
        m = g.sparse_mask(mask)
        return m._indices(), m._values(), m.is_coalesced(), m._nnz()
    (*t_i, c_i, n_i), (*t_t, c_t, n_t) = program(internals), program(torch)
    assert (c_i, n_i) == (c_t, n_t)
    for ours, theirs in zip(t_i, t_t):
        assert_same(ours, theirs, exact_layout=False, **EXACT)


def test_sparse_mask_of_a_sparse_tensor_refuses_other_sparse_dims():
    def program(lib):
        g = lib.sparse_coo_tensor(lib.tensor([[1, 0]]), lib.tensor([[5.0, 7.0, 1.0], [1.0, 2.0, 3.0]]), (2, 3))
        return g.sparse_mask(lib.sparse_coo_tensor(lib.tensor(UNCOALESCED), lib.ones(4), (2, 3)))
    ours, theirs = assert_same_error(lambda: program(internals), lambda: program(torch))
    assert str(ours) == str(theirs)
