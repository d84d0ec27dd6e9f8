"""Count distributions: Poisson(rate) and Binomial(total_count, probs=None, logits=None)."""

from __future__ import annotations

import numbers

import numpy as np

import graphgrad as torch

from ..ops.random import _rng
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Poisson", "Binomial"]


class Poisson(Distribution):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = torch.Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rate = np.broadcast_to(self.rate.detach().numpy(), tuple(shape))
        draws = _rng(None).poisson(rate).astype(rate.dtype)
        return torch.from_numpy(draws)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2  # x.clamp(min=0) with gradient 0.5 at 0


class Binomial(Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Binomial, batch_shape, _instance, "total_count", "probs",
                                   "logits")

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with torch.no_grad():
            n = np.broadcast_to(self.total_count.numpy(), shape).astype(np.int64)
            p = np.broadcast_to(self.probs.detach().numpy(), shape)
            dtype = self.probs.detach().numpy().dtype
            return torch.from_numpy(_rng(None).binomial(n, p).astype(dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = torch.lgamma(self.total_count + 1)
        log_factorial_k = torch.lgamma(value + 1)
        log_factorial_nmk = torch.lgamma(self.total_count - value + 1)
        # log(1 + exp(logits))^n, written so that large |logits| neither overflows nor cancels
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * torch.log1p(torch.exp(-torch.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not bool(self.total_count.min() == total_count):
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not bool(self.total_count.min() == total_count):
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`enumerate_support`.")
        values = torch.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
