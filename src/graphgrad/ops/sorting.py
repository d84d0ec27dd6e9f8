"""Sorting, selection and scans: sort, argsort, topk, kthvalue, median, mode, unique, cumsum,
cumprod.

Sorts are stable (NumPy's ``kind="stable"``) whatever ``stable=`` says: torch leaves the order
of equal elements unspecified unless asked, and a stable order is one of the valid ones. NaN
sorts as larger than every number, as in torch. The selecting ops return their indices as
``aux`` and send the gradient back to the positions those indices name.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from ._dispatch import apply, unary
from ._namespace import DIFF, RAW
from ._opdef import defop
from ._util import wrap_dim
from .gather import along_dim_key
from .reduce import _return_type, return_types

__all__ = ["sort", "argsort", "topk", "kthvalue", "median", "mode", "unique", "cumsum",
           "cumprod"]

_INT64 = np.dtype(np.int64)

for _name in ("sort", "topk", "kthvalue", "median", "mode"):
    setattr(return_types, _name, _return_type(_name))
del _name


# -- orderings ------------------------------------------------------------------------------
def _stable_argsort(x, axis, descending):
    """Indices that sort ``x`` along ``axis``; equal elements keep their order, NaN counts as
    the largest value."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # Sorting the reversed array ascending and reading the result backwards puts the largest
    # first while keeping equal elements (NaNs too) in their original order.
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.ascontiguousarray(np.flip(n - 1 - rev, axis))


def _selected_vjp(ns, g, idx, axis, keepdim=True, shape=(), **_):
    """The gradient goes to the input positions ``idx`` names along ``axis`` (all distinct);
    the other params (k, descending, largest) do not change it."""
    if not shape:
        return g
    idx = ns.raw(idx)  # an array: a 1-element Tensor in a key would index as an int
    if not keepdim:
        g = ns.reshape(g, idx.shape)
    return ns.index_grad(g, shape, along_dim_key(idx, axis))


def _check_reduction_dim(x, axis, name):
    if x.ndim and x.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")


def _pick(x, idx, axis, keepdim):
    """(values, indices) at ``idx`` (keepdim-shaped) along ``axis``, as a reduction returns
    them; the indices stay keepdim-shaped for the rule."""
    values = np.take_along_axis(x, idx, axis=axis)
    return (values if keepdim else values.squeeze(axis)), idx


# -- sort / argsort / topk ----------------------------------------------------------------------
def _sort_fwd(xp, x, axis, descending, shape):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    return _pick(x, _stable_argsort(x, axis, descending), axis, True)


SORT = defop("sort", _sort_fwd, _selected_vjp, kind="opaque", save=("aux",), dtype_rule="same",
             node="SortBackward0", onnx="TopK")
SORT_STABLE = defop("sort.stable", _sort_fwd, _selected_vjp, kind="opaque", save=("aux",),
                    dtype_rule="same", node="SortBackward1", onnx="TopK")


def _with_indices(name, values, idx, axis, keepdim, ndim):
    if ndim and not keepdim:
        idx = idx.squeeze(axis)
    return getattr(return_types, name)(values, wrap(idx, False, None))


def sort(input, dim=-1, descending=False, *, stable=None):
    """(values, indices) sorted along ``dim``; equal elements keep their order."""
    x = input._data
    axis = wrap_dim(dim, x.ndim)
    op = SORT if stable is None else SORT_STABLE  # torch names the stable= overload's node apart
    values, idx = apply(op, (input,), {"axis": axis, "descending": descending,
                                       "shape": x.shape})
    return return_types.sort(values, wrap(idx, False, None))


def _argsort_fwd(xp, x, axis, descending):
    if x.ndim == 0:
        return np.zeros((), np.int64)
    return _stable_argsort(x, axis, descending)


ARGSORT = defop("argsort", _argsort_fwd, kind="opaque", dtype_rule="same", onnx="TopK")


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    axis = wrap_dim(dim, input._data.ndim)
    return unary(ARGSORT, input, {"axis": axis, "descending": descending})


def _topk_fwd(xp, x, k, axis, largest, shape):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    order = _stable_argsort(x, axis, largest)
    return _pick(x, np.take(order, np.arange(k), axis=axis), axis, True)


