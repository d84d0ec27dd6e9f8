"""Recurrent layers as torch.nn: ``RNN`` (tanh/relu), ``LSTM`` (optional projection), ``GRU`` and
their single-step cells. Parameters are named, shaped, ordered and initialised as torch's.

A layer computes every timestep's input projection with one matmul, then runs the recurrence as
one fused op (see Note [Fused recurrences] in ops/rnn.py). Cells are composites of graph ops.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ...ops import rnn as _rnn
from ...ops.creation import as_tensor, empty, zeros
from ...ops.elementwise import sigmoid, tanh
from ...ops.movement import cat, stack
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_type(name, value, kind):
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``,
    ``bias_ih_l{k}``, ``bias_hh_l{k}`` (``weight_hr_l{k}`` with ``proj_size``), ``_reverse`` for
    the second direction, all drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        _check_type("bias", bias, bool)
        _check_type("batch_first", batch_first, bool)
        _check_type("input_size", input_size, int)
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        _check_type("hidden_size", hidden_size, int)
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for fmt, shape in shapes:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op, as torch's on CPU (it packs weights for cuDNN)."""

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- forward ----------------------------------------------------------------------------------
    def _name(self):
        return "RNN" if self.mode.startswith("RNN") else self.mode

    def _check_input(self, input):
        w = getattr(self, self._flat_weights_names[0])
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _state_shape(self, batch, size):
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_hidden(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _prepare(self, input, hx, n_states):
        """Checks the input, adds the batch dim if unbatched; returns (input (T, B, I), hx as a
        tuple of n_states tensors or None, is_batched)."""
        if input.dim() not in (2, 3):
            what = "tensor " if self.mode.startswith("RNN") else ""
            raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D {what}instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            states = tuple(hx) if n_states == 2 else (hx,)
            want = 3 if batched else 2
            if any(h.dim() != want for h in states):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if n_states == 2:
                    dims = ", ".join(f"{h.dim()}-D" for h in states)
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                       f"got ({dims}) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{states[0].dim()}-D tensor")
            if not batched:
                states = tuple(h.unsqueeze(1) for h in states)
            hx = states
        self._check_input(input)
        if self.batch_first:
            input = input.transpose(0, 1)
        return input, hx, batched

    def _forward_packed(self, packed, hx, n_states):
        """A ``PackedSequence`` runs padded in sorted order (see Note [Packed recurrences]);
        ``hx`` comes and the final states go in the caller's order, permuted as torch's."""
        # Imported here: nn.utils imports the module system, which imports this file.
        from ..utils.rnn import PackedSequence, _lengths_from_batch_sizes, _pack_data, _pad_data

        data, batch_sizes, sorted_indices, unsorted_indices = packed
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        self._check_input(data)
        if hx is not None:
            hx = tuple(hx) if n_states == 2 else (hx,)
            if sorted_indices is not None:
                hx = tuple(h.index_select(1, sorted_indices) for h in hx)
        lengths = _lengths_from_batch_sizes(batch_sizes._data)
        padded = _pad_data(data, lengths, int(lengths[0]))
        output, states = self._run(padded, hx, True, lengths)
        if self.batch_first:  # _run hands batch_first output back; packing wants (T, B, H)
            output = output.transpose(0, 1)
        if unsorted_indices is not None:
            states = tuple(s.index_select(1, unsorted_indices) for s in states)
        return PackedSequence(_pack_data(output, lengths), batch_sizes, sorted_indices,
                              unsorted_indices), states

    def _run(self, input, hx, batched, lengths=None):
        """Runs all layers over ``input`` (T, B, I); returns (output, per-layer final states).

        Note [Packed recurrences]: with ``lengths`` (decreasing, a packed batch padded), the
        forward direction runs over the padding too (those steps follow every valid one and
        receive no gradient) and a sequence's final state is taken at its last valid step. The
        reverse direction runs forward over each sequence reversed within its own length, so
        it starts at the last valid step from h0; its outputs are reversed back the same way.
        """
        T, B = input.shape[0], input.shape[1]
        D = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = zeros(self._state_shape(B, real_hidden), dtype=input.dtype)
            hx = (h0, zeros(self._state_shape(B, self.hidden_size), dtype=input.dtype)) \
                if lstm else (h0,)
        self._check_hidden(hx[0], self._state_shape(B, real_hidden),
                           "Expected hidden[0] size {}, got {}" if lstm else
                           "Expected hidden size {}, got {}")
        if lstm:
            self._check_hidden(hx[1], self._state_shape(B, self.hidden_size),
                               "Expected hidden[1] size {}, got {}")
        h_n, c_n = [], []
        x = input
        if lengths is not None:
            cols = np.arange(B)
            last = (as_tensor(lengths - 1), as_tensor(cols))
            steps = np.arange(T)[:, None]
            # flip[t, b]: the step that step t of sequence b's reversal reads (t past its end: t)
            flip = np.where(steps < lengths, lengths - 1 - steps, steps)
            flip = (as_tensor(flip), as_tensor(np.broadcast_to(cols, (T, B)).copy()))
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                k = layer * D + d
                p = [getattr(self, n) for n in self._all_weights[k]]
                w_ih, w_hh = p[0], p[1]
                b_ih, b_hh = (p[2], p[3]) if self.bias else (None, None)
                w_hr = p[-1] if self.proj_size > 0 else None
                # One 2-D GEMM for all steps (a 3-D matmul loops over T small ones).
                # explicit sizes: a -1 cannot be inferred for a batch of 0 (torch allows it)
                gi = F.linear(x.reshape(T * B, x.shape[-1]), w_ih, b_ih).reshape(
                    T, B, w_ih.shape[0])
                rev = d == 1
                if lengths is not None and rev:
                    gi = gi[flip]
                    rev = False
                if lstm:
                    y = _rnn.lstm_layer(gi, hx[0][k], hx[1][k], w_hh, b_hh, w_hr, rev)
                else:
                    if self.mode == "GRU":
                        y = _rnn.gru_layer(gi, hx[0][k], w_hh, b_hh, rev)
                    else:
                        y = _rnn.rnn_layer(gi, hx[0][k], w_hh, b_hh,
                                           "tanh" if self.mode == "RNN_TANH" else "relu", rev)
                if lengths is not None:
                    fin = y[last]
                    if d == 1:
                        y = y[flip]
                else:
                    fin = y[0] if rev else y[T - 1]
                if lstm:
                    h_n.append(fin[:, :real_hidden])
                    c_n.append(fin[:, real_hidden:])
                    y = y[:, :, :real_hidden]
                else:
                    h_n.append(fin)
                outs.append(y)
            x = outs[0] if D == 1 else cat(outs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        output = x.transpose(0, 1) if self.batch_first else x
        states = (stack(h_n, 0),) + ((stack(c_n, 0),) if lstm else ())
        if not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            states = tuple(s.squeeze(1) for s in states)
        return output, states


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    >>> import graphgrad as torch
    >>> out, h = torch.nn.RNN(3, 5, num_layers=2)(torch.ones(4, 2, 3))
    >>> out.shape, h.shape
    (torch.Size([4, 2, 5]), torch.Size([2, 2, 5]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, tuple):  # a PackedSequence
            output, (h_n,) = self._forward_packed(input, hx, 1)
            return output, h_n
        input, hx, batched = self._prepare(input, hx, 1)
        output, (h_n,) = self._run(input, hx, batched)
        return output, h_n


class LSTM(RNNBase):
    """LSTM with gates i, f, g, o; ``proj_size > 0`` projects ``h_t`` by ``weight_hr``.

    >>> import graphgrad as torch
    >>> out, (h, c) = torch.nn.LSTM(3, 5, batch_first=True)(torch.ones(2, 4, 3))
    >>> out.shape, h.shape, c.shape
    (torch.Size([2, 4, 5]), torch.Size([1, 2, 5]), torch.Size([1, 2, 5]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, tuple):  # a PackedSequence
            return self._forward_packed(input, hx, 2)
        input, hx, batched = self._prepare(input, hx, 2)
        output, (h_n, c_n) = self._run(input, hx, batched)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """GRU with gates r, z, n: ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
    ``h' = (1 - z) * n + z * h``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, tuple):  # a PackedSequence
            output, (h_n,) = self._forward_packed(input, hx, 1)
            return output, h_n
        input, hx, batched = self._prepare(input, hx, 1)
        output, (h_n,) = self._run(input, hx, batched)
        return output, h_n


# -- cells ----------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """Parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh`` of one step."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batch(self, input, states, what):
        """Checks dims, batches an unbatched step; returns (input, states, batched)."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for label, h in zip(what, states):
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            states = tuple(None if h is None else h.unsqueeze(0) for h in states)
        states = tuple(zeros(input.size(0), self.hidden_size, dtype=input.dtype)
                       if h is None else h for h in states)
        return input, states, batched

    def _gates(self, input, hx):
        return (F.linear(input, self.weight_ih, self.bias_ih),
                F.linear(hx, self.weight_hh, self.bias_hh))


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (hx,), batched = self._batch(input, (hx,), ("hidden",))
        gi, gh = self._gates(input, hx)
        if self.nonlinearity == "tanh":
            ret = tanh(gi + gh)
        elif self.nonlinearity == "relu":
            ret = F.relu(gi + gh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step with gates i, f, g, o; returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        states = (None, None) if hx is None else tuple(hx)
        input, (h, c), batched = self._batch(input, states, ("hx[0]", "hx[1]"))
        gi, gh = self._gates(input, h)
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step with gates r, z, n; ``n`` uses ``r * (W_hn h + b_hn)``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._batch(input, (hx,), ("hidden",))
        gi, gh = self._gates(input, h)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = sigmoid(i_r + h_r)
        z = sigmoid(i_z + h_z)
        n = tanh(i_n + r * h_n)
        ret = n + z * (h - n)
        return ret if batched else ret.squeeze(0)
