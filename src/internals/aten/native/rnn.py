"""One LSTM layer in one direction as a single operator (``aten/src/ATen/native/mkldnn/RNN.cpp``).

torch's CPU wheel runs a float32 (or bfloat16) ``nn.LSTM`` without projections through oneDNN's
fused layer, ``mkldnn_rnn_layer``: one call per layer and direction, so autograd records one
``MkldnnRnnLayerBackward0`` node per layer instead of a node per gate of every step. Here the
layer is composed of internals' operators (the input's projection for all steps in one
``linear``, then per step the hidden projection, the gates and the new state), run below
autograd, so only the layer's node is recorded, as in torch.

The backward recomputes the gates from the saved inputs and walks the steps backwards. torch
calls the fused backward with grad mode off and, when a second derivative is wanted
(``create_graph``), the same arithmetic written with differentiable operators
(``mkldnn_rnn_layer_differentiable_backward`` in FunctionsManual.cpp): here both are
:func:`lstm_layer_backward`, run below autograd or through it.
"""
from ...c10 import scalar_type as st
from ..dispatcher import call

__all__ = ["mkldnn_rnn_layer", "mkldnn_rnn_layer_backward", "lstm_layer_backward"]

LSTM_MODE = 2       # ideep's rnn_kind::LSTM, the only kind torch sends to this operator


def _check_mode(mode):
    if mode != LSTM_MODE:
        raise RuntimeError("could not create a primitive descriptor for the LSTM forward propagation primitive. "
                           "Run workload with environment variable ONEDNN_VERBOSE=all to get additional "
                           "diagnostic information.")


def _time_major(t, batch_first):
    return call("transpose.int", t, 0, 1) if batch_first else t


def _step_order(length, reverse):
    return range(length - 1, -1, -1) if reverse else range(length)


def _gates(x_t, h, weights):
    """The four gates of one step, activated: input, forget, cell (tanh), output."""
    w0, w1, w2, w3 = weights
    pre = call("add.Tensor", call("linear", x_t, w0, w2), call("linear", h, w1, w3))
    i, f, g, o = call("chunk", pre, 4, 1)
    return call("sigmoid", i), call("sigmoid", f), call("tanh", g), call("sigmoid", o)


def _cell(gates, c):
    """c' = f·c + i·g, h' = o·tanh(c')."""
    i, f, g, o = gates
    c_next = call("add.Tensor", call("mul.Tensor", f, c), call("mul.Tensor", i, g))
    return call("mul.Tensor", o, call("tanh", c_next)), c_next


def mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode, hidden_size,
                     num_layers, has_biases, bidirectional, batch_first, train):
    """(output, hy, cy, workspace): output (L, N, H) (batch first when asked), the last step's
    h and c, and an empty uint8 workspace (oneDNN keeps its intermediates there; nothing is kept
    here, the backward recomputes them)."""
    _check_mode(mode)
    x = _time_major(input, batch_first)
    igates = call("linear", x, weight0, weight2)
    h, c = hx_, cx_
    outputs = [None] * x.shape[0]
    for t in _step_order(x.shape[0], reverse):
        pre = call("add.Tensor", call("linear", h, weight1, weight3), call("select.int", igates, 0, t))
        i, f, g, o = call("chunk", pre, 4, 1)
        h, c = _cell((call("sigmoid", i), call("sigmoid", f), call("tanh", g), call("sigmoid", o)), c)
        outputs[t] = h
    output = call("stack", outputs, 0) if outputs else call("empty.memory_format", [0, *hx_.shape],
                                                             dtype=input.dtype, device=input.device)
    workspace = call("empty.memory_format", [0], dtype=st.uint8, device=input.device)
    return _time_major(output, batch_first), h, c, workspace


def _one_minus(t):
    """1 - t, as C++'s ``1 - tensor`` computes it: a tensor of ones minus t."""
    return call("sub.Tensor", call("full_like", t, 1), t)


