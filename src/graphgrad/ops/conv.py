"""Convolution as fused primitives: conv1d/2d and conv_transpose1d/2d, via im2col and col2im.

Two ops close the family under differentiation (see Note [Convolution primitives]):
``convolution`` (aten's: plain or transposed, with bias) and ``convolution_weight`` (the weight
gradient). Forwards are NumPy im2col + one matmul per group; col2im adds strided slices, one per
kernel position (see Note [Batch-last layout] for the weight gradient and the transposed form).
The decomposition they implement is ``F.unfold`` followed by a matmul.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._tensor import Tensor
from ._dispatch import apply, unary
from ._namespace import DIFF, RAW
from ._opdef import defop

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]
# unfold and fold are torch.nn.functional only (torch.unfold is Tensor.unfold, a different op)

# Note [Convolution primitives]: with cols = im2col(x) a convolution is y = W @ cols, so
#   dL/dx = col2im(W^T @ g)     = a transposed convolution of g with the same W,
#   dL/dW = g @ cols^T          = convolution_weight(x, g),
# and a transposed convolution is the same three maps with the roles of x and y exchanged.
# The VJP of convolution_weight is again a (transposed) convolution of g, so the two ops form a
# closed set and every derivative order is written in ops of this file. Padding is kept as
# (low, high) pairs per spatial dim, so that 'same' with an even kernel and the output padding
# of a transposed convolution are the same mechanism (a longer buffer, then a crop).


# -- NumPy kernels ---------------------------------------------------------------------------

def _pad(xp, x, pads, value=0):
    """``x`` (N, C, *spatial) padded by (low, high) pairs; no copy when all are zero."""
    if not any(lo or hi for lo, hi in pads):
        return x
    shape = x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))
    out = xp.full(shape, value, dtype=x.dtype) if value else xp.zeros(shape, dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                           zip(x.shape[2:], pads))] = x
    return out


def _windows(x, ksize, out_size, stride, dilation):
    """The read-only view (N, C, *kernel, *out) of padded ``x``: entry [n, c, k.., o..] is
    x[n, c, o*stride + k*dilation]."""
    st = x.strides
    sp = st[2:]
    return as_strided(x, x.shape[:2] + tuple(ksize) + tuple(out_size),
                      st[:2] + tuple(s * d for s, d in zip(sp, dilation))
                      + tuple(s * t for s, t in zip(sp, stride)), writeable=False)


def im2col(xp, x, ksize, out_size, stride, dilation):
    """(N, C * prod(kernel), prod(out)) columns of an already padded ``x``."""
    n, c = x.shape[:2]
    cols = xp.ascontiguousarray(_windows(x, ksize, out_size, stride, dilation))
    return cols.reshape(n, c * _prod(ksize), _prod(out_size))


def col2im(xp, cols, shape, ksize, out_size, stride, dilation):
    """Adds columns (N, C * prod(kernel), prod(out)) back into a zero array of the padded
    ``shape`` (N, C, *spatial): one strided-slice add per kernel position."""
    out = xp.zeros(shape, dtype=cols.dtype)
    cols = cols.reshape(shape[:2] + tuple(ksize) + tuple(out_size))
    overlap = any(s < (k - 1) * d + 1 for s, k, d in zip(stride, ksize, dilation))
    for pos in itertools.product(*(range(k) for k in ksize)):
        key = (slice(None), slice(None)) + tuple(
            slice(p * d, p * d + s * (o - 1) + 1, s)
            for p, d, s, o in zip(pos, dilation, stride, out_size))
        block = cols[(slice(None), slice(None)) + pos]
        if overlap:
            out[key] += block
        else:  # disjoint windows: each input element is written once
            out[key] = block
    return out


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def _crop(x, pads):
    if not any(lo or hi for lo, hi in pads):
        return x
    return x[(slice(None), slice(None)) + tuple(slice(lo, s - hi) for s, (lo, hi) in
                                                zip(x.shape[2:], pads))]


def _out_size(size, ksize, stride, padding, dilation):
    return tuple((s + lo + hi - d * (k - 1) - 1) // st + 1
                 for s, k, st, (lo, hi), d in zip(size, ksize, stride, padding, dilation))


def _conv(xp, x, w, stride, padding, dilation, groups):
    """Plain convolution of x (N, C, *sp) with w (O, C/groups, *k)."""
    ksize = w.shape[2:]
    xp_ = _pad(xp, x, padding)
    out_size = _out_size(x.shape[2:], ksize, stride, padding, dilation)
    n = x.shape[0]
    cols = im2col(xp, xp_, ksize, out_size, stride, dilation)
    o = w.shape[0]
    if groups == 1:
        y = xp.matmul(w.reshape(o, -1), cols)
    else:
        cols = cols.reshape(n, groups, -1, cols.shape[-1])
        y = xp.matmul(w.reshape(groups, o // groups, -1), cols)
    return y.reshape((n, o) + out_size)


# Note [Batch-last layout]: in the weight gradient and the transposed convolution the columns
# are laid out (*kernel, C, *spatial, N), batch innermost. The weight gradient is then one GEMM
# over all images (no batched product and sum), and col2im adds whole (C, rows, W*N) blocks whose
# contiguous runs are W*N long instead of W: with NumPy's per-run overhead the strided adds of
# the (N, C, *spatial) layout cost more than the GEMM. Moving the batch last is one strided copy
# of the input (and one back for the transposed output). It pays only when the columns are
# many enough (channels x kernel positions) for those copies to be small against the GEMM and
# col2im: measured on 32-image batches the transposed form gains from about 32 rows, the weight
# gradient from about 64; a first layer with one input channel keeps the per-image layout.
_BATCH_LAST_TRANSPOSE = 32
_BATCH_LAST_WEIGHT = 64


def _batch_last(xp, x, pads=None):
    """(C, *padded spatial, N) copy of ``x`` (N, C, *spatial), zero padded by (low, high)."""
    moved = xp.moveaxis(x, 0, -1)
    if pads is None or not any(lo or hi for lo, hi in pads):
        return xp.ascontiguousarray(moved)
    shape = (x.shape[1],) + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads)) + (
        x.shape[0],)
    out = xp.zeros(shape, dtype=x.dtype)
    out[(slice(None),) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[2:], pads))] = moved
    return out


def _kernel_slices(pos, dilation, stride, size):
    """The (C, *spatial, N) buffer's slice that kernel position ``pos`` meets."""
    return (slice(None),) + tuple(slice(p * d, p * d + s * (o - 1) + 1, s)
                                  for p, d, s, o in zip(pos, dilation, stride, size))


