"""TransformedDistribution(base, transforms) and LogNormal, its best-known instance."""

from __future__ import annotations

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .normal import Normal
from .transforms import ComposeTransform, ExpTransform, Transform
from .utils import sum_rightmost

__all__ = ["TransformedDistribution", "LogNormal"]


class TransformedDistribution(Distribution):
    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(shape)
        if base_shape != expanded_base_shape:  # a transform's parameters broadcast the base
            base_distribution = base_distribution.expand(
                expanded_base_shape[:len(expanded_base_shape) - base_event_dim])
        if transform.domain.event_dim > base_event_dim:  # e.g. StickBreaking of a Normal
            from .independent import Independent
            base_distribution = Independent(base_distribution,
                                            transform.domain.event_dim - base_event_dim)
        self.base_dist = base_distribution
        event_dim = transform.codomain.event_dim + max(
            base_event_dim - transform.domain.event_dim, 0)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = torch.Size(batch_shape)
        shape = batch_shape + self.event_shape
        for transform in reversed(self.transforms):
            shape = transform.inverse_shape(shape)
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        return self.transforms[-1].codomain if self.transforms else self.base_dist.support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        with torch.no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                event_dim - transform.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value


class LogNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(LogNormal, _instance))

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
