"""Dirichlet(concentration) and Beta(concentration1, concentration0), sampled through
normalised gammas so that rsample is differentiable."""

from __future__ import annotations

import numbers

import graphgrad as torch

from . import constraints
from ._gamma_sampler import standard_gamma
from .distribution import Distribution
from .utils import broadcast_all, tiny_of

__all__ = ["Dirichlet", "Beta"]


class Dirichlet(Distribution):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = torch.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gammas = standard_gamma(self.concentration.expand(shape))
        out = gammas / gammas.sum(-1, keepdim=True)
        tiny = tiny_of(out)
        return out.clamp(min=tiny, max=1 - tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration - 1.0, value).sum(-1)
                + torch.lgamma(self.concentration.sum(-1))
                - torch.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        one_hot = torch.nn.functional.one_hot(self.concentration.argmax(-1),
                                              concentrationm1.shape[-1]).to(mode)
        return torch.where(mask.unsqueeze(-1), one_hot, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (torch.lgamma(self.concentration).sum(-1) - torch.lgamma(a0)
                - (k - a0) * torch.digamma(a0)
                - ((self.concentration - 1.0) * torch.digamma(self.concentration)).sum(-1))


class Beta(Distribution):
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0,
                                                                    numbers.Real):
            concentration1_concentration0 = torch.tensor(
                [float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            concentration1_concentration0 = torch.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(concentration1_concentration0,
                                    validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Beta, batch_shape, _instance, "_dirichlet")

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = torch.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()
