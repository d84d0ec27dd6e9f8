"""Transforms built from other transforms or from a distribution: Independent, Reshape, Cat,
Stack and CumulativeDistribution, as in torch.distributions.transforms."""

from __future__ import annotations

import graphgrad as torch

from . import constraints
from .transforms import Transform
from .utils import sum_rightmost

__all__ = ["IndependentTransform", "ReshapeTransform", "CatTransform", "StackTransform",
           "CumulativeDistributionTransform"]


class IndependentTransform(Transform):
    """base_transform with its rightmost reinterpreted_batch_ndims batch dimensions counted
    as event dimensions (its log-det summed over them)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost in_shape dimensions to out_shape (log-det zero)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = torch.Size(in_shape), torch.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(x.shape[:x.dim() - len(self.in_shape)] + self.out_shape)

    def _inverse(self, y):
        return y.reshape(y.shape[:y.dim() - len(self.out_shape)] + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _swap(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new

    def forward_shape(self, shape):
        return self._swap(torch.Size(shape), self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(torch.Size(shape), self.out_shape, self.in_shape)


def _check_dim(name, t, dim, size, length):
    if not -t.dim() <= dim < t.dim():
        raise AssertionError(f"dim {dim} out of range for {name} with {t.dim()} dimensions")
    if t.size(dim) != length:
        raise AssertionError(f"{name}.size({dim}) = {t.size(dim)} must equal {size} {length}")


class CatTransform(Transform):
    """Applies tseq[i] to the i-th slice (of lengths[i]) along dim, as torch.cat joins."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, fn, z, name):
        _check_dim(name, z, self.dim, "length", self.length)
        out, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            out.append(fn(trans, z.narrow(self.dim, start, length)))
            start = start + length
        return torch.cat(out, dim=self.dim)

    def _call(self, x):
        return self._map(lambda t, v: t(v), x, "x")

    def _inverse(self, y):
        return self._map(lambda t, v: t.inv(v), y, "y")

    def log_abs_det_jacobian(self, x, y):
        _check_dim("x", x, self.dim, "length", self.length)
        _check_dim("y", y, self.dim, "length", self.length)
        logdetjacs, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            logdetjac = trans.log_abs_det_jacobian(x.narrow(self.dim, start, length),
                                                   y.narrow(self.dim, start, length))
            if trans.event_dim < self.event_dim:
                logdetjac = sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
            start = start + length
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        return torch.cat(logdetjacs, dim=dim) if dim < 0 else sum(logdetjacs)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies tseq[i] to the i-th entry along dim, as torch.stack joins."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        _check_dim("x", x, self.dim, "len(transforms)", len(self.transforms))
        return torch.stack([t(v) for v, t in zip(self._slice(x), self.transforms)],
                           dim=self.dim)

    def _inverse(self, y):
        _check_dim("y", y, self.dim, "len(transforms)", len(self.transforms))
        return torch.stack([t.inv(v) for v, t in zip(self._slice(y), self.transforms)],
                           dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim("x", x, self.dim, "len(transforms)", len(self.transforms))
        _check_dim("y", y, self.dim, "len(transforms)", len(self.transforms))
        return torch.stack([t.log_abs_det_jacobian(a, b) for a, b, t in zip(
            self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x): the distribution's support to the unit interval."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
