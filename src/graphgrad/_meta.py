"""The ``meta`` device: tensors with a shape, a dtype and a device but no data.

A meta tensor's array is a zero-stride broadcast of one zero (it allocates nothing), recorded
in ``arrays`` so that ``Tensor.device`` can tell. While one is alive, ``ops._dispatch`` calls
:meth:`_State.run` (the slot forward AD also uses; the two are not combined): an op with a
meta input runs on those zeros to learn its result's shape and dtype, and the result is made a
meta tensor too. Reading values (``item``, ``numpy``, ``tolist``, a copy to the CPU) raises
torch's errors.
"""

from __future__ import annotations

import weakref

import numpy as np

from ._device import device

__all__ = ["is_meta", "to_meta", "meta_array", "check_readable"]

arrays: dict = {}  # id(array) -> weakref to the array of a meta tensor
META = device("meta")


def _forget(key):
    arrays.pop(key, None)
    if not arrays:
        _install(False)


def meta_array(shape, dtype) -> np.ndarray:
    """A data-less array of ``shape`` and ``dtype`` (one zero, broadcast), registered as meta."""
    a = np.broadcast_to(np.zeros((), dtype), tuple(shape))
    key = id(a)
    arrays[key] = weakref.ref(a, lambda _r, k=key: _forget(k))
    _install(True)
    return a


def is_meta_array(a) -> bool:
    r = arrays.get(id(a))
    return r is not None and r() is a


def is_meta(t) -> bool:
    return bool(arrays) and is_meta_array(t._data)


_TO_META = None


def to_meta(t):
    """``t.to('meta')``: a meta tensor of ``t``'s shape and dtype; differentiable as torch's
    copy (grad_fn ToCopyBackward0), the gradient passing through unchanged."""
    global _TO_META
    if is_meta(t):
        return t
    if _TO_META is None:
        from .ops._dispatch import unary  # noqa: F401 - the ops package must be loaded
        from .ops._opdef import OpDef

        # not registered in OPS: it is the device move of Tensor.to, not an op of its own
        _TO_META = OpDef("to_meta", lambda xp, x: meta_array(x.shape, x.dtype),
                         lambda ns, g: g, kind="movement", save=(), dtype_rule="same",
                         node="ToCopyBackward0", needs_mask=False, onnx=None)
    from .ops._dispatch import unary

    return unary(_TO_META, t)


def check_readable(t, what):
    """torch's refusal to read a meta tensor's values."""
    if not is_meta(t):
        return
    if what == "item":
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    if what == "numpy":
        raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to "
                        "copy the tensor to host memory first.")
    raise NotImplementedError("Cannot copy out of meta tensor; no data!")


def format_meta(t, fn):
    """torch's repr of a meta tensor: ``tensor(..., device='meta', size=(2, 3))``."""
    from . import _dtype

    parts = [f"size={tuple(t._data.shape)}"]
    if t._data.dtype != _dtype._defaults.float.np:
        parts.append(f"dtype={t.dtype}")
    if fn is not None:
        parts.append(f"grad_fn=<{type(fn).__name__}>")
    elif t._rg:
        parts.append("requires_grad=True")
    return f"tensor(..., device='meta', {', '.join(parts)})"


def _install(on):
    from .ops import _dispatch

    if on:
        if _dispatch._fwd is None:
            _dispatch._fwd = state
        elif _dispatch._fwd is not state:
            raise NotImplementedError("meta tensors cannot be made inside a forward AD "
                                      "dual_level with dual tensors alive")
    elif _dispatch._fwd is state:
        _dispatch._fwd = None


class _State:
    """The dispatcher's hook while a meta tensor is alive."""

    __slots__ = ("busy",)
    tracks_writes = False  # in-place ops keep their usual path (ops/inplace.py)
    handles_functions = False  # a custom Function's forward runs its ops through run()

    def __init__(self):
        self.busy = False

    def _call(self, fn, *args):
        self.busy = True
        try:
            with np.errstate(all="ignore"):  # the values are placeholders: 0/0 is fine
                return fn(*args)
        finally:
            self.busy = False

    def run(self, fn, op, args):
        from ._tensor import Tensor
        from .ops import _dispatch as D

        if fn is D.unary:
            inputs = (args[0],)
        elif fn is D.binary:
            inputs = (args[0], args[1])
        else:
            inputs = args[0]
        tensors = [x for x in inputs if isinstance(x, Tensor)]
        metas = [is_meta(x) for x in tensors]
        if not any(metas):
            return self._call(fn, op, *args)
        for x, m in zip(tensors, metas):
            if not m and x._data.ndim:  # torch lets a 0-d CPU tensor meet a meta one
                raise RuntimeError("Tensor on device cpu is not on the expected device meta! "
                                   f"(in {op.name}, shapes {[list(t.shape) for t in tensors]})")
        out = self._call(fn, op, *args)
        if isinstance(out, tuple):
            return (_as_meta(out[0]),) + out[1:]
        return _as_meta(out)

    def run_multi(self, fn, op, inputs, params):
        outs = self._call(fn, op, inputs, params)
        if any(is_meta(x) for x in inputs):
            return tuple(_as_meta(o) for o in outs)
        return outs

    def write(self, target, result):
        pass  # an in-place write into a meta tensor stores nothing

    def snapshot(self, copy, t):
        pass


def _as_meta(t):
    """Turns an op's result into a meta tensor in place (its computed zeros are dropped)."""
    if not is_meta(t):
        t._data = meta_array(t._data.shape, t._data.dtype)
    return t


state = _State()
