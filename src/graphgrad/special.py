"""``graphgrad.special``: torch.special's names, over the op table.

Most are aliases of top-level ops (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``); the
kernels torch only has here (erfcx, ndtri, log_ndtr, i0e, i1, i1e, entr, xlog1py, zeta,
gammainc) live in
``ops/elementwise_special.py``. ``ndtr`` is composed as torch composes it.
"""

from __future__ import annotations

import math

from .ops import elementwise as _E
from .ops import elementwise_special as _S
from .ops.activation import logit as _logit
from .ops.activation import xlogy
from .ops.nn import log_softmax as _log_softmax
from .ops.nn import softmax as _softmax
from .ops.reduce import logsumexp

__all__ = ["expit", "logit", "erf", "erfc", "erfcx", "erfinv", "gammaln", "digamma", "psi",
           "polygamma", "multigammaln", "xlogy", "xlog1py", "i0", "i0e", "i1", "i1e",
           "log_softmax", "softmax", "logsumexp", "sinc", "round", "entr", "ndtr", "ndtri",
           "log_ndtr", "expm1", "exp2", "log1p", "zeta", "gammainc", "gammaincc"]

expit = _E.sigmoid
erf = _E.erf
erfc = _S.erfc
erfcx = _S.special_erfcx
erfinv = _S.erfinv
gammaln = _S.lgamma
digamma = psi = _S.digamma
polygamma = _S.polygamma
multigammaln = _S.mvlgamma
xlog1py = _S.special_xlog1py
i0 = _S.i0
i0e = _S.special_i0e
i1 = _S.special_i1
i1e = _S.special_i1e
sinc = _S.sinc
entr = _S.special_entr
ndtri = _S.special_ndtri
log_ndtr = _S.special_log_ndtr
expm1 = _E.expm1
exp2 = _E.exp2
log1p = _E.log1p
zeta = _S.special_zeta
gammainc = _S.special_gammainc
gammaincc = _S.special_gammaincc

_SQRT1_2 = math.sqrt(0.5)


def logit(input, eps=None):
    """``log(p / (1 - p))``, the input clamped to ``[eps, 1 - eps]`` when ``eps`` is given.

    >>> import graphgrad as torch
    >>> torch.special.logit(torch.tensor([0.5, 0.75]))
    tensor([0.0000, 1.0986])
    """
    return _logit(input, eps)


def ndtr(input):
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2`` (torch's composite)."""
    return _E.mul(_E.add(_E.erf(_E.mul(input, _SQRT1_2)), 1), 0.5)


def round(input, *, decimals=0):  # noqa: A001 - torch.special.round
    return _E.round(input, decimals=decimals)


def log_softmax(input, dim, *, dtype=None):
    return _log_softmax(input, dim, dtype)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype)
