"""Creation ops: tensor, as_tensor, from_numpy, zeros/ones/full/empty (+ _like), arange,
linspace, eye. Results are leaves; ``requires_grad=`` marks them."""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import _dtype
from .._device import check_device
from .._tensor import Tensor, wrap
from . import _dispatch
from ._util import shape_arg

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like",
           "ones_like", "full_like", "empty_like", "arange", "linspace", "logspace", "eye",
           "scalar_tensor"]


def _leaf(data: np.ndarray, requires_grad: bool) -> Tensor:
    if _dispatch._tracer is not None:  # graphgrad.compile bakes created tensors as constants
        _dispatch._tracer.const(data)
    t = wrap(data, False, None)
    if requires_grad:
        if data.dtype.kind not in "fcV":  # V: bfloat16
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._rg = True
    return t


def _np_dtype(dtype):
    return None if dtype is None else _dtype.to_dtype(dtype).np


def _infer(data, exact_floats=False):
    """An ndarray for Python data with torch's dtype inference (floats -> default dtype).
    ``exact_floats``: keep Python floats in float64, for a caller that casts to an explicit
    dtype next (rounding through float32 first would lose digits a float64 target keeps)."""
    typed = []  # dtypes of the NumPy floats and float tensors inside a list: torch keeps them
    if isinstance(data, (list, tuple)):
        data = [_unwrap(x, typed) for x in data]
    arr = np.asarray(data)
    kind = arr.dtype.kind
    if kind == "f":
        if not exact_floats and not isinstance(data, (np.ndarray, np.floating)):
            arr = arr.astype(np.result_type(_dtype.get_default_dtype().np, *typed))
    elif kind in "iu":
        if not isinstance(data, (np.ndarray, np.integer)):
            arr = arr.astype(np.int64)
    elif kind == "b":
        pass
    elif kind == "c":
        if not isinstance(data, (np.ndarray, np.complexfloating)):
            arr = arr.astype(_dtype.default_complex().np)
    elif kind == "O" or kind in "USV":
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    else:
        raise TypeError(f"can't convert data of numpy type {arr.dtype}")
    if arr.dtype not in _dtype._FROM_NP:
        arr = arr.astype(_dtype.from_numpy_dtype(arr.dtype).np)
    return arr


