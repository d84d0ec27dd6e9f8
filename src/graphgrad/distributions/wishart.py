"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): sampled by the Bartlett
decomposition (differentiable through the Chi2 diagonal), resampling singular draws as
torch does."""

from __future__ import annotations

import math
import numbers
import warnings

import graphgrad as torch

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import eps_of, lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    offsets = torch.arange(p, dtype=x.dtype).div(2).expand(x.shape + (-1,))
    return torch.digamma(x.unsqueeze(-1) - offsets).sum(-1)


def _cholesky_solve(b, lower):
    """(L L^T)^-1 b by two triangular solves."""
    y = torch.linalg.solve_triangular(lower, b, upper=False)
    return torch.linalg.solve_triangular(lower.mT, y, upper=True)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if ((covariance_matrix is not None) + (scale_tril is not None)
                + (precision_matrix is not None)) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        # the Bartlett diagonal: chi2 with df, df - 1, ..., df - p + 1 degrees of freedom
        steps = torch.arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        scale = self._unbroadcasted_scale_tril
        return (scale @ scale.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        identity = torch.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return _cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = torch.where(factor <= 0, math.nan, factor)
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag_v = v.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (
            v.pow(2) + torch.einsum("...i,...j->...ij", diag_v, diag_v))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        diag = diag.clamp(min=eps_of(diag)).diag_embed(dim1=-2, dim2=-1)
        below = torch.randn(torch.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                            dtype=diag.dtype)
        chol = self._unbroadcasted_scale_tril @ (diag + vec_to_tril_matrix(below, diag=-1))
        return chol @ chol.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = ~self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            # redraw whole samples where any batch element is singular (same law as torch's
            # redraw of just those samples)
            for _ in range(max_try_correction):
                mask = is_singular.reshape(is_singular.shape + (1,) * (
                    sample.dim() - is_singular.dim()))
                sample = torch.where(mask, self._bartlett_sampling(sample_shape), sample)
                is_singular = ~self.support.check(sample)
                if self._batch_shape:
                    is_singular = is_singular.amax(self._batch_dims)
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        scale = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + scale.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - torch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet
                - _cholesky_solve(value, scale).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        scale = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + scale.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + torch.mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-torch.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + torch.mvlgamma(y + (p + 1) / 2, p=p))
