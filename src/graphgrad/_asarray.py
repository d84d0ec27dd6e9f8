"""Tensors over existing memory: ``asarray``, ``frombuffer``, ``from_dlpack``, ``empty_strided``.

Each shares memory with its source where torch's does (tensors, ndarrays, writable buffers) and
raises torch's ValueError where sharing was demanded (``copy=False``) but is impossible.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype
from ._device import check_device
from ._tensor import Tensor
from .ops.creation import _filled, _leaf, as_tensor, from_numpy, tensor
from .ops.creation import empty as _empty

__all__ = ["asarray", "frombuffer", "from_dlpack", "empty_strided"]

_LEGACY = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char",
           "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool"}


def _set_grad(t: Tensor, requires_grad) -> Tensor:
    if requires_grad is None or requires_grad == t.requires_grad:
        return t
    if not requires_grad:
        return t.detach()
    if t.grad_fn is None:
        return t.requires_grad_(True)
    return t


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """A tensor from ``obj``, sharing memory with a tensor or ndarray unless a copy is needed
    or ``copy=True``; ``copy=False`` raises ValueError when sharing is impossible.

    >>> import graphgrad as torch, numpy as np
    >>> a = np.zeros(2, dtype=np.float32)
    >>> t = torch.asarray(a); a[0] = 5.0; t
    tensor([5., 0.])
    """
    check_device(device)
    dt = None if dtype is None else _dtype.to_dtype(dtype)
    if isinstance(obj, Tensor):
        if requires_grad is None and obj.requires_grad:
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to "
                          "obj.requires_grad instead of False. Pass requires_grad=False "
                          "explicitly to get the old behavior and silence this warning.",
                          UserWarning, stacklevel=2)
        if dt is not None and dt is not obj.dtype:
            if copy is False:
                raise ValueError(f"can't alias tensor with dtype '{_LEGACY[obj.dtype.name]}' "
                                 f"into dtype '{_LEGACY[dt.name]}'.")
            t = obj.to(dt)
        else:
            t = obj.clone() if copy else obj
        return _set_grad(t, requires_grad)
    if isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__"):
        arr = np.asarray(obj)
        if dt is not None and arr.dtype != dt.np and copy is False:
            have = _dtype.from_numpy_dtype(arr.dtype).name
            raise ValueError(f"can't alias tensor with dtype '{_LEGACY[have]}' into dtype "
                             f"'{_LEGACY[dt.name]}'.")
        t = as_tensor(arr.copy() if copy else arr, dtype=dt)
        return _set_grad(t, requires_grad)
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    return tensor(obj, dtype=dt, requires_grad=bool(requires_grad))


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor:
    """A 1-D tensor over the bytes of a buffer-protocol object (shared when it is writable).

    NOTE: a read-only buffer (``bytes``) is copied, because NumPy refuses writes through a
    read-only view; torch shares it and warns that writes would reach the buffer.
    """
    d = _dtype.to_dtype(dtype)
    view = memoryview(buffer)
    nbytes = view.nbytes
    size = d.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if offset < 0 or offset >= nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count < 0:
        if (nbytes - offset) % size:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (nbytes - offset) // size
    elif count * size > nbytes - offset:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({nbytes} bytes)")
    arr = np.frombuffer(view.cast("B"), dtype=d.np, count=count, offset=offset)
    if not arr.flags.writeable:
        arr = arr.copy()
    return _leaf(arr, requires_grad)


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing memory with any object that implements ``__dlpack__`` (NumPy arrays,
    torch tensors on the CPU, ...)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    return from_numpy(np.from_dlpack(ext_tensor))


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """A zero-filled tensor with the given element strides (graphgrad fills "empty" tensors).

    >>> import graphgrad as torch
    >>> torch.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"{list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if 0 in size:
        return _empty(size, dtype=dtype, device=device, requires_grad=requires_grad)
    extent = 1 + sum((n - 1) * st for n, st in zip(size, stride))
    base = _filled((extent,), 0, dtype, False, device)._data
    arr = np.lib.stride_tricks.as_strided(
        base, shape=size, strides=tuple(st * base.itemsize for st in stride))
    return _leaf(arr, requires_grad)
