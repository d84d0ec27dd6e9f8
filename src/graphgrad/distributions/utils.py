"""Helpers shared by the distributions, with torch.distributions.utils' names: parameter
broadcasting, the probs <-> logits conversions, lazy properties."""

from __future__ import annotations

import functools
import numbers

import numpy as np

import graphgrad as torch

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property", "sum_rightmost", "eps_of", "tiny_of", "euler_constant",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def eps_of(t) -> float:
    return float(np.finfo(t.detach().numpy().dtype).eps) if t.is_floating_point() else 1e-7


def tiny_of(t) -> float:
    return float(np.finfo(t.detach().numpy().dtype).tiny)


def broadcast_all(*values):
    """Tensors broadcast to one shape; Python numbers become tensors of the tensors' dtype
    (the default dtype when there are none), as torch's does."""
    if not all(isinstance(v, (torch.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, torch.Tensor)),
                     torch.get_default_dtype())
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype)
                  for v in values]
    return torch.broadcast_tensors(*values)


def clamp_probs(probs):
    eps = eps_of(probs)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    return torch.sigmoid(logits) if is_binary else torch.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    return torch.log(ps) - torch.log1p(-ps) if is_binary else torch.log(ps)


def sum_rightmost(value, dim: int):
    """Sums the rightmost ``dim`` dimensions."""
    return value if dim == 0 else value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


class lazy_property:  # noqa: N801 - torch's name
    """Computed on first access and then stored on the instance (so a distribution built from
    logits computes probs only when asked)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with torch.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


@functools.lru_cache(maxsize=64)
def _tril_flat_index(n: int, diag: int):
    rows, cols = np.nonzero(np.arange(n) < np.arange(n).reshape(-1, 1) + (diag + 1))
    return rows * n + cols  # row order, as torch's boolean-mask indexing gives


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower-triangular entries (below diagonal ``diag``) of a batch of matrices, in row
    order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    index = torch.from_numpy(_tril_flat_index(n, diag))
    return mat.reshape(mat.shape[:-2] + (n * n,)).index_select(-1, index)


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of tril_matrix_to_vec: a lower-triangular matrix from its entries."""
    k = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * k + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > float(np.finfo(np.float64).eps):
        raise ValueError(f"The size of last dimension is {k} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec @ torch.from_numpy(_tril_placement(k, n, diag)).to(vec.dtype)
    return mat.reshape(vec.shape[:-1] + (n, n))


@functools.lru_cache(maxsize=64)
def _tril_placement(k: int, n: int, diag: int):
    """A one-hot (k, n*n) matrix: the scatter into the triangle as one differentiable
    matmul."""
    place = np.zeros((k, n * n))
    place[np.arange(k), _tril_flat_index(n, diag)] = 1.0
    place.flags.writeable = False
    return place
