"""Fused recurrent layers: one op-table record runs a whole sequence through one RNN, LSTM or GRU
direction, so the time loop costs NumPy calls, not graph nodes.

Note [Fused recurrences]: each op takes ``gi`` (T, B, G), the input projection of every timestep
(computed outside by one matmul), the initial state, ``w_hh`` and ``b_hh``, and returns every
timestep's state: (T, B, H) for RNN/GRU, (T, B, P + H) holding ``[h_t | c_t]`` for the LSTM.
Its decomposition is the per-step cell of torch's docs (tests/opinfo/rnn.py checks it against
torch's cells). The rules are written in ``ns`` ops: without ``create_graph`` they reuse the gate
activations the forward kept (``aux``); with it they recompute them from the saved output, so
the backward is itself differentiable. The LSTM's no-graph backward is a separate loop over
preallocated arrays (``_lstm_vjp_arrays``): the same formulas in the same order, equal results.
"""

from __future__ import annotations

import numpy as np

from ._dispatch import apply
from ._namespace import RAW
from ._opdef import defop

__all__ = ["rnn_layer", "lstm_layer", "gru_layer"]


def _sigmoid(ns, x):
    return 1 / (1 + ns.exp(-x))


def _order(T, reverse):
    return range(T - 1, -1, -1) if reverse else range(T)


def _prev_states(ns, out, h0, reverse, width=None):
    """The state each step started from, (T, B, width): out shifted by one step, h0 first."""
    h = out if width is None else ns.getitem(out, (Ellipsis, slice(0, width)))
    first = ns.reshape(h0, (1,) + tuple(h0.shape))
    if reverse:
        return ns.cat([ns.getitem(h, slice(1, None)), first], 0)
    return ns.cat([first, ns.getitem(h, slice(0, -1))], 0)


def _stack(ns, steps, flip):
    """The per-step gradients (collected in backward order) stacked in time order."""
    if flip:
        steps = steps[::-1]
    return ns.cat([ns.reshape(s, (1,) + tuple(s.shape)) for s in steps], 0)


def _bias_sum(ns, d):
    return ns.sum(d, (0, 1))


def _weight_grad(ns, d, x):
    """sum_t d_t^T @ x_t as one (G, T*B) @ (T*B, K) product."""
    G, K = d.shape[-1], x.shape[-1]
    return ns.matmul(ns.mT(ns.reshape(d, (-1, G))), ns.reshape(x, (-1, K)))


# -- Elman RNN ------------------------------------------------------------------------------------
def _rnn_fwd(xp, gi, h0, w_hh, b_hh, nonlinearity, reverse):
    T = gi.shape[0]
    out = xp.empty(gi.shape[:2] + (w_hh.shape[0],), dtype=gi.dtype)
    pre = gi if b_hh is None else gi + b_hh
    w_t = xp.ascontiguousarray(w_hh.T)
    h = h0
    for t in _order(T, reverse):
        a = pre[t] + h @ w_t
        h = xp.tanh(a, out=out[t]) if nonlinearity == "tanh" else xp.maximum(a, 0, out=out[t])
    return out


def _rnn_vjp(ns, g, gi, h0, w_hh, b_hh, out, nonlinearity, reverse):
    T = g.shape[0]
    if nonlinearity == "tanh":
        dact = 1 - out * out
    else:
        # torch's threshold_backward: zero where out <= 0, so a NaN passes the gradient on
        dact = ns.const((~(ns.raw(out) <= 0)).astype(ns.raw(out).dtype))
    dh = None
    steps = []
    for t in _order(T, not reverse):
        d = ns.getitem(g, t)
        if dh is not None:
            d = d + dh
        da = d * ns.getitem(dact, t)
        steps.append(da)
        dh = ns.matmul(da, w_hh)
    dpre = _stack(ns, steps, not reverse)
    dw = _weight_grad(ns, dpre, _prev_states(ns, out, h0, reverse))
    return dpre, dh, dw, None if b_hh is None else _bias_sum(ns, dpre)


RNN_LAYER = defop("rnn_layer", _rnn_fwd, _rnn_vjp, kind="opaque", save=(0, 1, 2, 3, "out"),
                  node="RnnLayerBackward0", onnx="RNN")


