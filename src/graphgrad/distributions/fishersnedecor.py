"""FisherSnedecor(df1, df2): the ratio of two scaled Gammas, so rsample is differentiable."""

from __future__ import annotations

import math
import numbers

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, tiny_of

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = (
            torch.Size()
            if isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
            else self.df1.size()
        )
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            FisherSnedecor, batch_shape, _instance, "df1", "df2", "_gamma1", "_gamma2"
        )

    @property
    def mean(self):
        df2 = torch.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return torch.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = torch.where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = tiny_of(x2)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * torch.log(value)
        t3 = (ct1 + ct2) * torch.log1p(ct3 * value)
        return t1 + t2 - t3
