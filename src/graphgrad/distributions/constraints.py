"""Constraints: what a parameter or a sample must satisfy (torch.distributions.constraints).
``check(value)`` returns a bool tensor, one entry per batch element."""

from __future__ import annotations

import graphgrad as torch

__all__ = ["Constraint", "boolean", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "half_open_interval", "independent", "integer_interval",
           "interval", "less_than", "lower_cholesky", "nonnegative", "nonnegative_integer",
           "positive", "positive_definite", "positive_integer", "real", "real_vector",
           "one_hot", "simplex", "unit_interval", "is_dependent", "open_interval", "cat",
           "corr_cholesky", "lower_triangular", "MixtureSameFamilyConstraint", "multinomial",
           "positive_semidefinite", "square", "stack", "symmetric"]


class Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """Depends on other parameters (e.g. Uniform's support): cannot be checked alone."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, *, is_discrete=False, event_dim=0):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    return isinstance(constraint, _Dependent)


class dependent_property(property):  # noqa: N801 - torch's name
    """A property that is also a dependent constraint (Uniform.support)."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        super().__init__(fn)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _IndependentConstraint(Constraint):
    def __init__(self, base, reinterpreted_batch_ndims):
        self.base_constraint = base
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if self.reinterpreted_batch_ndims:
            result = result.reshape(result.shape[:result.dim() - self.reinterpreted_batch_ndims]
                                    + (-1,)).all(-1)
        return result

    def __repr__(self):
        return (f"IndependentConstraint({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return (f"IntegerInterval(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # false only for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self):
        return (f"HalfOpenInterval(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _OpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound < value) & (value < self.upper_bound)

    def __repr__(self):
        return f"OpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(value.shape[:-2] + (-1,)).min(-1).values
        positive = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1).values
        return lower & positive


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value):
        return torch.linalg.cholesky_ex(value).info.eq(0) if hasattr(
            torch.linalg, "cholesky_ex") else torch.linalg.eigvalsh(value).min(-1).values > 0


class _Multinomial(Constraint):
    """Nonnegative counts summing to at most upper_bound (torch checks the weaker bound)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).reshape(value.shape[:-2] + (-1,)).min(-1).values


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: unit-norm rows."""
    event_dim = 2

    def check(self, value):
        tol = torch.finfo(value.dtype).eps * value.size(-1) * 10  # torch's fudge factor
        row_norm = torch.linalg.norm(value.detach(), dim=-1)
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return torch.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1],
                          dtype=torch.bool)


class _Symmetric(_Square):
    def check(self, value):
        square_check = super().check(value)
        if not bool(square_check.all()):
            return square_check
        return torch.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym_check = super().check(value)
        if not bool(sym_check.all()):
            return sym_check
        return torch.linalg.eigvalsh(value).ge(0).all(-1)


class _Cat(Constraint):
    """Constraints applied to consecutive slices of ``dim``, as torch.cat joins them."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq "
                                 f"({len(self.cseq)})")
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start = start + length
        return torch.cat(checks, self.dim)


class _Stack(Constraint):
    """Constraints applied to the entries of ``dim``, as torch.stack joins them."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        vs = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return torch.stack([c.check(v) for v, c in zip(vs, self.cseq)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """A component distribution's support checked on a value with the component dimension
    added back (MixtureSameFamily.support)."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got "
                             f"{value.dim()}")
        num_dim_to_keep = value.dim() - self.event_dim
        result = result.reshape(result.shape[:num_dim_to_keep] + (-1,))
        return result.all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


dependent = _Dependent()
boolean = _Boolean()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
open_interval = _OpenInterval
simplex = _Simplex()
one_hot = _OneHot()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
independent = _IndependentConstraint
multinomial = _Multinomial
lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
cat = _Cat
stack = _Stack
