"""StudentT(df, loc=0, scale=1): a Normal over the square root of a scaled Chi2, so rsample is
differentiable in all three parameters."""

from __future__ import annotations

import math

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(StudentT, batch_shape, _instance, "df", "loc", "scale", "_chi2")

    @property
    def mean(self):
        return torch.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / torch.where(df > 2, df - 2, 1.0)
        return torch.where(df > 2, finite, torch.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = torch.randn(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * torch.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = (torch.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - torch.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (torch.digamma(0.5 * (self.df + 1))
                                         - torch.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
