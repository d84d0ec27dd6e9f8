"""Concrete relaxations of the Bernoulli: LogitRelaxedBernoulli (in logit space) and
RelaxedBernoulli(temperature, probs=None, logits=None) on (0, 1)."""

from __future__ import annotations

import numbers

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        is_scalar = isinstance(given, numbers.Number)
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        batch_shape = torch.Size() if is_scalar else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(LogitRelaxedBernoulli, batch_shape, _instance, "probs", "logits")
        new.temperature = self.temperature
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(torch.rand(shape, dtype=probs.dtype))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
