"""Bernoulli(probs=None, logits=None)."""

from __future__ import annotations

import numbers

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


def _bce_with_logits(logits, target):
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, target,
                                                                reduction="none")


class Bernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
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
        return self._expand_params(Bernoulli, batch_shape, _instance, "probs", "logits")

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
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        return torch.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = torch.broadcast_tensors(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = torch.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
