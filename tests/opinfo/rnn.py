"""OpInfos for the fused recurrences ``lstm_layer``, ``gru_layer`` and ``rnn_layer`` (ops/rnn.py).

Both sides take the same leaves (input, h0[, c0], weight_ih, weight_hh[, bias_ih, bias_hh,
weight_hr]): graphgrad projects the input with one ``linear`` and runs the fused op; torch steps
its own cells (``torch.lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``) through
time. Samples cover reverse direction, batch_first, no bias, LSTM projections, strided weights.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, ErrorInput, NonContig, OpInfo, SampleInput, make

# --- torch: the per-step cells ----------------------------------------------------------------


def _torch_scan(torch, x, states, step, reverse, batch_first):
    """Runs ``step(x_t, states) -> (states, y_t)`` over time; returns the stacked y_t."""
    if batch_first:
        x = x.transpose(0, 1)
    T = x.shape[0]
    ys = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        states, ys[t] = step(x[t], states)
    out = torch.stack(ys)
    return out.transpose(0, 1) if batch_first else out


def _torch_lstm(torch):
    def lstm(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None, reverse=False,
             batch_first=False):
        if w_hr is not None:
            # torch's cell needs a state as wide as the cell; with a projection h_t is narrower,
            # so h_t enters with x_t through [w_ih | w_hh] and the cell's own state is zero.
            w_cat = torch.cat([w_ih, w_hh], 1)
            zero_w = w_hh.new_zeros((w_hh.shape[0], c0.shape[1]))

        def step(x_t, hc):
            h, c = hc
            if w_hr is None:
                h, c = torch.lstm_cell(x_t, (h, c), w_ih, w_hh, b_ih, b_hh)
            else:
                m, c = torch.lstm_cell(torch.cat([x_t, h], 1), (torch.zeros_like(c), c), w_cat,
                                       zero_w, b_ih, b_hh)
                h = m @ w_hr.T
            return (h, c), torch.cat([h, c], 1)

        return _torch_scan(torch, x, (h0, c0), step, reverse, batch_first)

    return lstm


def _torch_gru(torch):
    def gru(x, h0, w_ih, w_hh, b_ih=None, b_hh=None, reverse=False, batch_first=False):
        def step(x_t, h):
            h = torch.gru_cell(x_t, h, w_ih, w_hh, b_ih, b_hh)
            return h, h

        return _torch_scan(torch, x, h0, step, reverse, batch_first)

    return gru


def _torch_rnn(torch):
    def rnn(x, h0, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh", reverse=False,
            batch_first=False):
        cell = torch.rnn_tanh_cell if nonlinearity == "tanh" else torch.rnn_relu_cell

        def step(x_t, h):
            h = cell(x_t, h, w_ih, w_hh, b_ih, b_hh)
            return h, h

        return _torch_scan(torch, x, h0, step, reverse, batch_first)

    return rnn


# --- graphgrad: one linear, then the fused op -------------------------------------------------


def _projection(m, x, w_ih, b_ih, batch_first):
    gi = m.nn.functional.linear(x, w_ih, b_ih)
    return gi.transpose(0, 1) if batch_first else gi


def _gg_lstm(m):
    def lstm(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None, reverse=False,
             batch_first=False):
        gi = _projection(m, x, w_ih, b_ih, batch_first)
        out = m.ops.rnn.lstm_layer(gi, h0, c0, w_hh, b_hh, w_hr, reverse)
        return out.transpose(0, 1) if batch_first else out

    return lstm


def _gg_gru(m):
    def gru(x, h0, w_ih, w_hh, b_ih=None, b_hh=None, reverse=False, batch_first=False):
        out = m.ops.rnn.gru_layer(_projection(m, x, w_ih, b_ih, batch_first), h0, w_hh, b_hh,
                                  reverse)
        return out.transpose(0, 1) if batch_first else out

    return gru


def _gg_rnn(m):
    def rnn(x, h0, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh", reverse=False,
            batch_first=False):
        out = m.ops.rnn.rnn_layer(_projection(m, x, w_ih, b_ih, batch_first), h0, w_hh, b_hh,
                                  nonlinearity, reverse)
        return out.transpose(0, 1) if batch_first else out

    return rnn


def _either(torch_fn, gg_fn):
    return lambda m: torch_fn(m) if m.__name__ == "torch" else gg_fn(m)


# --- samples ----------------------------------------------------------------------------------


def _recurrent_samples(gates, dtype, rng, with_cell=False):
    """(T, B, input, hidden) shapes and options shared by the three ops; ``gates`` is 4, 3 or 1.

    Weights stay small so the gates are away from saturation and finite differences are sharp.
    """
    def a(*shape, scale=1.0):
        return make(shape, dtype, rng, -scale, scale)

    def leaves(T, B, In, H, bias=True, P=None, batch_first=False):
        P = H if P is None else P
        x = a(B, T, In) if batch_first else a(T, B, In)
        states = (a(B, P), a(B, H)) if with_cell else (a(B, H),)
        ws = (a(gates * H, In, scale=0.8), a(gates * H, P, scale=0.8))
        bs = (a(gates * H, scale=0.5), a(gates * H, scale=0.5)) if bias else (None, None)
        return x, states + ws + bs

    x, rest = leaves(3, 2, 3, 3)
    yield SampleInput(x, rest)
    x, rest = leaves(3, 2, 2, 3)
    yield SampleInput(x, rest, dict(reverse=True), name="reverse")
    x, rest = leaves(4, 3, 2, 2, bias=False)
    yield SampleInput(x, rest, name="no_bias")
    x, rest = leaves(3, 2, 3, 2, batch_first=True)
    yield SampleInput(x, rest, dict(batch_first=True), name="batch_first")
    x, rest = leaves(4, 2, 2, 3, batch_first=True)
    yield SampleInput(x, rest, dict(batch_first=True, reverse=True), name="batch_first_reverse")
    x, rest = leaves(1, 3, 2, 2)
    yield SampleInput(x, rest, name="one_step")
    x, rest = leaves(3, 1, 2, 3)
    yield SampleInput(x, rest[:-4] + (NonContig(rest[-4]), NonContig(rest[-3])) + rest[-2:],
                      name="strided_weights")
    if with_cell:
        for reverse in (False, True):
            x, rest = leaves(3, 2, 2, 3, P=2)
            w_hr = a(2, 3, scale=0.8)
            yield SampleInput(x, rest + (w_hr,), dict(reverse=reverse),
                              name="proj_reverse" if reverse else "proj")


def lstm_samples(dtype, rng):
    yield from _recurrent_samples(4, dtype, rng, with_cell=True)


def gru_samples(dtype, rng):
    yield from _recurrent_samples(3, dtype, rng)


def rnn_samples(dtype, rng):
    for s in _recurrent_samples(1, dtype, rng):
        yield s
        if s.name in ("", "reverse", "no_bias"):
            kw = dict(s.kwargs, nonlinearity="relu")
            yield SampleInput(s.input, s.args, kw, name=f"relu_{s.name}".rstrip("_"))


# --- errors: what torch's cells reject ----------------------------------------------------------


def _errors(gates, with_cell):
    T, B, In, H = 3, 2, 2, 3

    def case(name, batch=(B, B), hidden=(H, H), whh_cols=H, dtype=np.float64, b_hh=gates * H):
        states = (np.ones((batch[0], hidden[0]), dtype=dtype),)
        if with_cell:
            states += (np.ones((batch[1], hidden[1])),)
        args = states + (np.ones((gates * H, In)), np.ones((gates * H, whh_cols)) * 0.1,
                         np.ones(gates * H), np.ones(b_hh))
        return ErrorInput(SampleInput(np.ones((T, B, In)), args), RuntimeError, name)

    yield case("h0_batch", batch=(1, B))
    yield case("h0_hidden", hidden=(H + 1, H))
    yield case("weight_hh_cols", whh_cols=H + 1)
    yield case("bias_hh_size", b_hh=gates * H - 1)
    yield case("h0_dtype", dtype=np.float32)
    if with_cell:
        yield case("c0_batch", batch=(B, 1))
        yield case("c0_hidden", hidden=(H, H + 1))


def op_db() -> list[OpInfo]:
    # float32 sums over a few steps of gates drift past torch's default 1e-5
    tol = {np.float32: (1e-5, 2e-5)}
    return [
        OpInfo("lstm_layer", _either(_torch_lstm, _gg_lstm), lstm_samples, dtypes=FLOAT,
               errors=lambda: _errors(4, True), tol=tol),
        OpInfo("gru_layer", _either(_torch_gru, _gg_gru), gru_samples, dtypes=FLOAT,
               errors=lambda: _errors(3, False), tol=tol),
        OpInfo("rnn_layer", _either(_torch_rnn, _gg_rnn), rnn_samples, dtypes=FLOAT,
               errors=lambda: _errors(1, False), tol=tol),
    ]
