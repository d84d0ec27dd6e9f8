"""GeneralizedPareto(loc, scale, concentration): the peaks-over-threshold law; concentration
0 is the shifted Exponential, negative concentration has a bounded support."""

from __future__ import annotations

import math
import numbers

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        batch_shape = torch.Size() if scalar else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            GeneralizedPareto, batch_shape, _instance, "loc", "scale", "concentration"
        )

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(torch.rand(shape, dtype=self.loc.dtype))

    def _safe_concentration(self):
        eq_zero = torch.isclose(self.concentration, torch.zeros_like(self.concentration))
        return eq_zero, torch.where(
            eq_zero, torch.ones_like(self.concentration), self.concentration
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * torch.log1p(safe_conc * z))
        return -self.scale.log() - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return torch.where(eq_zero, -z, -torch.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_concentration()
        logu = torch.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * torch.expm1(-safe_conc * logu)
        return torch.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = torch.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return torch.where(valid, result, math.nan)

    def entropy(self):
        return torch.broadcast_to(torch.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(
            self.concentration < 0, lower - self.scale / self.concentration, math.inf
        )
        return constraints.interval(lower, upper)
