"""Gumbel-softmax relaxations of the one-hot Categorical: ExpRelaxedCategorical (in log
space) and RelaxedOneHotCategorical(temperature, probs=None, logits=None) on the simplex."""

from __future__ import annotations

import graphgrad as torch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample (numerically safer to work in)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(ExpRelaxedCategorical, batch_shape, _instance, "_categorical")
        new.temperature = self.temperature
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(torch.rand(shape, dtype=self.logits.dtype))
        gumbels = -(-uniforms.log()).log()
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (torch.full_like(self.temperature, float(k)).lgamma()
                     - self.temperature.log().mul(-(k - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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
