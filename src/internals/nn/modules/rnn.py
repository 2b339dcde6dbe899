"""Recurrent layers (``torch/nn/modules/rnn.py``): ``RNN`` (tanh or relu), ``LSTM`` and ``GRU``,
and their one-step forms ``RNNCell``, ``LSTMCell`` and ``GRUCell``.

torch runs the recurrence in C++ (``aten/src/ATen/native/RNN.cpp``: a *cell* is one step, a
*layer* scans a cell over the time steps, a *stack* feeds each layer's output to the next, with
dropout between layers). Here the same three pieces are Python functions composed of internals'
operators (``linear``, ``sigmoid``, ``tanh``, ``chunk``, ``stack``, ``cat``), so autograd records
them without any backward written for the recurrence, and the arithmetic follows torch's CPU
path step for step: the input projection of a whole layer is one ``linear`` over the sequence,
then each step adds the hidden projection to its slice. A float32 LSTM without projections
takes torch's CPU route instead: one ``mkldnn_rnn_layer`` operator per layer and direction
(oneDNN's fused layer in torch; ``aten/native/rnn.py`` here), so its graph has torch's
``MkldnnRnnLayerBackward0`` nodes.

The parameters have torch's names, shapes, gate order (LSTM: input, forget, cell, output; GRU:
reset, update, new) and initialisation order, so one seed gives torch's weights and state dicts
load in either library. The input is a padded (L, N, H) or (N, L, H) tensor, an unbatched (L, H)
one, or a ``PackedSequence`` (``nn.utils.rnn``), run as torch's ``PackedLayer`` runs it: at each
step only the ``batch_sizes[t]`` sequences still running, each sequence's final state kept from
its own last step.
"""
import math
import numbers
import warnings

from ..._functional import cat, empty, stack, zeros
from ...aten import dispatcher
from ...aten.native.dispatch_stub import onednn_native
from ...autograd.grad_mode import is_grad_enabled
from ...c10 import scalar_type as st
from ...c10.exception import warn_once
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ---- cells: one time step (``SimpleCell``, ``LSTMCell``, ``GRUCell`` in RNN.cpp)
# ``igates`` is the input's projection x W_ihᵀ + b_ih, computed by the caller (for a whole
# layer at once, as torch's CPU path does); ``params`` is (w_ih, w_hh, b_ih, b_hh, w_hr).
def _tanh_cell(igates, hx, params):
    return F.linear(hx, params[1], params[3]).add(igates).tanh()


def _relu_cell(igates, hx, params):
    return F.linear(hx, params[1], params[3]).add(igates).relu()


def _lstm_cell(igates, hidden, params):
    """Gates stacked (input, forget, cell, output) along dim 1; c' = f·c + i·g, h' = o·tanh(c'),
    then h' projected by ``w_hr`` where the LSTM has ``proj_size``."""
    hx, cx = hidden
    gates = F.linear(hx, params[1], params[3]).add(igates)
    ingate, forgetgate, cellgate, outgate = gates.unsafe_chunk(4, 1)
    ingate, forgetgate, outgate = ingate.sigmoid(), forgetgate.sigmoid(), outgate.sigmoid()
    cy = forgetgate.mul(cx).add(ingate.mul(cellgate.tanh()))
    hy = outgate.mul(cy.tanh())
    if params[4] is not None:
        hy = hy.matmul(params[4].t())
    return hy, cy


def _gru_cell(igates, hx, params):
    """Gates stacked (reset, update, new); the reset gate scales the hidden part of the new gate
    only, and h' = (h - n)·z + n, written as torch writes it."""
    i_r, i_z, i_n = igates.unsafe_chunk(3, 1)
    h_r, h_z, h_n = F.linear(hx, params[1], params[3]).unsafe_chunk(3, 1)
    resetgate = h_r.add(i_r).sigmoid()
    updategate = h_z.add(i_z).sigmoid()
    newgate = i_n.add(h_n.mul(resetgate)).tanh()
    return hx.sub(newgate).mul(updategate).add(newgate)


_CELLS = {"LSTM": _lstm_cell, "GRU": _gru_cell, "RNN_TANH": _tanh_cell, "RNN_RELU": _relu_cell}


def _output_of(hidden):
    """What a step emits: the hidden state (for an LSTM, h of the pair (h, c))."""
    return hidden[0] if isinstance(hidden, tuple) else hidden


# ---- layers and the stack (``FullLayer``, ``FullBidirectionalLayer``, ``apply_layer_stack``)
def _scan(cell, input, hidden, params, reverse=False):
    """One direction of one layer over a (L, N, H_in) input: the input projection for all steps
    in one ``linear``, then the steps in order (or backwards); outputs stacked in time order."""
    steps = F.linear(input, params[0], params[2]).unbind(0)
    outputs = []
    for igates in (reversed(steps) if reverse else steps):
        hidden = cell(igates, hidden, params)
        outputs.append(_output_of(hidden))
    if reverse:
        outputs.reverse()
    return stack(outputs, 0), hidden


def _hidden_slice(hidden, start, end):
    if isinstance(hidden, tuple):
        return tuple(h.narrow(0, start, end - start) for h in hidden)
    return hidden.narrow(0, start, end - start)


def _hidden_concat(hiddens):
    if isinstance(hiddens[0], tuple):
        return tuple(cat([h[i] for h in hiddens], 0) for i in range(len(hiddens[0])))
    return cat(hiddens, 0)


def _scan_packed(cell, data, hidden, params, batch_sizes):
    """``PackedLayer``: step t runs on the first batch_sizes[t] sequences; when the batch
    shrinks, the states of the sequences that ended are set aside as their final states."""
    steps_input = F.linear(data, params[0], params[2])
    outputs, finished, offset, last = [], [], 0, batch_sizes[0]
    for size in batch_sizes:
        if size < last:
            finished.append(_hidden_slice(hidden, size, last))
            hidden = _hidden_slice(hidden, 0, size)
        last = size
        hidden = cell(steps_input.narrow(0, offset, size), hidden, params)
        offset += size
        outputs.append(_output_of(hidden))
    finished.append(hidden)
    return cat(outputs, 0), _hidden_concat(finished[::-1])


def _scan_packed_reversed(cell, data, hidden, params, batch_sizes):
    """``ReversedPackedLayer``: from the last step back, starting with the sequences that run to
    the end and taking in each sequence's initial state as the steps reach its last element."""
    steps_input = F.linear(data, params[0], params[2])
    initial, outputs = hidden, []
    offset, last = steps_input.shape[0], batch_sizes[-1]
    hidden = _hidden_slice(initial, 0, last)
    for size in reversed(batch_sizes):
        if size > last:
            hidden = _hidden_concat([hidden, _hidden_slice(initial, last, size)])
        offset -= size
        last = size
        hidden = cell(steps_input.narrow(0, offset, size), hidden, params)
        outputs.append(_output_of(hidden))
    outputs.reverse()
    return cat(outputs, 0), hidden


def _run_stack(mode, input, hiddens, params, num_layers, dropout, training, bidirectional, batch_sizes=None):
    """All layers, each direction with its own parameters and initial state; between layers
    dropout while training (``at::dropout``, so torch's random stream). Returns the last
    layer's output and the final state of every layer and direction, in parameter order."""
    cell, directions = _CELLS[mode], 2 if bidirectional else 1
    finals = []
    for layer in range(num_layers):
        outputs = []
        for d in range(directions):
            k = layer * directions + d
            if batch_sizes is None:
                output, final = _scan(cell, input, hiddens[k], params[k], reverse=d == 1)
            else:
                scan = _scan_packed_reversed if d == 1 else _scan_packed
                output, final = scan(cell, input, hiddens[k], params[k], batch_sizes)
            outputs.append(output)
            finals.append(final)
        input = outputs[0] if directions == 1 else cat(outputs, outputs[0].dim() - 1)
        if dropout != 0 and training and layer < num_layers - 1:
            input = F.dropout(input, dropout, True)
    return input, finals


# ---- oneDNN's LSTM (``lstm_mkldnn_stub`` in RNN.cpp, ``mkldnn_impl`` in mkldnn/RNN.cpp)
_LSTM_MODE = 2      # ideep's rnn_kind::LSTM


def _use_mkldnn(input, hx, params):
    """``use_mkldnn``: every tensor on the CPU, a float32 input (bfloat16 or, without grad mode,
    half where oneDNN computes them natively), and not an empty one."""
    tensors = [input, *hx, *(p for layer in params for p in layer if p is not None)]
    if any(t.device.type != "cpu" for t in tensors) or input.numel() == 0:
        return False
    return (input.dtype == st.float32 or (input.dtype == st.bfloat16 and onednn_native("BFloat16"))
            or (input.dtype == st.float16 and not is_grad_enabled() and onednn_native("Half")))


