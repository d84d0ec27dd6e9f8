"""The connectionist temporal classification loss (``torch.ctc_loss``'s kernel): the negative log
likelihood of each target under all its alignments, by the log-space forward (alpha) recursion,
with torch's gradient from the alpha and beta recursions.

Note [CTC gradient]: the rule returns what torch's ``ctc_loss_backward`` returns,
``g * (exp(lp) - exp(log sum_{s: l'_s = c} alpha_t(s) beta_t(s) + nll - lp))``: the gradient
with respect to the *logits* of a ``log_softmax`` (the ``exp(lp)`` term is what log_softmax's
backward then cancels), equal to the true one after log_softmax. Like torch's, it is not itself
differentiable: its double backward raises torch's error.
Decomposition (checked in tests/nn/test_loss_extra.py by enumerating alignments):
``nll = -logsumexp over alignments a collapsing to the target of sum_t lp[t, a_t]``.
Both recursions run over time in Python, vectorised over the batch and the extended targets.
"""

from __future__ import annotations

import numpy as np

from ._dispatch import apply
from ._opdef import defop

__all__ = ["ctc_loss_nll"]

_NEG_INF = -np.inf


def _lse3(a, b, c):
    """Elementwise log(exp(a) + exp(b) + exp(c)), -inf when all three are."""
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isfinite(m), m, 0)
    return np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe)) + safe


def _shift(x, k):
    """x moved k places right along the last axis (the extended-target axis), -inf filled."""
    out = np.full_like(x, _NEG_INF)
    if k < x.shape[-1]:
        out[..., k:] = x[..., :-k] if k else x
    return out


def _unshift(x, k):
    """x moved k places left along the last axis, -inf filled."""
    out = np.full_like(x, _NEG_INF)
    if k < x.shape[-1]:
        out[..., :x.shape[-1] - k] = x[..., k:]
    return out


def _ext_logp(lp, ext):
    """lp[t, n, ext[n, s]]: (T, N, S') log-probabilities of the extended targets."""
    return np.take_along_axis(lp, np.broadcast_to(ext[None], (lp.shape[0],) + ext.shape), axis=2)


def _masks(ext, tlen):
    """valid (N, S'): s < 2 L + 1; skip (N, S'): the s-2 -> s transition is allowed."""
    s = np.arange(ext.shape[1])
    valid = s[None, :] < (2 * tlen + 1)[:, None]
    skip = np.zeros(ext.shape, dtype=bool)
    # torch compares the labels only (blanks sit at even s, so s - 2 -> s needs odd s); a
    # target label equal to ``blank`` is a label like any other there.
    skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
    return valid, skip


def _ctc_fwd(xp, lp, ext, ilen, tlen, blank, zero_infinity):
    """Returns (nll (N,), log_alpha (T, N, S'))."""
    T = lp.shape[0]
    ext_lp = _ext_logp(lp, ext)
    valid, skip = _masks(ext, tlen)
    alpha = np.full(ext_lp.shape, _NEG_INF, dtype=lp.dtype)
    if T:
        alpha[0, :, 0] = ext_lp[0, :, 0]
        if ext.shape[1] > 1:
            alpha[0, :, 1] = np.where(tlen > 0, ext_lp[0, :, 1], _NEG_INF)
    for t in range(1, T):
        prev = alpha[t - 1]
        two = np.where(skip, _shift(prev, 2), _NEG_INF)
        alpha[t] = np.where(valid, _lse3(prev, _shift(prev, 1), two) + ext_lp[t], _NEG_INF)
    nll = _nll(alpha, ilen, tlen)
    if zero_infinity:
        nll = np.where(nll == np.inf, 0, nll).astype(lp.dtype)
    return nll, alpha


def _nll(alpha, ilen, tlen):
    """-log p(target) from alpha at each sequence's last step (inf: no alignment exists)."""
    n = np.arange(alpha.shape[1])
    last = np.maximum(ilen - 1, 0)
    end = 2 * tlen
    a_prev = np.where(tlen > 0, alpha[last, n, np.maximum(end - 1, 0)], _NEG_INF)
    nll = -np.logaddexp(alpha[last, n, end], a_prev)
    return np.where(ilen > 0, nll, np.where(tlen > 0, np.inf, 0.0)).astype(alpha.dtype)


