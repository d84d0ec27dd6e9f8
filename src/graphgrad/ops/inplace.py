"""In-place ops (``add_``, ``mul_``, ``+=``, ``zero_``, ``copy_``, ``x[i] = v``, ...).

Each is its out-of-place op followed by a write into the tensor's own array, so views see the
change. The write bumps the version cell shared with views. A recorded in-place op moves the
tensor's ``grad_fn`` to the new node, or, for a view, makes its base's history a CopySlices
node (Note [Views] in ``ops/views.py``). When the op needs the old value for its gradient it
reads a copy taken before the write. Outside the graph (no_grad, or nothing requires grad) an
in-place op costs one ufunc call into the tensor's own storage.
"""

from __future__ import annotations

import numpy as np

from .. import _meta
from .._tensor import _CPP_NAMES, Tensor, bump_version, wrap
from ..autograd.errors import AutogradError
from ..autograd.grad_mode import state as _mode
from . import _dispatch
from . import elementwise as E
from ._dispatch import _scalar, apply, unary
from ._opdef import defop
from ._overlap import internal_overlap, overlap_error, writable_alias
from .views import check_inplace_view, rebase

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # V: bfloat16 (ml_dtypes)

_TORCH_NAME = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
               "uint8": "Byte", "bool": "Bool", "float32": "Float", "float64": "Double",
               "float16": "Half", "bfloat16": "BFloat16", "complex64": "ComplexFloat",
               "complex128": "ComplexDouble"}


def _check_target(self, name, recording):
    """torch's refusals: a leaf that requires grad, a view it cannot track, an inference
    tensor outside inference mode."""
    if self._view is not None:
        check_inplace_view(self, _mode.grad_enabled and (recording or self._view[0]._rg))
    elif _mode.grad_enabled and self._rg and self._fn is None:
        raise AutogradError(
            "a leaf Variable that requires grad is being used in an in-place operation.",
            shapes=[list(self._data.shape)],
            fix="update parameters inside `with torch.no_grad():` (as optimizers do), or "
                "apply the op to a clone: y = x.clone(); y.add_(...)")
    if self._inf and not _mode.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")


def _recording(self, *others) -> bool:
    if _dispatch._fwd is not None and _dispatch._fwd.tracks_writes:
        return True  # forward AD: writes go through the ops that carry tangents
    if not _mode.grad_enabled or _mode.inference:
        return False
    if self.requires_grad:
        return True
    return any(isinstance(o, Tensor) and o.requires_grad for o in others)


_bump = bump_version


def _no_data(t) -> bool:
    """A meta tensor (graphgrad/_meta.py) stores nothing: an in-place write into it is a no-op
    once its shapes are checked."""
    return bool(_meta.arrays) and _meta.is_meta_array(t._data)


def _write(self, result: Tensor, name: str, any_cast: bool = False,
           cpp_names: bool = False) -> Tensor:
    """Stores ``result`` into ``self`` in place (torch's casting rule unless ``any_cast``) and
    moves the history. ``cpp_names``: torch's cast error names the target's C++ type."""
    src, dst = result._data, self._data
    if not any_cast and _CATEGORY[src.dtype.kind] > _CATEGORY[dst.dtype.kind]:
        want = (_CPP_NAMES if cpp_names else _TORCH_NAME)[dst.dtype.name]
        raise RuntimeError(f"result type {_TORCH_NAME[src.dtype.name]} can't be cast to the "
                           f"desired output type {want}")
    if src.shape != dst.shape:
        try:
            np.broadcast_to(src, dst.shape)
        except ValueError:
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the "
                               f"broadcast shape {list(src.shape)} (in {name})") from None
    if _no_data(self):
        return self
    if not dst.flags.writeable:
        # a broadcast view (made by expand): torch writes unless two elements alias one place
        dst = None if internal_overlap(dst) else writable_alias(dst)
        if dst is None:
            raise overlap_error(name)
    if _dispatch._tracer is not None:  # graphgrad.compile records the write
        _dispatch._tracer.write(self, src)
    np.copyto(dst, src, casting="unsafe")
    _bump(self)
    if _dispatch._fwd is not None:  # forward AD: the target takes the result's tangent
        _dispatch._fwd.write(self, result)
    if result._fn is not None:
        if self._view is not None:
            rebase(self, result)  # self's own grad_fn is rebuilt on next use
        else:
            self._fn = result._fn
            self._rg = True
    return self


