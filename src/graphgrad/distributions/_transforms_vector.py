"""Transforms whose event is a vector or a matrix: Softmax, StickBreaking (to the simplex),
LowerCholesky, PositiveDefinite and CorrCholesky (to matrix constraints), as in
torch.distributions.transforms."""

from __future__ import annotations

import math

import graphgrad as torch

from . import constraints
from .transforms import Transform
from .utils import tiny_of, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["SoftmaxTransform", "StickBreakingTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "CorrCholeskyTransform"]


def _pad(x, left, right, value):
    return torch.nn.functional.pad(x, [left, right], value=value)


def _clipped_sigmoid(x):
    eps = float(torch.finfo(x.dtype).eps)
    return torch.clamp(torch.sigmoid(x), min=float(torch.finfo(x.dtype).tiny), max=1.0 - eps)


def _needs_a_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(Transform):
    """x -> softmax(x) on the last dimension: not bijective, the inverse is log."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _needs_a_dim(shape)
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex by stick breaking, offset so that zero maps to the centre."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    @staticmethod
    def _offset(x, size):
        return size - torch.ones(x.shape[-1], dtype=x.dtype).cumsum(-1)

    def _call(self, x):
        offset = self._offset(x, x.shape[-1] + 1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return _pad(z, 0, 1, 1) * _pad(z_cumprod, 1, 0, 1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = self._offset(y_crop, y.shape[-1])
        sf = torch.clamp(1 - y_crop.cumsum(-1), min=tiny_of(y))
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = self._offset(x, x.shape[-1] + 1)
        x = x - offset.log()
        return (-x + torch.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _needs_a_dim(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _needs_a_dim(shape)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """An unconstrained square matrix -> lower triangular with exp() of its diagonal."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """An unconstrained square matrix -> L L^T with L its LowerCholeskyTransform."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(torch.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """A vector of D(D-1)/2 reals -> the Cholesky factor of a D x D correlation matrix:
    tanh to (-1, 1), then stick breaking along each row (torch's construction)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = torch.tanh(x)
        eps = float(torch.finfo(x.dtype).eps)
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + torch.eye(r.shape[-1], dtype=r.dtype)
        return r * _pad(z1m_cumprod_sqrt[..., :-1], 1, 0, 1)

    def _inverse(self, y):
        y_cumsum = 1 - torch.cumsum(y * y, dim=-1)
        y_cumsum_shifted = _pad(y_cumsum[..., :-1], 1, 0, 1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        softplus = torch.nn.functional.softplus
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        _needs_a_dim(shape)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)
