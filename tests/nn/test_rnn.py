"""Differential tests of the recurrent layers against torch: RNN (tanh, relu), LSTM (with and
without a projection), GRU and the three cells.

Each layer is built from the same seed in both libraries (no weights copied) and must have
torch's parameter names, shapes and values; then outputs, final states, the gradients of the
input, the initial state and every parameter, and the grad_fn names are compared, across
layers, directions, batch_first, unbatched input, given initial states and dropout between
layers (torch's random stream). State dicts and checkpoint files go both ways. Float64 keeps
the comparison tight (the products sum in another order than torch's BLAS); one float32 case
shows the ulps a reader sees.
"""
import io
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error

import internals

I = internals.from_torch      # noqa: E741
TOL64 = dict(rtol=1e-10, atol=1e-12)
TOL32 = dict(rtol=2e-5, atol=2e-6)

# (class name, constructor keywords)
KINDS = {
    "rnn_tanh": ("RNN", {}),
    "rnn_relu": ("RNN", {"nonlinearity": "relu"}),
    "gru": ("GRU", {}),
    "lstm": ("LSTM", {}),
    "lstm_proj": ("LSTM", {"proj_size": 3}),
}
CONFIGS = {
    "one_layer": dict(num_layers=1),
    "two_layers_bidirectional": dict(num_layers=2, bidirectional=True),
    "batch_first_no_bias": dict(num_layers=2, batch_first=True, bias=False),
    "batch_first_bidirectional": dict(batch_first=True, bidirectional=True),
}


def twins(kind, dtype=torch.float64, seed=0, input_size=3, hidden_size=5, **config):
    """The layer built from one seed in each library."""
    name, extra = KINDS[kind]
    built = []
    for lib in (internals, torch):
        lib.manual_seed(seed)
        ldtype = getattr(lib, str(dtype).split(".")[1])
        built.append(getattr(lib.nn, name)(input_size, hidden_size, dtype=ldtype, **extra, **config))
    return built


def as_tuple(state):
    return state if isinstance(state, tuple) else (state,)


def assert_same_parameters(ours, theirs):
    """Names in order, and values bit for bit (uniform_ draws the same floats from one seed)."""
    ours_p, theirs_p = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(ours_p) == list(theirs_p)
    for name in theirs_p:
        assert_same(ours_p[name].detach(), theirs_p[name].detach())


def run_both(ours, theirs, x, hx=None, tol=TOL64):
    """Forward and backward in both libraries; compares outputs, states, gradients, nodes."""
    x_t = x.clone().requires_grad_()
    x_o = I(x).requires_grad_()
    hx_t = None if hx is None else tuple(h.clone().requires_grad_() for h in as_tuple(hx))
    hx_o = None if hx is None else tuple(I(h).requires_grad_() for h in as_tuple(hx))

    def call(model, inp, state):
        if state is None:
            return model(inp)
        return model(inp, state if len(state) == 2 else state[0])

    out_t, h_t = call(theirs, x_t, hx_t)
    out_o, h_o = call(ours, x_o, hx_o)
    assert_same(out_o.detach(), out_t.detach(), exact_layout=False, **tol)
    for a, b in zip(as_tuple(h_o), as_tuple(h_t)):
        assert_same(a.detach(), b.detach(), **tol)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    assert tuple(out_o.stride()) == tuple(out_t.stride())
    assert type(out_o.grad_fn).__name__ == type(out_t.grad_fn).__name__
    loss_t = out_t.pow(2).sum() + sum(h.sum() for h in as_tuple(h_t))
    loss_o = out_o.pow(2).sum() + sum(h.sum() for h in as_tuple(h_o))
    loss_t.backward()
    loss_o.backward()
    assert_same(x_o.grad, x_t.grad, **tol)
    for a, b in zip(hx_o or (), hx_t or ()):
        assert_same(a.grad, b.grad, **tol)
    for (name, p_o), (_, p_t) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_same(p_o.grad, p_t.grad, **tol), name


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("kind", KINDS)
def test_layer_matches_torch(kind, config):
    ours, theirs = twins(kind, **CONFIGS[config])
    assert_same_parameters(ours, theirs)
    assert repr(ours) == repr(theirs)
    shape = (2, 4, 3) if CONFIGS[config].get("batch_first") else (4, 2, 3)
    run_both(ours, theirs, torch.randn(*shape, dtype=torch.float64))