def _old_value(self, needs_copy: bool) -> Tensor:
    """``self`` as an op input: a snapshot when the op saves it, else the tensor itself."""
    if not needs_copy:
        return self
    old = wrap(self._data.copy(), self._rg, self.grad_fn)
    if _dispatch._fwd is not None:  # forward AD: the snapshot keeps the old tangent
        _dispatch._fwd.snapshot(old, self)
    if _dispatch._tracer is not None:  # graphgrad.compile: the snapshot is the same value
        _dispatch._tracer.alias(old._data, self._data)
    return old


def _make_inplace(name, fn, saves_self):
    # torch's clamp_ with Python-number bounds words its cast error with C++ type names
    clamps = name in ("clamp_", "clip_", "clamp_min_", "clamp_max_")

    def method(self, *args, **kwargs):
        recording = _recording(self, *args, *kwargs.values())
        _check_target(self, name, recording)
        src = _old_value(self, saves_self and recording)
        return _write(self, fn(src, *args, **kwargs), name, cpp_names=clamps and not any(
            isinstance(a, Tensor) for a in (*args, *kwargs.values())))
    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: writes the result into this tensor."
    return method


_BINARY = {
    "add_": (E.add, False), "sub_": (E.sub, False), "mul_": (E.mul, True),
    "div_": (E.div, True), "pow_": (E.pow, True), "remainder_": (E.remainder, True),
    "floor_divide_": (E.floor_divide, False), "clamp_": (E.clamp, True),
    "clip_": (E.clamp, True), "clamp_min_": (E.clamp_min, True),
    "clamp_max_": (E.clamp_max, True),
}
_UNARY = ("neg", "abs", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin",
          "cos", "tan", "tanh", "sigmoid", "relu", "sign", "floor", "ceil", "round", "trunc",
          "reciprocal", "square", "erf", "exp2")


# -- overwrites: the new value does not depend on the old one --------------------------------
def _overwrite_op(name, node):
    """An op whose result ignores its input's values: the old history gets zero gradient."""
    return defop(name, lambda xp, x, values: np.broadcast_to(np.asarray(values, x.dtype), x.shape),
                 lambda ns, g, values: ns.zeros_like(g), kind="creation", dtype_rule="same",
                 node=node)


_OVERWRITES = {name: _overwrite_op(name, node) for name, node in (
    ("zero", "ZeroBackward0"), ("fill", "FillBackward2"), ("uniform", "UniformBackward0"),
    ("normal", "NormalBackward0"), ("bernoulli", "BernoulliBackward2"),
    ("exponential", "ExponentialBackward0"), ("random", "RandomBackward2"))}

# fill_ with a 0-d tensor that requires grad: the value receives the summed gradient.
FILL_TENSOR = defop("fill.Tensor", lambda xp, x, v: np.broadcast_to(v, x.shape).astype(x.dtype),
                    lambda ns, g: (ns.zeros_like(g), ns.sum(g)), kind="creation",
                    dtype_rule="same", node="FillBackward3")

# copy_: the source is cast and broadcast to the destination; the old values get zero grad.
COPY = defop("copy", lambda xp, x, src: np.broadcast_to(src, x.shape).astype(x.dtype),
             lambda ns, g: (ns.zeros_like(g), g), kind="movement", dtype_rule="same",
             node="CopyBackwards")


