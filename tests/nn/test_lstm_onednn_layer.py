"""nn.LSTM through oneDNN's fused layer, ``mkldnn_rnn_layer``, as torch's CPU wheel runs it.

torch sends a float32 LSTM without projections (bfloat16 or, without grad mode, half where oneDNN
computes them natively) to one ``mkldnn_rnn_layer`` call per layer and direction, whatever the
layout, the number of layers, the directions, the biases, the mode (train or eval) or which
inputs require grad; float64, a projection and a packed sequence keep the composed cells. The
graphs (node names two levels down, strides), values within ulps, the first gradients taken with
``create_graph`` (their nodes and strides) and the second derivatives are compared with torch's.
"""
import warnings

import pytest
import torch
from helpers import assert_same_error, assert_within_ulps_of_largest, torch_on_one_thread

import internals

I = internals.from_torch      # noqa: E741

CONFIGS = {
    "one_layer": dict(),
    "batch_first": dict(batch_first=True),
    "no_bias": dict(bias=False),
    "two_layers_bidirectional_batch_first": dict(num_layers=2, bidirectional=True, batch_first=True),
}


def _tree(node, depth=2):
    if node is None:
        return None
    children = [_tree(n, depth - 1) for n, _ in node.next_functions] if depth else []
    return type(node).__name__, children


def _run(lib, config, initial_state, train=True):
    """Output, final states, the first gradients (create_graph) and the second derivatives."""
    lib.manual_seed(0)
    model = lib.nn.LSTM(3, 4, **config)
    model.train(train)
    convert = I if lib is internals else (lambda t: t)
    gen = torch.Generator().manual_seed(1)
    batch_first, layers = config.get("batch_first", False), config.get("num_layers", 1)
    x = convert(torch.randn((2, 5, 3) if batch_first else (5, 2, 3), generator=gen)).requires_grad_()
    inputs, args = [x], [x]
    if initial_state:
        d = layers * (2 if config.get("bidirectional") else 1)
        state = tuple(convert(torch.randn(d, 2, 4, generator=gen)).requires_grad_() for _ in range(2))
        inputs += state
        args.append(state)
    inputs += list(model.parameters())
    out, (h, c) = model(*args)
    grads = lib.autograd.grad(out.pow(2).sum() + (h * c).sum(), inputs, create_graph=True)
    second = lib.autograd.grad(sum(g.pow(2).sum() for g in grads), inputs, allow_unused=True)
    return (out, h, c), grads, second


def _compare(ours, theirs, n):
    for a, b in zip(ours, theirs):
        if b is None:
            assert a is None
            continue
        assert_within_ulps_of_largest(a.detach(), b.detach(), n)


@pytest.mark.parametrize("initial_state", [False, True], ids=["zero_state", "given_state"])
@pytest.mark.parametrize("config", CONFIGS)
def test_float32_lstm_is_onednn_layers_with_torchs_graph(config, initial_state):
    with torch_on_one_thread():
        theirs = _run(torch, CONFIGS[config], initial_state)
    ours = _run(internals, CONFIGS[config], initial_state)
    for a, b in zip(ours[0], theirs[0]):
        assert _tree(a.grad_fn) == _tree(b.grad_fn)
    assert type(theirs[0][0].grad_fn).__name__ in ("MkldnnRnnLayerBackward0", "TransposeBackward0")
    _compare(ours[0], theirs[0], 4)
    assert [(type(g.grad_fn).__name__, g.stride()) for g in ours[1]] == \
        [(type(g.grad_fn).__name__, g.stride()) for g in theirs[1]]
    _compare(ours[1], theirs[1], 8)
    _compare(ours[2], theirs[2], 16)


def _output_node(lib, dtype="float32", train=True, requires_grad=True, packed=False, **config):
    lib.manual_seed(0)
    model = lib.nn.LSTM(3, 4, dtype=getattr(lib, dtype), **config).train(train)
    x = lib.ones(5, 2, 3, dtype=getattr(lib, dtype), requires_grad=requires_grad)
    if packed:
        x = lib.nn.utils.rnn.pack_padded_sequence(x, [5, 3])
    out = model(x)[0]
    return type((out.data if packed else out).grad_fn).__name__


@pytest.mark.parametrize("case", [
    dict(), dict(train=False), dict(requires_grad=False), dict(dropout=0.5, num_layers=2),
    dict(dtype="float64"), dict(dtype="bfloat16"), dict(packed=True), dict(bidirectional=True, packed=True),
], ids=["float32", "eval", "input_without_grad", "dropout", "float64", "bfloat16", "packed", "packed_bidirectional"])
def test_which_lstms_take_the_onednn_layer(case):
    """bfloat16 follows the CPU (oneDNN's native bfloat16), in torch and here alike."""
    assert _output_node(internals, **case) == _output_node(torch, **case)


def test_projection_keeps_the_composed_cells():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # torch warns once a process that it falls back
        assert _output_node(internals, proj_size=2) == _output_node(torch, proj_size=2) == "StackBackward0"


def test_projection_warns_once_a_process():
    """torch's TORCH_WARN_ONCE: the first float32 LSTM with a projection warns that it keeps the
    composed cells, later ones do not (the flag is reset here, as in a fresh process)."""
    internals.c10.exception.reset_warn_once("_warn_projection_once")
    model = internals.nn.LSTM(3, 4, proj_size=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model(internals.ones(2, 1, 3))
        model(internals.ones(2, 1, 3))
    assert [str(w.message) for w in caught] == [
        "LSTM with projections is not supported with oneDNN. Using default implementation."]


def _layer_args(lib):
    gen = torch.Generator().manual_seed(2)
    convert = I if lib is internals else (lambda t: t)
    tensors = [torch.randn(*s, generator=gen) for s in ((3, 2, 3), (16, 3), (16, 4), (16,), (16,), (2, 4), (2, 4))]
    return [convert(t).requires_grad_() for t in tensors]


def test_layer_backward_operator_refuses_a_derivative():
    """torch's derivatives.yaml lists mkldnn_rnn_layer_backward without formulas: called on inputs
    that require grad, its outputs hang from a NotImplemented node."""
    def run(lib):
        args = _layer_args(lib)
        out = lib.ops.aten.mkldnn_rnn_layer(*args, False, [], 2, 4, 1, True, False, False, True)
        grads = lib.ops.aten.mkldnn_rnn_layer_backward(*args, *out[:3], out[0] * 1, None, None, False, 2, 4, 1,
                                                       True, True, False, [], False, out[3])
        assert [type(g.grad_fn).__name__ for g in grads] == ["NotImplemented"] * 7
        grads[0].sum().backward()
    err_o, err_t = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(err_o) == str(err_t)


def test_layer_refuses_a_mode_other_than_lstm():
    def run(lib):
        args = _layer_args(lib)
        lib.ops.aten.mkldnn_rnn_layer(*args, False, [], 3, 4, 1, True, False, False, True)
    err_o, err_t = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(err_o) == str(err_t)
