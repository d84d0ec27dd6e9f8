"""The in-place samplers torch has beyond uniform/normal/bernoulli/exponential/random:
``Tensor.cauchy_``, ``geometric_``, ``log_normal_``, and the ``Tensor.bernoulli`` method; each
draws from graphgrad's generator (fresh draws on every compiled replay)."""

from __future__ import annotations

import numpy as np

from ._tensor import Tensor
from .ops.inplace import _random_fill
from .ops.random import bernoulli as _bernoulli

__all__ = []


def _draw_cauchy(rng, shape, median=0.0, sigma=1.0):
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return median + sigma * np.tan(np.pi * (rng.random(shape) - 0.5))


def _draw_geometric(rng, shape, p):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return rng.geometric(p, shape)


def _draw_log_normal(rng, shape, mean=1.0, std=2.0):
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return rng.lognormal(mean, std, shape)


def _bernoulli_method(self, p=None, *, generator=None):
    """Samples 0/1 with probability ``self`` (or the number ``p``) per element."""
    return _bernoulli(self, p, generator=generator)


Tensor.cauchy_ = _random_fill("cauchy", _draw_cauchy)
Tensor.geometric_ = _random_fill("geometric", _draw_geometric)
Tensor.log_normal_ = _random_fill("log_normal", _draw_log_normal)
Tensor.bernoulli = _bernoulli_method
