"""``Parameter`` and ``Buffer``: tensors that a Module registers when they are assigned to it.

A Parameter is a leaf Tensor (a subclass, so every op accepts it) that shares its data and
version counter with the tensor it was made from and requires grad unless told otherwise.
"""

from __future__ import annotations

from .._tensor import Tensor, version_cell

__all__ = ["Parameter", "Buffer"]

_new = object.__new__


def _share(cls, data, requires_grad):
    """A new ``cls`` leaf on ``data``'s storage (torch's ``Tensor._make_subclass``)."""
    if data is None:
        from ..ops.creation import empty

        data = empty(0)
    if not isinstance(data, Tensor):
        raise TypeError(f"{cls.__name__}.__new__() expected a Tensor as data, got "
                        f"{type(data).__name__}")
    t = _new(cls)
    t._data = data._data
    t._rg = False
    t._fn = None
    t._grad = None
    t._accum = None
    t._inf = data._inf
    t._extra = None
    t._vc = version_cell(data)
    t._view = None
    if requires_grad:
        if data._data.dtype.kind not in "fV":  # V: bfloat16
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._rg = True
    return t


class Parameter(Tensor):
    """A Tensor that a Module lists in ``parameters()`` when assigned as an attribute.

    >>> import graphgrad as torch
    >>> torch.nn.Parameter(torch.zeros(2))
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    """

    # No __slots__: like torch's, a Parameter accepts extra attributes (``p.sharded = True``).

    def __new__(cls, data=None, requires_grad=True):
        return _share(cls, data, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (type(self), self._data, self._rg))


def _rebuild_parameter(cls, data, requires_grad):
    from ..ops.creation import _from_state

    return cls(_from_state(data, False), requires_grad)


class Buffer(Tensor):
    """Marks a tensor as a buffer when assigned to a Module attribute (``torch.nn.Buffer``).

    It shares ``data``'s storage and keeps its ``requires_grad``; ``persistent=False`` keeps it
    out of the ``state_dict``.
    """

    def __new__(cls, data=None, *, persistent=True):
        t = _share(cls, data, data is not None and data.requires_grad)
        t.persistent = persistent
        return t


# The lazy placeholders subclass Parameter, so they are defined after it (torch keeps them here).
from ._uninitialized import (  # noqa: E402
    UninitializedBuffer,
    UninitializedParameter,
    UninitializedTensorMixin,
    is_lazy,
)

__all__ += ["UninitializedParameter", "UninitializedBuffer", "UninitializedTensorMixin",
            "is_lazy"]
