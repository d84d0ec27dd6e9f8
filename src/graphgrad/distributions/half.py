"""HalfNormal(scale) and HalfCauchy(scale): |X| for X a zero-centred Normal or Cauchy."""

from __future__ import annotations

import math

import graphgrad as torch

from . import constraints
from .cauchy import Cauchy
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal", "HalfCauchy"]


class _Half(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = torch.as_tensor(value, dtype=self.base_dist.scale.dtype)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)



class HalfNormal(_Half):
    def __init__(self, scale, validate_args=None):
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Half):
    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance
