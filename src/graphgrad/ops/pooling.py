"""Pooling primitives: max pooling (plain and adaptive, with torch's flat indices) and
average pooling.

Each forward is one pass over the kernel positions (a strided slice per position, no per-pixel
loop). Every op has a backward op whose VJP is the forward again (max pool's scatter and gather
by index, avg pool and its transpose), so higher derivatives stay in this file. 1-d forms go
through the 2-d ops, as torch's do.
"""

from __future__ import annotations

import itertools

import numpy as np

from .._tensor import Tensor
from . import conv as _conv
from ._dispatch import apply, unary
from ._namespace import DIFF, RAW
from ._opdef import defop

__all__ = ["max_pool1d", "max_pool2d", "max_pool1d_with_indices", "avg_pool1d"]


# -- shared helpers --------------------------------------------------------------------------

def _pool_out(size, k, s, p, d, ceil_mode):
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or its left padding
    return out


def _pad_last(xp, x, pads, value):
    """Pads the last len(pads) dims of ``x`` by (low, high) pairs with ``value``."""
    if not any(lo or hi for lo, hi in pads):
        return x
    d = len(pads)
    shape = x.shape[:-d] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[-d:], pads))
    out = xp.full(shape, value, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[-d:], pads))] = x
    return out


def _geometry(size, kernel, stride, padding, dilation, ceil_mode):
    """Output sizes and the (low, high) padding that makes every window fit."""
    out = tuple(_pool_out(*a, ceil_mode) for a in zip(size, kernel, stride, padding, dilation))
    pads = tuple((p, max(0, (o - 1) * s + d * (k - 1) + 1 - n - p))
                 for n, o, k, s, p, d in zip(size, out, kernel, stride, padding, dilation))
    return out, pads


def _slices(pos, dilation, stride, out):
    return (Ellipsis,) + tuple(slice(q * d, q * d + s * (o - 1) + 1, s)
                               for q, d, s, o in zip(pos, dilation, stride, out))


def _positions(kernel):
    return list(itertools.product(*(range(k) for k in kernel)))


# -- max pooling: the values, and the flat input index of each maximum -----------------------

def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_pool_fwd(xp, x, kernel, stride, padding, dilation, ceil_mode):
    d = len(kernel)
    size = x.shape[-d:]
    out, pads = _geometry(size, kernel, stride, padding, dilation, ceil_mode)
    if d == 2 and kernel == stride and not any(padding) and dilation == (1, 1) and not any(
            hi for _, hi in pads):
        best, flat = _max_pool_disjoint(xp, x, kernel, out)
        if best.dtype.kind != "f" or not xp.isnan(best).any():
            return best, (flat, x.shape)
        # a window holding a NaN: the general path finds torch's index for it
    xpad = _pad_last(xp, x, pads, _lowest(x.dtype))
    positions = _positions(kernel)
    views = [xpad[_slices(pos, dilation, stride, out)] for pos in positions]
    best = views[0].copy() if len(views) == 1 else xp.maximum(views[0], views[1])
    for v in views[2:]:
        xp.maximum(best, v, out=best)
    # the first position holding the maximum, as torch's scan keeps the first
    k = xp.full(best.shape, len(views) - 1, dtype=np.int16)
    for i in range(len(views) - 2, -1, -1):
        xp.copyto(k, i, where=views[i] == best)
    if best.dtype.kind == "f" and xp.isnan(best).any():
        # torch's scan takes a NaN whenever it meets one: the last NaN of the window wins
        for i, v in enumerate(views):
            xp.copyto(k, i, where=xp.isnan(v))
    flat = _flat_index(xp, k, kernel, stride, padding, dilation, out, size)
    return best, (flat, x.shape)


def _max_pool_disjoint(xp, x, kernel, out):
    """Max pooling over windows that tile the input (kernel == stride, no padding or
    dilation): the maximum and its flat index, from a few whole-array passes.

    Each row of the window keeps its running maximum and column, then the rows are compared
    in order; a later element wins only when strictly greater, so ties keep the first in
    row-major order, as torch's scan does. The input's trailing rows and columns that no
    window covers (floor mode) are never read.
    """
    (kh, kw), (ho, wo) = kernel, out
    width = x.shape[-1]
    pos = np.int8 if max(kernel) <= 127 else np.int32  # a global pool may span 224 columns
    best = row = col = None
    for a in range(kh):
        m = c = None
        for b in range(kw):
            v = x[..., a:a + kh * (ho - 1) + 1:kh, b:b + kw * (wo - 1) + 1:kw]
            if m is None:
                m = v
                continue
            upd = xp.greater(v, m)
            m = xp.maximum(m, v, out=m if b > 1 else None)
            c = upd if c is None else xp.where(upd, pos(b), c)
        if best is None:
            best, col = m, c
            continue
        upd = xp.greater(m, best)
        best = xp.maximum(best, m, out=best if best.base is None else None)
        col = xp.where(upd, 0 if c is None else c, 0 if col is None else col)
        row = upd if row is None else xp.where(upd, pos(a), row)
    if best.base is not None:  # a 1x1 window: the strided view itself
        best = best.copy()
    base = (xp.arange(ho, dtype=np.int64)[:, None] * (kh * width)
            + xp.arange(wo, dtype=np.int64) * kw)
    flat = xp.multiply(row, width, dtype=np.int64) if row is not None else \
        xp.zeros(best.shape, dtype=np.int64)
    if col is not None:
        flat += col
    flat += base
    return best, flat


def _flat_index(xp, k, kernel, stride, padding, dilation, out, size):
    """Index into the flattened input plane of the window position ``k`` at each output."""
    flat = None
    for i in range(len(kernel)):
        after = len(kernel) - 1 - i
        rest = _conv._prod(kernel[i + 1:])
        ki = (k // rest) % kernel[i] if rest > 1 or i else k // rest
        base = (xp.arange(out[i]) * stride[i] - padding[i]).reshape((-1,) + (1,) * after)
        # all-(-inf) windows may pick a padding slot; torch points at the first real element
        coord = xp.clip(base + ki * dilation[i], 0, size[i] - 1)
        flat = coord if flat is None else flat * size[i] + coord
    return flat.astype(np.int64)


def _scatter_fwd(xp, g, index, shape, dims, overlap):
    """Sends each gradient (..., *out) to its input's flat index in the last ``dims`` dims of
    ``shape``; adds when windows overlap (an input may be the maximum of several)."""
    b = _conv._prod(shape[:-dims])
    gx = xp.zeros((b, _conv._prod(shape[-dims:])), dtype=g.dtype)
    per = _conv._prod(index.shape[-dims:])  # not -1: an empty batch must reshape too
    gi = g.reshape(b, per)
    ii = index.reshape(b, per)
    if overlap:
        np.add.at(gx, (np.arange(b)[:, None], ii), gi)
    else:  # one flat assignment: cheaper than put_along_axis's broadcast index pair
        rows = xp.arange(0, b * gx.shape[1], gx.shape[1], dtype=np.int64)[:, None]
        gx.reshape(-1)[(ii + rows).reshape(-1)] = gi.reshape(-1)
    return gx.reshape(shape)


def _gather_fwd(xp, x, index, shape, dims, overlap):
    """The transpose of the scatter: each output reads the input at its flat index."""
    b = _conv._prod(shape[:-dims])
    per = _conv._prod(index.shape[-dims:])
    return xp.take_along_axis(x.reshape(b, _conv._prod(shape[-dims:])),
                              index.reshape(b, per), axis=1).reshape(index.shape)


def _scatter_vjp(ns, g, index, shape, dims, overlap):
    return ns.pool_gather(g, index, shape, dims, overlap)


POOL_SCATTER = defop("max_pool_scatter", _scatter_fwd, _scatter_vjp, kind="indexing",
                     dtype_rule="same", node="MaxPool2DWithIndicesBackwardBackward0")


def _diff_gather(x, index, shape, dims, overlap):
    """The gather as differentiable graphgrad ops (a third derivative of max pooling)."""
    b = _conv._prod(shape[:-dims])
    rows = np.arange(b)[:, None]
    per = _conv._prod(index.shape[-dims:])
    return x.reshape(b, _conv._prod(shape[-dims:]))[rows, index.reshape(b, per)].reshape(
        index.shape)


def _index_params(index, shape, dims, overlap):
    return {"index": index, "shape": shape, "dims": dims, "overlap": overlap}


RAW.pool_scatter = staticmethod(lambda g, index, shape, dims, overlap: _scatter_fwd(
    np, g, index, shape, dims, overlap))
RAW.pool_gather = staticmethod(lambda x, index, shape, dims, overlap: _gather_fwd(
    np, x, index, shape, dims, overlap))
DIFF.pool_scatter = staticmethod(lambda g, index, shape, dims, overlap: unary(
    POOL_SCATTER, g, _index_params(index, shape, dims, overlap)))
DIFF.pool_gather = staticmethod(_diff_gather)


def _max_pool_vjp(ns, g, aux, kernel, stride, padding, dilation, ceil_mode):
    index, shape = aux
    overlap = any(s < d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))
    return ns.pool_scatter(g, index, shape, len(kernel), overlap)


