"""Uniform(low, high) on [low, high)."""

from __future__ import annotations

import numbers

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = torch.Size() if isinstance(low, numbers.Number) and isinstance(
            high, numbers.Number) else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, batch_shape, _instance, "low", "high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return torch.full_like(self.high, float("nan"))

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = torch.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return torch.log(lb.mul(ub)) - torch.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return torch.log(self.high - self.low)