@pytest.mark.parametrize("kind", KINDS)
def test_given_initial_state(kind):
    ours, theirs = twins(kind, num_layers=2, bidirectional=True)
    out_size = 3 if kind == "lstm_proj" else 5
    h0 = torch.randn(4, 2, out_size, dtype=torch.float64)
    hx = (h0, torch.randn(4, 2, 5, dtype=torch.float64)) if kind.startswith("lstm") else h0
    run_both(ours, theirs, torch.randn(6, 2, 3, dtype=torch.float64), hx)


@pytest.mark.parametrize("kind", ["rnn_tanh", "gru", "lstm"])
def test_unbatched_input(kind):
    ours, theirs = twins(kind, batch_first=True)
    hx = torch.randn(1, 5, dtype=torch.float64)
    run_both(ours, theirs, torch.randn(4, 3, dtype=torch.float64),
             (hx, torch.randn(1, 5, dtype=torch.float64)) if kind == "lstm" else hx)


@pytest.mark.parametrize("kind", ["rnn_relu", "gru", "lstm"])
def test_dropout_between_layers_draws_torchs_stream(kind):
    ours, theirs = twins(kind, num_layers=3, dropout=0.5)
    x = torch.randn(4, 2, 3, dtype=torch.float64)
    torch.manual_seed(7)
    internals.manual_seed(7)
    run_both(ours, theirs, x)
    ours.eval()
    theirs.eval()        # no dropout in eval mode: the same numbers without reseeding
    run_both(ours, theirs, x)


def test_float32_within_ulps():
    """torch runs a float32 LSTM through oneDNN's fused layer (node ``MkldnnRnnLayerBackward0``,
    its own sums), and so does internals (tests/nn/test_lstm_onednn_layer.py)."""
    ours, theirs = twins("lstm", dtype=torch.float32, num_layers=2)
    run_both(ours, theirs, torch.randn(5, 3, 3), tol=TOL32)


@pytest.mark.parametrize("kind", ["rnn_tanh", "gru", "lstm_proj"])
def test_state_dict_both_ways(kind):
    """torch's state dict loads into internals' layer built from another seed, and back; a
    checkpoint file saved by either library loads in the other."""
    ours, _ = twins(kind, seed=1, num_layers=2, bidirectional=True)
    _, theirs = twins(kind, seed=2, num_layers=2, bidirectional=True)
    ours.load_state_dict({k: I(v) for k, v in theirs.state_dict().items()})
    assert_same_parameters(ours, theirs)
    buffer = io.BytesIO()
    internals.save(ours.state_dict(), buffer)
    buffer.seek(0)
    _, fresh = twins(kind, seed=3, num_layers=2, bidirectional=True)
    fresh.load_state_dict(torch.load(buffer))
    assert_same_parameters(ours, fresh)
    buffer = io.BytesIO()
    torch.save(theirs.state_dict(), buffer)
    buffer.seek(0)
    fresh_ours, _ = twins(kind, seed=4, num_layers=2, bidirectional=True)
    fresh_ours.load_state_dict(internals.load(buffer))
    assert_same_parameters(fresh_ours, theirs)


def test_all_weights_and_flatten_parameters():
    ours, theirs = twins("lstm", num_layers=2, bidirectional=True)
    ours.flatten_parameters()
    assert [[tuple(p.shape) for p in layer] for layer in ours.all_weights] == \
        [[tuple(p.shape) for p in layer] for layer in theirs.all_weights]
    assert ours._flat_weights_names == theirs._flat_weights_names