MAX_POOL2D = defop("max_pool2d", _max_pool_fwd, _max_pool_vjp, kind="reduction", save=("aux",),
                   dtype_rule="same", node="MaxPool2DWithIndicesBackward0", onnx="MaxPool")


def _adaptive_windows(n_in, n_out):
    """torch's adaptive windows [floor(i*n/o), ceil((i+1)*n/o)) as (start, end) arrays."""
    i = np.arange(n_out)
    return (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)


def _adaptive_max_fwd(xp, x, output_size):
    d = len(output_size)
    size = x.shape[-d:]
    lead = x.ndim - d
    g = x
    idxs = []
    for i, (n, o) in enumerate(zip(size, output_size)):
        start, end = _adaptive_windows(n, o)
        t = int((end - start).max())
        # a short window repeats its last element: the first maximum is unchanged
        idx = np.minimum(start[:, None] + np.arange(t), end[:, None] - 1)
        idxs.append(idx)
        g = xp.take(g, idx, axis=lead + 2 * i)  # (..., o, t) in place of this dim
    order = (tuple(range(lead)) + tuple(lead + 2 * i for i in range(d))
             + tuple(lead + 2 * i + 1 for i in range(d)))
    win = g.transpose(order)
    win = win.reshape(win.shape[:lead + d] + (-1,))
    k = xp.argmax(win, axis=-1)
    if win.dtype.kind == "f":
        nan = xp.isnan(win)
        if nan.any():  # torch's scan takes every NaN it meets: the window's last NaN wins
            last = win.shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
            k = xp.where(nan.any(axis=-1), last, k)
    best = xp.take_along_axis(win, k[..., None], axis=-1)[..., 0]
    flat = None
    for i, idx in enumerate(idxs):
        t = idx.shape[1]
        rest = _conv._prod(ix.shape[1] for ix in idxs[i + 1:])
        ki = (k // rest) % t
        shape_o = (-1,) + (1,) * (d - 1 - i)
        coord = idx[np.arange(idx.shape[0]).reshape(shape_o), ki]
        flat = coord if flat is None else flat * size[i] + coord
    return best, (flat.astype(np.int64), x.shape)


def _adaptive_max_vjp(ns, g, aux, output_size):
    index, shape = aux
    d = len(output_size)
    overlap = any(n % o for n, o in zip(shape[-d:], output_size))
    return ns.pool_scatter(g, index, shape, d, overlap)


ADAPTIVE_MAX_POOL2D = defop("adaptive_max_pool2d", _adaptive_max_fwd, _adaptive_max_vjp,
                            kind="reduction", save=("aux",), dtype_rule="same",
                            node="AdaptiveMaxPool2DBackward0")


# -- average pooling and its transpose -------------------------------------------------------

def _avg_divisor(size, out, kernel, stride, padding, count_include_pad):
    """Per output position, torch's divisor: window area inside the padded input (or inside
    the input alone), as an outer product of per-dim counts."""
    div = None
    for n, o, k, s, p in zip(size, out, kernel, stride, padding):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        c = (end - start).astype(np.float64)
        div = c if div is None else div[..., None] * c
    return div


def _avg_pool_fwd(xp, x, kernel, stride, padding, ceil_mode, count_include_pad,
                  divisor_override):
    d = len(kernel)
    size = x.shape[-d:]
    ones = (1,) * d
    out, pads = _geometry(size, kernel, stride, padding, ones, ceil_mode)
    xpad = _pad_last(xp, x, pads, 0)
    total = None
    for pos in _positions(kernel):
        v = xpad[_slices(pos, ones, stride, out)]
        total = v.copy() if total is None else xp.add(total, v, out=total)
    if divisor_override:
        div = divisor_override
    else:
        div = _avg_divisor(size, out, kernel, stride, padding, count_include_pad)
    if x.dtype.kind != "f":  # torch divides integers with truncation
        q = xp.abs(total) // np.asarray(div).astype(total.dtype)
        return (q * xp.sign(total)).astype(x.dtype)
    return total / np.asarray(div, dtype=x.dtype)


def _avg_pool_backward_fwd(xp, g, shape, kernel, stride, padding, ceil_mode, count_include_pad,
                           divisor_override):
    d = len(kernel)
    size = shape[-d:]
    ones = (1,) * d
    out, pads = _geometry(size, kernel, stride, padding, ones, ceil_mode)
    if divisor_override:
        gd = g / np.asarray(divisor_override, dtype=g.dtype)
    else:
        gd = g / _avg_divisor(size, out, kernel, stride, padding, count_include_pad).astype(
            g.dtype)
    padded = shape[:-d] + tuple(n + lo + hi for n, (lo, hi) in zip(size, pads))
    gx = xp.zeros(padded, dtype=g.dtype)
    overlap = any(s < k for s, k in zip(stride, kernel))
    for pos in _positions(kernel):
        key = _slices(pos, ones, stride, out)
        if overlap:
            gx[key] += gd
        else:
            gx[key] = gd
    return gx[(Ellipsis,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, pads))]


