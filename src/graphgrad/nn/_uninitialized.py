"""``UninitializedParameter`` and ``UninitializedBuffer``: placeholders whose shape is not known
yet (lazy modules). ``materialize(shape)`` gives one its storage and turns it, in place, into a
``Parameter`` or a plain ``Tensor`` (``cls_to_become``), so every reference to it stays valid.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.creation import empty
from .parameter import Parameter, _share

__all__ = ["UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer",
           "is_lazy"]


class UninitializedTensorMixin:
    """What the two placeholders share: ``materialize``, a ``shape`` that refuses to answer,
    dtype casts that stay uninitialised, torch's repr."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Allocates the storage of ``shape`` (``dtype`` defaults to the placeholder's) and
        turns this object into ``cls_to_become``."""
        if dtype is None:
            dtype = self.dtype
        self._data = empty(tuple(shape), device=device, dtype=dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into "
            "an initialized one. Call `forward` to initialize the parameters before accessing "
            "their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def to(self, *args, **kwargs):
        cast = Tensor.to(self, *args, **kwargs)
        if cast is self:
            return self
        return type(self)(requires_grad=self.requires_grad, dtype=cast.dtype)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(requires_grad=self.requires_grad, dtype=self.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return (_rebuild, (type(self), self.requires_grad, self.dtype))


def _rebuild(cls, requires_grad, dtype):
    return cls(requires_grad=requires_grad, dtype=dtype)


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialised parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter without storage yet; it becomes a ``Parameter`` when materialized.

    >>> import graphgrad as torch
    >>> p = torch.nn.UninitializedParameter()
    >>> p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', torch.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _share(cls, empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer without storage yet; it becomes a plain ``Tensor`` when materialized.
    Assigned to a Module attribute it is registered as a buffer (``persistent`` unless told
    otherwise)."""

    __slots__ = ()
    cls_to_become = Tensor
    persistent = True

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        if not persistent and cls is UninitializedBuffer:
            cls = _NonPersistentUninitializedBuffer
        return _share(cls, empty(0, device=device, dtype=dtype), requires_grad)


class _NonPersistentUninitializedBuffer(UninitializedBuffer):
    # A class rather than an attribute: a plain Tensor has no __dict__ to keep one in, and the
    # buffer must be able to turn into one.
    __slots__ = ()
    persistent = False


_NonPersistentUninitializedBuffer.__name__ = "UninitializedBuffer"
_NonPersistentUninitializedBuffer.__qualname__ = "UninitializedBuffer"
