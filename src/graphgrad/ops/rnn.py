"""Fused recurrent layers: one op-table record runs a whole sequence through one RNN, LSTM or GRU
direction, so the time loop costs NumPy calls, not graph nodes.

Note [Fused recurrences]: each op takes ``gi`` (T, B, G), the input projection of every timestep
(computed outside by one matmul), the initial state, ``w_hh`` and ``b_hh``, and returns every
timestep's state: (T, B, H) for RNN/GRU, (T, B, P + H) holding ``[h_t | c_t]`` for the LSTM.
Its decomposition is the per-step cell of torch's docs (tests/opinfo/rnn.py checks it against
torch's cells). The rules are written in ``ns`` ops: without ``create_graph`` they reuse the gate
activations the forward kept (``aux``); with it they recompute them from the saved output, so
the backward is itself differentiable.
"""

from __future__ import annotations

from ._dispatch import apply
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
        dact = ns.const((ns.raw(out) > 0).astype(ns.raw(out).dtype))
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
def _lstm_fwd(xp, gi, h0, c0, w_hh, b_hh, w_hr, reverse):
    """Returns (out, acts): out is (T, B, P + H) of [h_t | c_t], acts the gate activations
    stored in the order i, f, o, g so that one sigmoid covers a contiguous block."""
    T, B, G = gi.shape
    H = G // 4
    P = h0.shape[-1]
    out = xp.empty((T, B, P + H), dtype=gi.dtype)
    acts = xp.empty((T, B, G), dtype=gi.dtype)
    # pre = gi + b_hh with the gate blocks moved to i, f, o, g: one pass, no fancy indexing.
    pre = xp.empty_like(gi)
    for dst, src in ((slice(0, 2 * H), slice(0, 2 * H)), (slice(2 * H, 3 * H), slice(3 * H, G)),
                     (slice(3 * H, G), slice(2 * H, 3 * H))):
        if b_hh is None:
            pre[..., dst] = gi[..., src]
        else:
            xp.add(gi[..., src], b_hh[src], out=pre[..., dst])
    # A contiguous transpose: BLAS runs h @ w.T about 1.5x slower on the strided view.
    w_t = xp.empty((w_hh.shape[1], G), dtype=w_hh.dtype)
    w_t[:, :2 * H] = w_hh[:2 * H].T
    w_t[:, 2 * H:3 * H] = w_hh[3 * H:].T
    w_t[:, 3 * H:] = w_hh[2 * H:3 * H].T
    wr_t = None if w_hr is None else xp.ascontiguousarray(w_hr.T)
    tc = xp.empty((B, H), dtype=gi.dtype)
    h, c = h0, c0
    for t in _order(T, reverse):
        a = acts[t]
        xp.matmul(h, w_t, out=a)
        a += pre[t]
        s = a[:, :3 * H]
        xp.negative(s, out=s)
        xp.exp(s, out=s)
        s += 1
        xp.reciprocal(s, out=s)
        gg = a[:, 3 * H:]
        xp.tanh(gg, out=gg)
        c_new = out[t, :, P:]
        xp.multiply(a[:, H:2 * H], c, out=c_new)
        c_new += a[:, :H] * gg
        c = c_new
        xp.tanh(c, out=tc)
        if wr_t is None:
            h = xp.multiply(a[:, 2 * H:3 * H], tc, out=out[t, :, :P])
        else:
            h = xp.matmul(a[:, 2 * H:3 * H] * tc, wr_t, out=out[t, :, :P])
    return out, acts



def _lstm_acts(ns, gi, h0, w_hh, b_hh, out, reverse, P):
    """The gate activations (order i, f, o, g) recomputed from saved tensors, differentiably."""
    pre = gi + ns.matmul(_prev_states(ns, out, h0, reverse, P), ns.mT(w_hh))
    if b_hh is not None:
        pre = pre + b_hh
    H = pre.shape[-1] // 4
    return ns.cat([_sigmoid(ns, ns.getitem(pre, (Ellipsis, slice(0, 2 * H)))),
                   _sigmoid(ns, ns.getitem(pre, (Ellipsis, slice(3 * H, None)))),
                   ns.tanh(ns.getitem(pre, (Ellipsis, slice(2 * H, 3 * H))))], -1)


def _lstm_vjp(ns, g, gi, h0, c0, w_hh, b_hh, w_hr, out, acts, reverse):
    T = g.shape[0]
    P = h0.shape[-1]
    H = c0.shape[-1]
    if ns.differentiable:
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
def rnn_layer(gi, h0, w_hh, b_hh=None, nonlinearity="tanh", reverse=False):
    """Every state of an Elman RNN over ``gi`` (T, B, H), the input projection plus ``b_ih``."""
    return apply(RNN_LAYER, (gi, h0, w_hh, b_hh),
                 {"nonlinearity": nonlinearity, "reverse": reverse})


def lstm_layer(gi, h0, c0, w_hh, b_hh=None, w_hr=None, reverse=False):
    """``[h_t | c_t]`` for every step of an LSTM over ``gi`` (T, B, 4H); gates i, f, g, o."""
    return apply(LSTM_LAYER, (gi, h0, c0, w_hh, b_hh, w_hr), {"reverse": reverse})[0]


def gru_layer(gi, h0, w_hh, b_hh=None, reverse=False):
    """Every state of a GRU over ``gi`` (T, B, 3H); gates r, z, n (n uses r * (W_hn h + b_hn))."""
    return apply(GRU_LAYER, (gi, h0, w_hh, b_hh), {"reverse": reverse})[0]
