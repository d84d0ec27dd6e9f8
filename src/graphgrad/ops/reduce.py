"""Reductions: sum, mean, prod, max/min (and their dim forms), amax/amin, argmax/argmin,
var/std, logsumexp, norm, all/any, and the broadcast-undoing ``sum_to``.

A reduction's rule receives the input ``shape`` and the reduced ``axes`` as params, and
re-expands the gradient with ``_unreduce``.
"""

from __future__ import annotations

import builtins
import math
from collections import namedtuple

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from ._dispatch import apply, unary
from ._opdef import defop
from ._util import dims_arg, reduced_shape, wrap_dim

_INT64 = np.dtype(np.int64)


def _unreduce(ns, g, shape, axes, keepdim):
    """Broadcasts a reduction's gradient back over the reduced axes."""
    if not keepdim:
        g = ns.reshape(g, reduced_shape(shape, axes))
    return ns.expand(g, shape)


def _count(shape, axes) -> int:
    if axes is None:
        return math.prod(shape)
    return math.prod(shape[a] for a in axes)


def _acc_dtype(x, dtype):
    if dtype is not None:
        return dtype
    return _INT64 if x.dtype.kind in "iub" else None


# -- sum / mean / prod --------------------------------------------------------------------------
def _sum_fwd(xp, x, axes=None, keepdim=False, dtype=None, shape=None):
    return x.sum(axis=axes, keepdims=keepdim, dtype=_acc_dtype(x, dtype))


def _sum_vjp(ns, g, axes=None, keepdim=False, dtype=None, shape=None):
    return _unreduce(ns, g, shape, axes, keepdim)


SUM = defop("sum", _sum_fwd, _sum_vjp, kind="reduction", dtype_rule="same",
            node="SumBackward0", onnx="ReduceSum")
SUM_DIM = defop("sum.dim_IntList", _sum_fwd, _sum_vjp, kind="reduction", dtype_rule="same",
                node="SumBackward1", onnx="ReduceSum")


def _mean_fwd(xp, x, axes=None, keepdim=False, dtype=None, shape=None):
    if x.size == 0:  # NaN, silently, as torch gives (NumPy would warn "Mean of empty slice")
        return xp.full(_kept_or_dropped(x.shape, axes, keepdim), np.nan, dtype=dtype or x.dtype)
    return x.mean(axis=axes, keepdims=keepdim, dtype=dtype)


def _kept_or_dropped(shape, axes, keepdim):
    if keepdim:
        return reduced_shape(shape, axes)
    return tuple(s for i, s in enumerate(shape) if axes is not None and i not in axes)


def _mean_vjp(ns, g, axes=None, keepdim=False, dtype=None, shape=None):
    return _unreduce(ns, g, shape, axes, keepdim) / builtins.max(_count(shape, axes), 1)


MEAN = defop("mean", _mean_fwd, _mean_vjp, kind="reduction", dtype_rule="same",
             node="MeanBackward0", onnx="ReduceMean")
MEAN_DIM = defop("mean.dim", _mean_fwd, _mean_vjp, kind="reduction", dtype_rule="same",
                 node="MeanBackward1", onnx="ReduceMean")


def _prod_fwd(xp, x, axes=None, keepdim=False, dtype=None, shape=None):
    return xp.prod(x, axis=axes, keepdims=keepdim, dtype=_acc_dtype(x, dtype))


def _prod_vjp(ns, g, x, out, axes=None, keepdim=False, dtype=None, shape=None):
    ge = _unreduce(ns, g, shape, axes, keepdim)
    if not (ns.raw(x) == 0).any():
        return ge * _unreduce(ns, out, shape, axes, keepdim) / x
    # NOTE: out / x fails where x == 0; the product of the other elements does not, and stays
    # differentiable (one zero: only its position gets a gradient at first order, but the
    # others' gradients still depend on the zero, which double backward needs).
    return ge * _prod_of_others(ns, x, shape, axes)


