"""Bijective transforms for TransformedDistribution (torch.distributions.transforms):
each maps x to y, inverts, and gives log |dy/dx|."""

from __future__ import annotations

import math
import numbers

import graphgrad as torch

from . import constraints
from .utils import eps_of, sum_rightmost

__all__ = ["Transform", "ComposeTransform", "ExpTransform", "AffineTransform",
           "SigmoidTransform", "TanhTransform", "PowerTransform", "SoftplusTransform",
           "AbsTransform", "identity_transform", "CatTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform",
           "StackTransform", "StickBreakingTransform"]


class Transform:
    bijective = False
    sign = 1
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = property(lambda self: self._inv.codomain)
    codomain = property(lambda self: self._inv.domain)
    bijective = property(lambda self: self._inv.bijective)
    sign = property(lambda self: self._inv.sign)

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = Transform.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"


class ComposeTransform(Transform):
    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = Transform.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # the largest event_dim any part needs, carried back to the input
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return torch.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = 0.0
        event_dim = self.domain.event_dim
        for part, x_part, y_part in zip(self.parts, xs[:-1], xs[1:]):
            total = total + _sum_rightmost(part.log_abs_det_jacobian(x_part, y_part),
                                           event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.exponent = exponent if isinstance(exponent, torch.Tensor) else torch.tensor(
            float(exponent))

    @property
    def sign(self):
        return self.exponent.sign()

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = Transform.__hash__

    def forward_shape(self, shape):
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()


class SigmoidTransform(Transform):
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        eps = _eps(x)
        return torch.sigmoid(x).clamp(min=eps, max=1 - eps)

    def _inverse(self, y):
        eps = _eps(y)
        y = y.clamp(min=eps, max=1 - eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        softplus = torch.nn.functional.softplus
        return -softplus(-x) - softplus(x)


class SoftplusTransform(Transform):
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return torch.nn.functional.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -torch.nn.functional.softplus(-x)


class TanhTransform(Transform):
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return 0.5 * (y.log1p() - (-y).log1p())  # atanh, written from log1p

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2), stable for large |x|
        return 2.0 * (math.log(2.0) - x - torch.nn.functional.softplus(-2.0 * x))


class AbsTransform(Transform):
    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, numbers.Number) and isinstance(theirs, numbers.Number):
                if mine != theirs:
                    return False
            elif not bool((torch.as_tensor(mine) == torch.as_tensor(theirs)).all()):
                return False
        return True

    __hash__ = Transform.__hash__

    def forward_shape(self, shape):
        return torch.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                      getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape

    @property
    def domain(self):
        return (constraints.real if self._event_dim == 0
                else constraints.independent(constraints.real, self._event_dim))

    codomain = domain

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = torch.full_like(x, math.log(abs(scale)))
        else:
            result = torch.abs(scale).log()
        if self._event_dim:
            result_size = result.size()[:-self._event_dim] + (-1,)
            result = result.view(result_size).sum(-1)
            shape = shape[:-self._event_dim]
        return result.expand(shape)


def _eps(t):
    return eps_of(t)


def _sum_rightmost(value, dim):
    return sum_rightmost(value, dim) if isinstance(value, torch.Tensor) else value


# the structured and vector-valued transforms, one family per file, exported from here as
# torch.distributions.transforms exports them
from ._transforms_structural import (  # noqa: E402
    CatTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    ReshapeTransform,
    StackTransform,
)
from ._transforms_vector import (  # noqa: E402
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)
