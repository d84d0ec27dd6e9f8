"""Top-level questions about objects: is_tensor, numel, is_floating_point, typename and kin
(is_nonzero and is_same_size live with the tensor predicates in ops/tensor_extras.py).

They take a Tensor where torch's take a Tensor, with torch's TypeError for anything else.
"""

from __future__ import annotations

import builtins

from ._tensor import Tensor

__all__ = ["is_tensor", "is_storage", "numel", "is_floating_point", "is_complex", "typename"]


def _check(fn: str, x, name: str = "input", position: builtins.int = 1) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def is_tensor(obj) -> builtins.bool:
    """True for graphgrad tensors (and Parameters).

    >>> import graphgrad as torch
    >>> torch.is_tensor(torch.ones(2)), torch.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def is_storage(obj) -> builtins.bool:
    """Whether ``obj`` is a storage (what ``Tensor.untyped_storage()``/``storage()`` return)."""
    from ._storage import TypedStorage, UntypedStorage

    return isinstance(obj, (UntypedStorage, TypedStorage))


def numel(input) -> builtins.int:  # noqa: A002 - torch's parameter name
    return _check("numel", input).numel()


def is_floating_point(input) -> builtins.bool:  # noqa: A002
    return _check("is_floating_point", input).dtype.is_floating_point


def is_complex(input) -> builtins.bool:  # noqa: A002
    return _check("is_complex", input).dtype.is_complex


def typename(obj) -> str:
    """A tensor's legacy type name ('torch.FloatTensor'), else the object's qualified name.

    >>> import graphgrad as torch
    >>> torch.typename(torch.ones(1)), torch.typename(3)
    ('torch.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