def _conv_transpose_batch_last(xp, x, w, stride, padding, dilation, output_padding):
    """``_conv_transpose`` for groups == 1 in the batch-last layout: one GEMM, then col2im adds
    of long contiguous runs; returns a C-contiguous (N, Cout, *out) array."""
    n, cin = x.shape[:2]
    cout = w.shape[1]
    ksize, in_size = w.shape[2:], x.shape[2:]
    npos = _prod(ksize)
    xt = _batch_last(xp, x).reshape(cin, -1)
    wk = w.reshape(cin, cout, npos).transpose(2, 1, 0).reshape(npos * cout, cin)
    cols = xp.matmul(wk, xt).reshape((npos, cout) + tuple(in_size) + (n,))
    full = tuple((i - 1) * s + d * (k - 1) + 1 + op for i, s, d, k, op in
                 zip(in_size, stride, dilation, ksize, output_padding))
    buf = xp.zeros((cout,) + full + (n,), dtype=cols.dtype)
    overlap = any(s < (k - 1) * d + 1 for s, k, d in zip(stride, ksize, dilation))
    for i, pos in enumerate(itertools.product(*(range(k) for k in ksize))):
        key = _kernel_slices(pos, dilation, stride, in_size)
        if overlap:
            buf[key] += cols[i]
        else:  # disjoint windows: each input element is written once
            buf[key] = cols[i]
    crop = tuple(slice(lo, f - hi) for f, (lo, hi) in zip(full, padding))
    return xp.ascontiguousarray(xp.moveaxis(buf[(slice(None),) + crop], -1, 0))


