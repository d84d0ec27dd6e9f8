"""Standard-gamma samples with a reparameterized gradient: d sample / d concentration by
implicit differentiation of the CDF, dx/da = -(dP(a, x)/da) / p(x; a), the derivative torch's
_standard_gamma_grad also approximates. P is the regularized lower incomplete gamma, evaluated
here in float64 (series below a + 1, continued fraction above) and differentiated in a by a
central difference; the backward is rare next to the forward, so it favours clarity."""

from __future__ import annotations

import math

import numpy as np

import graphgrad as torch
from graphgrad.autograd import Function

from ..ops.random import _rng

_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def _lower_regularized_gamma(a, x):
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.zeros(a.shape)
    pos = x > 0
    log_prefix = np.where(pos, a * np.log(np.where(pos, x, 1.0)) - x - _lgamma(a), -np.inf)
    series = pos & (x < a + 1)
    if series.any():  # sum x^n / (a (a+1) ... (a+n))
        aa, xx = a[series], x[series]
        term = 1.0 / aa
        total = term.copy()
        for n in range(1, 500):
            term = term * xx / (aa + n)
            total += term
            if np.all(np.abs(term) < np.abs(total) * 1e-16):
                break
        out[series] = total * np.exp(log_prefix[series])
    frac = pos & ~series
    if frac.any():  # Lentz's continued fraction for the upper function Q
        aa, xx = a[frac], x[frac]
        tiny = 1e-300
        b = xx + 1 - aa
        c = np.full(aa.shape, 1 / tiny)
        d = 1 / b
        h = d.copy()
        for i in range(1, 500):
            an = -i * (i - aa)
            b = b + 2
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1 / d
            delta = d * c
            h = h * delta
            if np.all(np.abs(delta - 1) < 1e-16):
                break
        out[frac] = 1 - np.exp(log_prefix[frac]) * h
    return out


def standard_gamma_grad(alpha, x):
    """dx/dalpha for x ~ Gamma(alpha, 1), holding the sample's CDF value fixed."""
    alpha = np.asarray(alpha, np.float64)
    x = np.asarray(x, np.float64)
    h = 1e-5 * np.maximum(alpha, 1.0)
    dp_da = (_lower_regularized_gamma(alpha + h, x)
             - _lower_regularized_gamma(alpha - h, x)) / (2 * h)
    log_pdf = (alpha - 1) * np.log(x) - x - _lgamma(alpha)
    return -dp_da / np.exp(log_pdf)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, concentration):
        a = concentration.detach().numpy()
        tiny = np.finfo(a.dtype).tiny
        x = np.maximum(_rng(None).standard_gamma(a), tiny).astype(a.dtype)
        out = torch.from_numpy(x)
        ctx.save_for_backward(concentration, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        concentration, x = ctx.saved_tensors
        d = standard_gamma_grad(concentration.detach().numpy(), x.detach().numpy())
        return grad * torch.from_numpy(d.astype(x.detach().numpy().dtype))


def standard_gamma(concentration):
    """Samples Gamma(concentration, 1), differentiable in concentration."""
    return _StandardGamma.apply(concentration)
