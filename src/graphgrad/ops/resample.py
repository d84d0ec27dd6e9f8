"""Resampling along spatial dims: adaptive average pooling and interpolate (nearest,
nearest-exact, linear, bilinear, bicubic, trilinear, area).

See Note [Taps]: each is a separable gather-multiply-add whose transpose has the same form, so
one forward serves an op, its backward and every higher derivative.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._dispatch import unary
from ._namespace import DIFF, RAW
from ._opdef import defop
from .pooling import _adaptive_windows, _check_adaptive, _float_only, _ntuple, _output_size

__all__ = ["adaptive_avg_pool1d"]


# -- separable resampling: adaptive average pooling and interpolation ------------------------
# Note [Taps]: each of these maps is, along every spatial dim, y[o] = sum_t w[o, t] * x[i[o, t]]
# with a few taps per output. Its transpose has the same form (taps listed per input), so the
# forward and the VJP are the same gather-multiply-add with the two tap tables exchanged.

def _apply_taps(xp, x, taps):
    d = len(taps)
    for i, (idx, w) in enumerate(taps):
        axis = x.ndim - d + i
        trail = (1,) * (d - 1 - i)
        y = None
        for t in range(idx.shape[1]):
            v = xp.take(x, idx[:, t], axis=axis)
            if w is not None:
                v = v * w[:, t].astype(x.dtype).reshape((-1,) + trail)
            y = v if y is None else y + v
        x = y
    return x


def _transpose_taps(idx, w, n_in):
    """The taps of the transposed map: for each input, the outputs reading it and weights."""
    n_out, t = idx.shape
    w = np.ones(idx.shape) if w is None else w
    src = np.repeat(np.arange(n_out), t)
    col = idx.ravel()
    wt = w.ravel()
    keep = wt != 0
    src, col, wt = src[keep], col[keep], wt[keep]
    order = np.argsort(col, kind="stable")
    src, col, wt = src[order], col[order], wt[order]
    counts = np.bincount(col, minlength=n_in)
    width = max(1, int(counts.max()) if counts.size else 1)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    slot = np.arange(col.size) - starts[col]
    tidx = np.zeros((n_in, width), dtype=np.int64)
    tw = np.zeros((n_in, width))
    tidx[col, slot] = src
    tw[col, slot] = wt
    return tidx, tw


def _resample_fwd(xp, x, taps, taps_t, pair):
    return _apply_taps(xp, x, taps)


def _resample_vjp(ns, g, taps, taps_t, pair):
    return ns.resample(g, taps_t, taps, (pair[1], pair[0]))


def _resample_pair(name, node):
    fwd = defop(name, _resample_fwd, _resample_vjp, kind="contraction", dtype_rule="same",
                node=node, onnx="Resize")
    back = defop(name + "_backward", _resample_fwd, _resample_vjp, kind="contraction",
                 dtype_rule="same", node=node[:-1] + "Backward0")
    return fwd, back


RESAMPLE = {
    key: _resample_pair(*names) for key, names in {
        "adaptive_avg2": ("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0"),
        "nearest1": ("upsample_nearest1d", "UpsampleNearest1DBackward0"),
        "nearest2": ("upsample_nearest2d", "UpsampleNearest2DBackward0"),
        "nearest3": ("upsample_nearest3d", "UpsampleNearest3DBackward0"),
        "nearest-exact1": ("upsample_nearest_exact1d", "UpsampleNearestExact1DBackward0"),
        "nearest-exact2": ("upsample_nearest_exact2d", "UpsampleNearestExact2DBackward0"),
        "nearest-exact3": ("upsample_nearest_exact3d", "UpsampleNearestExact3DBackward0"),
        "linear1": ("upsample_linear1d", "UpsampleLinear1DBackward0"),
        "bilinear2": ("upsample_bilinear2d", "UpsampleBilinear2DBackward0"),
        "trilinear3": ("upsample_trilinear3d", "UpsampleTrilinear3DBackward0"),
        "bicubic2": ("upsample_bicubic2d", "UpsampleBicubic2DBackward0"),
        "bilinear2aa": ("_upsample_bilinear2d_aa", "UpsampleBilinear2DAaBackward0"),
        "bicubic2aa": ("_upsample_bicubic2d_aa", "UpsampleBicubic2DAaBackward0"),
    }.items()
}

RAW.resample = staticmethod(lambda g, taps, taps_t, pair: _apply_taps(np, g, taps))
DIFF.resample = staticmethod(lambda g, taps, taps_t, pair: unary(
    pair[0], g, {"taps": taps, "taps_t": taps_t, "pair": pair}))


def _resample(key, x, taps):
    fwd, back = RESAMPLE[key]
    d = len(taps)
    n_in = x._data.shape[-d:]
    taps_t = tuple(_transpose_taps(i, w, n) for (i, w), n in zip(taps, n_in))
    return unary(fwd, x, {"taps": taps, "taps_t": taps_t, "pair": (fwd, back)})


@functools.lru_cache(maxsize=256)
def _adaptive_taps(n_in, n_out):
    start, end = _adaptive_windows(n_in, n_out)
    t = int((end - start).max()) if n_out else 1
    idx = np.minimum(start[:, None] + np.arange(t), n_in - 1)
    w = np.where(start[:, None] + np.arange(t) < end[:, None], 1.0 / (end - start)[:, None], 0.0)
    return idx, w


def adaptive_avg_pool2d(input, output_size):
    """Averages over torch's adaptive windows, giving an ``output_size`` plane."""
    _check_adaptive("adaptive_avg_pool2d", input, 2)
    _float_only("adaptive_avg_pool2d", input)
    out = _output_size(input, output_size, 2)
    if out == (1, 1):
        return input.mean((-2, -1), keepdim=True)  # torch does the same (MeanBackward1)
    size = input._data.shape[-2:]
    return _resample("adaptive_avg2", input, tuple(_adaptive_taps(n, o)
                                                   for n, o in zip(size, out)))


