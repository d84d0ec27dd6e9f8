"""Statistics beyond the core reductions: NaN-ignoring reductions, quantiles, std_mean/var_mean,
cov/corrcoef, histogram, unique_consecutive, dist/vdot, trapezoid rules and renorm.

Most are composites of differentiable ops whose gradient equals torch's formula (torch itself
composes nanmean, quantile, cov, trapezoid); nanmedian is a record with torch's index rule.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from . import elementwise as E
from . import reduce as R
from ._dispatch import apply, unary
from ._opdef import defop
from ._util import wrap_dim
from .reduce import _return_type, return_types
from .sorting import _median_vjp, _pick, _selected_vjp, _stable_argsort, sort

__all__ = ["nansum", "nanmean", "nanmedian", "quantile", "nanquantile", "std_mean", "var_mean",
           "cov", "corrcoef", "histogram", "msort", "unique_consecutive", "argwhere", "dist",
           "vdot", "trapezoid", "trapz", "cumulative_trapezoid", "renorm"]

return_types.nanmedian = _return_type("nanmedian")
_histogram_base = namedtuple("histogram", ["hist", "bin_edges"])
return_types.histogram = type("histogram", (_histogram_base,), {
    "__slots__": (), "__module__": "torch.return_types",
    "__repr__": lambda s: f"torch.return_types.histogram(\nhist={s[0]!r},\nbin_edges={s[1]!r})"})

_SCALAR = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
           "bool": "Bool", "float32": "Float", "float64": "Double", "float16": "Half"}


def _const(a):
    return wrap(np.asarray(a), False, None)


def _nan_mask(input):
    return _const(np.isnan(input._data))


# -- nansum / nanmean / nanmedian ----------------------------------------------------------------
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero; the gradient is zero at the NaNs, as torch's."""
    if input._data.dtype.kind in "fV":  # V: bfloat16
        input = E.where(_nan_mask(input), 0.0, input)
    return R.sum(input, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over the non-NaN elements."""
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind != "f":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_SCALAR[input._data.dtype.name]}")
    count = R.sum(_const(~np.isnan(input._data)), dim, keepdim)
    return nansum(input, dim, keepdim) / count


def _nanmedian_fwd(xp, x):
    flat = x.reshape(-1)
    if flat.dtype.kind == "f":
        flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        fill = np.nan if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        return np.array(fill, dtype=x.dtype)
    k = (flat.size - 1) // 2
    return np.array(np.partition(flat, k)[k])


def _nanmedian_dim_fwd(xp, x, axis, keepdim, shape):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    order = _stable_argsort(x, axis, False)  # NaNs sort last
    k = (~np.isnan(x)).sum(axis=axis, keepdims=True) if x.dtype.kind == "f" else \
        np.full(shape[:axis] + (1,) + shape[axis + 1:], x.shape[axis])
    idx = np.take_along_axis(order, np.maximum((k - 1) // 2, 0), axis=axis)
    return _pick(x, idx, axis, keepdim)


NANMEDIAN = defop("nanmedian", _nanmedian_fwd, _median_vjp, kind="reduction", save=(0, "out"),
                  dtype_rule="same", node="NanmedianBackward0", onnx=None)
NANMEDIAN_DIM = defop("nanmedian.dim", _nanmedian_dim_fwd, _selected_vjp, kind="reduction",
                      save=("aux",), dtype_rule="same", node="NanmedianBackward1", onnx=None)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the non-NaN elements, or ``(values, indices)`` along ``dim``."""
    x = input._data
    if x.dtype == np.bool_:
        raise NotImplementedError("\"nanmedian_cpu\" not implemented for 'Bool'")
    if dim is None:
        return unary(NANMEDIAN, input)
    axis = wrap_dim(dim, x.ndim)
    if x.ndim and x.shape[axis] == 0:
        raise IndexError(f"nanmedian(): Expected reduction dim {axis} to have non-zero size.")
    values, idx = apply(NANMEDIAN_DIM, (input,), {"axis": axis, "keepdim": keepdim,
                                                  "shape": x.shape})
    if x.ndim and not keepdim:
        idx = idx.squeeze(axis)
    return return_types.nanmedian(values, wrap(np.asarray(idx, np.int64), False, None))


# -- quantile ------------------------------------------------------------------------------------
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_array(q, input, name):
    if isinstance(q, Tensor):
        if q._data.dtype != input._data.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        a = q._data
        if a.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    else:
        if isinstance(q, (list, tuple)):
            raise TypeError(f"{name}(): argument 'q' must be Tensor or float, not "
                            f"{type(q).__name__}")
        a = np.asarray(float(q), dtype=input._data.dtype)
    if a.size and not ((a >= 0) & (a <= 1)).all():
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    return a


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    name = "nanquantile" if ignore_nan else "quantile"
    x = input._data
    if x.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    qa = _q_array(q, input, name)
    if interpolation not in _MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    if x.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if dim is None:
        work, axis = input.reshape(-1), 0
    else:
        axis = wrap_dim(dim, x.ndim)
        work = input if x.ndim else input.reshape(1)
    values = sort(work, axis).values.movedim(axis, -1)  # (..., n), NaNs last
    raw = values._data
    n = raw.shape[-1]
    nan = np.isnan(raw)
    qs = qa.reshape(-1).astype(np.float64)
    if ignore_nan:
        last = (n - nan.sum(-1, keepdims=True)) - 1  # -1 for an all-NaN slice
        ranks = qs * np.maximum(last, 0)  # an all-NaN slice reads its first NaN, as torch
    else:
        last = np.full(raw.shape[:-1] + (1,), n - 1)
        ranks = np.where(nan.any(-1, keepdims=True), n - 1, qs * (n - 1))
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)  # half to even, as torch.round
    lo = np.floor(ranks).astype(np.int64)
    hi = np.ceil(ranks).astype(np.int64)  # equal to lo at whole ranks, as torch's
    below = values.gather(-1, _const(lo))
    above = values.gather(-1, _const(hi))
    if interpolation == "midpoint":
        w = _const(np.where(ranks > lo, 0.5, 0.0).astype(raw.dtype))
    elif interpolation == "linear" and isinstance(q, Tensor) and q.requires_grad:
        # torch's weights are q * (n - 1) - floor(...): differentiable in q
        fixed = _const(np.broadcast_to(ranks != qs * np.maximum(last, 0), ranks.shape))
        w = E.where(fixed, 0.0, q.reshape(-1) * _const(np.maximum(last, 0).astype(raw.dtype))
                    - _const(lo.astype(raw.dtype)))
    else:
        w = _const((ranks - lo).astype(raw.dtype))
    out = below + w * (above - below)
    out = out.movedim(-1, 0)  # q first, then the kept dims
    if dim is None:
        shape = (1,) * x.ndim if keepdim else ()
    else:
        shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape)) if keepdim else \
            tuple(s for i, s in enumerate(x.shape) if i != axis)
    return out.reshape(qa.shape + shape)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles along ``dim`` (all elements by default); a NaN gives NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaNs; an all-NaN slice gives NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


