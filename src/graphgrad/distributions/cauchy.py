"""Cauchy(loc, scale), sampled by its inverse cdf."""

from __future__ import annotations

import math
import numbers

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = torch.Size() if isinstance(loc, numbers.Number) and isinstance(
            scale, numbers.Number) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.loc.dtype)
        eps = torch.tan(math.pi * (u - 0.5))  # the standard Cauchy's inverse cdf
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