def adaptive_avg_pool1d(input, output_size):
    _check_adaptive("adaptive_avg_pool1d", input, 1)
    o = _output_size(input, output_size if not isinstance(output_size, int)
                     else (output_size,), 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1,) + o).squeeze(-2)


# -- interpolate -----------------------------------------------------------------------------

_MODE_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _interp_taps(mode, n_in, n_out, scale, align_corners, dtype):
    """Taps (index, weight) along one dim, computed as torch's kernels do (in float32 for a
    float32 input), so that boundary indices agree."""
    o = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        s = np.float32(n_in / n_out if scale is None else 1.0 / scale)
        off = np.float32(0.5) if mode == "nearest-exact" else np.float32(0.0)
        src = np.floor((o.astype(np.float32) + off) * s).astype(np.int64)
        return np.minimum(src, n_in - 1)[:, None], None
    acc = np.float32 if dtype == np.float32 else np.float64
    if align_corners:
        s = acc((n_in - 1) / (n_out - 1)) if n_out > 1 else acc(0)
        src = o.astype(acc) * s
    else:
        s = acc(n_in / n_out if scale is None else 1.0 / scale)
        src = (o.astype(acc) + acc(0.5)) * s - acc(0.5)
        if mode == "bicubic":
            return _cubic_taps(src, n_in)
        src = np.maximum(src, acc(0))
    if mode == "bicubic":
        return _cubic_taps(src, n_in)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = (src - i0).astype(np.float64)
    return np.stack([i0, i1], 1), np.stack([1.0 - lam, lam], 1)


def _cubic_taps(src, n_in):
    # torch's upsample_bicubic2d: Keys' cubic convolution (A = -0.75) over the 4 inputs around
    # floor(src), indices clamped to the border; src is not clamped at 0 as linear's is.
    i0 = np.floor(src)
    t = (src - i0).astype(np.float64)
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    idx = np.clip(i0.astype(np.int64)[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx, np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], 1)


