"""Gamma(concentration, rate) and Chi2(df)."""

from __future__ import annotations

import numbers

import graphgrad as torch

from . import constraints
from ._gamma_sampler import standard_gamma
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Gamma", "Chi2"]


class Gamma(Distribution):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = torch.Size() if isinstance(concentration, numbers.Number) and isinstance(
            rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate)
                + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - torch.log(self.rate) + torch.lgamma(self.concentration)
                + (1.0 - self.concentration) * torch.digamma(self.concentration))


class Chi2(Gamma):
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        return self.concentration * 2
