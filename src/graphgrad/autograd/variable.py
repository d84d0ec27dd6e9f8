"""``torch.autograd.Variable``, the pre-0.4 wrapper: calling it returns a Tensor (a detached
alias of the data with the given ``requires_grad``), and every Tensor is an instance of it."""

from __future__ import annotations

import warnings

from .._tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)`` returns a Tensor.

    >>> import graphgrad as torch
    >>> v = torch.autograd.Variable(torch.tensor([1.0, 2.0]), requires_grad=True)
    >>> isinstance(v, torch.autograd.Variable), v.requires_grad
    (True, True)
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", stacklevel=2)
        if data is None:
            from ..ops.creation import empty

            return empty(0, requires_grad=requires_grad)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t
