"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril), computed
through the lower Cholesky factor of the covariance."""

from __future__ import annotations

import math

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):  # noqa: N803 - torch's names
    """x^T (L L^T)^-1 x for every batch element, by one triangular solve."""
    shape = torch.broadcast_shapes(bL.shape[:-1], bx.shape)
    bL = bL.expand(shape + bL.shape[-1:])  # noqa: N806
    solved = torch.linalg.solve_triangular(bL, bx.expand(shape).unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(p):
    lf = torch.linalg.cholesky(torch.flip(p, (-2, -1)))
    l_inv = torch.transpose(torch.flip(lf, (-2, -1)), -2, -1)
    eye = torch.eye(p.shape[-1], dtype=p.dtype)
    return torch.linalg.solve_triangular(l_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if ((covariance_matrix is not None) + (scale_tril is not None)
                + (precision_matrix is not None)) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix)
                     if m is not None)
        if given.dim() < 2:
            which = ("scale_tril" if scale_tril is not None else "covariance_matrix"
                     if covariance_matrix is not None else "precision_matrix")
            raise ValueError(f"{which} matrix must be at least two-dimensional, with "
                             "optional leading batch dimensions")
        batch_shape = torch.broadcast_shapes(given.shape[:-2], loc.shape[:-1])
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        scale = self._unbroadcasted_scale_tril
        return torch.matmul(scale, scale.mT).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        eye = torch.eye(self._event_shape[0], dtype=self.loc.dtype)
        scale_inv = torch.linalg.solve_triangular(self._unbroadcasted_scale_tril, eye,
                                                  upper=False)
        return torch.matmul(scale_inv.mT, scale_inv).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = torch.randn(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