# -- std_mean / var_mean / cov / corrcoef --------------------------------------------------------
def _moments(fn, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # std_mean(x, False): the positional unbiased flag
        dim, unbiased = None, dim
    spread = fn(input, dim, unbiased, keepdim, correction=correction)
    return spread, R.mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` in one call."""
    return _moments(R.std, input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` in one call."""
    return _moments(R.var, input, dim, unbiased, keepdim, correction)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables in the rows of ``input`` (observations in columns), with
    optional frequency and observation weights; torch's formula."""
    x = input._data
    if x.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {x.ndim} dimensions")
    if x.dtype.kind != "f":
        input = input.to(_dtype.get_default_dtype())
    xs = input if x.ndim == 2 else input.reshape(1, -1)
    n_obs = xs.shape[1]
    w = None
    if fweights is not None:
        fw = fweights._data
        if fw.ndim > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but "
                               f"got fweights with {fw.ndim} dimensions")
        if fw.dtype.kind not in "iu":
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {_SCALAR[fw.dtype.name]} dtype")
        if fw.size != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are "
                               f"observations in the input but got {fw.size} != {n_obs}")
        if (fw < 0).any():
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        aw = aweights._data
        if aw.ndim > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but "
                               f"got aweights with {aw.ndim} dimensions")
        if aw.dtype.kind != "f":
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_SCALAR[aw.dtype.name]} dtype")
        if aw.size != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are "
                               f"observations in the input but got {aw.size} != {n_obs}")
        if (aw < 0).any():
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if w is None:
        avg = R.mean(xs, 1)
        norm = n_obs - correction
    else:
        w_sum = R.sum(w)
        avg = R.sum(xs * w, 1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * R.sum(w * aweights) / w_sum
    if isinstance(norm, Tensor):
        norm = E.clamp(norm, min=0)
    else:
        norm = builtins.max(norm, 0)
    xm = xs - avg.unsqueeze(1)
    c = (xm if w is None else xm * w) @ xm.t()
    return (c / norm).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    std = E.sqrt(d)
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return E.clamp(c, -1, 1)


# -- histogram / msort / unique_consecutive / argwhere --------------------------------------------
def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """``(hist, bin_edges)``: counts (or weights) of ``input`` in equal-width ``bins`` over
    ``range`` (the data's min and max by default), or in the given edges."""
    x = input._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_SCALAR[x.dtype.name]}'")
    wa = None if weight is None else weight._data
    if wa is not None and wa.shape != x.shape:
        raise RuntimeError("torch.histogram: if weight tensor is provided, it should have the "
                           "same shape as the input tensor")
    flat_x = x.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins._data
        if edges.ndim != 1 or edges.size == 0:
            raise RuntimeError("torch.histogram: bins tensor should have one dimension and at "
                               "least 1 element")
        edges = edges.astype(x.dtype)
        pos = np.searchsorted(edges, flat_x, side="right") - 1
    else:
        if bins <= 0:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got "
                               f"{bins} for dimension 0")
        if range is None:
            lo, hi = (x.min(), x.max()) if x.size else (0.0, 0.0)
        else:
            lo, hi = range
            if lo > hi:
                raise RuntimeError(f"torch.histogram: min should not exceed max, but got min "
                                   f"{lo} max {hi}")
        lo, hi = x.dtype.type(lo), x.dtype.type(hi)
        if not (np.isfinite(lo) and np.isfinite(hi)):  # a NaN or inf in the data, or range
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is "
                               "not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # torch widens an empty range by one, as NumPy
        edges = _torch_linspace(lo, hi, bins + 1, x.dtype)
        # torch's search: a linear guess, then the exact edge among its neighbours
        with np.errstate(invalid="ignore"):
            guess = ((flat_x - lo) * x.dtype.type(bins) / (hi - lo))
        guess = np.clip(np.nan_to_num(guess), 0, bins).astype(np.int64)
        first = np.maximum(guess - 1, 0)
        pos = first - 1
        for k in (0, 1, 2):
            at = np.minimum(first + k, bins)
            pos = pos + ((first + k <= np.minimum(guess + 1, bins)) & (edges[at] <= flat_x))
    nb = edges.size - 1
    keep = (flat_x >= edges[0]) & (flat_x <= edges[-1])
    pos = np.minimum(pos, nb - 1)  # the last edge closes the last bin
    w = None if wa is None else wa.reshape(-1)[keep].astype(np.float64)
    hist = np.bincount(pos[keep], weights=w, minlength=max(nb, 0))[:max(nb, 0)]
    hist = hist.astype(x.dtype)
    if density:
        hist = hist / (hist.sum() * np.diff(edges))
    return return_types.histogram(_const(hist.astype(x.dtype)), _const(edges))