TOPK = defop("topk", _topk_fwd, _selected_vjp, kind="opaque", save=("aux",), dtype_rule="same",
             node="TopkBackward0", onnx="TopK")


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - torch's argument name
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices, in order (also
    with ``sorted=False``, whose order torch leaves unspecified)."""
    x = input._data
    axis = wrap_dim(dim, x.ndim)
    size = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"topk(): selected index k out of range (k={k}, size {size} of dim "
                           f"{axis})")
    if x.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    values, idx = apply(TOPK, (input,), {"k": k, "axis": axis, "largest": largest,
                                         "shape": x.shape})
    return return_types.topk(values, wrap(idx, False, None))


# -- kthvalue / median / mode ---------------------------------------------------------------
def _kthvalue_fwd(xp, x, k, axis, keepdim, shape):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    order = _stable_argsort(x, axis, False)
    return _pick(x, np.take(order, [k - 1], axis=axis), axis, keepdim)


KTHVALUE = defop("kthvalue", _kthvalue_fwd, _selected_vjp, kind="reduction", save=("aux",),
                 dtype_rule="same", node="KthvalueBackward0", onnx=None)


def _reduction_dim(input, dim, name):
    x = input._data
    axis = wrap_dim(dim, x.ndim)
    _check_reduction_dim(x, axis, name)
    return axis


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
    x = input._data
    axis = _reduction_dim(input, dim, "kthvalue")
    size = x.shape[axis] if x.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    values, idx = apply(KTHVALUE, (input,), {"k": k, "axis": axis, "keepdim": keepdim,
                                             "shape": x.shape})
    return _with_indices("kthvalue", values, idx, axis, keepdim, x.ndim)


def _median_fwd(xp, x):
    flat = x.reshape(-1)
    if flat.size == 0:
        # torch gives NaN, and for integers the type's lowest value
        fill = np.nan if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        return np.array(fill, dtype=x.dtype)
    if x.dtype.kind == "f" and np.isnan(flat).any():
        return np.array(np.nan, dtype=x.dtype)
    k = (flat.size - 1) // 2  # the lower of the two middle elements
    return np.array(np.partition(flat, k)[k])


def _median_vjp(ns, g, x, out):
    """Elements equal to the median (NaNs, for a NaN median) share the gradient evenly."""
    rx, rout = ns.raw(x), ns.raw(out)
    mask = np.isnan(rx) if np.isnan(rout) else rx == rout
    return g * ns.const((mask / mask.sum()).astype(rx.dtype, copy=False))


MEDIAN = defop("median", _median_fwd, _median_vjp, kind="reduction", save=(0, "out"),
               dtype_rule="same", node="MedianBackward0", onnx=None)


def _median_dim_fwd(xp, x, axis, keepdim, shape):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    order = _stable_argsort(x, axis, False)
    idx = np.take(order, [(x.shape[axis] - 1) // 2], axis=axis)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        has_nan = nan.any(axis=axis, keepdims=True)
        if has_nan.any():  # a slice with a NaN has median NaN, at its first NaN
            idx = np.where(has_nan, np.argmax(nan, axis=axis, keepdims=True), idx)
    return _pick(x, idx, axis, keepdim)


MEDIAN_DIM = defop("median.dim", _median_dim_fwd, _selected_vjp, kind="reduction",
                   save=("aux",), dtype_rule="same", node="MedianBackward1", onnx=None)


def median(input, dim=None, keepdim=False):
    """The lower median of all elements (a 0-d tensor), or ``(values, indices)`` along
    ``dim``."""
    x = input._data
    if x.dtype == np.bool_:
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
    if dim is None:
        return unary(MEDIAN, input)
    axis = _reduction_dim(input, dim, "median")
    values, idx = apply(MEDIAN_DIM, (input,), {"axis": axis, "keepdim": keepdim,
                                               "shape": x.shape})
    return _with_indices("median", values, idx, axis, keepdim, x.ndim)


def _mode_fwd(xp, x, axis, keepdim, shape):
    """The most frequent value of each slice (the smallest of equally frequent ones) and the
    index of its last occurrence, as torch returns for slices it sorts stably."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    rows = moved.reshape(-1, n)
    order = np.argsort(rows, axis=1, kind="stable")
    ordered = np.take_along_axis(rows, order, axis=1)
    starts = np.ones(rows.shape, dtype=bool)  # where a run of equal values begins (NaN != NaN)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones(rows.shape, dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    run = np.cumsum(starts, axis=1) - 1
    # the length of run j of row r, at [r, j]
    lengths = np.bincount((run + n * np.arange(len(rows))[:, None]).reshape(-1),
                          minlength=rows.size).reshape(rows.shape)
    best = np.argmax(lengths, axis=1)[:, None]  # the first longest run: the smallest value
    last = np.argmax(ends & (run == best), axis=1)[:, None]
    idx = np.take_along_axis(order, last, axis=1).reshape(moved.shape[:-1] + (1,))
    return _pick(x, np.moveaxis(idx, -1, axis), axis, keepdim)