def _ctc_grad_array(g, lp, alpha, ext, ilen, tlen, blank, zero_infinity):
    """torch's ctc_loss_backward on arrays (see Note [CTC gradient])."""
    T, N, C = lp.shape
    ext_lp = _ext_logp(lp, ext)
    valid, skip = _masks(ext, tlen)
    S = ext.shape[1]
    skip_next = np.zeros(ext.shape, dtype=bool)  # the s -> s+2 transition (beta's direction)
    skip_next[:, :-2] = skip[:, 2:]
    beta = np.full(ext_lp.shape, _NEG_INF, dtype=lp.dtype)
    last = ilen - 1
    end = 2 * tlen
    s = np.arange(S)
    start = valid & ((s[None] == end[:, None])
                     | ((s[None] == end[:, None] - 1) & (tlen > 0)[:, None]))
    for t in range(T - 1, -1, -1):
        init = np.where(start, ext_lp[t], _NEG_INF)
        if t == T - 1:
            rec = np.full_like(init, _NEG_INF)
        else:
            nxt = beta[t + 1]
            two = np.where(skip_next, _unshift(nxt, 2), _NEG_INF)
            rec = np.where(valid, _lse3(nxt, _unshift(nxt, 1), two) + ext_lp[t], _NEG_INF)
        here = (t == last)[:, None]
        before = (t < last)[:, None]
        beta[t] = np.where(here, init, np.where(before, rec, _NEG_INF))
    ab = alpha + beta  # (T, N, S'); both hold lp once, hence the "- lp" below
    m = ab.max(axis=2, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    onehot = (ext[:, :, None] == np.arange(C)).astype(lp.dtype)  # (N, S', C)
    occ = np.matmul(np.exp(ab - m).transpose(1, 0, 2), onehot).transpose(1, 0, 2)  # (T, N, C)
    with np.errstate(divide="ignore"):
        lcab = np.log(occ) + m
    nll = _nll(alpha, ilen, tlen)[None, :, None]
    grad = np.exp(lp) - np.exp(lcab + nll - lp)
    keep = np.arange(T)[:, None, None] < ilen[None, :, None]
    if zero_infinity:
        keep = keep & (nll != np.inf)
    return (np.where(keep, grad, 0) * g[None, :, None]).astype(lp.dtype)


def _ctc_vjp(ns, g, lp, alpha, ext, ilen, tlen, blank, zero_infinity):
    if not ns.differentiable:
        return _ctc_grad_array(g, lp, alpha, ext, ilen, tlen, blank, zero_infinity)
    return _CtcBackward.apply(g, lp, ns.raw(alpha), ext, ilen, tlen, blank, zero_infinity)


def _ctc_backward_function():
    from ..autograd.function import Function

    class CtcLossBackward0Backward(Function):
        """The first gradient as a node whose own backward raises, as torch's."""

        @staticmethod
        def forward(ctx, g, lp, alpha, ext, ilen, tlen, blank, zero_infinity):
            from .creation import as_tensor

            return as_tensor(_ctc_grad_array(g._data, lp._data, alpha, ext, ilen, tlen, blank,
                                             zero_infinity))

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")

    return CtcLossBackward0Backward


class _Lazy:
    """Function is built on first use: the autograd package imports the op table."""

    cls = None

    def apply(self, *args):
        if _Lazy.cls is None:
            _Lazy.cls = _ctc_backward_function()
        return _Lazy.cls.apply(*args)


_CtcBackward = _Lazy()

CTC_LOSS = defop("ctc_loss", _ctc_fwd, _ctc_vjp, kind="opaque", save=(0, "aux"),
                 dtype_rule="same", node="CtcLossBackward0")


def ctc_loss_nll(log_probs, ext, input_lengths, target_lengths, blank, zero_infinity):
    """The per-sequence negative log likelihoods (N,) of batched ``log_probs`` (T, N, C), for
    extended targets ``ext`` (N, S') (blank, l1, blank, l2, ..., blank; padded with blank) and
    int64 length arrays; checks are the caller's (``F.ctc_loss``)."""
    return apply(CTC_LOSS, (log_probs,), {"ext": ext, "ilen": input_lengths,
                                          "tlen": target_lengths, "blank": blank,
                                          "zero_infinity": zero_infinity})[0]