def _conv_transpose(xp, x, w, stride, padding, dilation, output_padding, groups):
    """Transposed convolution of x (N, Cin, *sp) with w (Cin, Cout/groups, *k): col2im of
    W^T @ x into a buffer of the full size, then the padding is cropped."""
    n, cin = x.shape[:2]
    ksize = w.shape[2:]
    in_size = x.shape[2:]
    cout_g = w.shape[1]
    if groups == 1 and cout_g * _prod(ksize) >= _BATCH_LAST_TRANSPOSE:
        return _conv_transpose_batch_last(xp, x, w, stride, padding, dilation, output_padding)
    lx = _prod(in_size)
    if groups == 1:
        cols = xp.matmul(w.reshape(cin, -1).T, x.reshape(n, cin, lx))
    else:
        wg = w.reshape(groups, cin // groups, -1).transpose(0, 2, 1)
        cols = xp.matmul(wg, x.reshape(n, groups, cin // groups, lx))
    full = tuple((i - 1) * s + d * (k - 1) + 1 + op for i, s, d, k, op in
                 zip(in_size, stride, dilation, ksize, output_padding))
    buf = col2im(xp, cols, (n, cout_g * groups) + full, ksize, in_size, stride, dilation)
    return _crop(buf, padding)


def _conv_weight_batch_last(xp, x, g, ksize, stride, padding, dilation):
    """``_conv_weight`` for groups == 1 in the batch-last layout: one GEMM over all images."""
    n, c = x.shape[:2]
    o = g.shape[1]
    out_size = g.shape[2:]
    npos = _prod(ksize)
    xt = _batch_last(xp, x, padding)
    cols = xp.empty((npos, c) + tuple(out_size) + (n,), dtype=x.dtype)
    for i, pos in enumerate(itertools.product(*(range(k) for k in ksize))):
        cols[i] = xt[_kernel_slices(pos, dilation, stride, out_size)]
    gt = _batch_last(xp, g).reshape(o, -1)
    gw = xp.matmul(cols.reshape(npos * c, -1), gt.T)  # (kernel..., C) x O
    gw = gw.reshape(tuple(ksize) + (c, o))
    d = len(ksize)
    return xp.ascontiguousarray(gw.transpose((d + 1, d) + tuple(range(d))))


def _conv_weight(xp, x, g, ksize, stride, padding, dilation, groups):
    """dL/dW of a plain convolution: g (N, O, *out) @ im2col(x)^T, summed over the batch."""
    n, c = x.shape[:2]
    o = g.shape[1]
    out_size = g.shape[2:]
    if groups == 1 and c * _prod(ksize) >= _BATCH_LAST_WEIGHT:
        return _conv_weight_batch_last(xp, x, g, ksize, stride, padding, dilation)
    cols = im2col(xp, _pad(xp, x, padding), ksize, out_size, stride, dilation)
    lo = _prod(out_size)
    # a batched product then a sum over the batch: reshaping to one big GEMM would copy the
    # columns transposed, which costs more than the GEMM itself
    gm = g.reshape(n, groups, o // groups, lo)
    cm = cols.reshape(n, groups, -1, lo)
    gw = xp.matmul(gm, cm.transpose(0, 1, 3, 2)).sum(axis=0)
    return gw.reshape((o, c // groups) + tuple(ksize))


# -- the ops ---------------------------------------------------------------------------------

def _convolution_fwd(xp, x, w, b, stride, padding, dilation, transposed, output_padding,
                     groups):
    if transposed:
        y = _conv_transpose(xp, x, w, stride, padding, dilation, output_padding, groups)
    else:
        y = _conv(xp, x, w, stride, padding, dilation, groups)
    if b is not None:
        b = b.reshape((-1,) + (1,) * (y.ndim - 2))
        if transposed:
            y = y + b  # a crop of col2im's buffer: the sum makes it contiguous
        else:
            y += b  # the product's own fresh buffer
    return y


def _transpose_padding(in_size, out_size, ksize, stride, padding, dilation):
    """The output padding that makes a transposed convolution of an ``out_size`` gradient give
    back exactly ``in_size`` (the rows a strided convolution skipped at the end)."""
    return tuple(i + lo + hi - ((o - 1) * s + d * (k - 1) + 1) for i, o, k, s, (lo, hi), d in
                 zip(in_size, out_size, ksize, stride, padding, dilation))


def _convolution_vjp(ns, g, x, w, stride, padding, dilation, transposed, output_padding, groups,
                     needs):
    rx, rg = ns.raw(x), ns.raw(g)
    ksize = ns.raw(w).shape[2:]
    gx = gw = gb = None
    if transposed:
        if needs[0]:
            gx = _fit(ns, ns.convolution(g, w, stride, padding, dilation, False, None, groups),
                      rx.shape)
        if needs[1]:
            gw = ns.convolution_weight(g, x, ksize, stride, padding, dilation, groups)
    else:
        if needs[0]:
            op = _transpose_padding(rx.shape[2:], rg.shape[2:], ksize, stride, padding, dilation)
            gx = ns.convolution(g, w, stride, padding, dilation, True, op, groups)
        if needs[1]:
            gw = ns.convolution_weight(x, g, ksize, stride, padding, dilation, groups)
    if needs[2]:
        gb = ns.sum(g, (0,) + tuple(range(2, rg.ndim)))
    return gx, gw, gb


def _convolution_weight_fwd(xp, x, g, ksize, stride, padding, dilation, groups):
    return _conv_weight(xp, x, g, ksize, stride, padding, dilation, groups)


def _convolution_weight_vjp(ns, gw, x, g, ksize, stride, padding, dilation, groups, needs):
    dx = dg = None
    if needs[0]:
        op = _transpose_padding(ns.raw(x).shape[2:], ns.raw(g).shape[2:], ksize, stride,
                                padding, dilation)
        dx = ns.convolution(g, gw, stride, padding, dilation, True, op, groups)
    if needs[1]:
        dg = _fit(ns, ns.convolution(x, gw, stride, padding, dilation, False, None, groups),
                  ns.raw(g).shape)
    return dx, dg


def _fit(ns, t, shape):
    """Drops the trailing rows a convolution of a transposed convolution's output computes
    when its output padding is at least the stride (allowed while it is below the dilation)."""
    if ns.raw(t).shape == shape:
        return t
    return ns.getitem(t, (slice(None), slice(None)) + tuple(slice(0, s) for s in shape[2:]))


CONVOLUTION = defop("convolution", _convolution_fwd, _convolution_vjp, kind="contraction",
                    save=(0, 1), dtype_rule="same", node="ConvolutionBackward0", needs_mask=True,
                    onnx="Conv")
CONVOLUTION_WEIGHT = defop("convolution_weight", _convolution_weight_fwd,
                           _convolution_weight_vjp, kind="contraction", save=(0, 1),
                           dtype_rule="same", node="ConvolutionBackwardBackward0",
                           needs_mask=True)


def _raw_convolution(x, w, stride, padding, dilation, transposed, output_padding, groups):
    return _convolution_fwd(np, x, w, None, stride, padding, dilation, transposed,
                            output_padding, groups)


def _diff_convolution(x, w, stride, padding, dilation, transposed, output_padding, groups):
    return apply(CONVOLUTION, (x, w, None), _params(stride, padding, dilation, transposed,
                                                    output_padding, groups))


def _raw_convolution_weight(x, g, ksize, stride, padding, dilation, groups):
    return _conv_weight(np, x, g, ksize, stride, padding, dilation, groups)


def _diff_convolution_weight(x, g, ksize, stride, padding, dilation, groups):
    return apply(CONVOLUTION_WEIGHT, (x, g), {
        "ksize": ksize, "stride": stride, "padding": padding, "dilation": dilation,
        "groups": groups})


RAW.convolution = staticmethod(_raw_convolution)
DIFF.convolution = staticmethod(_diff_convolution)
RAW.convolution_weight = staticmethod(_raw_convolution_weight)
DIFF.convolution_weight = staticmethod(_diff_convolution_weight)


def _params(stride, padding, dilation, transposed, output_padding, groups):
    if output_padding is None:
        output_padding = (0,) * len(stride)
    return {"stride": stride, "padding": padding, "dilation": dilation, "transposed": transposed,
            "output_padding": output_padding, "groups": groups}


# -- unfold (im2col) and fold (col2im) -------------------------------------------------------

def _fold_grid(size, kernel, dilation, padding, stride):
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


def _unfold_fwd(xp, x, kernel, dilation, padding, stride):
    batched = x.ndim == 4
    xb = x if batched else x[None]
    grid = _fold_grid(xb.shape[2:], kernel, dilation, padding, stride)
    cols = im2col(xp, _pad(xp, xb, tuple((p, p) for p in padding)), kernel, grid,
                        stride, dilation)
    return cols if batched else cols[0]


def _fold_fwd(xp, x, output_size, kernel, dilation, padding, stride):
    batched = x.ndim == 3
    xb = x if batched else x[None]
    grid = _fold_grid(output_size, kernel, dilation, padding, stride)
    n, ck = xb.shape[:2]
    c = ck // _prod(kernel)
    padded = (n, c) + tuple(s + 2 * p for s, p in zip(output_size, padding))
    out = col2im(xp, xb, padded, kernel, grid, stride, dilation)
    out = _crop(out, tuple((p, p) for p in padding))
    return out if batched else out[0]


def _unfold_vjp(ns, g, x_shape, kernel, dilation, padding, stride):
    return ns.fold(g, x_shape[-2:], kernel, dilation, padding, stride)


def _fold_vjp(ns, g, output_size, kernel, dilation, padding, stride):
    return ns.unfold(g, kernel, dilation, padding, stride)


def _unfold_fwd_saving(xp, x, **params):
    return _unfold_fwd(xp, x, **params), x.shape


UNFOLD = defop("im2col", _unfold_fwd_saving, _unfold_vjp, kind="movement", save=("aux",),
               dtype_rule="same", node="Im2ColBackward0")
FOLD = defop("col2im", _fold_fwd, _fold_vjp, kind="movement", dtype_rule="same",
             node="Col2ImBackward0")


def _fold_params(kernel, dilation, padding, stride):
    return {"kernel": kernel, "dilation": dilation, "padding": padding, "stride": stride}


RAW.fold = staticmethod(lambda g, size, kernel, dilation, padding, stride: _fold_fwd(
    np, g, tuple(size), kernel, dilation, padding, stride))
RAW.unfold = staticmethod(lambda x, kernel, dilation, padding, stride: _unfold_fwd(
    np, x, kernel, dilation, padding, stride))
DIFF.fold = staticmethod(lambda g, size, kernel, dilation, padding, stride: unary(
    FOLD, g, dict(_fold_params(kernel, dilation, padding, stride), output_size=tuple(size))))
DIFF.unfold = staticmethod(lambda x, kernel, dilation, padding, stride: apply(
    UNFOLD, (x,), _fold_params(kernel, dilation, padding, stride))[0])


# -- public functions: argument checks with torch's messages ---------------------------------

def _tuple(value, d, name):
    if isinstance(value, int):
        return (value,) * d
    value = tuple(value)
    if len(value) == 1:
        return value * d
    if len(value) != d:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {d} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return tuple(int(v) for v in value)


def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_common(name, input, weight, bias, d, stride, dilation, groups):
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"{name}(): argument 'input' and 'weight' must be Tensor")
    xs = input._data.shape
    if len(xs) not in (d + 1, d + 2):
        raise RuntimeError(f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to "
                           f"{name}, but got input of size: {_shape_str(xs)}")
    ws = weight._data.shape
    if len(ws) != d + 2:
        raise RuntimeError(f"weight should have at least three dimensions (expected {d + 2}-D "
                           f"weight for {name}, but got weight of size {_shape_str(ws)})")
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f"Input type ({input.dtype}) and weight type ({weight.dtype}) "
                           "should be the same")
    if bias is not None and bias._data.dtype != input._data.dtype:
        raise RuntimeError(f"Input type ({input.dtype}) and bias type ({bias.dtype}) should be "
                           "the same")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in dilation):
        raise RuntimeError("non-positive dilation is not supported")


def _batched(input, d):
    """(the input with a batch dim, whether one was added); torch unsqueezes and squeezes."""
    if input._data.ndim == d + 1:
        return input.unsqueeze(0), True
    return input, False


def _same_padding(ksize, dilation):
    # torch puts the odd pixel of an even total on the high side
    return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                 for k, d in zip(ksize, dilation))


def _convnd(name, d, input, weight, bias, stride, padding, dilation, groups):
    stride = _tuple(stride, d, "stride")
    dilation = _tuple(dilation, d, "dilation")
    _check_common(name, input, weight, bias, d, stride, dilation, groups)
    ws = weight._data.shape
    ksize = ws[2:]
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * d
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = _same_padding(ksize, dilation)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        p = _tuple(padding, d, "padding")
        if any(v < 0 for v in p):
            raise RuntimeError("negative padding is not supported")
        pads = tuple((v, v) for v in p)
    x, unbatched = _batched(input, d)
    xs = x._data.shape
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_shape_str(ws)}] instead")
    if xs[1] != ws[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_shape_str(ws)}, expected "
                           f"input{_shape_str(xs)} to have {ws[1] * groups} channels, but got "
                           f"{xs[1]} channels instead")
    if bias is not None and bias._data.shape != (ws[0],):
        raise RuntimeError(f"Given weight of size {_shape_str(ws)}, expected bias to be "
                           f"1-dimensional with {ws[0]} elements, but got bias of size "
                           f"{_shape_str(bias._data.shape)} instead")
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(xs[2:], pads))
    eff = tuple(dl * (k - 1) + 1 for k, dl in zip(ksize, dilation))
    if any(p < k for p, k in zip(padded, eff)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                           "actual input size")
    y = apply(CONVOLUTION, (x, weight, bias),
              _params(stride, pads, dilation, False, None, groups))
    return y.squeeze(0) if unbatched else y


