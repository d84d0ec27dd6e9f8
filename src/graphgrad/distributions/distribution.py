"""The Distribution base class: batch and event shapes, argument and sample validation with
torch's messages, and sample() in terms of rsample()."""

from __future__ import annotations

import warnings

import graphgrad as torch

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{type(self)} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(
                        getattr(type(self), param, None), lazy_property):
                    continue  # an alternative parametrisation, computed when asked
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    # shapes -------------------------------------------------------------------------------
    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        return torch.Size(sample_shape + self._batch_shape + self._event_shape)

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    def _expand_params(self, cls, batch_shape, _instance, *names):
        """``expand`` for the common case: a new ``cls`` whose named parameters (those set on
        this instance: tensors of batch_shape plus their own trailing dims, or distributions
        with this one's batch shape) are expanded."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                setattr(new, name, value.expand(batch_shape) if isinstance(value, Distribution)
                        else value.expand(batch_shape + value.shape[len(self._batch_shape):]))
                if self.__dict__.get("_param") is value:
                    new._param = getattr(new, name)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    # the interface ------------------------------------------------------------------------
    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterized sampler (has_rsample is False); "
            "use sample(), which does not propagate gradients")

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning,
                      stacklevel=2)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return torch.exp(self.entropy())

    # validation ---------------------------------------------------------------------------
    def _validate_sample(self, value):
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{type(self)} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"  # noqa: E501
                         for p in names)
        return f"{self.__class__.__name__}({args})"