def _warn_projection_once():
    """torch's oneDNN check warns (once a process) that a projection keeps the composed LSTM."""
    warn_once("_warn_projection_once", "LSTM with projections is not supported with oneDNN. Using default "
              "implementation.", UserWarning, stacklevel=4)


def _mkldnn_lstm(input, hx, params, num_layers, dropout, training, bidirectional, hidden_size):
    """Each layer and direction one ``mkldnn_rnn_layer`` call on the (L, N, H) input, its initial
    state selected from the stacked one; dropout between layers while training. Returns the last
    layer's output and the stacked final states."""
    directions = 2 if bidirectional else 1
    hy, cy = [], []
    for layer in range(num_layers):
        outputs = []
        for d in range(directions):
            k = layer * directions + d
            w_ih, w_hh, b_ih, b_hh, _ = params[k]
            has_biases = b_ih is not None
            if not has_biases:
                b_ih = b_hh = zeros((w_ih.shape[0],), dtype=w_ih.dtype, device=w_ih.device)
            # oneDNN reads dense buffers: a batch-first input, transposed, is copied first
            output, h, c, _ = dispatcher.call(
                "mkldnn_rnn_layer", input.contiguous(), w_ih, w_hh, b_ih, b_hh, hx[0].select(0, k).contiguous(),
                hx[1].select(0, k).contiguous(), d == 1, [], _LSTM_MODE, hidden_size, num_layers, has_biases,
                bidirectional, False, training)
            outputs.append(output)
            hy.append(h)
            cy.append(c)
        input = outputs[0] if directions == 1 else cat(outputs, -1)
        if dropout != 0 and training and layer < num_layers - 1:
            input = F.dropout(input, dropout, True)
    return input, (stack(hy, 0), stack(cy, 0))


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``,
    ``bias_ih_l{k}``, ``bias_hh_l{k}`` (``_reverse`` for the backward direction, ``weight_hr_l{k}``
    for an LSTM's projection), each drawn from U(-1/√hidden, 1/√hidden) in that order."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        _check_config(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size, directions = _GATES[mode] * hidden_size, 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for d in range(directions):
                shapes = [(gate_size, layer_input), (gate_size, real_hidden)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                names = [n.format(layer, "_reverse" if d == 1 else "") for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(empty(shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """torch packs the weights into one buffer for cuDNN; there is nothing to pack here."""

    def _cell_params(self):
        """(w_ih, w_hh, b_ih, b_hh, w_hr) for each layer and direction, None where absent."""
        result = []
        for names in self._all_weights:
            by_kind = {name.split("_l")[0]: getattr(self, name) for name in names}
            result.append(tuple(by_kind.get(kind) for kind in
                                ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")))
        return result

    def check_input(self, input, batch_sizes=None):
        """The dtype, the rank (2 for a packed sequence's data, else 3) and the feature size."""
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            have, want = f"torch.{input.dtype.name}", f"torch.{weight.dtype.name}"    # torch's dtype names
            raise ValueError(f"RNN input dtype ({have}) does not match weight dtype ({want}). "
                             f"Convert input: input.to({want}), or convert model: model.to({have})")
        rank = 2 if batch_sizes is not None else 3
        if input.dim() != rank:
            raise RuntimeError(f"input must have {rank} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input):
        batch = input.size(0) if self.batch_first else input.size(1)
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    def check_hidden_size(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected):
            raise RuntimeError(msg.format(expected, list(hx.size())))

    def _zeros(self, input, size):
        batch = input.size(0) if self.batch_first else input.size(1)
        return zeros((self.num_layers * (2 if self.bidirectional else 1), batch, size),
                     dtype=input.dtype, device=input.device)

    def _batched(self, input, name):
        """The input with a batch dim (unbatched (L, H) input gains one) and whether it had one."""
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead"
                             if name == "RNN" else
                             f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        if input.dim() == 3:
            return input, True
        return input.unsqueeze(0 if self.batch_first else 1), False

    def _run(self, input, hiddens):
        """The stack on the (L, N, H) layout, the output put back in the caller's."""
        if self.batch_first:
            input = input.transpose(0, 1)
        output, finals = _run_stack(self.mode, input, hiddens, self._cell_params(), self.num_layers,
                                    self.dropout, self.training, self.bidirectional)
        if self.batch_first:
            # torch swaps an LSTM's output back with ``transpose`` and the others' in place
            output = output.transpose(0, 1) if self.mode == "LSTM" else output.transpose_(0, 1)
        return output, finals

    def _forward_packed(self, packed, hx):
        """A ``PackedSequence`` in, one out (same batch sizes and permutations); the state is
        given and returned in the caller's batch order, run in the packed (sorted) order."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        sizes = batch_sizes.tolist()
        lstm = self.mode == "LSTM"
        layers = self.num_layers * (2 if self.bidirectional else 1)
        if hx is None:
            h = zeros((layers, sizes[0], self.proj_size or self.hidden_size), dtype=data.dtype, device=data.device)
            hx = (h, zeros((layers, sizes[0], self.hidden_size), dtype=data.dtype, device=data.device)) if lstm else h
        else:
            hx = _permute_hidden(hx, sorted_indices)
        self._check_packed(data, hx, sizes[0])
        hiddens = list(zip(hx[0].unbind(0), hx[1].unbind(0))) if lstm else hx.unbind(0)
        output, finals = _run_stack(self.mode, data, hiddens, self._cell_params(), self.num_layers, self.dropout,
                                    self.training, self.bidirectional, batch_sizes=sizes)
        if lstm:
            hidden = (stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0))
        else:
            hidden = stack(finals, 0)
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
            _permute_hidden(hidden, unsorted_indices)

    def _check_packed(self, data, hx, mini_batch):
        """``check_forward_args`` with batch sizes: 2-D data, states sized for the widest step."""
        self.check_input(data, batch_sizes=mini_batch)
        layers = self.num_layers * (2 if self.bidirectional else 1)
        expected = (layers, mini_batch, self.proj_size or self.hidden_size)
        if self.mode == "LSTM":
            self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(hx[1], (layers, mini_batch, self.hidden_size), "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(hx, expected)

    def _forward_single_state(self, input, hx):
        """RNN and GRU: one state tensor (layers·directions, N, H)."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, is_batched = self._batched(input, "RNN" if self.mode.startswith("RNN") else self.mode)
        if hx is not None:
            if is_batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not is_batched and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            hx = hx if is_batched else hx.unsqueeze(1)
        else:
            hx = self._zeros(input, self.hidden_size)
        self.check_input(input)
        self.check_hidden_size(hx, self.get_expected_hidden_size(input))
        output, finals = self._run(input, hx.unbind(0))
        hidden = stack(finals, 0)
        if not is_batched:
            return output.squeeze(0 if self.batch_first else 1), hidden.squeeze(1)
        return output, hidden

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _permute_hidden(hx, permutation):
    """The state's batch dim (1) reordered by ``permutation`` (``RNNBase.permute_hidden``)."""
    if permutation is None:
        return hx
    if isinstance(hx, tuple):
        return tuple(h.index_select(1, permutation) for h in hx)
    return hx.index_select(1, permutation)


def _check_config(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    """torch's constructor checks, in its order and with its exception classes."""
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                         "element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                      f"expects num_layers greater than 1, but got dropout={dropout} and "
                      f"num_layers={num_layers}", stacklevel=4)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


def _refuse_projection(kwargs):
    """RNN and GRU have no projection: torch names ``proj_size`` in a ValueError (its constructors
    take ``**kwargs``); any other unknown keyword is the TypeError of a Python call."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


class RNN(RNNBase):
    """h_t = act(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh), act tanh or relu (``nonlinearity``)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _refuse_projection(kwargs)
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """(output, h_n): output (L, N, D·H) of the last layer's states, h_n its final states."""
        return self._forward_single_state(input, hx)


class GRU(RNNBase):
    """r, z = σ(W_ir x + b_ir + W_hr h + b_hr), σ(…); n = tanh(W_in x + b_in + r·(W_hn h + b_hn));
    h' = (1 - z)·n + z·h."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _refuse_projection(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._forward_single_state(input, hx)


class LSTM(RNNBase):
    """The state is a pair (h, c); ``proj_size`` > 0 projects h to that size with ``weight_hr``."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """(output, (h_n, c_n))."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, is_batched = self._batched(input, "LSTM")
        if hx is None:
            hx = (self._zeros(input, self.proj_size or self.hidden_size), self._zeros(input, self.hidden_size))
        else:
            hx = self._unbatched_state(hx, is_batched)
        self.check_input(input)
        self.check_hidden_size(hx[0], self.get_expected_hidden_size(input), "Expected hidden[0] size {}, got {}")
        expected_cell = (*self.get_expected_hidden_size(input)[:2], self.hidden_size)
        self.check_hidden_size(hx[1], expected_cell, "Expected hidden[1] size {}, got {}")
        if self._routes_to_mkldnn(input, hx):
            output, (h_n, c_n) = self._run_mkldnn(input, hx)
        else:
            output, finals = self._run(input, list(zip(hx[0].unbind(0), hx[1].unbind(0))))
            h_n, c_n = stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0)
        if not is_batched:
            return output.squeeze(0 if self.batch_first else 1), (h_n.squeeze(1), c_n.squeeze(1))
        return output, (h_n, c_n)

    def _routes_to_mkldnn(self, input, hx):
        """torch's ``lstm`` takes oneDNN's layers where ``use_mkldnn`` holds and there is no
        projection (which it warns about once)."""
        if not _use_mkldnn(input, hx, self._cell_params()):
            return False
        if self.proj_size > 0:
            _warn_projection_once()
            return False
        return True

    def _run_mkldnn(self, input, hx):
        """The stack of oneDNN layers on the (L, N, H) layout, the output transposed back for
        a batch-first input."""
        if self.batch_first:
            input = input.transpose(0, 1)
        output, hidden = _mkldnn_lstm(input, hx, self._cell_params(), self.num_layers, self.dropout, self.training,
                                      self.bidirectional, self.hidden_size)
        return (output.transpose(0, 1) if self.batch_first else output), hidden

    @staticmethod
    def _unbatched_state(hx, is_batched):
        want = 3 if is_batched else 2
        if hx[0].dim() != want or hx[1].dim() != want:
            kind = "batched 3-D" if is_batched else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        return tuple(hx) if is_batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))


# ---- one-step modules (``RNNCellBase`` and the cells in rnn.py; ``rnn_tanh_cell`` etc. in RNN.cpp)
class RNNCellBase(Module):
    """``weight_ih`` (G·H, H_in), ``weight_hh`` (G·H, H), ``bias_ih``, ``bias_hh`` (G·H,), G gates,
    drawn from U(-1/√H, 1/√H) in that order."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty((num_chunks * hidden_size,), device=device, dtype=dtype))
            self.bias_hh = Parameter(empty((num_chunks * hidden_size,), device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _params(self):
        return (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)

    def _batched(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if isinstance(hx, tuple):       # LSTMCell's (h, c): torch names the one at fault
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"{name}: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        elif hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        return input.dim() == 2

    def _check(self, input, hx, label=""):
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        if input.size(0) != hx.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch size "
                               f"{hx.size(0)}")
        if hx.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, "
                               f"expected {self.hidden_size}")

    def _zeros(self, input):
        return zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        is_batched = self._batched(input, hx, "RNNCell")
        input = input if is_batched else input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else hx if is_batched else hx.unsqueeze(0)
        cells = {"tanh": _tanh_cell, "relu": _relu_cell}
        if self.nonlinearity not in cells:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check(input, hx)
        ret = cells[self.nonlinearity](F.linear(input, self.weight_ih, self.bias_ih), hx, self._params())
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """(h', c')."""
        is_batched = self._batched(input, hx, "LSTMCell")
        input = input if is_batched else input.unsqueeze(0)
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        elif len(hx) != 2:           # at::lstm_cell's own check of the batched state
            raise RuntimeError("lstm_cell expects two hidden states")
        self._check(input, hx[0], "0")
        self._check(input, hx[1], "1")
        hy, cy = _lstm_cell(F.linear(input, self.weight_ih, self.bias_ih), tuple(hx), self._params())
        return (hy, cy) if is_batched else (hy.squeeze(0), cy.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched = self._batched(input, hx, "GRUCell")
        input = input if is_batched else input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else hx if is_batched else hx.unsqueeze(0)
        self._check(input, hx)
        ret = _gru_cell(F.linear(input, self.weight_ih, self.bias_ih), hx, self._params())
        return ret if is_batched else ret.squeeze(0)