def _torch_linspace(lo, hi, steps, dtype):
    """torch.linspace's values: a fused multiply-add from the start for the first half, from
    the end after it (long double stands in for the FMA's single rounding)."""
    wide = np.longdouble
    i = np.arange(steps)
    step = dtype.type((hi - lo) / dtype.type(steps - 1))
    head = wide(step) * i + wide(lo)
    tail = wide(hi) - wide(step) * (steps - 1 - i)
    return np.where(i < steps // 2, head, tail).astype(dtype)


def msort(input):
    """Sorted along the first dim."""
    return sort(input, 0).values


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses runs of equal consecutive elements (along ``dim``, or of the flattened
    input)."""
    x = input._data
    if dim is None:
        flat = x.reshape(-1)
        change = np.empty(flat.size, dtype=bool)
        change[:1] = True
        np.not_equal(flat[1:], flat[:-1], out=change[1:])
        values = flat[change]
        inv_shape = x.shape
    else:
        axis = wrap_dim(dim, x.ndim)
        moved = np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1) if x.ndim else x.reshape(1, 1)
        change = np.empty(moved.shape[0], dtype=bool)
        change[:1] = True
        change[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        values = np.compress(change, x, axis=axis)
        inv_shape = (x.shape[axis],)
    out = [_const(np.ascontiguousarray(values))]
    if return_inverse:
        out.append(_const((np.cumsum(change) - 1).astype(np.int64).reshape(inv_shape)))
    if return_counts:
        starts = np.flatnonzero(change)
        out.append(_const(np.diff(np.append(starts, change.size)).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def argwhere(input):
    """The indices of the nonzero elements, one row each (``nonzero``)."""
    from .indexing import nonzero

    return nonzero(input)


# -- dist / vdot --------------------------------------------------------------------------------
def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast)."""
    return R.norm(input - other, float(p))


def vdot(input, other):
    """The dot product of two 1-D tensors (real tensors: no conjugation)."""
    from .linalg import dot

    if input._data.dtype != other._data.dtype:
        raise RuntimeError("expected both vectors to have same dtype, but found "
                           f"{_SCALAR[input._data.dtype.name]} and "
                           f"{_SCALAR[other._data.dtype.name]}")
    return dot(input, other)


# -- trapezoid rules ----------------------------------------------------------------------------
def _spacing(y, x, dx, axis, name):
    """The interval widths along ``axis``: a number, or a tensor broadcasting against
    ``y``'s pairs."""
    if x is None:
        return 1.0 if dx is None else dx
    if not isinstance(x, Tensor):
        return x  # trapezoid(y, 0.5): a spacing given positionally
    if dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: x and dx")
    xa = x._data
    if xa.ndim == 1:
        if xa.shape[0] != y._data.shape[axis]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        d = x[1:] - x[:-1]
        return d.reshape((-1,) + (1,) * (y._data.ndim - axis - 1))
    n = x._data.shape[axis] if xa.ndim > axis else 0
    return x.narrow(axis, 1, n - 1) - x.narrow(axis, 0, n - 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, with sample points ``x``
    or a constant spacing ``dx`` (1 by default)."""
    axis = wrap_dim(dim, y._data.ndim)
    n = y._data.shape[axis]
    step = _spacing(y, x, dx, axis, "trapezoid")
    if n == 0:
        return _const(np.zeros(np.delete(y._data.shape, axis), y._data.dtype))
    pairs = y.narrow(axis, 1, n - 1) + y.narrow(axis, 0, n - 1)
    if isinstance(step, Tensor):
        return R.sum(step * pairs, axis) / 2
    return R.sum(pairs, axis) * (step / 2)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Running trapezoidal integrals along ``dim`` (one fewer element than ``y``)."""
    from .sorting import cumsum

    axis = wrap_dim(dim, y._data.ndim)
    n = y._data.shape[axis]
    step = _spacing(y, x, dx, axis, "cumulative_trapezoid")
    if n == 0:
        return y * 1
    pairs = y.narrow(axis, 1, n - 1) + y.narrow(axis, 0, n - 1)
    return cumsum(pairs * step / 2 if isinstance(step, Tensor) else pairs * (step / 2), axis)


# -- renorm -------------------------------------------------------------------------------------
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` with p-norm above ``maxnorm`` is rescaled to norm ``maxnorm``."""
    x = input._data
    if x.dtype.kind != "f":
        raise RuntimeError("renorm: expected a floating point tensor, got "
                           f"{_SCALAR[x.dtype.name]}")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if x.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    axis = wrap_dim(dim, x.ndim)
    others = tuple(d for d in range(x.ndim) if d != axis)
    over = _const(R.norm(input.detach(), p, others, True)._data > maxnorm)
    # the norm is taken again of the rescaled slices only, so that a slice left alone (a NaN
    # norm compares false, as in torch) sends its gradient straight through: a where over the
    # full norm would multiply the norm's NaN derivative by zero
    norms = R.norm(E.where(over, input, 0.0), p, others, True)
    factor = E.where(over, maxnorm / (norms + 1e-7), 1.0)
    return input * factor


def _renorm_(self, p, dim, maxnorm):
    return self.copy_(renorm(self.clone() if self.requires_grad else self, p, dim, maxnorm))


def _bind():
    for name in ("nansum", "nanmean", "nanmedian", "quantile", "nanquantile", "cov", "corrcoef",
                 "histogram", "msort", "unique_consecutive", "argwhere", "dist", "vdot",
                 "renorm"):
        setattr(Tensor, name, globals()[name])
    Tensor.renorm_ = _renorm_


_bind()