def _avg_pool_vjp(ns, g, x_shape, **params):
    return ns.avg_pool_backward(g, x_shape, params)


def _avg_pool_backward_vjp(ns, g, shape, **params):
    return ns.avg_pool(g, params)


def _avg_pool_fwd_saving(xp, x, **params):
    return _avg_pool_fwd(xp, x, **params), x.shape


AVG_POOL2D = defop("avg_pool2d", _avg_pool_fwd_saving, _avg_pool_vjp, kind="reduction",
                   save=("aux",), dtype_rule="same", node="AvgPool2DBackward0",
                   onnx="AveragePool")
AVG_POOL2D_BACKWARD = defop("avg_pool2d_backward", _avg_pool_backward_fwd,
                            _avg_pool_backward_vjp, kind="reduction", dtype_rule="same",
                            node="AvgPool2DBackwardBackward0")

RAW.avg_pool = staticmethod(lambda x, params: _avg_pool_fwd(np, x, **params))
RAW.avg_pool_backward = staticmethod(
    lambda g, shape, params: _avg_pool_backward_fwd(np, g, shape, **params))
DIFF.avg_pool = staticmethod(lambda x, params: apply(AVG_POOL2D, (x,), params)[0])
DIFF.avg_pool_backward = staticmethod(
    lambda g, shape, params: unary(AVG_POOL2D_BACKWARD, g, dict(params, shape=shape)))


# -- public functions ------------------------------------------------------------------------

def _ntuple(value, d, name="kernel_size"):
    if isinstance(value, int):
        return (value,) * d
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * d
    if len(value) != d:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of {d} ints")
    return value


def _check_input(name, x, d):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    shape = x._data.shape
    if name.startswith("avg") and len(shape) < d + 1:
        # torch's avg_pool reads the channel dim first
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{len(shape)}, {len(shape) - 1}], but got {-d - 1})")
    if len(shape) not in (d + 1, d + 2) or any(s == 0 for s in shape[-d - 1:]):
        raise RuntimeError(f"non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for "
                           "input")