# -- LSTM -----------------------------------------------------------------------------------------
# aux keeps per step five (B, H) blocks: f, i, o (one sigmoid covers them), g, tanh(c_t). Factors
# that are multiplied together sit at the same distance ([i, o] with [g, tanh(c_t)]), so one NumPy
# call does two of the cell's products.
# torch's gate blocks (of w_hh, gi) are i, f, g, o: these are the ones for f, i, o, g.
_FIOG = (1, 0, 3, 2)


def _lstm_fwd(xp, gi, h0, c0, w_hh, b_hh, w_hr, reverse):
    """Returns (out, aux): out is (T, B, P + H) of [h_t | c_t]; aux is (T, 5, B, H) (see _FIOG),
    each block contiguous: NumPy pays 2-3x more per element on the strided column slices of a
    (B, 4H) row, and 4 (B, P) @ (P, H) products beat one (B, P) @ (P, 4H). The gate blocks start
    as gi + b_hh; each step adds h @ w_hh.T in place.

    NOTE: the sigmoid gates' rows of w_hh are negated, so the step's product is -h W^T and
    ``-h W^T - (gi + b)`` is exactly -x: exp(-x) needs no negation pass. The g block is kept as
    -(gi + b), so one subtraction serves all gates. Negation is exact: the values are unchanged.
    """
    T, B, G = gi.shape
    H = G // 4
    P = h0.shape[-1]
    dtype = gi.dtype
    out = xp.empty((T, B, P + H), dtype=dtype)
    aux = xp.empty((T, 5, B, H), dtype=dtype)
    w4 = xp.empty((4, P, H), dtype=w_hh.dtype)
    g4 = gi.reshape(T, B, 4, H).transpose(0, 2, 1, 3)  # (T, 4, B, H) views, torch's gate order
    b4 = None if b_hh is None else b_hh.reshape(4, 1, H)
    for k, src in enumerate(_FIOG):
        w_k = w_hh[src * H:(src + 1) * H].T
        if k < 3:
            xp.negative(w_k, out=w4[k])
            aux[:, k] = g4[:, src]
        else:
            w4[k] = w_k
            xp.negative(g4[:, src], out=aux[:, 3])
    if b4 is not None:
        aux[:, :3] += b4[list(_FIOG[:3])]
        aux[:, 3] -= b4[2]
    wr_t = None if w_hr is None else xp.ascontiguousarray(w_hr.T)
    gh = xp.empty((4, B, H), dtype=dtype)
    tmp = xp.empty((B, H), dtype=dtype)
    hs, cs = out[..., :P], out[..., P:]
    h, c = h0, c0
    for t in _order(T, reverse):
        xp.matmul(h, w4, out=gh)
        a = aux[t]
        xp.subtract(gh, a[:4], out=a[:4])
        s = a[:3]
        xp.exp(s, out=s)
        s += 1
        xp.reciprocal(s, out=s)
        xp.tanh(a[3], out=a[3])
        c_new = cs[t]
        xp.multiply(a[0], c, out=c_new)
        xp.multiply(a[1], a[3], out=tmp)
        c_new += tmp
        c = c_new
        tc = a[4]
        xp.tanh(c, out=tc)
        if wr_t is None:
            h = xp.multiply(a[2], tc, out=hs[t])
        else:
            xp.multiply(a[2], tc, out=tmp)
            h = xp.matmul(tmp, wr_t, out=hs[t])
    return out, aux


def _lstm_acts(ns, gi, h0, w_hh, b_hh, out, reverse, P):
    """The gate activations (order i, f, o, g) recomputed from saved tensors, differentiably."""
    pre = gi + ns.matmul(_prev_states(ns, out, h0, reverse, P), ns.mT(w_hh))
    if b_hh is not None:
        pre = pre + b_hh
    H = pre.shape[-1] // 4
    return ns.cat([_sigmoid(ns, ns.getitem(pre, (Ellipsis, slice(0, 2 * H)))),
                   _sigmoid(ns, ns.getitem(pre, (Ellipsis, slice(3 * H, None)))),
                   ns.tanh(ns.getitem(pre, (Ellipsis, slice(2 * H, 3 * H))))], -1)


def _lstm_vjp(ns, g, gi, h0, c0, w_hh, b_hh, w_hr, out, aux, reverse):
    if not ns.differentiable:
        return _lstm_vjp_arrays(g, h0, c0, w_hh, b_hh, w_hr, out, aux, reverse)
    T = g.shape[0]
    P = h0.shape[-1]
    H = c0.shape[-1]
    acts = _lstm_acts(ns, gi, h0, w_hh, b_hh, out, reverse, P)
    i, f, o, gg = (ns.getitem(acts, (Ellipsis, slice(k * H, (k + 1) * H))) for k in range(4))
    c_all = ns.getitem(out, (Ellipsis, slice(P, None)))
    tc = ns.tanh(c_all)
    # Everything that does not depend on the recurrence is computed once for all steps:
    # d(c_t)/d(m_t) and the factors turning [dc, dc, dc, dm] into the gate pre-activations' grads.
    dc_dm = o * (1 - tc * tc)
    c_prev = _prev_states(ns, c_all, c0, reverse)
    k = ns.cat([gg * i * (1 - i), c_prev * f * (1 - f), i * (1 - gg * gg), tc * o * (1 - o)], -1)
    dh = dc = None
    dgates, dhs = [], []
    for t in _order(T, not reverse):
        d_h = ns.getitem(g, (t, slice(None), slice(0, P)))
        if dh is not None:
            d_h = d_h + dh
        if w_hr is not None:
            dhs.append(d_h)
            d_m = ns.matmul(d_h, w_hr)
        else:
            d_m = d_h
        d_c = ns.getitem(g, (t, slice(None), slice(P, None))) + d_m * ns.getitem(dc_dm, t)
        if dc is not None:
            d_c = d_c + dc
        dgate = ns.cat([d_c, d_c, d_c, d_m], -1) * ns.getitem(k, t)
        dgates.append(dgate)
        dh = ns.matmul(dgate, w_hh)
        dc = d_c * ns.getitem(f, t)
    dpre = _stack(ns, dgates, not reverse)
    dw_hh = _weight_grad(ns, dpre, _prev_states(ns, out, h0, reverse, P))
    db = None if b_hh is None else _bias_sum(ns, dpre)
    dw_hr = None if w_hr is None else _weight_grad(ns, _stack(ns, dhs, not reverse), o * tc)
    return dpre, dh, dc, dw_hh, db, dw_hr


def _lstm_vjp_arrays(g, h0, c0, w_hh, b_hh, w_hr, out, aux, reverse):
    """``_lstm_vjp``'s formulas on arrays (no graph wanted), in the same order of operations, but
    step by step on the forward's contiguous gate blocks and into preallocated buffers: no
    per-step allocation, concatenation or stacking, and the weight gradients are one product."""
    T, B, W = out.shape
    P = h0.shape[-1]
    H = W - P
    G = 4 * H
    dtype = out.dtype
    dpre = np.empty((T, B, G), dtype=dtype)
    # dpre[t] as (4, B, H) blocks in the order i, f, g, o (torch's).
    d4 = dpre.reshape(T, B, 4, H).transpose(0, 2, 1, 3)
    g_h, g_c = g[..., :P], g[..., P:]
    dhs = None if w_hr is None else np.empty((T, B, P), dtype=dtype)
    # k: the factors turning d_c (d_m for o) into the pre-activation grads of f, i, o;
    # q: g's factor and d(c_t)/d(m_t).
    k = np.empty((3, B, H), dtype=dtype)
    one_minus = np.empty((3, B, H), dtype=dtype)
    q = np.empty((2, B, H), dtype=dtype)
    dh = np.empty((B, P), dtype=dtype)
    d_c = np.empty((B, H), dtype=dtype)
    dc = np.empty((B, H), dtype=dtype)
    d_m = None if w_hr is None else np.empty((B, H), dtype=dtype)
    back = 1 if reverse else -1  # from a step to the one before it in time
    started = False
    cs = out[..., P:]
    for t in _order(T, not reverse):
        a = aux[t]
        np.multiply(c0 if t + back in (-1, T) else cs[t + back], a[0], out=k[0])
        np.multiply(a[1:3], a[3:], out=k[1:])  # i * g, o * tanh(c_t)
        np.subtract(1, a[:3], out=one_minus)
        k *= one_minus
        np.multiply(a[3:], a[3:], out=q)
        np.subtract(1, q, out=q)
        np.multiply(a[1:3], q, out=q)  # i * (1 - g^2), o * (1 - tanh(c_t)^2)
        # the recurrence
        d_h = np.add(g_h[t], dh, out=dh if dhs is None else dhs[t]) if started else g_h[t]
        if dhs is not None:
            if not started:
                dhs[t] = d_h
            np.matmul(d_h, w_hr, out=d_m)
        else:
            d_m = d_h
        np.multiply(d_m, q[1], out=d_c)
        np.add(g_c[t], d_c, out=d_c)
        if started:
            d_c += dc
        d = d4[t]
        np.multiply(k[1], d_c, out=d[0])
        np.multiply(k[0], d_c, out=d[1])
        np.multiply(q[0], d_c, out=d[2])
        np.multiply(k[2], d_m, out=d[3])
        np.matmul(dpre[t], w_hh, out=dh)
        np.multiply(d_c, a[0], out=dc)
        started = True
    first, rest, prev = (-1, slice(0, -1), slice(1, None)) if reverse else \
        (0, slice(1, None), slice(0, -1))
    h_prev = np.empty((T, B, P), dtype=dtype)
    h_prev[rest] = out[prev, :, :P]
    h_prev[first] = h0
    dw_hh = _weight_grad(RAW, dpre, h_prev)
    db = None if b_hh is None else _bias_sum(RAW, dpre)
    dw_hr = None
    if w_hr is not None:
        m = aux[:, 2] * aux[:, 4]
        dw_hr = _weight_grad(RAW, dhs, m)
    return dpre, dh, dc, dw_hh, db, dw_hr


