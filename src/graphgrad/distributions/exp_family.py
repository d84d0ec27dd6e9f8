"""ExponentialFamily: distributions p(x) = h(x) exp(<t(x), theta> - F(theta)); the entropy
and the KL between two members of one family follow from the log normaliser F by autograd
(a Bregman divergence)."""

from __future__ import annotations

import graphgrad as torch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self):
        """The natural parameters theta, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """F(theta)."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """E[log h(x)]."""
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for nparam, g in zip(nparams, gradients):
            result = result - (nparam * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