def _pool_args(name, x, d, kernel_size, stride, padding, dilation, ceil_mode):
    _check_input(name, x, d)
    kernel = _ntuple(kernel_size, d)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _ntuple(stride, d, "stride")
    padding = _ntuple(padding, d, "padding")
    dilation = _ntuple(dilation, d, "dilation")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel_size must be greater than zero, but got kernel_size="
                           f"{list(kernel)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in dilation):
        raise RuntimeError("dilation should be greater than zero")
    for k, p, dl in zip(kernel, padding, dilation):
        if p < 0 or p > (dl * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={dl}")
    size = x._data.shape[-d:]
    out = tuple(_pool_out(*a, ceil_mode) for a in zip(size, kernel, stride, padding, dilation))
    if any(o <= 0 for o in out):
        c = x._data.shape[-d - 1]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, size))}). Calculated "
                           f"output size: ({c}x{'x'.join(map(str, out))}). Output size is too "
                           "small")
    return kernel, stride, padding, dilation


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum over each window of (N, C, H, W) or (C, H, W) input.

    >>> import graphgrad as torch
    >>> torch.max_pool2d(torch.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    kernel, stride, padding, dilation = _pool_args("max_pool2d", input, 2, kernel_size, stride,
                                                   padding, dilation, ceil_mode)
    out, (index, _) = apply(MAX_POOL2D, (input,), {
        "kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation,
        "ceil_mode": bool(ceil_mode)})
    if return_indices:
        return out, _wrap_index(index)
    return out


def _wrap_index(index):
    from .creation import tensor

    return tensor(index)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum over each window of (N, C, L) or (C, L) input (through the 2-d op)."""
    _check_input("max_pool1d", input, 1)
    k = _ntuple(kernel_size, 1)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _ntuple(stride, 1, "stride")
    out = max_pool2d(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + _ntuple(padding, 1),
                     (1,) + _ntuple(dilation, 1), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean over each window of (N, C, H, W) or (C, H, W) input."""
    kernel, stride, padding, _ = _pool_args("avg_pool2d", input, 2, kernel_size, stride, padding,
                                            1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return apply(AVG_POOL2D, (input,), {
        "kernel": kernel, "stride": stride, "padding": padding, "ceil_mode": bool(ceil_mode),
        "count_include_pad": bool(count_include_pad), "divisor_override": divisor_override})[0]


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    _check_input("avg_pool1d", input, 1)
    k = _ntuple(kernel_size, 1)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _ntuple(stride, 1, "stride")
    return avg_pool2d(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + _ntuple(padding, 1),
                      ceil_mode, count_include_pad).squeeze(-2)


def _output_size(x, output_size, d):
    size = x._data.shape[-d:]
    if isinstance(output_size, int):
        output_size = (output_size,) * d
    output_size = tuple(output_size)
    if len(output_size) == 1 and d > 1:
        output_size = output_size * d
    if len(output_size) != d:
        raise RuntimeError(f"adaptive pooling: output_size must be {d} (got {output_size})")
    return tuple(n if o is None else int(o) for n, o in zip(size, output_size))


def _float_only(kernel, x):
    if x._data.dtype.kind != "f":
        name = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}.get(x._data.dtype.name, x._data.dtype.name)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _check_adaptive(name, x, d):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    shape = x._data.shape
    if len(shape) not in (d + 1, d + 2) or any(s == 0 for s in shape[-d:]):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got "
                           f"{list(shape)}")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The maximum over torch's adaptive windows; ``return_indices`` adds the flat argmax."""
    _check_adaptive("adaptive_max_pool2d", input, 2)
    _float_only("adaptive_max_pool2d", input)
    out = _output_size(input, output_size, 2)
    y, (index, _) = apply(ADAPTIVE_MAX_POOL2D, (input,), {"output_size": out})
    return (y, _wrap_index(index)) if return_indices else y


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _check_adaptive("adaptive_max_pool1d", input, 1)
    o = _output_size(input, output_size if not isinstance(output_size, int)
                     else (output_size,), 1)
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1,) + o, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)
