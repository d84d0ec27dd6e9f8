"""Small top-level functions torch scripts reach for: ``torch.detach``, ``fill``, the deprecated
``range`` (inclusive end), ``is_inference``, ``get_device``, the anomaly switches, ``frexp``,
``histogramdd`` and the deprecated norms ``frobenius_norm`` / ``nuclear_norm`` /
``matrix_rank`` (which torch 2.13 keeps only to raise)."""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype
from ._tensor import Tensor, wrap
from .autograd import anomaly as _anomaly
from .ops.linalg_norms import matrix_norm as _matrix_norm
from .ops.linalg_norms import vector_norm as _vector_norm
from .ops.linalg_solve import return_type
from .ops.reduce import return_types

__all__ = ["detach", "fill", "range", "is_inference", "get_device", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled", "frexp", "histogramdd",
           "frobenius_norm", "nuclear_norm", "matrix_rank"]

return_types.frexp = return_type("frexp", ("mantissa", "exponent"))
return_types.histogramdd = return_type("histogramdd", ("hist", "bin_edges"))

is_anomaly_enabled = _anomaly.is_anomaly_enabled
is_anomaly_check_nan_enabled = _anomaly.is_anomaly_check_nan_enabled


def set_anomaly_enabled(enabled, check_nan=True):
    """``torch.set_anomaly_enabled(enabled, check_nan=True)``: the switch under
    ``set_detect_anomaly``."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'enabled' (position 1) must be bool, "
                        f"not {type(enabled).__name__}")
    _anomaly._set(enabled, check_nan)


def _check_tensor(name, input, arg="input"):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def detach(input):
    """``torch.detach(input)``, as ``input.detach()``."""
    _check_tensor("detach", input)
    return input.detach()


def is_inference(input):
    """``torch.is_inference(input)``."""
    _check_tensor("is_inference", input)
    return input.is_inference()


def get_device(input):
    """``torch.get_device(input)``: -1 for a CPU tensor."""
    _check_tensor("get_device", input)
    return input.get_device()


def fill(input, value):
    """A tensor shaped like ``input`` filled with ``value`` (a number or a 0-dim tensor); the
    gradient flows to a tensor ``value``, none to ``input``."""
    from .ops.elementwise import where

    _check_tensor("fill", input)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        v = value.to(input.dtype)
    else:
        v = wrap(np.asarray(value).astype(input._data.dtype), False, None)
    cond = wrap(np.ones(input._data.shape, dtype=bool), False, None)
    if not (input.requires_grad or v.requires_grad):
        return wrap(np.broadcast_to(v._data, input._data.shape).copy(), False, None)
    return where(cond, v, input)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """Deprecated ``torch.range``: values from ``start`` to ``end`` *inclusive*, in the default
    float dtype unless ``dtype`` says otherwise."""
    from .ops.creation import tensor

    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    start, end, step = (float(v.item()) if isinstance(v, Tensor) else v
                        for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dtype = dtype or _dtype.get_default_dtype()
    n = int(np.floor((end - start) / step)) + 1
    data = start + np.arange(n, dtype=np.float64) * step
    return tensor(data, dtype=dtype, requires_grad=requires_grad)


def frexp(input, *, out=None):
    """Splits ``input`` into a mantissa in [0.5, 1) (in magnitude) and an int32 exponent with
    ``input = mantissa * 2 ** exponent``; the mantissa is differentiable."""
    _check_tensor("frexp", input)
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input._data
    _, e = np.frexp(x)
    exponent = wrap(e.astype(np.int32), False, None)
    # mantissa = input * 2**-e keeps the gradient grad / 2**e, as torch's formula
    scale = wrap(np.ldexp(np.ones((), x.dtype), -e).astype(x.dtype), False, None)
    return return_types.frexp(input * scale, exponent)


def _bin_edges(x, bins, lo, hi):
    from .ops.statistics import _torch_linspace

    lo, hi = x.dtype.type(lo), x.dtype.type(hi)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _torch_linspace(lo, hi, bins + 1, x.dtype)


def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """The D-dimensional histogram of the points in ``input`` (its last dim is D); ``bins`` is
    a count, one count per dim, or one edge tensor per dim."""
    _check_tensor("histogramdd", input)
    x = input._data
    if x.dtype.kind != "f":
        from .ops.statistics import _SCALAR

        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_SCALAR.get(x.dtype.name, x.dtype.name)}'")
    d = x.shape[-1]
    pts = x.reshape(-1, d)
    if isinstance(bins, int):
        bins = [bins] * d
    bins = list(bins)
    if len(bins) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each "
                           f"of the {d} dimensions of the input's innermost dimension, but got "
                           f"{len(bins)}")
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should "
                           f"have {2 * d} elements, but got {len(range)}")
    edges, pos = [], []
    keep = np.ones(pts.shape[0], dtype=bool)
    for k, b in enumerate(bins):
        col = pts[:, k]
        if isinstance(b, Tensor):
            e = b._data.astype(x.dtype)
        else:
            if b <= 0:
                raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {b} for "
                                   f"dimension {k}")
            if range is None:
                lo, hi = (col.min(), col.max()) if col.size else (0.0, 1.0)  # torch's
            else:
                lo, hi = range[2 * k], range[2 * k + 1]
                if lo > hi:
                    raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got "
                                       f"min {lo} max {hi}")
            e = _bin_edges(x, int(b), lo, hi)
        nb = e.size - 1
        keep &= (col >= e[0]) & (col <= e[-1])
        pos.append(np.minimum(np.searchsorted(e, col, side="right") - 1, nb - 1))
        edges.append(e)
    shape = tuple(e.size - 1 for e in edges)
    flat = np.ravel_multi_index(tuple(p[keep] for p in pos), shape) if keep.any() else \
        np.zeros(0, np.int64)
    w = None if weight is None else weight._data.reshape(-1)[keep].astype(np.float64)
    hist = np.bincount(flat, weights=w, minlength=int(np.prod(shape)))
    hist = hist.reshape(shape).astype(x.dtype)
    if density:
        total = hist.sum()
        widths = np.ix_(*[np.diff(e) for e in edges])
        vol = widths[0]
        for wdt in widths[1:]:
            vol = vol * wdt
        hist = (hist / (total * vol)).astype(x.dtype)
    return return_types.histogramdd(wrap(hist, False, None),
                                    tuple(wrap(np.ascontiguousarray(e), False, None)
                                          for e in edges))


_warned = set()  # torch warns once per process about each deprecated norm (TORCH_WARN_ONCE)


def _warn_once(name, message):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(message, UserWarning, stacklevel=3)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """Deprecated ``torch.frobenius_norm``: ``linalg.vector_norm(input, 2, dim, keepdim)``."""
    _warn_once("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT "
               "compatibility. It will be removed in a future PyTorch release. Please use "
               "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    return _vector_norm(input, 2, tuple(dim) if not isinstance(dim, int) else dim, keepdim)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Deprecated ``torch.nuclear_norm(input, keepdim=False)`` or ``(input, dim, keepdim)``."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    _warn_once("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT "
               "compatibility. It will be removed in a future PyTorch release. Please use "
               "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with "
                               f"{input.dim()} dimension{'s' if input.dim() != 1 else ''} "
                               "instead.")
        dim = (0, 1)
    return _matrix_norm(input, "nuc", tuple(dim), keepdim)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed in torch 1.9; torch 2.13 keeps the name only to raise this error."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\n"
                       "Please use the `torch.linalg.matrix_rank` function instead. The "
                       "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to "
                       "'hermitian'.")


Tensor.frexp = frexp
