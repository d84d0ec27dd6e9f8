"""OneHotCategoricalStraightThrough: a OneHotCategorical whose rsample passes gradients to
probs by the straight-through estimator (Bengio et al., 2013)."""

from __future__ import annotations

from .categorical import OneHotCategorical

__all__ = ["OneHotCategoricalStraightThrough"]


class OneHotCategoricalStraightThrough(OneHotCategorical):
    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
