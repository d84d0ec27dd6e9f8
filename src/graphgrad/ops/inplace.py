"""In-place ops (``add_``, ``mul_``, ``+=``, ``zero_``, ``copy_``, ``x[i] = v``, ...).

Each is its out-of-place op followed by a write into the tensor's own array, so views see the
change. The write bumps the version cell shared with views, and a recorded in-place op moves
the tensor's ``grad_fn`` to the new node; when the op needs the old value for its gradient it
reads a copy taken before the write.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, version_cell, wrap
from ..autograd.grad_mode import state as _mode
from . import elementwise as E
from ._dispatch import _scalar

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


def _check_target(self, name):
    if _mode.grad_enabled and self._rg and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if self._inf and not _mode.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")


def _write(self, result: Tensor, name: str) -> Tensor:
    """Stores ``result`` into ``self`` in place, with torch's casting rule."""
    src, dst = result._data, self._data
    if _CATEGORY[src.dtype.kind] > _CATEGORY[dst.dtype.kind]:
        raise RuntimeError(f"result type {_TORCH_NAME[src.dtype.name]} can't be cast to the "
                           f"desired output type {_TORCH_NAME[dst.dtype.name]}")
    if src.shape != dst.shape:
        try:
            np.broadcast_to(src, dst.shape)
        except ValueError:
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the "
                               f"broadcast shape {list(src.shape)} (in {name})") from None
    if not dst.flags.writeable:
        raise RuntimeError(f"{name}: unsupported operation: the tensor's memory is a broadcast "
                           "view (made by expand) and cannot be written. Please clone() it "
                           "first.")
    np.copyto(dst, src, casting="unsafe")
    version_cell(self)[0] += 1
    if result.grad_fn is not None:
        self.grad_fn = result.grad_fn
        self._rg = True
    return self


_TORCH_NAME = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
               "uint8": "Byte", "bool": "Bool", "float32": "Float", "float64": "Double",
               "float16": "Half"}


def _old_value(self, needs_copy: bool) -> Tensor:
    """``self`` as an op input: a snapshot when the op saves it, else the tensor itself."""
    if not needs_copy:
        return self
    t = wrap(self._data.copy(), self._rg, self.grad_fn)
    t._accum = self._accum
    if self.grad_fn is None and self._rg:
        t._accum = None
        t.grad_fn = None
    return t


def _make_inplace(name, fn, saves_self):
    def method(self, *args, **kwargs):
        _check_target(self, name)
        recording = _mode.grad_enabled and (self._rg or any(
            isinstance(a, Tensor) and a._rg for a in args))
        src = _old_value(self, saves_self and recording)
        return _write(self, fn(src, *args, **kwargs), name)
    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: writes the result into this tensor."
    return method


_BINARY = {
    "add_": (E.add, False), "sub_": (E.sub, False), "mul_": (E.mul, True),
    "div_": (E.div, True), "pow_": (E.pow, True), "remainder_": (E.remainder, True),
    "floor_divide_": (E.floor_divide, False), "clamp_": (E.clamp, True),
    "clip_": (E.clamp, True), "clamp_min_": (E.clamp_min, True),
    "clamp_max_": (E.clamp_max, True), "maximum_": (E.maximum, True),
    "minimum_": (E.minimum, True),
}
_UNARY = ("neg", "abs", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin",
          "cos", "tan", "tanh", "sigmoid", "relu", "sign", "floor", "ceil", "round", "trunc",
          "reciprocal", "square", "erf", "exp2")


def zero_(self):
    return fill_(self, 0)


def fill_(self, value):
    _check_target(self, "fill_")
    if isinstance(value, Tensor):
        value = value.item()
    out = wrap(np.full(self._data.shape, _scalar(value)).astype(self._data.dtype), False, None)
    with_grad = self.grad_fn is not None and _mode.grad_enabled
    if with_grad:  # the old values no longer matter: the gradient to them is zero
        out = self * 0 + out
    return _write(self, out, "fill_")


def copy_(self, src, non_blocking=False):
    _check_target(self, "copy_")
    if not isinstance(src, Tensor):
        raise TypeError("copy_(): argument 'src' must be Tensor")
    out = src.to(self.dtype)
    if self._data.shape != src._data.shape:
        out = out.expand(self._data.shape)
    if _mode.grad_enabled and self.grad_fn is not None and not out._rg:
        out = self * 0 + out
    # copy_ may cast any category to any other, unlike arithmetic in-place ops
    np.copyto(self._data, out._data, casting="unsafe")
    version_cell(self)[0] += 1
    if out.grad_fn is not None and _mode.grad_enabled:
        self.grad_fn = out.grad_fn
        self._rg = True
    return self


def setitem(self, key, value):
    """``x[key] = value``: written in place; differentiable assignment is not recorded yet."""
    if isinstance(key, Tensor):
        key = key._data
    elif isinstance(key, tuple):
        key = tuple(k._data if isinstance(k, Tensor) else k for k in key)
    recording = _mode.grad_enabled and (self._rg or (isinstance(value, Tensor) and value._rg))
    if recording:
        _check_target(self, "__setitem__")
        raise NotImplementedError(
            "graphgrad: assignment by index into a tensor that is part of a graph is not "
            "differentiable yet (it arrives with in-place indexing in the autograd issue); "
            "use torch.where or torch.cat, or assign under torch.no_grad()")
    _check_target(self, "__setitem__")
    data = value._data if isinstance(value, Tensor) else value
    self._data[key] = data
    version_cell(self)[0] += 1


def _bind():
    for name, (fn, saves) in _BINARY.items():
        setattr(Tensor, name, _make_inplace(name, fn, saves))
    for base in _UNARY:
        fn = getattr(E, base)
        saves = E.__dict__[base.upper()].save != () if base.upper() in E.__dict__ else True
        setattr(Tensor, base + "_", _make_inplace(base + "_", fn, saves))
    Tensor.zero_ = zero_
    Tensor.fill_ = fill_
    Tensor.copy_ = copy_
    Tensor.__setitem__ = setitem
    for dunder, name in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                         ("__itruediv__", "div_"), ("__ipow__", "pow_"), ("__imod__", "remainder_"),
                         ("__ifloordiv__", "floor_divide_")):
        setattr(Tensor, dunder, getattr(Tensor, name))


_bind()