def _step_backward(dh, dc, gates, c_prev, c):
    """The gradients of the four gates' pre-activations (concatenated) and of the cell state
    before the step, from those of the step's h and c."""
    i, f, g, o = gates
    tanh_c = call("tanh", c)
    dc = call("add.Tensor", dc, call("mul.Tensor", call("mul.Tensor", dh, o),
                                    _one_minus(call("mul.Tensor", tanh_c, call("tanh", c)))))
    di = call("mul.Tensor", call("mul.Tensor", call("mul.Tensor", dc, g), i), _one_minus(i))
    df = call("mul.Tensor", call("mul.Tensor", call("mul.Tensor", dc, c_prev), f), _one_minus(f))
    dg = call("mul.Tensor", call("mul.Tensor", dc, i), _one_minus(call("mul.Tensor", g, g)))
    do = call("mul.Tensor", call("mul.Tensor", call("mul.Tensor", dh, tanh_c), o), _one_minus(o))
    return call("cat", [di, df, dg, do], 1), call("mul.Tensor", dc, f)


def _accumulate(total, term):
    return term if total is None else call("add.Tensor", total, term)


def _recompute(x, hx, cx, weights, reverse):
    """Each step's activated gates and its (h, c) before and after, in time order."""
    h, c = hx, cx
    steps = [None] * x.shape[0]
    for t in _step_order(x.shape[0], reverse):
        gates = _gates(call("select.int", x, 0, t), h, weights)
        h_next, c_next = _cell(gates, c)
        steps[t] = (gates, h, c, c_next)
        h, c = h_next, c_next
    return steps


def lstm_layer_backward(input, weight0, weight1, weight2, weight3, hx_, cx_, grad_output, grad_hy, grad_cy, reverse,
                        batch_first):
    """(d input, d weight0, d weight1, d bias, d bias, d hx, d cx): one bias gradient serves
    both biases (they are added before the gates). An undefined incoming gradient counts as
    zeros; all three undefined give no gradients."""
    if grad_output is None and grad_hy is None and grad_cy is None:
        return (None,) * 7
    x = _time_major(input, batch_first)
    weights = (weight0, weight1, weight2, weight3)
    steps = _recompute(x, hx_, cx_, weights, reverse)
    if grad_output is None:
        grad_output = call("zeros", [x.shape[0], *hx_.shape], dtype=hx_.dtype, device=hx_.device)
    else:
        grad_output = _time_major(grad_output, batch_first)
    dh = call("zeros_like", hx_) if grad_hy is None else grad_hy
    dc = call("zeros_like", cx_) if grad_cy is None else grad_cy
    dx, dw0, dw1, db = [None] * x.shape[0], None, None, None
    for t in reversed(_step_order(x.shape[0], reverse)):
        gates, h_prev, c_prev, c = steps[t]
        dh = call("add.Tensor", call("select.int", grad_output, 0, t), dh)
        dgates, dc = _step_backward(dh, dc, gates, c_prev, c)
        dx[t] = call("unsqueeze", call("mm", dgates, weight0), 0)
        dgates_t = call("transpose.int", dgates, 0, 1)
        dw0 = _accumulate(dw0, call("mm", dgates_t, call("select.int", x, 0, t)))
        dw1 = _accumulate(dw1, call("mm", dgates_t, h_prev))
        db = _accumulate(db, call("sum.dim_IntList", dgates, [0]))
        dh = call("mm", dgates, weight1)
    return _time_major(call("cat", dx, 0), batch_first), dw0, dw1, db, db, dh, dc


def mkldnn_rnn_layer_backward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output, hy_, cy_, grad_output,
                              grad_hy, grad_cy, reverse, mode, hidden_size, num_layers, has_biases, train,
                              bidirectional, batch_sizes, batch_first, workspace):
    """The fused backward's seven gradients (input, the four weights, hx, cx); its bias
    gradients are two tensors, where the differentiable form returns one twice."""
    _check_mode(mode)
    grads = lstm_layer_backward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, grad_output, grad_hy,
                                grad_cy, reverse, batch_first)
    if grads[3] is not None:
        grads = (*grads[:4], call("clone", grads[4]), *grads[5:])
    return grads

