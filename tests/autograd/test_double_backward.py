"""Second derivatives through the layers' backward operators, against torch (float64).

convolution_backward, native_batch_norm_backward, native_layer_norm_backward,
max_pool2d_with_indices_backward and embedding_dense_backward are operators of their own, with
derivatives of their own in torch's derivatives.yaml (the double backward). Each case takes the
gradient of a cubed sum with create_graph=True, then the gradient of the squared first gradient
in every input: values, grad_fn names of the first gradients, and which inputs get none.
_cdist_backward has no derivative in torch: differentiating through it refuses.
"""
import numpy as np
import pytest
import torch
from helpers import assert_second_derivatives_match_torch

import internals

F, NNF = internals.nn.functional, torch.nn.functional


def _second_derivatives(lib, F, fn, arrays):
    xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    firsts = lib.autograd.grad((fn(lib, F, *xs) ** 3).sum(), xs, create_graph=True)
    seconds = [lib.autograd.grad((g * g).sum(), xs, allow_unused=True, retain_graph=True) for g in firsts]
    return firsts, seconds


rng = np.random.default_rng(0)
CASES = {
    "layer_norm": (lambda L, F, x, w, b: F.layer_norm(x.tanh(), (4,), w, b),
                   [rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)]),
    "layer_norm_two_dims": (lambda L, F, x, w, b: F.layer_norm(x * 1.5, (2, 3), w, b),
                            [rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 3)),
                             rng.standard_normal((2, 3))]),
    "layer_norm_one_row_no_affine": (lambda L, F, x: F.layer_norm(x * x, (4,)), [rng.standard_normal(4)]),
    "batch_norm_training": (lambda L, F, x, w, b: F.batch_norm(x.tanh(), None, None, w, b, training=True),
                            [rng.standard_normal((3, 2, 2, 2)), rng.standard_normal(2), rng.standard_normal(2)]),
    "batch_norm_eval": (lambda L, F, x, w, b: F.batch_norm(x.tanh(), L.full((2,), 0.1, dtype=L.float64),
                                                            L.full((2,), 2.0, dtype=L.float64), w, b),
                        [rng.standard_normal((3, 2, 2)), rng.standard_normal(2), rng.standard_normal(2)]),
    "conv2d": (lambda L, F, x, w, b: F.conv2d(x.tanh(), w, b, padding=1, stride=2),
               [rng.standard_normal((2, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3)), rng.standard_normal(3)]),
    "conv2d_groups_dilation": (lambda L, F, x, w: F.conv2d(x * x, w, groups=2, dilation=2),
                               [rng.standard_normal((1, 4, 6, 6)), rng.standard_normal((4, 2, 2, 2))]),
    "max_pool2d": (lambda L, F, x: F.max_pool2d(x * x, 2), [rng.standard_normal((1, 1, 4, 4))]),
    "embedding_padding_idx": (lambda L, F, w: F.embedding(L.tensor([[0, 2], [2, 1]]), w * w, padding_idx=1),
                              [rng.standard_normal((3, 2))]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_second_derivative_matches_torch(name):
    fn, arrays = CASES[name]
    t_first, t_second = _second_derivatives(torch, NNF, fn, arrays)
    i_first, i_second = _second_derivatives(internals, F, fn, arrays)
    assert [type(g.grad_fn).__name__ for g in i_first] == [type(g.grad_fn).__name__ for g in t_first]
    for ours, theirs in zip(i_first, t_first):
        np.testing.assert_allclose(ours.detach().to_torch().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    for row_i, row_t in zip(i_second, t_second):
        assert [g is None for g in row_i] == [g is None for g in row_t]
        for ours, theirs in zip(row_i, row_t):
            if theirs is not None:
                np.testing.assert_allclose(ours.to_torch().numpy(), theirs.numpy(), rtol=1e-9, atol=1e-11)


CONV_LAYOUT_CASES = {      # kernel dims torch narrows (stride 2 on 6 and 5), groups, dilation, conv1d
    "stride_narrowed": (lambda L, F, x, w: F.conv2d(x, w, stride=2), [(2, 3, 6, 6), (4, 3, 3, 3)]),
    "stride_padding": (lambda L, F, x, w: F.conv2d(x, w, stride=3, padding=1), [(2, 3, 9, 9), (4, 3, 3, 3)]),
    "groups": (lambda L, F, x, w: F.conv2d(x, w, stride=2, padding=1, groups=2), [(2, 4, 7, 7), (4, 2, 3, 3)]),
    "dilation": (lambda L, F, x, w: F.conv2d(x, w, stride=2, dilation=2), [(2, 3, 7, 7), (4, 3, 2, 2)]),
    "conv1d": (lambda L, F, x, w: F.conv1d(x, w, stride=3), [(2, 3, 8), (4, 3, 3)]),
    # output padding: rows of the output no input reaches (the input's gradients drop them)
    "transposed_output_padding": (lambda L, F, x, w: F.conv_transpose2d(x, w, stride=(3, 2), padding=(1, 2),
                                                                        output_padding=(2, 3), groups=2,
                                                                        dilation=(4, 4)),
                                  [(2, 2, 4, 4), (2, 2, 4, 5)]),
}


@pytest.mark.parametrize("name", list(CONV_LAYOUT_CASES))
def test_convolution_second_derivative_strides_match_torch(name):
    """torch's double backward computes the weight's gradient as a convolution over the
    batch-transposed input, then transposes (and narrows) it: strides other than the weight's."""
    fn, shapes = CONV_LAYOUT_CASES[name]
    arrays = [rng.standard_normal(shape) for shape in shapes]
    t_first, t_second = _second_derivatives(torch, NNF, fn, arrays)
    i_first, i_second = _second_derivatives(internals, F, fn, arrays)
    for ours, theirs in zip([*i_first, *(g for row in i_second for g in row)],
                            [*t_first, *(g for row in t_second for g in row)]):
        assert ours.stride() == theirs.stride()
        np.testing.assert_allclose(ours.detach().to_torch().numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-10)


def _batch_norm_derivatives(lib, x, training, affine):
    """Output and the first three derivatives (each the gradient of the previous ones cubed, in
    x and, when affine, weight and bias), on a channels-last input."""
    x = (internals.from_torch(x) if lib is internals else x.clone()).requires_grad_()
    C = x.shape[1]
    w, b = (lib.linspace(0.5, 1.5, C, dtype=lib.float64).requires_grad_(),
            lib.linspace(-0.2, 0.2, C, dtype=lib.float64).requires_grad_())
    rm, rv = lib.linspace(-0.1, 0.1, C, dtype=lib.float64), lib.linspace(0.5, 1.5, C, dtype=lib.float64)
    inputs = [x, w, b] if affine else [x]
    y = lib.nn.functional.batch_norm(x, rm, rv, w if affine else None, b if affine else None, training=training)
    levels, current = [[y]], [y]
    for _ in range(3):
        current = [g for g in lib.autograd.grad(sum((t ** 3).sum() for t in current), inputs, create_graph=True,
                                                allow_unused=True) if g is not None and g.requires_grad]
        levels.append(current)
    return levels


@pytest.mark.parametrize("affine", [False, True], ids=["plain", "affine"])
@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
@pytest.mark.parametrize("memory_format", ["channels_last", "channels_last_3d"])
def test_batch_norm_derivatives_keep_torchs_layouts(memory_format, training, affine):
    """Up to the third derivative: torch's batch norm allocates its outputs and first gradients in
    the input's suggested format (channels-last, 4-d or 5-d); in evaluation the second derivative
    in x expands the weight's gradient to the input's shape before the products, so it comes out
    contiguous there."""
    shape = (2, 3, 4, 4) if memory_format == "channels_last" else (2, 3, 2, 3, 2)
    x = torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    x = x.to(memory_format=getattr(torch, memory_format))
    theirs = _batch_norm_derivatives(torch, x, training, affine)
    ours = _batch_norm_derivatives(internals, x, training, affine)
    for level_o, level_t in zip(ours, theirs):
        assert [(type(t.grad_fn).__name__, t.stride()) for t in level_o] == \
            [(type(t.grad_fn).__name__, t.stride()) for t in level_t]
        for a, b in zip(level_o, level_t):
            np.testing.assert_allclose(a.detach().to_torch().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-9)


def _matrix(lib, rows, cols):
    return lib.linspace(-1.0, 2.0, rows * cols, dtype=lib.float64).reshape(rows, cols).requires_grad_()


# First gradients written by hand in functions_manual.py: each first gradient's node (taken with
# create_graph) and the second derivative through it, as torch's.
HAND_WRITTEN_GRADIENTS = {
    "deg2rad": lambda L: (lambda x: (L.deg2rad(x) ** 2, x))(_matrix(L, 2, 3)),
    "rad2deg": lambda L: (lambda x: (L.rad2deg(x) ** 2, x))(_matrix(L, 2, 3)),
    "lerp_scalar_weight": lambda L: (lambda x: (L.lerp(x, x * x, 0.3) ** 2, x))(_matrix(L, 2, 3)),
    "trace_square": lambda L: (lambda x: (x.trace() ** 2, x))(_matrix(L, 3, 3)),
    "trace_tall": lambda L: (lambda x: (x.trace() ** 2, x))(_matrix(L, 7, 5)),
    "trace_wide": lambda L: (lambda x: (x.trace() ** 2, x))(_matrix(L, 3, 5)),
    "take_repeated_index": lambda L: (lambda x: (x.take(L.tensor([0, 5, 5, 2])) ** 2, x))(_matrix(L, 2, 3)),
    "masked_scatter_source": lambda L: (lambda x: (L.zeros(2, 3, dtype=L.float64).masked_scatter(
        L.tensor([True, False, True]), x) ** 2, x))(_matrix(L, 2, 3)),
    "index_repeated": lambda L: (lambda x: (x[L.tensor([0, 1, 1])] ** 2, x))(_matrix(L, 2, 3)),
    "index_two_tensors": lambda L: (lambda x: (x[L.tensor([0, 1]), L.tensor([2, 2])] ** 2, x))(_matrix(L, 2, 3)),
    "masked_select_broadcast_mask": lambda L: (lambda x: (x.masked_select(L.tensor([True, False, True])) ** 2, x))(
        _matrix(L, 2, 3)),
}


@pytest.mark.parametrize("name", HAND_WRITTEN_GRADIENTS)
def test_hand_written_gradients_second_derivatives_match_torch(name):
    """deg2rad's and rad2deg's and lerp's scalar products are mul.Scalar (MulBackward1); trace's
    gradient is filled into flat zeros and viewed (ViewBackward0, min(rows, cols) diagonal steps);
    take's is put_ (PutBackward0), masked_select's masked_scatter_ (MaskedScatterBackward0);
    masked_scatter's source gradient is an operator with its own node (MaskedScatterBackwardBackward0);
    index's is _index_put_impl_ (IndexPutImplBackward0)."""
    assert_second_derivatives_match_torch(HAND_WRITTEN_GRADIENTS[name])


def test_solve_with_a_vector_right_hand_side_second_derivative_matches_torch():
    """The vector is solved as a one-column matrix and squeezed back: the gradient's node is
    SqueezeBackward1, as torch's, not the solver's."""
    def program(L):
        A = L.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=L.float64, requires_grad=True)
        b = L.linspace(-1.0, 1.0, 3, dtype=L.float64).requires_grad_()
        return L.linalg.solve(A * 1, b) ** 2, b
    assert_second_derivatives_match_torch(program, rtol=1e-12, atol=1e-14)


def test_layer_norm_of_a_tanh_float32():
    """The case that came back wrong: another op in front keeps the graph alive (float32)."""
    results = []
    for lib, F_ in ((internals, F), (torch, NNF)):
        x = lib.tensor([[0.5, -1.0, 2.0, 0.3]], requires_grad=True)
        g, = lib.autograd.grad((F_.layer_norm(x.tanh(), (4,)) ** 3).sum(), x, create_graph=True)
        results.append(lib.autograd.grad(g.sum(), x)[0])
    np.testing.assert_allclose(results[0].to_torch().numpy(), results[1].numpy(), rtol=1e-5, atol=1e-5)


def test_max_pool2d_second_derivative_reported_case():
    x, tx = internals.tensor([[[[1., 2.], [3., 4.]]]], requires_grad=True), torch.tensor(
        [[[[1., 2.], [3., 4.]]]], requires_grad=True)
    for lib, F_, t in ((internals, F, x), (torch, NNF, tx)):
        g, = lib.autograd.grad((F_.max_pool2d(t * t, 2) ** 3).sum(), t, create_graph=True)
        g.sum().backward()
    assert x.grad.to_torch().equal(tx.grad)


def test_cdist_second_derivative_refuses_as_torch_does():
    def second(lib):
        a = lib.tensor([[0.0, 1.0], [2.0, 0.5]], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[1.0, 1.0]], dtype=lib.float64)
        g, = lib.autograd.grad(lib.cdist(a * 2, b).sum(), a, create_graph=True)
        lib.autograd.grad(g.sum(), a)
    with pytest.raises(NotImplementedError) as theirs:
        second(torch)
    with pytest.raises(NotImplementedError) as ours:
        second(internals)
    assert "_cdist_backward" in str(ours.value) and "_cdist_backward" in str(theirs.value)
