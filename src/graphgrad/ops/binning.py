"""Bucketing, counting and drawing from counts: searchsorted, bucketize, histc, bincount, isin,
multinomial. None of them is differentiable (torch gives none of them a derivative).

A batched searchsorted (one sorted row per row of values) is one stable argsort of each row of
values and boundaries together: a value's position in the merged order, less the number of
values before it, is the number of boundaries before it.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from ._dispatch import apply
from ._opdef import defop

__all__ = ["searchsorted", "bucketize", "histc", "bincount", "isin", "multinomial"]

_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long",
          "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _name(a):
    return _NAMES.get(a.dtype.name, a.dtype.name)


# -- searchsorted / bucketize -------------------------------------------------------------------
def _batched_searchsorted(seq, values, right):
    """Insertion points of each row of ``values`` into the matching row of ``seq``."""
    m = seq.shape[-1]
    k = values.shape[-1]
    # Equal elements keep their order in a stable sort: boundaries first counts them as before
    # the value (right), values first counts them after (left).
    if right:
        merged, first = np.concatenate([seq, values], -1), m
    else:
        merged, first = np.concatenate([values, seq], -1), 0
    order = np.argsort(merged, axis=-1, kind="stable")
    where = np.empty_like(order)
    np.put_along_axis(where, order, np.broadcast_to(np.arange(m + k), order.shape), axis=-1)
    value_order = np.argsort(values, axis=-1, kind="stable")
    rank = np.empty_like(value_order)
    np.put_along_axis(rank, value_order, np.broadcast_to(np.arange(k), value_order.shape),
                      axis=-1)
    return where[..., first:first + k] - rank


def _searchsorted_fwd(xp, seq, values, right, sorter, out_int32):
    dtype = np.int32 if out_int32 else np.int64
    side = "right" if right else "left"
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=side, sorter=sorter)
        return np.asarray(out, dtype=dtype)
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, axis=-1)
    return _batched_searchsorted(seq, values, right).astype(dtype, copy=False)


SEARCHSORTED = defop("searchsorted", _searchsorted_fwd, kind="opaque", onnx=None)


def _side(right, side):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        return side == "right"
    return bool(right)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Where ``input``'s values would go in ``sorted_sequence`` (along its last dim) to keep it
    sorted: the first such place, or the last with ``right=True`` / ``side='right'``."""
    right = _side(right, side)
    seq = sorted_sequence._data
    vals = input._data if isinstance(input, Tensor) else np.asarray(input)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if seq.ndim > 1 and (vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor {list(seq.shape)} and "
                           f"input value tensor {list(vals.shape)}")
    for a in (seq, vals):
        if a.dtype == np.bool_:
            raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    order = None
    if sorter is not None:
        order = sorter._data
        if order.dtype != np.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {_name(order)}")
        if order.shape != seq.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(order.shape)}")
        if order.size and (order.min() < 0 or order.max() >= seq.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    return apply(SEARCHSORTED, (sorted_sequence, input),
                 {"right": right, "sorter": order, "out_int32": bool(out_int32)})


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value of ``input`` among the sorted 1-d ``boundaries``."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# -- histc / bincount ---------------------------------------------------------------------------
def _histc_fwd(xp, x, bins, lo, hi):
    flat = x.reshape(-1)
    if lo == hi and flat.size:
        lo, hi = flat.min(), flat.max()
    lo, hi = x.dtype.type(lo), x.dtype.type(hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    inside = flat[(flat >= lo) & (flat <= hi)]
    pos = ((inside - lo) * x.dtype.type(bins) / (hi - lo)).astype(np.int64)
    pos[pos == bins] = bins - 1  # the maximum belongs to the last bin
    return np.bincount(pos, minlength=bins).astype(x.dtype)


HISTC = defop("histc", _histc_fwd, kind="reduction", dtype_rule="same", onnx=None)


def histc(input, bins=100, min=0, max=0):  # noqa: A002 - torch's parameter names
    """Counts of the elements in ``bins`` equal-width bins over ``[min, max]`` (the data's own
    range when both are equal); elements outside are ignored."""
    x = input._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_name(x)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    return apply(HISTC, (input,), {"bins": int(bins), "lo": min, "hi": max})


def _bincount_fwd(xp, x, *weights, minlength):
    if not weights:
        return np.bincount(x, minlength=minlength).astype(np.int64, copy=False)
    w = weights[0]
    out = np.bincount(x, weights=w, minlength=minlength)
    return out.astype(w.dtype if w.dtype.kind == "f" else np.float64, copy=False)


BINCOUNT = defop("bincount", _bincount_fwd, kind="reduction", dtype_rule="same", onnx=None)


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in a 1-d non-negative integer tensor (or the sum
    of ``weights`` at its occurrences); at least ``minlength`` bins."""
    x = input._data
    if x.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_name(x)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return apply(BINCOUNT, (input,), {"minlength": int(minlength)})
    if weights._data.ndim != 1 or weights._data.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return apply(BINCOUNT, (input, weights), {"minlength": int(minlength)})


# -- isin ---------------------------------------------------------------------------------------
def _isin_fwd(xp, elements, test, invert):
    return np.isin(elements, test, invert=invert)


ISIN = defop("isin", _isin_fwd, kind="opaque", dtype_rule="same", onnx=None)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a
    number); NaN is never found."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but "
                        "expected one of: (Tensor elements, Tensor test_elements), (Scalar "
                        "element, Tensor test_elements), (Tensor elements, Scalar test_element)")
    for t in (elements, test_elements):
        if isinstance(t, Tensor) and t._data.dtype == np.bool_:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    return apply(ISIN, (elements, test_elements), {"invert": bool(invert)})


# -- multinomial --------------------------------------------------------------------------------
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices per row of (unnormalised) probabilities ``input``;
    without replacement each category is drawn at most once."""
    from .random import _rng

    p = input._data
    if p.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_name(p)}")
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = p.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rows = p.reshape(-1, n).astype(np.float64)
    if rows.size and (not np.isfinite(rows).all() or (rows < 0).any()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = rows.sum(-1)
    if (totals <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(generator)
    if replacement:
        # inverse CDF; each row's CDF is shifted by its row number so one search serves all
        cdf = np.cumsum(rows / totals[:, None], -1)
        cdf[:, -1] = 1.0
        offsets = np.arange(len(rows))[:, None]
        u = rng.random((len(rows), num_samples))
        flat = np.searchsorted((cdf + offsets).reshape(-1), (u + offsets).reshape(-1), "right")
        out = flat.reshape(u.shape) - offsets * n
        out = np.minimum(out, n - 1)
    else:
        # the k largest p / E with E ~ Exp(1): a draw without replacement, as torch's
        keys = rows / rng.exponential(size=rows.shape)
        out = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    out = out.astype(np.int64).reshape(p.shape[:-1] + (num_samples,))
    return wrap(out, False, None)


def _bind():
    for name in ("histc", "bincount", "multinomial"):
        setattr(Tensor, name, globals()[name])


_bind()
