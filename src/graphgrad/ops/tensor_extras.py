"""Tensor attributes and spellings torch programs use: layout and memory-format objects, the
legacy ``new`` constructor, ``H``/``mH``/``adjoint``, predicates (``is_nonzero``, ``is_signed``),
byte sizes, and the in-place forms of comparisons, logical/bitwise ops, scans and aliases.

In-place forms reuse inplace.py's machinery; an in-place comparison on a tensor in a graph
leaves it with a zero-gradient history, as torch's (its result is not differentiable).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor, wrap
from . import elementwise as E
from . import movement as M

__all__ = ["layout", "strided", "sparse_coo", "memory_format", "contiguous_format",
           "preserve_format", "channels_last", "channels_last_3d", "positive", "adjoint",
           "is_nonzero", "is_same_size", "is_signed"]


class layout:
    """A tensor layout; graphgrad has one, ``strided``."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


class memory_format:
    """A memory format; accepted by ``contiguous``/``to``/``clone`` and ignored (NumPy arrays
    here are row-major)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


# -- functions --------------------------------------------------------------------------------
def positive(input):
    """``input`` itself (torch returns the same tensor); bool is refused as torch does."""
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def adjoint(input):
    """The conjugate transpose of the last two dims (a transpose for real tensors)."""
    if input._data.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input._data.ndim}-D tensor.")
    return M.transpose(input, -2, -1)


def is_nonzero(input):
    n = input._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()))


def is_same_size(input, other):
    return input._data.shape == other._data.shape


def is_signed(input):
    return input._data.dtype.kind in "if"


# -- Tensor attributes ------------------------------------------------------------------------
def _H(self):
    nd = self._data.ndim
    if nd == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return self
    if nd != 2:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{nd}-D tensor.")
    return M.t(self)


def _mH(self):
    nd = self._data.ndim
    if nd == 0:
        warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return self
    if nd < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {nd}-D tensor.")
    return M.transpose(self, -2, -1)


def _new(self, *args, **kwargs):
    """Legacy constructor: ``t.new(sizes...)`` (uninitialised: zeros here), ``t.new(data)`` or
    ``t.new(tensor)``, with ``t``'s dtype."""
    from .creation import empty, tensor

    dtype = kwargs.pop("dtype", None) or self.dtype
    kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"new() got unexpected keyword arguments {sorted(kwargs)}")
    if not args:
        return empty(0, dtype=dtype)
    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0].dtype != dtype:
            raise TypeError(f"expected {dtype} (got {args[0].dtype})")
        return args[0]
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)) and not (
            isinstance(args[0], (tuple, list)) and type(args[0]).__name__ == "Size"):
        return tensor(args[0], dtype=dtype)
    return empty(*args, dtype=dtype)


def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                       **_):
    from .creation import empty

    out = empty(tuple(size), dtype=dtype or self.dtype)
    if tuple(stride) != out.stride() and all(size):
        from .shaping import as_strided

        n = max(sum((s - 1) * st for s, st in zip(size, stride)) + 1, 0)
        out = as_strided(empty((n,), dtype=dtype or self.dtype), tuple(size), tuple(stride))
        out = wrap(out._data, False, None)
    return out.requires_grad_(requires_grad)


def _apply_(self, callable):  # noqa: A002 - torch's argument name
    """Replaces each element by ``callable(element)`` (a Python function; slow, as torch's)."""
    if self._rg:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    flat = [callable(v) for v in self._data.reshape(-1).tolist()]
    self._data[...] = np.asarray(flat, dtype=self._data.dtype).reshape(self._data.shape)
    return self


def _map_(self, tensor, callable):  # noqa: A002 - torch's argument names
    """``self[i] = callable(self[i], tensor[i])`` with ``tensor`` broadcast to self."""
    if self._rg or tensor._rg:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    other = np.broadcast_to(tensor._data, self._data.shape)
    flat = [callable(a, b) for a, b in zip(self._data.reshape(-1).tolist(),
                                           other.reshape(-1).tolist())]
    self._data[...] = np.asarray(flat, dtype=self._data.dtype).reshape(self._data.shape)
    return self


# -- in-place forms ---------------------------------------------------------------------------
def _no_grad_inplace(name, fn):
    """An in-place op whose result is not differentiable (comparisons, logical, bitwise)."""
    def method(self, *args, **kwargs):
        from . import inplace as I
        from ._dispatch import unary

        recording = I._recording(self, *args)
        I._check_target(self, name, recording)
        result = fn(self, *args, **kwargs)
        if recording and self._data.dtype.kind in "fV":  # V: bfloat16
            result = unary(I._OVERWRITES["fill"], self, {"values": result._data})
        return I._write(self, result, name, True)
    method.__name__ = name
    return method


_NO_GRAD = {
    "eq_": E.eq, "ne_": E.ne, "lt_": E.lt, "le_": E.le, "gt_": E.gt, "ge_": E.ge,
    "greater_": E.gt, "greater_equal_": E.ge, "less_": E.lt, "less_equal_": E.le,
    "not_equal_": E.ne, "logical_and_": E.logical_and, "logical_or_": E.logical_or,
    "logical_xor_": E.logical_xor, "logical_not_": E.logical_not,
    "bitwise_and_": E.bitwise_and, "bitwise_or_": E.bitwise_or, "bitwise_xor_": E.bitwise_xor,
    "bitwise_not_": E.bitwise_not,
}


def _bind():
    from . import inplace as I
    from . import sorting as S

    T = Tensor
    T.positive = positive
    T.adjoint = adjoint
    T.is_nonzero = is_nonzero
    T.is_same_size = is_same_size
    T.is_signed = is_signed
    T.H = property(_H)
    T.mH = property(_mH)
    T.nbytes = property(lambda self: self._data.nbytes)
    T.itemsize = property(lambda self: self._data.itemsize)
    T.is_cpu = property(lambda self: True)
    for flag in ("is_sparse", "is_quantized", "is_meta", "is_nested", "is_mkldnn"):
        if not hasattr(T, flag):
            setattr(T, flag, property(lambda self: False))
    T.layout = property(lambda self: strided)
    T.new = _new
    T.new_empty_strided = _new_empty_strided
    T.apply_ = _apply_
    T.map_ = _map_
    for name, fn in _NO_GRAD.items():
        setattr(T, name, _no_grad_inplace(name, fn))
    for name, fn, saves in (
            ("cumsum_", S.cumsum, False), ("cumprod_", S.cumprod, True),
            ("divide_", E.div, True), ("true_divide_", E.div, True), ("multiply_", E.mul, True),
            ("subtract_", E.sub, False), ("negative_", E.neg, False)):
        setattr(T, name, I._make_inplace(name, fn, saves))
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        if hasattr(E, name):
            setattr(T, name + "_", _no_grad_inplace(name + "_", getattr(E, name)))


_bind()