def _prod_of_others(ns, x, shape, axes):
    """``prod_{j != i} x_j`` over the reduced axes, as exclusive cumulative products from the
    left and from the right of the flattened reduced axes."""
    nd = len(shape)
    reduced = tuple(range(nd)) if axes is None else tuple(sorted(a % nd for a in axes))
    kept = tuple(d for d in range(nd) if d not in reduced)
    perm = kept + reduced
    lead = tuple(shape[d] for d in kept)
    flat = ns.reshape(ns.permute(x, perm), lead + (_count(shape, reduced),))
    one = ns.const(np.ones(lead + (1,), dtype=np.result_type(ns.raw(x))))
    inner = (Ellipsis, slice(None, -1))
    left = ns.sorting_cumprod(ns.cat([one, ns.getitem(flat, inner)], -1), -1)
    tail = ns.flip(ns.getitem(flat, (Ellipsis, slice(1, None))), (-1,))
    right = ns.flip(ns.sorting_cumprod(ns.cat([one, tail], -1), -1), (-1,))
    others = ns.reshape(left * right, lead + tuple(shape[d] for d in reduced))
    return ns.permute(others, tuple(np.argsort(perm)))


PROD = defop("prod", _prod_fwd, _prod_vjp, kind="reduction", save=(0, "out"),
             dtype_rule="same", node="ProdBackward0", onnx="ReduceProd")
PROD_DIM = defop("prod.dim_int", _prod_fwd, _prod_vjp, kind="reduction", save=(0, "out"),
                 dtype_rule="same", node="ProdBackward1", onnx="ReduceProd")


# -- max / min ------------------------------------------------------------------------------
def _extreme_fwd(fn, name):
    def forward(xp, x, axes=None, keepdim=False, shape=None):
        if axes:
            for a in axes:
                if x.shape[a] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero "
                                     "size.")
        if x.size == 0 and (axes is None or builtins.any(x.shape[a] == 0 for a in axes)):
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        return fn(x, axis=axes, keepdims=keepdim)
    return forward


def _even_vjp(ns, g, x, out, axes=None, keepdim=False, shape=None):
    """Ties share the gradient evenly (torch's rule for max(), amax, amin)."""
    rx, rout = ns.raw(x), ns.raw(out)
    if not keepdim:
        rout = rout.reshape(reduced_shape(shape, axes))
    mask = rx == rout
    count = np.sum(mask, axis=axes, keepdims=True)
    weight = ns.const((mask / count).astype(np.result_type(rx), copy=False))
    return _unreduce(ns, g, shape, axes, keepdim) * weight


def _even_nan_vjp(ns, g, x, out, axes=None, keepdim=False, shape=None):
    """max() and min() of all elements: a NaN result sends the gradient to the NaNs (torch's
    evenly_distribute_backward), instead of NaN everywhere as amax/amin give."""
    rout = ns.raw(out)
    if not np.isnan(rout).any():
        return _even_vjp(ns, g, x, out, axes, keepdim, shape)
    mask = np.isnan(ns.raw(x))
    weight = ns.const((mask / np.sum(mask)).astype(np.result_type(rout), copy=False))
    return _unreduce(ns, g, shape, axes, keepdim) * weight


MAX = defop("max", _extreme_fwd(np.max, "max"), _even_nan_vjp, kind="reduction",
            save=(0, "out"), dtype_rule="same", node="MaxBackward1", onnx="ReduceMax")
MIN = defop("min", _extreme_fwd(np.min, "min"), _even_nan_vjp, kind="reduction",
            save=(0, "out"),
            dtype_rule="same", node="MinBackward1", onnx="ReduceMin")
AMAX = defop("amax", _extreme_fwd(np.max, "amax"), _even_vjp, kind="reduction",
             save=(0, "out"), dtype_rule="same", node="AmaxBackward0", onnx="ReduceMax")
AMIN = defop("amin", _extreme_fwd(np.min, "amin"), _even_vjp, kind="reduction",
             save=(0, "out"), dtype_rule="same", node="AminBackward0", onnx="ReduceMin")


def _extreme_dim_fwd(arg, name):
    def forward(xp, x, axis, keepdim=False, shape=None):
        if x.ndim and x.shape[axis] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        idx = arg(x, axis=axis, keepdims=True)
        values = np.take_along_axis(x, idx, axis=axis)
        if not keepdim:
            values = values.squeeze(axis)
        return values, idx
    return forward


def _index_vjp(ns, g, idx, axis, keepdim=False, shape=None):
    """The gradient goes to the returned index along ``axis``."""
    if len(shape) == 0:
        return g
    mask = np.zeros(shape, dtype=bool)
    np.put_along_axis(mask, ns.raw(idx), True, axis=axis)
    if not keepdim:
        g = ns.reshape(g, reduced_shape(shape, (axis,)))
    return ns.expand(g, shape) * ns.const(mask)