@pytest.mark.parametrize("bad", [
    lambda lib, m: m(lib.randn(2, 3, 4, 3, dtype=lib.float64)),          # 4-D input
    lambda lib, m: m(lib.randn(4, 2, 7, dtype=lib.float64)),             # wrong input size
    lambda lib, m: m(lib.randn(4, 2, 3)),                                # float32 input, float64 weights
    lambda lib, m: m(lib.randn(4, 2, 3, dtype=lib.float64), lib.zeros(1, 2, 5, dtype=lib.float64)),
    lambda lib, m: m(lib.randn(4, 2, 3, dtype=lib.float64), lib.zeros(2, 5, dtype=lib.float64)),
], ids=["4d", "input_size", "dtype", "hidden_layers", "hidden_rank"])
@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_bad_input_raises_torchs_error(kind, bad):
    ours, theirs = twins(kind, num_layers=2)
    if kind == "lstm":
        wrap_o, wrap_t = ours, theirs

        def adapt(lib, m):
            def call(x, h=None):
                return m(x) if h is None else m(x, (h, h))
            return call
        ours, theirs = adapt(internals, wrap_o), adapt(torch, wrap_t)
    err_o, err_t = assert_same_error(lambda: bad(internals, ours), lambda: bad(torch, theirs))
    assert str(err_o) == str(err_t)


@pytest.mark.parametrize("build", [
    lambda nn: nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda nn: nn.LSTM(3, 4, dropout=1.5),
    lambda nn: nn.GRU(3, 0),
    lambda nn: nn.LSTM(3, 4, proj_size=4),
    lambda nn: nn.GRU(3, 4, batch_first=1),
    lambda nn: nn.GRU(3, 4, proj_size=2),
    lambda nn: nn.RNN(3, 4, proj_size=0),
], ids=["nonlinearity", "dropout", "hidden_size", "proj_size", "batch_first_type", "gru_projection",
        "rnn_projection"])
def test_bad_configuration_raises_torchs_error(build):
    err_o, err_t = assert_same_error(lambda: build(internals.nn), lambda: build(torch.nn))
    assert str(err_o) == str(err_t)


def test_dropout_with_one_layer_warns_as_torch():
    for nn in (internals.nn, torch.nn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            nn.GRU(3, 4, dropout=0.2)
        assert [str(w.message)[:40] for w in caught] == ["dropout option adds dropout after all bu"]


# ---- cells
CELLS = {"rnn_cell": ("RNNCell", {}), "rnn_cell_relu": ("RNNCell", {"nonlinearity": "relu"}),
         "lstm_cell": ("LSTMCell", {}), "gru_cell": ("GRUCell", {})}


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given_state", [True, False])
@pytest.mark.parametrize("cell", CELLS)
def test_cell_matches_torch(cell, given_state, batched):
    name, extra = CELLS[cell]
    built = []
    for lib in (internals, torch):
        lib.manual_seed(0)
        built.append(getattr(lib.nn, name)(3, 4, dtype=lib.float64, **extra))
    ours, theirs = built
    assert_same_parameters(ours, theirs)
    assert repr(ours) == repr(theirs)
    lead = (2,) if batched else ()
    x = torch.randn(*lead, 3, dtype=torch.float64)
    state = None
    if given_state:
        state = torch.randn(*lead, 4, dtype=torch.float64)
        state = (state, torch.randn(*lead, 4, dtype=torch.float64)) if name == "LSTMCell" else (state,)
    x_t, x_o = x.clone().requires_grad_(), I(x).requires_grad_()
    args_t = (x_t,) if state is None else (x_t, state if name == "LSTMCell" else state[0])
    args_o = (x_o,) if state is None else (x_o, tuple(I(s) for s in state) if name == "LSTMCell" else I(state[0]))
    out_t, out_o = as_tuple(theirs(*args_t)), as_tuple(ours(*args_o))
    for a, b in zip(out_o, out_t):
        assert_same(a.detach(), b.detach(), **TOL64)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    sum(o.pow(2).sum() for o in out_t).backward()
    sum(o.pow(2).sum() for o in out_o).backward()
    assert_same(x_o.grad, x_t.grad, **TOL64)
    for p_o, p_t in zip(ours.parameters(), theirs.parameters()):
        assert_same(p_o.grad, p_t.grad, **TOL64)


def test_cell_errors_match_torch():
    for bad in (lambda lib: lib.nn.GRUCell(3, 4)(lib.randn(2, 5)),
                lambda lib: lib.nn.LSTMCell(3, 4)(lib.randn(2, 3), (lib.randn(3, 4), lib.randn(3, 4))),
                lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 2, 3))):
        err_o, err_t = assert_same_error(lambda bad=bad: bad(internals), lambda bad=bad: bad(torch))
        assert str(err_o) == str(err_t)


@pytest.mark.parametrize("state", [
    lambda lib: (lib.randn(2, 4),),
    lambda lib: (lib.randn(2, 2, 4), lib.randn(2, 4)),
    lambda lib: (lib.randn(2, 4), lib.randn(2, 2, 4)),
    lambda lib: lib.randn(2, 2, 4),
], ids=["one_state", "h_3d", "c_3d", "tensor_3d"])
def test_cell_state_errors_name_the_state_at_fault(state):
    """An LSTMCell's (h, c) is checked one by one (``hx[1]`` named when c has 3 dims) and a batched
    state of one tensor is at::lstm_cell's RuntimeError; a GRUCell's 3-d state its own message."""
    cell = "GRUCell" if state(torch).__class__ is torch.Tensor else "LSTMCell"

    def call(lib):
        return getattr(lib.nn, cell)(3, 4)(lib.randn(2, 3), state(lib))
    err_o, err_t = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(err_o) == str(err_t)


# ---- cuda (Numba's simulator without a GPU)
@pytest.mark.slow
def test_lstm_on_cuda_matches_cpu():
    """The same weights on the cuda device give the CPU's outputs, states and gradients."""
    cpu, _ = twins("lstm", bidirectional=True, hidden_size=3)
    gpu, _ = twins("lstm", bidirectional=True, hidden_size=3)
    gpu.to("cuda")
    x = internals.from_torch(torch.randn(3, 2, 3, dtype=torch.float64))
    results = []
    for model, inp in ((cpu, x.requires_grad_()), (gpu, x.detach().to("cuda").requires_grad_())):
        out, state = model(inp)
        (out.sum() + sum(s.sum() for s in as_tuple(state))).backward()
        results.append([out.detach(), *as_tuple(state), inp.grad, *(p.grad for p in model.parameters())])
    for on_cpu, on_gpu in zip(*results):
        assert on_gpu.device.type == "cuda"
        assert_same(on_gpu.detach().to("cpu"), on_cpu.detach().to_torch(), **TOL64)


# ---- the whole training graph
def _graph_names(t):
    """Each node's name in the graph behind ``t``, with how often it appears."""
    seen, counts, todo = set(), {}, [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        counts[fn.name()] = counts.get(fn.name(), 0) + 1
        todo.extend(f for f, _ in fn.next_functions)
    return counts


@pytest.mark.parametrize("kind", ["lstm", "gru", "lstm_proj"])
def test_training_graph_has_torchs_nodes(kind):
    """The gates of a step are split with ``unsafe_chunk``, as torch's cells do: the graph
    holds UnsafeSplitBackward0 nodes, no SplitBackward0 (float64: the layer by layer path,
    not oneDNN's one node)."""
    ours, theirs = twins(kind, num_layers=2)
    x = torch.randn(4, 2, 3, dtype=torch.float64, requires_grad=True)
    assert _graph_names(ours(I(x.detach()).requires_grad_())[0]) == _graph_names(theirs(x)[0])


@pytest.mark.parametrize("cell", ["lstm_cell", "gru_cell"])
def test_cell_graph_has_torchs_nodes(cell):
    name, extra = CELLS[cell]
    graphs = []
    for lib in (internals, torch):
        lib.manual_seed(0)
        out = getattr(lib.nn, name)(3, 4, dtype=lib.float64, **extra)(lib.ones(2, 3, dtype=lib.float64))
        graphs.append(_graph_names(as_tuple(out)[0]))
    assert graphs[0] == graphs[1]
