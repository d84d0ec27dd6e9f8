"""VonMises(loc, concentration): the circular normal on [-pi, pi). log I0 for the normaliser
comes from graphgrad.special.i0e (differentiable); sampling is torch's rejection scheme (Best
and Fisher 1979) in float64."""

from __future__ import annotations

import math

import numpy as np

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x):
    return torch.special.i0e(x).log() + x  # i0e(x) = exp(-|x|) I0(x), x > 0 here


def _log_i1(x):
    return torch.special.i1e(x).log() + x


def _rejection_sample(loc, concentration, proposal_r, shape, dtype):
    """Draws in NumPy float64 from graphgrad's generator: accept/reject until every
    element has a draw, then wrap loc + x into [-pi, pi)."""
    from ..ops.random import _rng
    rng = _rng(None)
    loc = np.broadcast_to(loc, shape)
    kappa = np.broadcast_to(concentration, shape)
    r = np.broadcast_to(proposal_r, shape)
    x = np.zeros(shape)
    done = np.zeros(shape, dtype=bool)
    while not done.all():
        u1, u2, u3 = rng.random((3,) + tuple(shape))
        z = np.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = ((c * (2 - c) - u2 > 0) | (np.log(c / u2) + 1 - c >= 0)) & ~done
        x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)), x)
        done |= accept
    out = (x + math.pi + loc) % (2 * math.pi) - math.pi
    return torch.from_numpy(out).to(dtype)


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, torch.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_i0(self.concentration)

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.detach().numpy().astype(np.float64)
        tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = (1 + rho ** 2) / (2 * rho)
            return np.where(kappa < 1e-5, 1 / kappa + kappa, r)  # Taylor form for tiny kappa

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with torch.no_grad():
            return _rejection_sample(self.loc.detach().numpy().astype(np.float64),
                                     self.concentration.detach().numpy().astype(np.float64),
                                     self._proposal_r, shape, self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        validate_args = self.__dict__.get("_validate_args")
        loc = self.loc.expand(batch_shape)
        concentration = self.concentration.expand(batch_shape)
        return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_i1(self.concentration) - _log_i0(self.concentration)).exp()