MAX_DIM = defop("max.dim", _extreme_dim_fwd(np.argmax, "max"), _index_vjp, kind="reduction",
                save=("aux",), dtype_rule="same", node="MaxBackward0", onnx="ReduceMax")
MIN_DIM = defop("min.dim", _extreme_dim_fwd(np.argmin, "min"), _index_vjp, kind="reduction",
                save=("aux",), dtype_rule="same", node="MinBackward0", onnx="ReduceMin")


def _arg_fwd(fn, name):
    def forward(xp, x, axis=None, keepdim=False):
        if x.size == 0 and axis is None:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        if x.size == 0 and x.shape[axis] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
        if axis is None:
            r = np.asarray(fn(x))
            return r.reshape((1,) * x.ndim) if keepdim else r
        if x.ndim == 0:
            return np.zeros((), np.int64)
        return fn(x, axis=axis, keepdims=keepdim)
    return forward


ARGMAX = defop("argmax", _arg_fwd(np.argmax, "argmax"), kind="reduction", dtype_rule="same",
               onnx="ArgMax")
ARGMIN = defop("argmin", _arg_fwd(np.argmin, "argmin"), kind="reduction", dtype_rule="same",
               onnx="ArgMin")


# -- var / std / logsumexp / norm -----------------------------------------------------------
def _var_fwd(xp, x, axes=None, correction=1, keepdim=False, shape=None):
    return xp.var(x, axis=axes, ddof=correction, keepdims=keepdim)


def _var_vjp(ns, g, x, axes=None, correction=1, keepdim=False, shape=None):
    n = _count(shape, axes)
    centered = x - ns.sum(x, axes, True) / n
    return _unreduce(ns, g, shape, axes, keepdim) * centered * (2.0 / (n - correction))


def _std_fwd(xp, x, axes=None, correction=1, keepdim=False, shape=None):
    return xp.std(x, axis=axes, ddof=correction, keepdims=keepdim)


def _std_vjp(ns, g, x, out, axes=None, correction=1, keepdim=False, shape=None):
    n = _count(shape, axes)
    centered = x - ns.sum(x, axes, True) / n
    return (_unreduce(ns, g / out, shape, axes, keepdim) * centered) / (n - correction)


VAR = defop("var", _var_fwd, _var_vjp, kind="reduction", save=(0,), dtype_rule="same",
            node="VarBackward0", onnx=None)
STD = defop("std", _std_fwd, _std_vjp, kind="reduction", save=(0, "out"), dtype_rule="same",
            node="StdBackward0", onnx=None)


def _logsumexp_fwd(xp, x, axes=None, keepdim=False, shape=None):
    if x.size == 0:
        return xp.log(xp.sum(xp.exp(x), axis=axes, keepdims=keepdim))
    m = xp.max(x, axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    out = xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True)) + m
    return out if keepdim else out.reshape(
        tuple(s for i, s in enumerate(x.shape) if axes is not None and i not in axes))


def _logsumexp_vjp(ns, g, x, out, axes=None, keepdim=False, shape=None):
    return _unreduce(ns, g, shape, axes, keepdim) * ns.exp(
        x - _unreduce(ns, out, shape, axes, keepdim))


LOGSUMEXP = defop("logsumexp", _logsumexp_fwd, _logsumexp_vjp, kind="reduction",
                  save=(0, "out"), dtype_rule="float", node="LogsumexpBackward0", onnx=None)


