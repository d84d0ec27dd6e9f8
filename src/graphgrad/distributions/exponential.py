"""Exponential(rate) and Laplace(loc, scale)."""

from __future__ import annotations

import math
import numbers

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, eps_of

__all__ = ["Exponential", "Laplace"]


class Exponential(Distribution):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = torch.Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return torch.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.rate.dtype)
        return -torch.log1p(-u) / self.rate  # inverse cdf of a uniform in [0, 1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value):
        return -torch.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - torch.log(self.rate)


class Laplace(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = torch.Size() if isinstance(loc, numbers.Number) and isinstance(
            scale, numbers.Number) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = eps_of(self.loc)
        u = torch.rand(shape, dtype=self.loc.dtype) * (2 - eps) + (eps - 1)  # in (-1, 1)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * torch.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + torch.log(2 * self.scale)