def _unwrap(x, typed=None):
    if isinstance(x, (list, tuple)):
        return [_unwrap(y, typed) for y in x]
    if isinstance(x, (Tensor, np.ndarray, np.floating)) and typed is not None:
        dt = x._data.dtype if isinstance(x, Tensor) else x.dtype
        if dt.kind == "f":
            typed.append(dt)
    if isinstance(x, Tensor):
        return x._data.item() if x._data.ndim == 0 else x._data.tolist()
    return x


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (nested lists, numbers, arrays, tensors).

    >>> import graphgrad as torch
    >>> torch.tensor([[1, 2], [3, 4]]).dtype
    torch.int64
    """
    if device is not None:
        check_device(device)
    tp = type(data)
    if dtype is None and (tp is float or tp is int or tp is builtins.bool):
        # The common case of a Python number: skip the general inference below.
        arr = np.array(data, dtype=_dtype._defaults.float.np if tp is float else
                       (np.int64 if tp is int else np.bool_))
        return _leaf(arr, requires_grad)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        arr = data._data.copy()
    elif isinstance(data, np.ndarray):
        arr = np.array(data, copy=True)
        if arr.dtype not in _dtype._FROM_NP:
            arr = arr.astype(_dtype.from_numpy_dtype(arr.dtype).np)
    else:
        arr = np.array(_infer(data, exact_floats=dtype is not None), copy=True)
    if dtype is not None:
        arr = arr.astype(_np_dtype(dtype), copy=False)
    return _leaf(arr, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return tensor(float(s), dtype=dtype or _dtype.get_default_dtype(), requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a tensor or ndarray when the dtype allows."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == _dtype.to_dtype(dtype) else data.to(dtype)
    if isinstance(data, np.ndarray):
        arr = data if dtype is None else data.astype(_np_dtype(dtype), copy=False)
        return _leaf(arr, False) if arr.dtype in _dtype._FROM_NP else tensor(arr)
    return tensor(data, dtype=dtype)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray``."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    return _leaf(ndarray, False)


def _filled(size, value, dtype, requires_grad, device, default=None):
    meta = device is not None and str(device) == "meta"  # graphgrad/_meta.py: no data
    check_device(None if meta else device)
    shape = shape_arg(size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    np_dtype = _np_dtype(dtype) if dtype is not None else (
        default or _dtype.get_default_dtype().np)
    if meta:
        from .. import _meta

        return _leaf(_meta.meta_array(shape, np_dtype), requires_grad)
    try:
        data = np.full(shape, value, dtype=np_dtype)
    except MemoryError as err:  # torch: RuntimeError naming the bytes
        from ._alloc_error import alloc_error

        raise alloc_error(err, f"a tensor of size {list(shape)}") from None
    return _leaf(data, requires_grad)


def _size(size, kwargs, name=None):
    if "size" in kwargs:
        return (kwargs.pop("size"),)
    if not size and name is not None:  # torch.zeros() (torch.zeros(()) is a 0-d tensor)
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return size


def zeros(*size, dtype=None, device=None, requires_grad=False, **kwargs) -> Tensor:
    return _filled(_size(size, kwargs, "zeros"), 0, dtype, requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False, **kwargs) -> Tensor:
    return _filled(_size(size, kwargs, "ones"), 1, dtype, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False, **kwargs) -> Tensor:
    # NOTE: filled with zeros rather than left uninitialised, so results are reproducible.
    return _filled(_size(size, kwargs, "empty"), 0, dtype, requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        fill_value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
        dtype = _dtype.scalar_dtype(fill_value)
    return _filled((size,) if isinstance(size, int) else tuple(size), fill_value, dtype,
                   requires_grad, device)


def _like(input, value, dtype, requires_grad, device):
    if device is None and input.is_meta:  # *_like keeps the input's device
        device = "meta"
    return _filled(input._data.shape, value, dtype, requires_grad, device,
                   default=input._data.dtype)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(input, 0, dtype, requires_grad, device)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(input, 1, dtype, requires_grad, device)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(input, 0, dtype, requires_grad, device)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(input, fill_value, dtype, requires_grad, device)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 for integer arguments."""
    check_device(device)
    if end is None:
        start, end = 0, start
    start, end, step = _num(start), _num(end), _num(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        is_float = builtins.any(isinstance(v, float) for v in (start, end, step))
        np_dtype = _dtype.get_default_dtype().np if is_float else np.int64
    else:
        np_dtype = _np_dtype(dtype)
    n = builtins.max(0, int(np.ceil((end - start) / step)))
    try:
        data = (start + np.arange(n, dtype=np.float64) * step) if np.dtype(np_dtype).kind == "f" \
            or builtins.any(isinstance(v, float) for v in (start, end, step)) else \
            np.arange(start, end, step, dtype=np.int64)
        data = data.astype(np_dtype)
    except MemoryError as err:  # torch: RuntimeError naming the bytes
        from ._alloc_error import alloc_error

        raise alloc_error(err, f"arange of {n} elements") from None
    return _leaf(data, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = _np_dtype(dtype) or _dtype.get_default_dtype().np
    data = np.linspace(_num(start), _num(end), steps, dtype=np.float64)
    return _leaf(data.astype(np_dtype), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    check_device(device)
    np_dtype = _np_dtype(dtype) or _dtype.get_default_dtype().np
    data = np.logspace(_num(start), _num(end), steps, base=base, dtype=np.float64)
    return _leaf(data.astype(np_dtype), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    check_device(device)
    np_dtype = _np_dtype(dtype) or _dtype.get_default_dtype().np
    return _leaf(np.eye(n, n if m is None else m, dtype=np_dtype), requires_grad)


def _from_state(data, requires_grad):
    """Unpickling target for tensors."""
    return _leaf(np.array(data, copy=True), requires_grad)