def _conv_transposend(name, d, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    stride = _tuple(stride, d, "stride")
    dilation = _tuple(dilation, d, "dilation")
    _check_common(name, input, weight, bias, d, stride, dilation, groups)
    p = _tuple(padding, d, "padding")
    if any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    op = _tuple(output_padding, d, "output_padding")
    if any(v < 0 for v in op):
        raise RuntimeError("negative output_padding is not supported")
    x, unbatched = _batched(input, d)
    xs, ws = x._data.shape, weight._data.shape
    if xs[1] != ws[0] or ws[0] % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {_shape_str(ws)}, expected "
                           f"input{_shape_str(xs)} to have {ws[0]} channels, but got {xs[1]} "
                           "channels instead")
    if any(o >= s and o >= dl for o, s, dl in zip(op, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got output_padding={list(op)}, stride={list(stride)}, "
                           f"dilation={list(dilation)}")
    cout = ws[1] * groups
    if bias is not None and bias._data.shape != (cout,):
        raise RuntimeError(f"Given transposed=1, weight of size {_shape_str(ws)}, expected bias "
                           f"to be 1-dimensional with {cout} elements, but got bias of size "
                           f"{_shape_str(bias._data.shape)} instead")
    out = tuple((i - 1) * s - 2 * pv + dl * (k - 1) + 1 + o for i, s, pv, dl, k, o in
                zip(xs[2:], stride, p, dilation, ws[2:], op))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, xs[2:]))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, out))}). Output size is too small")
    y = apply(CONVOLUTION, (x, weight, bias),
              _params(stride, tuple((v, v) for v in p), dilation, True, op, groups))
    return y.squeeze(0) if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over (N, C, L) or (C, L) input, as ``torch.nn.functional.conv1d``."""
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over (N, C, H, W) or (C, H, W) input.

    >>> import graphgrad as torch
    >>> torch.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2)).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend("conv_transpose1d", 1, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The gradient of conv2d with respect to its input, as a layer (a "deconvolution")."""
    return _conv_transposend("conv_transpose2d", 2, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


def _pair(value, d, name="kernel_size"):
    if isinstance(value, int):
        return (value,) * d
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * d
    if len(value) != d:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of {d} ints")
    return value


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of (N, C, H, W) input as columns (N, C * kh * kw, L): im2col."""
    if not isinstance(input, Tensor):
        raise TypeError(f"unfold(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input._data.ndim not in (3, 4):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{input._data.ndim}, {input._data.ndim - 1}], but got 2)")
    kernel, dilation = _pair(kernel_size, 2), _pair(dilation, 2, "dilation")
    padding, stride = _pair(padding, 2, "padding"), _pair(stride, 2, "stride")
    size = input._data.shape[-2:]
    grid = _fold_grid(size, kernel, dilation, padding, stride)
    if any(g <= 0 for g in grid):
        raise RuntimeError(f"Given input with spatial size {tuple(size)}, kernel_size="
                           f"{kernel}, dilation={dilation}, padding={padding}, calculated shape "
                           f"of the array of sliding blocks as {grid}, but its components must "
                           "be at least one.")
    return apply(UNFOLD, (input,), _fold_params(kernel, dilation, padding, stride))[0]


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums columns (N, C * kh * kw, L) back into an (N, C, H, W) image: col2im."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fold(): argument 'input' must be Tensor, not {type(input).__name__}")
    size = _pair(output_size, 2, "output_size")
    kernel, dilation = _pair(kernel_size, 2), _pair(dilation, 2, "dilation")
    padding, stride = _pair(padding, 2, "padding"), _pair(stride, 2, "stride")
    shape = input._data.shape
    if len(shape) not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions, but got: {list(shape)}")
    k = _prod(kernel)
    ck = shape[-2]
    if ck % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ck} and kernel_size="
                           f"{kernel}.")
    grid = _fold_grid(size, kernel, dilation, padding, stride)
    if shape[-1] != _prod(grid):
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation="
                           f"{dilation}, padding={padding}, stride={stride}, expected size of "
                           f"input's dimension 2 to match the calculated number of sliding "
                           f"blocks {' * '.join(map(str, grid))} = {_prod(grid)}, but got "
                           f"input.size(2)={shape[-1]}.")
    return unary(FOLD, input, dict(_fold_params(kernel, dilation, padding, stride),
                                   output_size=size))