def _overwrite(self, values, kind):
    """Writes ``values`` (an array broadcastable to self) over ``self``."""
    name = kind + "_"
    recording = _recording(self)
    _check_target(self, name, recording)
    if _dispatch._tracer is not None and not recording:  # graphgrad.compile: record the write
        if not isinstance(values, np.ndarray):
            values = np.asarray(values, self._data.dtype)
        _dispatch._tracer.const(values)  # no-op for values already recorded (random draws)
        return _write(self, wrap(values, False, None), name, True)
    if not recording:
        if _no_data(self):
            return self
        if not self._data.flags.writeable:
            # an expanded tensor: torch lets a single value reach every alias (fill_, zero_)
            alias = writable_alias(self._data) if np.ndim(values) == 0 else None
            if alias is None:
                raise overlap_error(name)
            alias[...] = values
            _bump(self)
            return self
        self._data[...] = values
        _bump(self)
        return self
    return _write(self, unary(_OVERWRITES[kind], self, {"values": values}), name, True)


def zero_(self):
    return _overwrite(self, 0, "zero")


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        if _recording(self, value) and value.requires_grad:
            _check_target(self, "fill_", True)
            return _write(self, apply(FILL_TENSOR, (self, value)), "fill_", True)
        value = value.item()
    return _overwrite(self, np.asarray(_scalar(value)).astype(self._data.dtype), "fill")


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    recording = _recording(self, src)
    _check_target(self, "copy_", recording)
    if not recording:
        dst = self._data
        if _no_data(self):
            return self
        if not dst.flags.writeable:
            dst = None if internal_overlap(dst) else writable_alias(dst)
            if dst is None:
                raise overlap_error("copy_")
        try:
            np.copyto(dst, src._data, casting="unsafe")
        except ValueError:
            raise RuntimeError(f"copy_: the size of tensor a ({list(self._data.shape)}) must "
                               f"match the size of tensor b ({list(src._data.shape)})") from None
        _bump(self)
        return self
    try:
        result = apply(COPY, (self, src))
    except RuntimeError:
        raise RuntimeError(f"copy_: the size of tensor a ({list(self._data.shape)}) must match "
                           f"the size of tensor b ({list(src._data.shape)})") from None
    return _write(self, result, "copy_", True)


def _random_fill(kind, draw):
    def method(self, *args, generator=None, **kwargs):
        from .random import _rng

        if _no_data(self):
            return self  # nothing to fill, and no draw from the generator
        shape, dtype = self._data.shape, self._data.dtype
        tensors = [a for a in args if isinstance(a, Tensor)]

        def redraw(*arrays):
            it = iter(arrays)
            a = [next(it) if isinstance(x, Tensor) else x for x in args]
            return np.asarray(draw(_rng(generator), shape, *a, **kwargs)).astype(dtype)
        values = redraw(*[t._data for t in tensors])
        if _dispatch._tracer is not None:  # graphgrad.compile: fresh draws on every replay
            _dispatch._tracer.random(values, redraw, label=kind + "_", inputs=tensors)
        return _overwrite(self, values, kind)
    method.__name__ = kind + "_"
    method.__doc__ = f"Fills this tensor in place with samples from the {kind} distribution."
    return method


def _draw_uniform(rng, shape, a=0.0, b=1.0):
    return rng.uniform(a, b, shape)


def _draw_normal(rng, shape, mean=0.0, std=1.0):
    return rng.normal(mean, std, shape)


def _draw_bernoulli(rng, shape, p=0.5):
    p = p._data if isinstance(p, Tensor) else p
    return rng.random(shape) < p


def _draw_exponential(rng, shape, lambd=1.0):
    return rng.exponential(1.0 / lambd, shape)


def _draw_random(rng, shape, low=0, high=None):
    if high is None:
        low, high = 0, low if low else 2 ** 24
    return rng.integers(low, high, shape)


# -- indexed assignment -------------------------------------------------------------------
def _index_put_fwd(xp, x, v, key, accumulate):
    out = x.copy()
    if accumulate:
        xp.add.at(out, key, v)
    else:
        out[key] = v
    return out


def _index_put_vjp(ns, g, key, accumulate):
    if accumulate:
        gx = g
    elif ns.differentiable:
        keep = np.ones(ns.raw(g).shape, dtype=ns.raw(g).dtype)
        keep[key] = 0
        gx = g * ns.const(keep)
    else:
        gx = g.copy()
        gx[key] = 0
    return gx, ns.getitem(g, key)