def _aa_taps(mode, n_in, n_out, scale, align_corners):
    # torch's _upsample_{bilinear,bicubic}2d_aa (PIL's filters): a triangle or a cubic (A = -0.5)
    # stretched by the scale when shrinking, over the inputs in its support, weights normalised.
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        s = n_in / n_out if scale is None or scale <= 0 else 1.0 / scale
    half = 1.0 if mode == "bilinear" else 2.0
    support = half * s if s >= 1.0 else half
    inv = 1.0 / s if s >= 1.0 else 1.0
    center = s * (np.arange(n_out) + 0.5)
    lo = np.maximum(np.trunc(center - support + 0.5).astype(np.int64), 0)
    hi = np.minimum(np.trunc(center + support + 0.5).astype(np.int64), n_in)
    width = max(1, int((hi - lo).max()) if n_out else 1)
    j = lo[:, None] + np.arange(width)
    x = np.abs((j - center[:, None] + 0.5) * inv)
    if mode == "bilinear":
        w = np.maximum(1.0 - x, 0.0)
    else:
        a = -0.5
        w = np.where(x < 1.0, ((a + 2) * x - (a + 3)) * x * x + 1,
                     np.where(x < 2.0, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))
    w = np.where(j < hi[:, None], w, 0.0)
    total = w.sum(1, keepdims=True)
    w = np.divide(w, total, out=np.zeros_like(w), where=total != 0)
    return np.minimum(j, n_in - 1), w


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dims of (N, C, *spatial) input (1 to 3 spatial dims).

    >>> import graphgrad as torch
    >>> import graphgrad.nn.functional as F
    >>> F.interpolate(torch.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "area")
    if mode not in modes + ("bicubic",):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input._data.ndim}D) for the modes: nearest | linear | "
                                  "bilinear | bicubic | trilinear | area | nearest-exact "
                                  f"(got {mode})")
    if align_corners is not None and mode not in ("linear", "bilinear", "trilinear", "bicubic"):
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    if antialias and not (mode in ("bilinear", "bicubic") and input._data.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    ndim = input._data.ndim
    d = ndim - 2
    if d not in (1, 2, 3):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {ndim}D) for the modes: nearest | linear | bilinear | "
                                  f"bicubic | trilinear | area | nearest-exact (got {mode})")
    if mode in _MODE_DIMS and _MODE_DIMS[mode] != d:
        raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs "
                                  f"{_MODE_DIMS[mode] + 2}D input")
    n_in = input._data.shape[2:]
    if size is not None:
        n_out = _ntuple(size, d, "size")
        scales = (None,) * d
    else:
        sf = (scale_factor,) * d if isinstance(scale_factor, (int, float)) \
            else tuple(scale_factor)
        n_out = tuple(int(math.floor(float(n) * float(f))) for n, f in zip(n_in, sf))
        scales = (None,) * d if recompute_scale_factor else tuple(float(f) for f in sf)
    if mode == "area":
        if d == 2:
            return adaptive_avg_pool2d(input, n_out)
        if d == 1:
            return adaptive_avg_pool1d(input, n_out)
        from .pooling3d import adaptive_avg_pool3d  # pooling3d builds on this module

        return adaptive_avg_pool3d(input, n_out)
    if mode not in ("nearest", "nearest-exact"):
        _float_only(f"upsample_{mode}{d}d_channels_last", input)
    if antialias:
        return _resample(f"{mode}2aa", input, tuple(
            _aa_taps(mode, n, o, sc, bool(align_corners)) for n, o, sc in zip(n_in, n_out, scales)))
    taps = tuple(_interp_taps(mode, n, o, s, bool(align_corners), input._data.dtype)
                 for n, o, s in zip(n_in, n_out, scales))
    key = f"{mode}{d}" if mode not in ("linear", "bilinear", "trilinear") else f"{mode}{d}"
    return _resample(key, input, taps)