LSTM_LAYER = defop("lstm_layer", _lstm_fwd, _lstm_vjp, kind="opaque",
                   save=(0, 1, 2, 3, 4, 5, "out", "aux"), node="LstmLayerBackward0", onnx="LSTM")


# -- GRU ------------------------------------------------------------------------------------------
def _gru_fwd(xp, gi, h0, w_hh, b_hh, reverse):
    """Returns (out, aux): aux holds [r | z | n | W_hn h + b_hn] per step."""
    T, B, G = gi.shape
    H = G // 3
    out = xp.empty((T, B, H), dtype=gi.dtype)
    aux = xp.empty((T, B, G + H), dtype=gi.dtype)
    w_t = xp.ascontiguousarray(w_hh.T)
    h = h0
    for t in _order(T, reverse):
        a = aux[t]
        gh = h @ w_t
        if b_hh is not None:
            gh += b_hh
        rz = a[:, :2 * H]
        xp.add(gi[t, :, :2 * H], gh[:, :2 * H], out=rz)
        xp.negative(rz, out=rz)
        xp.exp(rz, out=rz)
        rz += 1
        xp.reciprocal(rz, out=rz)
        a[:, 3 * H:] = gh[:, 2 * H:]
        n = a[:, 2 * H:3 * H]
        xp.multiply(a[:, :H], gh[:, 2 * H:], out=n)
        n += gi[t, :, 2 * H:]
        xp.tanh(n, out=n)
        z = a[:, H:2 * H]
        # h' = (1 - z) * n + z * h = n + z * (h - n)
        hn = out[t]
        xp.subtract(h, n, out=hn)
        hn *= z
        hn += n
        h = hn
    return out, aux


def _gru_aux(ns, gi, h0, w_hh, b_hh, out, reverse):
    """[r | z | n | W_hn h + b_hn] recomputed from saved tensors (differentiable)."""
    gh = ns.matmul(_prev_states(ns, out, h0, reverse), ns.mT(w_hh))
    if b_hh is not None:
        gh = gh + b_hh
    H = out.shape[-1]
    rz = _sigmoid(ns, ns.getitem(gi, (Ellipsis, slice(0, 2 * H)))
                  + ns.getitem(gh, (Ellipsis, slice(0, 2 * H))))
    ghn = ns.getitem(gh, (Ellipsis, slice(2 * H, None)))
    n = ns.tanh(ns.getitem(gi, (Ellipsis, slice(2 * H, None)))
                + ns.getitem(rz, (Ellipsis, slice(0, H))) * ghn)
    return ns.cat([rz, n, ghn], -1)


