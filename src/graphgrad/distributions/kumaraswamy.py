"""Kumaraswamy(concentration1, concentration0): (1 - U^(1/c0))^(1/c1) for U uniform, a
Beta-like law on [0, 1] with a closed-form cdf."""

from __future__ import annotations

import math

import graphgrad as torch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """The n-th moment, b * B(1 + n/a, b), through lgamma."""
    arg1 = 1 + n / a
    log_value = torch.lgamma(arg1) + torch.lgamma(b) - torch.lgamma(arg1 + b)
    return b * torch.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(torch.full_like(self.concentration0, 0),
                            torch.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        c1, c0 = self.concentration1, self.concentration0
        log_mode = c0.reciprocal() * (-c0).log1p() - (-c0 * c1).log1p()
        return torch.where((c0 < 1) | (c1 < 1), math.nan, log_mode).exp()

    @property
    def variance(self):
        return (_moments(self.concentration1, self.concentration0, 2)
                - torch.pow(self.mean, 2))

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = torch.digamma(self.concentration0 + 1) + euler_constant
        return (t0 + t1 * h0 - torch.log(self.concentration1)
                - torch.log(self.concentration0))
