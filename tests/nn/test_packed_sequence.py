"""Differential tests of packed sequences against torch: ``nn.utils.rnn`` (``pack_padded_sequence``
with ``enforce_sorted`` both ways, ``pad_packed_sequence``, ``pad_sequence`` on either side,
``pack_sequence``, ``unpack_sequence``, ``unpad_sequence``, ``PackedSequence``) and RNN, GRU and
LSTM run on a ``PackedSequence``.

Every layer is built from the same seed in both libraries; outputs (packed and padded back),
final states, the gradients of the input, the initial state and the weights, and the node names
are compared, with and without an initial state, one or two layers, one or two directions.
Float64 keeps the comparison tight (torch's BLAS sums a product in another order).
"""
import pytest
import torch
from helpers import assert_same, assert_same_error, same_error

import internals

I = internals.from_torch      # noqa: E741
TOL = dict(rtol=1e-12, atol=1e-12)


def test_pack_and_pad_round_trip():
    results = []
    for lib in (torch, internals):
        lib.manual_seed(0)
        x = lib.randn(5, 3, 2, dtype=lib.float64, requires_grad=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lib.tensor([5, 2, 3]), enforce_sorted=False)
        padded, lengths = lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first=True, padding_value=-1.0,
                                                               total_length=6)
        padded.pow(2).sum().backward()
        results.append((packed, type(packed.data.grad_fn).__name__, padded, lengths, x.grad))
    (p_t, node_t, pad_t, len_t, g_t), (p_i, node_i, pad_i, len_i, g_i) = results
    assert node_i == node_t == "PackPaddedSequenceBackward0"
    for ours, theirs in zip(p_i, p_t):
        assert_same(ours, theirs)           # sorted_indices given, so all four are tensors
    for ours, theirs in ((pad_i, pad_t), (len_i, len_t), (g_i, g_t)):
        assert_same(ours, theirs)
    assert repr(type(p_i).__name__) == repr(type(p_t).__name__) and p_i._fields == p_t._fields


@pytest.mark.parametrize("batch_first", (False, True))
@pytest.mark.parametrize("side", ("right", "left"))
def test_pad_pack_and_unpack_sequences(batch_first, side):
    seqs = [torch.randn(n, 2) for n in (2, 4, 1)]
    ours = internals.nn.utils.rnn.pad_sequence([I(s) for s in seqs], batch_first, 0.5, side)
    assert_same(ours, torch.nn.utils.rnn.pad_sequence(seqs, batch_first, 0.5, side))
    packed_t = torch.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    packed_i = internals.nn.utils.rnn.pack_sequence([I(s) for s in seqs], enforce_sorted=False)
    for o, t in zip(packed_i, packed_t):   # enforce_sorted=False: all four are tensors
        assert_same(o, t)
    for o, t in zip(internals.nn.utils.rnn.unpack_sequence(packed_i), torch.nn.utils.rnn.unpack_sequence(packed_t)):
        assert_same(o, t)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [2, 3, 1]),
    lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2]),
    lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2, 0]),
    lambda lib, x: lib.nn.utils.rnn.pad_packed_sequence(lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2, 1]),
                                                        total_length=2),
    lambda lib, x: lib.nn.utils.rnn.pad_sequence([]),
    lambda lib, x: lib.nn.utils.rnn.pad_sequence([x[0]], padding_side="middle"),
    lambda lib, x: lib.nn.LSTM(2, 3)(lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2, 1]), (x[:1, :, :1],) * 2),
], ids=["unsorted", "wrong_count", "zero_length", "total_length_too_short", "no_sequences", "unknown_side",
        "state_wrong_size"])
def test_errors_match_torch(call):
    x = torch.randn(3, 3, 2)
    assert_same_error(lambda: call(internals, I(x)), lambda: call(torch, x))


@pytest.mark.parametrize("sequences", [
    lambda lib: [lib.tensor(1.), lib.tensor(2.)],
    lambda lib: [lib.ones(2), lib.tensor(2.)],
    lambda lib: [1.0, 2.0],
    lambda lib: [lib.ones(2), "a"],
], ids=["zero_dim_first", "zero_dim_second", "floats", "a_string"])
def test_pad_sequence_refuses_what_torch_refuses(sequences):
    """torch's pad_sequence reads a list of Tensors (a TypeError naming the element otherwise) and
    slices the first one's sizes past the first (a RuntimeError for a 0-d first sequence); the
    last two used to raise AttributeError and the first IndexError."""
    same_error(lambda lib: lib.nn.utils.rnn.pad_sequence(sequences(lib)))


def _run(lib, kind, layers, bidirectional, enforce_sorted, with_state, batch_first):
    lib.manual_seed(0)
    module = getattr(lib.nn, kind)(3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                                   dtype=lib.float64)
    x = lib.randn(3, 5, 3, dtype=lib.float64, requires_grad=True)
    lengths = [5, 4, 3] if enforce_sorted else [4, 5, 2]
    packed = lib.nn.utils.rnn.pack_padded_sequence(x if batch_first else x.transpose(0, 1), lengths,
                                                   batch_first=batch_first, enforce_sorted=enforce_sorted)
    state = None
    if with_state:
        h = lib.randn(layers * (2 if bidirectional else 1), 3, 4, dtype=lib.float64, requires_grad=True)
        state = (h, h.mul(0.5)) if kind == "LSTM" else h
    out, final = module(packed, state)
    padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)
    finals = final if isinstance(final, tuple) else (final,)
    (padded.sum() + sum(f.pow(2).sum() for f in finals)).backward()
    grads = [x.grad] + ([h.grad] if with_state else []) + [p.grad for p in module.parameters()]
    return out, padded, finals, grads, type(out.data.grad_fn).__name__


@pytest.mark.parametrize("kind", ("RNN", "GRU", "LSTM"))
@pytest.mark.parametrize("layers,bidirectional", ((1, False), (2, True)))
@pytest.mark.parametrize("enforce_sorted", (True, False))
@pytest.mark.parametrize("with_state", (False, True))
def test_recurrent_layers_on_packed_sequences(kind, layers, bidirectional, enforce_sorted, with_state):
    batch_first = layers == 2
    theirs = _run(torch, kind, layers, bidirectional, enforce_sorted, with_state, batch_first)
    ours = _run(internals, kind, layers, bidirectional, enforce_sorted, with_state, batch_first)
    assert type(ours[0]).__name__ == "PackedSequence" and ours[4] == theirs[4]
    for o, t in zip(ours[0], theirs[0]):     # data, batch_sizes, sorted and unsorted indices (or None)
        assert (o is None) == (t is None)
        if t is not None:
            assert_same(o, t, **TOL)
    assert_same(ours[1], theirs[1], **TOL)
    for group in (2, 3):
        assert len(ours[group]) == len(theirs[group])
        for o, t in zip(ours[group], theirs[group]):
            assert_same(o, t, **TOL)