def _norm_fwd(xp, x, p=2.0, axes=None, keepdim=False, shape=None):
    a = xp.abs(x)
    if p == 2:
        return xp.sqrt(xp.sum(x * x, axis=axes, keepdims=keepdim))
    if p == 1:
        return xp.sum(a, axis=axes, keepdims=keepdim)
    if p in (math.inf, -math.inf) and x.size == 0:
        # max/min have no identity: torch's refusal (NumPy's says "zero-size array")
        empty = [d for d in (axes if axes is not None else ()) if x.shape[d] == 0]
        if axes is None or empty:
            where = (f"the dimension {empty[0]}because this dimension is empty and" if empty
                     else "an empty tensor because")
            raise RuntimeError(f"linalg.vector_norm cannot compute the {'-' * (p < 0)}inf "
                               f"norm on {where} the operation does not have an identity")
    if p == math.inf:
        return xp.max(a, axis=axes, keepdims=keepdim)
    if p == -math.inf:
        return xp.min(a, axis=axes, keepdims=keepdim)
    if p == 0:
        return xp.sum(a != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
    return xp.power(xp.sum(xp.power(a, p), axis=axes, keepdims=keepdim), 1.0 / p)


def _norm_vjp(ns, g, x, out, p=2.0, axes=None, keepdim=False, shape=None):
    ge = _unreduce(ns, g, shape, axes, keepdim)
    oe = _unreduce(ns, out, shape, axes, keepdim)
    if p == 0:
        return ns.zeros_like(ge)
    if p == 1:
        return ge * ns.sign(x)
    if p in (math.inf, -math.inf):
        rx, ro = np.abs(ns.raw(x)), ns.raw(oe)
        mask = rx == ro
        count = np.sum(mask, axis=axes, keepdims=True)
        return ge * ns.sign(x) * ns.const((mask / count).astype(rx.dtype, copy=False))
    zero = ns.const(ns.raw(oe) == 0)
    safe_out = ns.where(zero, 1.0, oe)
    if p == 2:
        return ns.where(zero, 0.0, ge * x / safe_out)
    return ns.where(zero, 0.0, ge * x * ns.abs(x) ** (p - 2) / safe_out ** (p - 1))


NORM = defop("linalg_vector_norm", _norm_fwd, _norm_vjp, kind="reduction", save=(0, "out"),
             dtype_rule="float", node="LinalgVectorNormBackward0", onnx=None)

ALL = defop("all", lambda xp, x, axes=None, keepdim=False: xp.all(x, axis=axes, keepdims=keepdim),
            kind="reduction", dtype_rule="same", onnx=None)
ANY = defop("any", lambda xp, x, axes=None, keepdim=False: xp.any(x, axis=axes, keepdims=keepdim),
            kind="reduction", dtype_rule="same", onnx=None)


# -- sum_to: undoing a broadcast (the engine's differentiable reduction) --------------------
def _sum_to_fwd(xp, x, size):
    from ._namespace import sum_to_array

    return np.array(sum_to_array(x, size))  # a copy; keeps 0-d results 0-d


def _sum_to_vjp(ns, g, size, shape):
    return ns.expand(g, shape)


SUM_TO = defop("sum_to_size", lambda xp, x, size, shape: _sum_to_fwd(xp, x, size),
               _sum_to_vjp, kind="reduction", dtype_rule="same", node="SumToSizeBackward0",
               onnx="ReduceSum")


def sum_to_size(input, *size):
    from ._util import shape_arg

    size = shape_arg(size)
    return unary(SUM_TO, input, {"size": size, "shape": input._data.shape})


# -- public functions -------------------------------------------------------------------------
def _reduce(full_op, dim_op, input, dim, keepdim, **extra):
    x = input._data
    axes = dims_arg(dim, x.ndim)
    if axes is None and not keepdim:
        return unary(full_op, input, dict(extra, shape=x.shape) if extra else {"shape": x.shape})
    return unary(dim_op, input, dict(extra, axes=axes, keepdim=keepdim, shape=x.shape))


def _numpy_names(dim, keepdim, axis, keepdims):
    """torch's argument parser also takes NumPy's names ``axis`` and ``keepdims``."""
    return (dim if axis is None else axis), (keepdim if keepdims is None else keepdims)


def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None,  # noqa: A001 - torch.sum
        keepdims=None):
    """Sum over all elements, or over ``dim`` (an int or a tuple)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
    extra = {} if dtype is None else {"dtype": _dtype.to_dtype(dtype).np}
    return _reduce(SUM, SUM_DIM, input, dim, keepdim, **extra)


def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind not in "fcV":  # V: bfloat16
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_TORCH_SCALAR_NAMES[input._data.dtype.name]}")
    return _reduce(MEAN, MEAN_DIM, input, dim, keepdim)


_TORCH_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                       "uint8": "Byte", "bool": "Bool", "float32": "Float", "float64": "Double",
                       "float16": "Half", "complex64": "ComplexFloat",
                       "complex128": "ComplexDouble"}


def prod(input, dim=None, keepdim=False, *, dtype=None):
    extra = {} if dtype is None else {"dtype": _dtype.to_dtype(dtype).np}
    if dim is not None and not isinstance(dim, int):
        raise TypeError("prod(): argument 'dim' must be int")
    return _reduce(PROD, PROD_DIM, input, dim, keepdim, **extra)


def _return_type(name):
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self):
        return f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "torch.return_types"})


class return_types:
    """Named tuples returned by ``max(dim)``, ``min(dim)`` and friends, as torch.return_types."""

    max = _return_type("max")
    min = _return_type("min")


def _extreme(full_op, dim_op, name, input, dim=None, keepdim=False):
    from .elementwise import maximum, minimum

    if isinstance(dim, Tensor):  # max(a, b): the binary form
        return (maximum if name == "max" else minimum)(input, dim)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments: keepdim "
                            "without dim")
        return unary(full_op, input, {"shape": input._data.shape})
    axis = wrap_dim(dim, input._data.ndim)
    values, idx = apply(dim_op, (input,), {"axis": axis, "keepdim": keepdim,
                                           "shape": input._data.shape})
    if input._data.ndim and not keepdim:
        idx = idx.squeeze(axis)
    return getattr(return_types, name)(values, wrap(np.asarray(idx, np.int64), False, None))


def max(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001 - torch.max
    """Largest element; with ``dim``, ``(values, indices)``; with a tensor, the elementwise max."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
    return _extreme(MAX, MAX_DIM, "max", input, dim, keepdim)