MODE = defop("mode", _mode_fwd, _selected_vjp, kind="reduction", save=("aux",),
             dtype_rule="same", node="ModeBackward0", onnx=None)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` and the index of its last occurrence."""
    x = input._data
    axis = _reduction_dim(input, dim, "mode")
    values, idx = apply(MODE, (input,), {"axis": axis, "keepdim": keepdim, "shape": x.shape})
    return _with_indices("mode", values, idx, axis, keepdim, x.ndim)


# -- unique ---------------------------------------------------------------------------------
def _unique_fwd(xp, x, axis):
    # NaNs are all distinct, as in torch (NumPy would merge them)
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=axis,
                                        equal_nan=False)
    inverse = inverse.reshape(x.shape if axis is None else (x.shape[axis],))
    return values, (inverse.astype(np.int64, copy=False), counts.astype(np.int64, copy=False))


# NOTE: torch's values require grad (Unique2Backward0) but its backward raises; graphgrad's
# are not differentiable.
UNIQUE = defop("unique", _unique_fwd, kind="opaque", save=("aux",), dtype_rule="same",
               onnx="Unique")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements, sorted (also for ``sorted=False``, as torch on CPU), with the
    inverse indices and the counts on request; with ``dim``, the distinct slices along it."""
    x = input._data
    axis = None
    if dim is not None:
        if x.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = wrap_dim(dim, x.ndim)
        if any(s == 0 for d, s in enumerate(x.shape) if d != axis):
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
    values, (inverse, counts) = apply(UNIQUE, (input,), {"axis": axis})
    if not (return_inverse or return_counts):
        return values
    out = [values]
    if return_inverse:
        out.append(wrap(inverse, False, None))
    if return_counts:
        out.append(wrap(counts, False, None))
    return tuple(out)


# -- cumsum / cumprod -----------------------------------------------------------------------
def _scan(fn, x, axis, dtype):
    if dtype is None and x.dtype == np.float16:
        # torch accumulates float16 in float32 (NumPy in float16 would stall at 2048)
        return _scan(fn, x, axis, np.float32).astype(np.float16)
    if x.ndim == 0:
        return fn(x.reshape(1), axis=0, dtype=dtype).reshape(())
    return fn(x, axis=axis, dtype=dtype)


def _cumsum_fwd(xp, x, axis, dtype):
    return _scan(np.cumsum, x, axis, dtype)


def _reversed_cumsum(ns, g, axis):
    return ns.flip(ns.sorting_cumsum(ns.flip(g, (axis,)), axis), (axis,))


def _cumsum_vjp(ns, g, axis, dtype):
    return g if ns.raw(g).ndim == 0 else _reversed_cumsum(ns, g, axis)


CUMSUM = defop("cumsum", _cumsum_fwd, _cumsum_vjp, kind="opaque", dtype_rule="same",
               node="CumsumBackward0", onnx="CumSum")


def _cumprod_fwd(xp, x, axis, dtype):
    return _scan(np.cumprod, x, axis, dtype)


def _cumprod_vjp(ns, g, x, out, axis, dtype=None):
    """d out[j] / d x[i] is the product of x[:j + 1] without x[i]; dividing out[j] by x[i] gives
    it only before a slice's first zero z. At z it is the cumprod with x[z] replaced by 1, and
    after z it is x[z] (zero) times the same rule applied to that replaced input: zero in value,
    but needed for a second derivative."""
    if ns.raw(g).ndim == 0:
        return g
    rx = ns.raw(x)
    zeros = rx == 0
    if not zeros.any():
        return _reversed_cumsum(ns, g * out, axis) / x
    seen = np.cumsum(zeros, axis=axis)
    before = ns.const(seen == 0)
    first = zeros & (seen == 1)
    at_first = ns.const(first)
    y = ns.where(at_first, 1.0, x)
    grad_before = _reversed_cumsum(ns, g * out, axis) / ns.where(before, x, 1.0)
    grad_first = _reversed_cumsum(ns, g * ns.sorting_cumprod(y, axis), axis)
    if ns.differentiable:
        zero_value = ns.sum(ns.where(at_first, x, 0.0), (axis,), True)
        grad_after = zero_value * _cumprod_vjp(ns, g, y, ns.sorting_cumprod(y, axis), axis)
    else:
        grad_after = 0.0
    return ns.where(before, grad_before, ns.where(at_first, grad_first, grad_after))


CUMPROD = defop("cumprod", _cumprod_fwd, _cumprod_vjp, kind="opaque", save=(0, "out"),
                dtype_rule="same", node="CumprodBackward0", onnx=None)


def _scan_dtype(x, dtype):
    """The accumulation dtype: ``dtype=``, else int64 for integers and bools (as torch)."""
    if dtype is not None:
        return _dtype.to_dtype(dtype).np
    return _INT64 if x.dtype.kind in "iub" else None


def cumsum(input, dim, *, dtype=None):
    """Running sums along ``dim``."""
    x = input._data
    return unary(CUMSUM, input, {"axis": wrap_dim(dim, x.ndim), "dtype": _scan_dtype(x, dtype)})


def cumprod(input, dim, *, dtype=None):
    """Running products along ``dim``."""
    x = input._data
    return unary(CUMPROD, input, {"axis": wrap_dim(dim, x.ndim),
                                  "dtype": _scan_dtype(x, dtype)})


def _bind_rules_namespaces():
    """The scans the rules above need, in both rules namespaces (Note [Rules namespace])."""
    RAW.sorting_cumsum = staticmethod(lambda x, axis: np.cumsum(x, axis=axis))
    RAW.sorting_cumprod = staticmethod(lambda x, axis: np.cumprod(x, axis=axis))
    DIFF.sorting_cumsum = staticmethod(
        lambda x, axis: unary(CUMSUM, x, {"axis": axis, "dtype": None}))
    DIFF.sorting_cumprod = staticmethod(
        lambda x, axis: unary(CUMPROD, x, {"axis": axis, "dtype": None}))


def _bind():
    for name in __all__:
        setattr(Tensor, name, globals()[name])


_bind_rules_namespaces()
_bind()