INDEX_PUT = defop("index_put", _index_put_fwd, _index_put_vjp, kind="indexing",
                  dtype_rule="same", node="IndexPutBackward0", onnx="ScatterND")


def _numpy_key(key):
    from .indexing import _to_numpy_key

    return _to_numpy_key(key)


def _as_value(value, like):
    if isinstance(value, Tensor):
        return value if value._data.dtype == like._data.dtype else value.to(like.dtype)
    return wrap(np.asarray(value, dtype=like._data.dtype), False, None)


def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (or ``+=`` with ``accumulate``), differentiably."""
    key = _numpy_key(tuple(indices))
    values = _as_value(values, self)
    recording = _recording(self, values)
    _check_target(self, "index_put_", recording)
    if not recording:
        if _no_data(self):
            return self
        if not self._data.flags.writeable:
            raise overlap_error("index_put_")
        if accumulate:
            np.add.at(self._data, key, values._data)
        else:
            self._data[key] = values._data
        _bump(self)
        return self
    result = apply(INDEX_PUT, (self, values), {"key": key, "accumulate": bool(accumulate)})
    return _write(self, result, "index_put_")


def index_put(self, indices, values, accumulate=False):
    return index_put_(self.clone(), indices, values, accumulate)


def _write_expanded(data, key, value):
    """``data[key] = value`` into an expanded (read-only) array, as torch: allowed when the
    written elements are distinct memory locations (basic keys only)."""
    from .movement import _is_basic

    target = None
    if _is_basic(key):
        k = key if isinstance(key, tuple) else (key,)
        # a trailing Ellipsis makes an all-int key give a 0-d view instead of a scalar copy
        target = data[k if any(e is Ellipsis for e in k) else k + (Ellipsis,)]
    alias = None if target is None or internal_overlap(target) else writable_alias(target)
    if alias is None:
        raise overlap_error("__setitem__")
    alias[...] = value


def setitem(self, key, value):
    """``x[key] = value``: basic keys write through a view (CopySlices), advanced keys are an
    index_put; both are recorded when a gradient is needed."""
    from .movement import _is_basic, getitem, legacy_sequence_key

    if type(key) is list:
        key = legacy_sequence_key(key)
    recording = _recording(self, value)
    if not recording:
        _check_target(self, "__setitem__", False)
        np_key = key if _is_basic(key) and not isinstance(key, Tensor) else _numpy_key(key)
        if isinstance(np_key, tuple):
            np_key = tuple(k._data if isinstance(k, Tensor) else k for k in np_key)
        value = value._data if isinstance(value, Tensor) else value
        if _no_data(self):
            return
        if not self._data.flags.writeable:
            _write_expanded(self._data, np_key, value)
        else:
            self._data[np_key] = value
        _bump(self)
        return
    if _is_basic(key):
        view = getitem(self, key)
        if isinstance(value, Tensor):
            view.copy_(value)
        else:
            view.fill_(value) if np.ndim(value) == 0 else view.copy_(_as_value(value, self))
        return
    index_put_(self, (key,) if not isinstance(key, tuple) else key, value)


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
    Tensor.uniform_ = _random_fill("uniform", _draw_uniform)
    Tensor.normal_ = _random_fill("normal", _draw_normal)
    Tensor.bernoulli_ = _random_fill("bernoulli", _draw_bernoulli)
    Tensor.exponential_ = _random_fill("exponential", _draw_exponential)
    Tensor.random_ = _random_fill("random", _draw_random)
    Tensor.index_put_ = index_put_
    Tensor.index_put = index_put
    Tensor.__setitem__ = setitem
    for dunder, name in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                         ("__itruediv__", "div_"), ("__ipow__", "pow_"), ("__imod__", "remainder_"),
                         ("__ifloordiv__", "floor_divide_")):
        setattr(Tensor, dunder, getattr(Tensor, name))


_bind()