def min(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001 - torch.min
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
    return _extreme(MIN, MIN_DIM, "min", input, dim, keepdim)


def _amax_like(op, input, dim=(), keepdim=False):
    x = input._data
    axes = dims_arg(dim, x.ndim)
    return unary(op, input, {"axes": axes, "keepdim": keepdim, "shape": x.shape})


def amax(input, dim=(), keepdim=False):
    return _amax_like(AMAX, input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    return _amax_like(AMIN, input, dim, keepdim)


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
    axis = None if dim is None else wrap_dim(dim, input._data.ndim)
    return unary(ARGMAX, input, {"axis": axis, "keepdim": keepdim})


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names(dim, keepdim, axis, keepdims)
    axis = None if dim is None else wrap_dim(dim, input._data.ndim)
    return unary(ARGMIN, input, {"axis": axis, "keepdim": keepdim})


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _var_like(op, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(x, False): the positional unbiased flag
        dim, unbiased = None, dim
    if input._data.dtype.kind not in "fV":  # V: bfloat16
        raise RuntimeError("std and var only support floating point and complex dtypes")
    x = input._data
    return unary(op, input, {"axes": dims_arg(dim, x.ndim), "keepdim": keepdim,
                             "correction": _correction(unbiased, correction), "shape": x.shape})


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's correction by default (``correction=1``)."""
    return _var_like(VAR, input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_like(STD, input, dim, unbiased, keepdim, correction)


def logsumexp(input, dim, keepdim=False):
    x = input._data
    return unary(LOGSUMEXP, input, {"axes": dims_arg(dim, x.ndim), "keepdim": keepdim,
                                    "shape": x.shape})


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over ``dim`` (all elements by default); ``'fro'`` is the 2-norm."""
    if p == "fro" or p is None:
        p = 2.0
    if isinstance(p, str):
        raise RuntimeError(f"norm: the {p!r} norm is not supported (only vector p-norms)")
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind not in "fV":  # V: bfloat16
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_TORCH_SCALAR_NAMES[input._data.dtype.name]}")
    x = input._data
    return unary(NORM, input, {"p": float(p), "axes": dims_arg(dim, x.ndim),
                               "keepdim": keepdim, "shape": x.shape})


def all(input, dim=None, keepdim=False):  # noqa: A001 - torch.all
    return unary(ALL, input, {"axes": dims_arg(dim, input._data.ndim), "keepdim": keepdim})


def any(input, dim=None, keepdim=False):  # noqa: A001 - torch.any
    return unary(ANY, input, {"axes": dims_arg(dim, input._data.ndim), "keepdim": keepdim})


def count_nonzero(input, dim=None):
    return sum(input != 0, dim)


for _name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var",
              "std", "logsumexp", "norm", "all", "any", "count_nonzero", "sum_to_size"):
    setattr(Tensor, _name, globals()[_name])
