"""LKJCholesky(dim, concentration=1.0): the lower Cholesky factor of an LKJ-distributed
correlation matrix, sampled by the onion method as torch does."""

from __future__ import annotations

import math

import graphgrad as torch

from . import constraints
from .dirichlet import Beta
from .distribution import Distribution
from .utils import broadcast_all, tiny_of

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = torch.Size((dim, dim))
        # the Beta marginals of the onion method, one per row
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with torch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            first_row_zero = torch.ones(self.dim, 1, dtype=y.dtype)
            first_row_zero[0] = 0.0
            u_hypersphere = torch.nan_to_num(u_hypersphere) * first_row_zero  # row 0 is 0/0
            w = torch.sqrt(y) * u_hypersphere
            diag_elems = torch.clamp(1 - torch.sum(w ** 2, dim=-1), min=tiny_of(w)).sqrt()
            return w + torch.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = torch.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = torch.lgamma(alpha) * dm1
        numerator = torch.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