def _gru_vjp(ns, g, gi, h0, w_hh, b_hh, out, aux, reverse):
    T = g.shape[0]
    H = out.shape[-1]
    if ns.differentiable:
        aux = _gru_aux(ns, gi, h0, w_hh, b_hh, out, reverse)
    dh = None
    dgis, dghs = [], []
    for t in _order(T, not reverse):
        a = ns.getitem(aux, t)
        r, z, n, ghn = (ns.getitem(a, (slice(None), slice(k * H, (k + 1) * H))) for k in range(4))
        prev = t + 1 if reverse else t - 1
        h_prev = h0 if prev < 0 or prev >= T else ns.getitem(out, prev)
        d = ns.getitem(g, t)
        if dh is not None:
            d = d + dh
        dn = d * (1 - z) * (1 - n * n)
        dz = d * (h_prev - n) * z * (1 - z)
        dr = dn * ghn * r * (1 - r)
        dgis.append(ns.cat([dr, dz, dn], -1))
        dgh = ns.cat([dr, dz, dn * r], -1)
        dghs.append(dgh)
        dh = d * z + ns.matmul(dgh, w_hh)
    dgi = _stack(ns, dgis, not reverse)
    dgh = _stack(ns, dghs, not reverse)
    dw = _weight_grad(ns, dgh, _prev_states(ns, out, h0, reverse))
    return dgi, dh, dw, None if b_hh is None else _bias_sum(ns, dgh)


GRU_LAYER = defop("gru_layer", _gru_fwd, _gru_vjp, kind="opaque", save=(0, 1, 2, 3, "out", "aux"),
                  node="GruLayerBackward0", onnx="GRU")


# -- entry points ---------------------------------------------------------------------------------
def _check(gi, states, w_hh, b_hh, gates, w_hr=None):
    """torch's cell checks, once per sequence (RuntimeError, as torch's): NumPy would broadcast a
    batch-1 state, and type promotion would hide a dtype mismatch."""
    if gi.dim() != 3:
        raise RuntimeError(f"expected the input projection (T, B, G) to be 3-D, got {gi.dim()}-D")
    _, B, G = gi.shape
    if w_hh.dim() != 2 or w_hh.shape[0] != G or G % gates:
        raise RuntimeError(f"weight_hh has size {list(w_hh.shape)}, but the input projection has "
                           f"{G} = {gates} * hidden_size features")
    H, P = G // gates, w_hh.shape[1]
    if w_hr is None and P != H:
        raise RuntimeError(f"weight_hh has size {list(w_hh.shape)}, expected [{G}, {H}]")
    if w_hr is not None and tuple(w_hr.shape) != (P, H):
        raise RuntimeError(f"weight_hr has size {list(w_hr.shape)}, expected [{P}, {H}]")
    if b_hh is not None and tuple(b_hh.shape) != (G,):
        raise RuntimeError(f"bias_hh has size {list(b_hh.shape)}, expected [{G}]")
    for k, (s, width) in enumerate(zip(states, (P, H))):
        if s.dim() != 2 or s.shape[0] != B:
            raise RuntimeError(f"Input batch size {B} doesn't match hidden{k} batch size "
                               f"{s.shape[0] if s.dim() else 0}")
        if s.shape[1] != width:
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, "
                               f"expected {width}")
    for x in (*states, w_hh, b_hh, w_hr):
        if x is not None and x.dtype != gi.dtype:
            raise RuntimeError(f"expected all tensors to have the input's dtype {gi.dtype}, got "
                               f"{x.dtype}")


def rnn_layer(gi, h0, w_hh, b_hh=None, nonlinearity="tanh", reverse=False):
    """Every state of an Elman RNN over ``gi`` (T, B, H), the input projection plus ``b_ih``."""
    _check(gi, (h0,), w_hh, b_hh, 1)
    return apply(RNN_LAYER, (gi, h0, w_hh, b_hh),
                 {"nonlinearity": nonlinearity, "reverse": reverse})


def lstm_layer(gi, h0, c0, w_hh, b_hh=None, w_hr=None, reverse=False):
    """``[h_t | c_t]`` for every step of an LSTM over ``gi`` (T, B, 4H); gates i, f, g, o."""
    _check(gi, (h0, c0), w_hh, b_hh, 4, w_hr)
    return apply(LSTM_LAYER, (gi, h0, c0, w_hh, b_hh, w_hr), {"reverse": reverse})[0]


def gru_layer(gi, h0, w_hh, b_hh=None, reverse=False):
    """Every state of a GRU over ``gi`` (T, B, 3H); gates r, z, n (n uses r * (W_hn h + b_hn))."""
    _check(gi, (h0,), w_hh, b_hh, 3)
    return apply(GRU_LAYER, (gi, h0, w_hh, b_hh), {"reverse": reverse})[0]
