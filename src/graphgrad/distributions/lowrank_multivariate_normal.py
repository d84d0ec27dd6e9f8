"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D), with
log_prob and entropy through the m x m capacitance matrix I + W^T D^-1 W (Woodbury and the
matrix determinant lemma), never the n x n covariance."""

from __future__ import annotations

import math

import graphgrad as torch

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(w, d):
    """Cholesky factor of I + W^T D^-1 W."""
    m = w.size(-1)
    k = torch.matmul(w.mT / d.unsqueeze(-2), w) + torch.eye(m, dtype=w.dtype)
    return torch.linalg.cholesky(k)


def _batch_lowrank_logdet(w, d, capacitance_tril):
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1)


def _batch_lowrank_mahalanobis(w, d, x, capacitance_tril):
    wt_dinv = w.mT / d.unsqueeze(-2)
    wt_dinv_x = _batch_mv(wt_dinv, x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        loc_, cov_diag_ = loc.unsqueeze(-1), cov_diag.unsqueeze(-1)
        try:
            loc_, self.cov_factor, cov_diag_ = torch.broadcast_tensors(loc_, cov_factor,
                                                                       cov_diag_)
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        n = self._event_shape[0]
        cov_diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / cov_diag_sqrt
        k = torch.matmul(dinvsqrt_w, dinvsqrt_w.mT) + torch.eye(n, dtype=dinvsqrt_w.dtype)
        return (cov_diag_sqrt * torch.linalg.cholesky(k)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        w = self._unbroadcasted_cov_factor
        cov = torch.matmul(w, w.mT) + torch.diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = torch.linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = torch.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        w_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_w = torch.randn(w_shape, dtype=self.loc.dtype)
        eps_d = torch.randn(shape, dtype=self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
