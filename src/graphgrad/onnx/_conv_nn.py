"""Converters of contractions, convolution and pooling, normalization, recurrent layers,
resampling and sorting.

The recurrent layers are unrolled over the traced sequence length (the batch stays dynamic):
graphgrad's layer returns every step's state, which ONNX's LSTM op does not (it gives only
the last cell state), and unrolling keeps torch's exact gate formulas.
"""

from __future__ import annotations

import numpy as np

from ..compiler.ir import Value
from .builder import ExportError
from .ops import arg, register


def _out(instr):
    return instr.outs[0].dtype


def _scaled(b, x, k, dt):
    return x if k == 1 else b.node("Mul", [x, b.scalar(k, dt)])


# -- contractions ---------------------------------------------------------------------------
def _mm(b, x, y, xdim, ydim):
    """MatMul; a 1-D operand is made 2-D first (onnxruntime 1.32's Transpose+MatMul fusion
    computes a wrong result for a 1-D right operand)."""
    if ydim == 1:
        y = b.unsqueeze(y, [-1])
    if xdim == 1:
        x = b.unsqueeze(x, [0])
    out = b.node("MatMul", [x, y])
    if ydim == 1:
        out = b.squeeze(out, [-1])
    if xdim == 1:
        out = b.squeeze(out, [-1 if ydim == 1 else -2])
    return out


@register(["matmul", "mm", "bmm", "mv", "dot", "matmul.vecmat"], "MatMul")
def _matmul(b, instr):
    dt = _out(instr)
    return _mm(b, arg(b, instr, 0, dt), arg(b, instr, 1, dt), len(instr.ins[0].shape),
               len(instr.ins[1].shape))


@register(["addmm", "baddbmm", "addmv", "addbmm", "addr"], "MatMul+Mul+Add")
def _addmm(b, instr):
    dt = _out(instr)
    inp, x, y = (arg(b, instr, i, dt) for i in range(3))
    name = instr.name
    if name == "addr":
        prod = b.node("Mul", [b.unsqueeze(x, [1]), b.unsqueeze(y, [0])])
    else:
        prod = _mm(b, x, y, len(instr.ins[1].shape), len(instr.ins[2].shape))
        if name == "addbmm":
            prod = b.reduce("ReduceSum", prod, [0], False)
    alpha = instr.params.get("alpha", 1)
    if alpha == 0 and name in ("addmm", "addmv", "addbmm"):
        # as the forward: BLAS reads neither matrix, so their NaNs vanish
        prod = b.node("ConstantOfShape", [b.shape_of(prod)],
                      value=b.onnx.numpy_helper.from_array(np.zeros(1, dt)))
    prod = _scaled(b, prod, alpha, dt)
    beta = instr.params.get("beta", 1)
    if beta == 0:
        return prod
    return b.node("Add", [_scaled(b, inp, beta, dt), prod])


def _einsum_eq(eq):
    # ONNX (and onnxruntime) take lowercase subscripts; rename consistently.
    letters = sorted({c for c in eq if c.isalpha()})
    free = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    if len(letters) > 26:
        raise ExportError("einsum with more than 26 subscripts")
    table = dict(zip(letters, free))
    return "".join(table.get(c, c) for c in eq)


def _check_einsum_sizes(eq, shapes):
    sizes: dict = {}
    for term, shape in zip(eq.split("->")[0].split(","), shapes):
        if "..." in term:
            if len(set(s for s in shape if s != 1)) and len(shapes) > 1 and any(
                    len(sh) != len(shape) for sh in shapes):
                raise ExportError("einsum broadcasting an ellipsis between operands of "
                                  "different ranks is not written for ONNX Einsum")
            term = term.replace("...", "")
            shape = shape[len(shape) - len(term):]
        for c, s in zip(term, shape):
            if sizes.setdefault(c, s) != s:
                raise ExportError("einsum broadcasting a size-1 subscript against a larger one "
                                  "(numpy semantics) has no ONNX Einsum form")


@register(["einsum", "einsum.unary", "tensordot"], "Einsum", 12)
def _einsum(b, instr):
    dt = _out(instr)
    eq = instr.params["plan"].eq
    _check_einsum_sizes(eq, [v.shape for v in instr.ins if isinstance(v, Value)])
    ins = [b.cast(b.x(v), v.dtype, dt) for v in instr.ins if isinstance(v, Value)]
    return b.node("Einsum", ins, equation=_einsum_eq(eq))


@register("cdist", "Sub+Abs+ReduceSum+Pow")
def _cdist(b, instr):
    dt = _out(instr)
    x1, x2 = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    p = float(instr.params.get("p", 2.0))
    d = b.node("Abs", [b.node("Sub", [b.unsqueeze(x1, [-2]), b.unsqueeze(x2, [-3])])])
    if p == 0:
        nz = b.cast(b.node("Not", [b.node("Equal", [d, b.scalar(0, dt)])]), np.bool_, dt)
        return b.reduce("ReduceSum", nz, [-1], False)
    if p == np.inf:
        return b.reduce("ReduceMax", d, [-1], False)
    if p == 1:
        return b.reduce("ReduceSum", d, [-1], False)
    if p == 2:
        return b.node("Sqrt", [b.reduce("ReduceSum", b.node("Mul", [d, d]), [-1], False)])
    s = b.reduce("ReduceSum", b.node("Pow", [d, b.scalar(p, dt)]), [-1], False)
    return b.node("Pow", [s, b.scalar(1.0 / p, dt)])


@register("linalg_det", "Det")
def _det(b, instr):
    return b.node("Det", [arg(b, instr, 0, _out(instr))])


# -- convolution and pooling ----------------------------------------------------------------
@register("convolution", "Conv / ConvTranspose")
def _conv(b, instr):
    dt = _out(instr)
    p = instr.params
    ins = [arg(b, instr, 0, dt), arg(b, instr, 1, dt)]
    if instr.ins[2] is not None:
        ins.append(arg(b, instr, 2, dt))
    pads = [int(lo) for lo, _ in p["padding"]] + [int(hi) for _, hi in p["padding"]]
    attrs = dict(strides=list(p["stride"]), dilations=list(p["dilation"]), group=int(p["groups"]),
                 pads=pads)
    batched = len(instr.ins[0].shape) == len(instr.ins[1].shape)
    if not batched:
        ins[0] = b.unsqueeze(ins[0], [0])
    if p["transposed"] and any(o >= s for o, s in zip(p["output_padding"], p["stride"])):
        # onnxruntime rejects output_padding >= stride (torch allows < dilation too): the extra
        # rows and columns see no input, so they are zeros plus the bias.
        out = b.node("ConvTranspose", ins[:2], **attrs)
        extra = [int(o) for o in p["output_padding"]]
        pads = [0] * (2 + len(extra)) + [0, 0] + extra
        out = b.node("Pad", [out, b.i64(pads), b.scalar(0, dt)], mode="constant")
        if len(ins) > 2:
            out = b.node("Add", [out, b.reshape(ins[2], [-1] + [1] * len(extra))])
    elif p["transposed"]:
        out = b.node("ConvTranspose", ins, output_padding=list(p["output_padding"]), **attrs)
    else:
        out = b.node("Conv", ins, **attrs)
    return out if batched else b.squeeze(out, [0])


def _unbatched(b, instr, spatial):
    """(input name, squeeze-after) with a batch axis added to an unbatched pooling input."""
    x = arg(b, instr, 0)
    if len(instr.ins[0].shape) == spatial + 1:
        return b.unsqueeze(x, [0]), True
    return x, False


@register("max_pool2d", "MaxPool")
def _max_pool(b, instr):
    p = instr.params
    x, squeeze = _unbatched(b, instr, 2)
    pads = [int(v) for v in p["padding"]] * 2
    out = b.node("MaxPool", [x], kernel_shape=list(p["kernel"]), strides=list(p["stride"]),
                 pads=pads, dilations=list(p["dilation"]), ceil_mode=int(p["ceil_mode"]))
    return b.squeeze(out, [0]) if squeeze else out


@register("avg_pool2d", "AveragePool")
def _avg_pool(b, instr):
    p = instr.params
    dt = _out(instr)
    x, squeeze = _unbatched(b, instr, 2)
    pads = [int(v) for v in p["padding"]] * 2
    div = p.get("divisor_override")
    out = b.node("AveragePool", [x], kernel_shape=list(p["kernel"]), strides=list(p["stride"]),
                 pads=pads, ceil_mode=int(p["ceil_mode"]),
                 count_include_pad=int(p["count_include_pad"] or div is not None))
    if div is not None:
        out = b.node("Mul", [out, b.scalar(float(np.prod(p["kernel"])) / div, dt)])
    return b.squeeze(out, [0]) if squeeze else out


@register("adaptive_max_pool2d", "Slice+ReduceMax+Concat (separable windows)")
def _adaptive_max(b, instr):
    x = arg(b, instr, 0)
    shape = instr.ins[0].shape
    outs = instr.params["output_size"]
    for i, n_out in enumerate(outs):
        axis = len(shape) - len(outs) + i
        n_in = shape[axis]
        parts = []
        for o in range(n_out):
            lo, hi = (o * n_in) // n_out, -((-(o + 1) * n_in) // n_out)
            parts.append(b.reduce("ReduceMax", b.slice(x, [lo], [hi], [axis]), [axis], True))
        x = b.node("Concat", parts, axis=axis) if len(parts) > 1 else parts[0]
    return [x] + [None] * (len(instr.outs) - 1)


_TAPS = ["adaptive_avg_pool2d"] + [f"upsample_{m}{d}d" for m in ("nearest", "nearest_exact")
                                   for d in (1, 2, 3)] + [
    "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d", "upsample_bicubic2d",
    "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"]


@register(_TAPS, "Gather+Mul+Add (Note [Taps])")
def _taps(b, instr):
    dt = _out(instr)
    x = arg(b, instr, 0)
    taps = instr.params["taps"]
    d = len(taps)
    ndim = len(instr.ins[0].shape)
    for i, (idx, w) in enumerate(taps):
        axis = ndim - d + i
        trail = (1,) * (d - 1 - i)
        y = None
        for t in range(idx.shape[1]):
            v = b.gather(x, idx[:, t], axis)
            if w is not None:
                v = b.node("Mul", [v, b.const(w[:, t].astype(dt).reshape((-1,) + trail))])
            y = v if y is None else b.node("Add", [y, v])
        x = y
    return x


def _eye_weight(c, kernel, dt):
    k = int(np.prod(kernel))
    return np.eye(c * k, dtype=dt).reshape((c * k, c) + tuple(kernel))


@register("im2col", "Conv with an identity kernel")
def _im2col(b, instr):
    p = instr.params
    dt = _out(instr)
    x, squeeze = _unbatched(b, instr, 2)
    c = instr.ins[0].shape[-3]
    pads = [int(v) for v in p["padding"]] * 2
    y = b.node("Conv", [x, b.const(_eye_weight(c, p["kernel"], dt))], strides=list(p["stride"]),
               dilations=list(p["dilation"]), pads=pads, kernel_shape=list(p["kernel"]))
    out_shape = instr.outs[0].shape
    y = b.reshape(y, [0, out_shape[-2], -1])
    return [b.squeeze(y, [0]) if squeeze else y] + [None] * (len(instr.outs) - 1)


@register("col2im", "ConvTranspose with an identity kernel")
def _col2im(b, instr):
    p = instr.params
    dt = _out(instr)
    x = arg(b, instr, 0)
    batched = len(instr.ins[0].shape) == 3
    if not batched:
        x = b.unsqueeze(x, [0])
    kernel, stride, dil, pad = p["kernel"], p["stride"], p["dilation"], p["padding"]
    size = p["output_size"]
    grid = [(s + 2 * q - d * (k - 1) - 1) // st + 1
            for s, q, d, k, st in zip(size, pad, dil, kernel, stride)]
    ck = instr.ins[0].shape[-2]
    c = ck // int(np.prod(kernel))
    x = b.reshape(x, [0, ck] + grid)
    natural = [(g - 1) * st - 2 * q + d * (k - 1) + 1
               for g, st, q, d, k in zip(grid, stride, pad, dil, kernel)]
    y = b.node("ConvTranspose", [x, b.const(_eye_weight(c, kernel, dt))], strides=list(stride),
               dilations=list(dil), pads=[int(q) for q in pad] * 2, kernel_shape=list(kernel),
               output_padding=[s - n for s, n in zip(size, natural)])
    return y if batched else b.squeeze(y, [0])


# -- normalization ----------------------------------------------------------------------------
@register(["native_batch_norm", "native_layer_norm", "native_group_norm"],
          "ReduceMean+Sub+Mul+Sqrt+Div (the forward's own formula)")
def _norm(b, instr):
    dt = _out(instr)
    p = instr.params
    x = arg(b, instr, 0, dt)
    axes = list(p["axes"])
    mean = b.reduce("ReduceMean", x, axes, True)
    d = b.node("Sub", [x, mean])
    var = b.reduce("ReduceMean", b.node("Mul", [d, d]), axes, True)
    y = b.node("Div", [d, b.node("Sqrt", [b.node("Add", [var, b.scalar(p["eps"], dt)])])])
    w, bias = instr.ins[1], instr.ins[2]
    if w is not None:
        y = b.node("Mul", [y, b.reshape(arg(b, instr, 1, dt), p["wshape"])])
    if bias is not None:
        y = b.node("Add", [y, b.reshape(arg(b, instr, 2, dt), p["wshape"])])
    return [y] + [None] * (len(instr.outs) - 1)


# -- recurrent layers (unrolled) ------------------------------------------------------------
def _steps(b, gi, T):
    return [b.squeeze(b.slice(gi, [t], [t + 1], [0]), [0]) for t in range(T)]


def _stack_steps(b, outs, reverse):
    outs = outs[::-1] if reverse else outs
    return b.node("Concat", [b.unsqueeze(o, [0]) for o in outs], axis=0)


def _chunk(b, x, i, n, size):
    return b.slice(x, [i * size], [(i + 1) * size], [-1])


@register("rnn_layer", "MatMul+Tanh/Relu, unrolled")
def _rnn(b, instr):
    dt = _out(instr)
    gi, h = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    w_t = b.node("Transpose", [arg(b, instr, 2, dt)])
    T = instr.ins[0].shape[0]
    if instr.ins[3] is not None:
        gi = b.node("Add", [gi, arg(b, instr, 3, dt)])
    act = "Tanh" if instr.params.get("nonlinearity", "tanh") == "tanh" else "Relu"
    reverse = instr.params.get("reverse", False)
    steps = _steps(b, gi, T)
    outs = []
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        h = b.node(act, [b.node("Add", [steps[t], b.node("MatMul", [h, w_t])])])
        outs.append(h)
    return _stack_steps(b, outs, reverse)


@register("lstm_layer", "MatMul+Sigmoid+Tanh, unrolled")
def _lstm(b, instr):
    dt = _out(instr)
    gi, h, c = (arg(b, instr, i, dt) for i in range(3))
    w_t = b.node("Transpose", [arg(b, instr, 3, dt)])
    if instr.ins[4] is not None:
        gi = b.node("Add", [gi, arg(b, instr, 4, dt)])
    wr_t = None if instr.ins[5] is None else b.node("Transpose", [arg(b, instr, 5, dt)])
    T, _, G = instr.ins[0].shape
    H = G // 4
    reverse = instr.params.get("reverse", False)
    steps = _steps(b, gi, T)
    outs = []
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        a = b.node("Add", [steps[t], b.node("MatMul", [h, w_t])])
        i, f, g, o = (_chunk(b, a, k, 4, H) for k in range(4))
        i, f, o = (b.node("Sigmoid", [v]) for v in (i, f, o))
        c = b.node("Add", [b.node("Mul", [f, c]), b.node("Mul", [i, b.node("Tanh", [g])])])
        h = b.node("Mul", [o, b.node("Tanh", [c])])
        if wr_t is not None:
            h = b.node("MatMul", [h, wr_t])
        outs.append(b.node("Concat", [h, c], axis=-1))
    return [_stack_steps(b, outs, reverse)] + [None] * (len(instr.outs) - 1)


@register("gru_layer", "MatMul+Sigmoid+Tanh, unrolled")
def _gru(b, instr):
    dt = _out(instr)
    gi, h = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    w_t = b.node("Transpose", [arg(b, instr, 2, dt)])
    b_hh = None if instr.ins[3] is None else arg(b, instr, 3, dt)
    T, _, G = instr.ins[0].shape
    H = G // 3
    reverse = instr.params.get("reverse", False)
    steps = _steps(b, gi, T)
    outs = []
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        gh = b.node("MatMul", [h, w_t])
        if b_hh is not None:
            gh = b.node("Add", [gh, b_hh])
        x = steps[t]
        r = b.node("Sigmoid", [b.node("Add", [_chunk(b, x, 0, 3, H), _chunk(b, gh, 0, 3, H)])])
        z = b.node("Sigmoid", [b.node("Add", [_chunk(b, x, 1, 3, H), _chunk(b, gh, 1, 3, H)])])
        n = b.node("Tanh", [b.node("Add", [_chunk(b, x, 2, 3, H),
                                           b.node("Mul", [r, _chunk(b, gh, 2, 3, H)])])])
        h = b.node("Add", [n, b.node("Mul", [z, b.node("Sub", [h, n])])])
        outs.append(h)
    return [_stack_steps(b, outs, reverse)] + [None] * (len(instr.outs) - 1)


# -- sorting and selection ------------------------------------------------------------------
def _topk(b, x, k, axis, largest):
    return b.node("TopK", [x, b.const(np.array([k], dtype=np.int64))], n_out=2, axis=axis,
                  largest=int(largest), sorted=1)


@register(["sort", "sort.stable", "argsort", "topk"], "TopK")
def _sort(b, instr):
    x = arg(b, instr, 0)
    shape = instr.ins[0].shape
    if not shape:
        zero = b.const(np.zeros((), np.int64))
        return zero if instr.name == "argsort" else [b.node("Identity", [x]), zero]
    axis = int(instr.params["axis"]) % len(shape)
    if instr.name == "topk":
        k, largest = int(instr.params["k"]), instr.params.get("largest", True)
    else:
        k, largest = shape[axis], instr.params.get("descending", False)
    if instr.ins[0].dtype == np.bool_:
        x = b.cast(x, np.bool_, np.int32)
        vals, idx = _topk(b, x, k, axis, largest)
        vals = b.cast(vals, np.int32, np.bool_)
    else:
        vals, idx = _topk(b, x, k, axis, largest)
    if instr.name == "argsort":
        return idx
    return [vals, idx]


@register("kthvalue", "TopK+Slice")
def _kthvalue(b, instr):
    x = arg(b, instr, 0)
    if not instr.ins[0].shape:
        return [b.node("Identity", [x]), b.const(np.zeros(instr.outs[-1].shape, np.int64))]
    axis = int(instr.params["axis"]) % len(instr.ins[0].shape)
    k = int(instr.params["k"])
    vals, idx = _topk(b, x, k, axis, False)
    vals = b.slice(vals, [k - 1], [k], [axis])
    idx = b.slice(idx, [k - 1], [k], [axis])
    if not instr.params.get("keepdim", False):
        vals = b.squeeze(vals, [axis])
    return [vals, idx]


@register(["median", "median.dim"], "TopK+Slice (lower median)")
def _median(b, instr):
    x = arg(b, instr, 0)
    if not instr.ins[0].shape:
        outs = [b.node("Identity", [x]), b.const(np.zeros(instr.outs[-1].shape, np.int64))]
        return outs[0] if instr.name == "median" else outs
    if not np.prod(instr.ins[0].shape):
        raise ExportError("median of an empty tensor (NaN by definition) is not exported")
    if instr.name == "median":
        x = b.reshape(x, [-1])
        axis, n, keep = 0, int(np.prod(instr.ins[0].shape)), False
    else:
        axis = int(instr.params["axis"]) % len(instr.ins[0].shape)
        n, keep = instr.ins[0].shape[axis], instr.params.get("keepdim", False)
    k = (n - 1) // 2 + 1
    vals, idx = _topk(b, x, k, axis, False)
    vals = b.slice(vals, [k - 1], [k], [axis])
    idx = b.slice(idx, [k - 1], [k], [axis])
    if not keep:
        vals = b.squeeze(vals, [axis])
    if np.dtype(_out(instr)).kind == "f":  # NaN wins, as in torch
        nan = b.cast(b.node("IsNaN", [x]), np.bool_, np.int32)
        hit = b.cast(b.reduce("ReduceMax", nan, [axis], keep), np.int32, np.bool_)
        vals = b.node("Where", [hit, b.scalar(np.nan, _out(instr)), vals])
        # ... and its index is the first NaN's
        first = b.node("ArgMax", [nan], axis=axis, keepdims=1, select_last_index=0)
        any_k = b.cast(b.reduce("ReduceMax", nan, [axis], True), np.int32, np.bool_)
        idx = b.node("Where", [any_k, first, idx])
    if instr.name == "median":
        return b.node("Identity", [vals])
    return [vals, idx]


def _dtype_of(x):
    return x.dtype if isinstance(x, Value) else np.asarray(x).dtype


@register("searchsorted", "Less/LessOrEqual+ReduceSum (counts the smaller entries)")
def _searchsorted(b, instr):
    seq = instr.ins[0]
    dt = np.result_type(seq.dtype, _dtype_of(instr.ins[1]))
    s, v = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    sorter = instr.params.get("sorter")
    if sorter is not None:
        s = b.node("GatherElements", [s, b.const(np.asarray(sorter, np.int64))], axis=-1)
    if len(seq.shape) > 1:
        s = b.unsqueeze(s, [-2])
    op = "LessOrEqual" if instr.params.get("right") else "Less"
    hits = b.cast(b.node(op, [s, b.unsqueeze(v, [-1])]), np.bool_, np.int64)
    return b.cast(b.reduce("ReduceSum", hits, [-1], False), np.int64, _out(instr))


@register("isin", "Equal+ReduceMax")
def _isin(b, instr):
    dt = np.result_type(_dtype_of(instr.ins[0]), _dtype_of(instr.ins[1]))
    e, t = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    eq = b.node("Equal", [b.unsqueeze(e, [-1]), b.reshape(t, [-1])])
    n = b.reduce("ReduceSum", b.cast(eq, np.bool_, np.int64), [-1], False)
    hit = b.node("Greater", [n, b.scalar(0, np.int64)])
    return b.node("Not", [hit]) if instr.params.get("invert") else hit





# -- cumulative ops: a lower-triangular mask over the axis (O(n^2) memory) ------------------
def _cumulative(b, instr, fill, reduce_op, arg_op=None):
    """Moves the axis last, masks row i to positions <= i, reduces the last axis."""
    dt = _out(instr)
    x = arg(b, instr, 0, dt)
    shape = instr.ins[0].shape
    if not shape:
        outs = [b.node("Identity", [x])] + [b.const(np.zeros((), np.int64))] * (
            len(instr.outs) - 1)
        return outs
    nd, axis = len(shape), int(instr.params["axis"]) % len(shape)
    n = shape[axis]
    perm = [d for d in range(nd) if d != axis] + [axis]
    inv = list(np.argsort(perm))
    y = b.node("Transpose", [x], perm=perm)
    mask = b.const(np.tril(np.ones((n, n), dtype=bool)))
    rows = b.node("Where", [mask, b.unsqueeze(y, [-2]), b.scalar(fill, dt)])
    vals = reduce_op(rows)
    if arg_op is not None and np.dtype(dt).kind == "f":  # cummax/cummin: NaN from there on
        isnan = b.cast(b.node("IsNaN", [b.unsqueeze(y, [-2])]), np.bool_, np.int32)
        seen = b.reduce("ReduceMax", b.node("Where", [mask, isnan, b.scalar(0, np.int32)]),
                        [-1], False)
        vals = b.node("Where", [b.cast(seen, np.int32, np.bool_), b.scalar(np.nan, dt), vals])
    outs = [b.node("Transpose", [vals], perm=inv)]
    if arg_op is not None and len(instr.outs) > 1:
        if np.dtype(dt).kind == "f":  # a NaN is the extreme: its index is reported
            top = b.scalar(np.inf if arg_op == "ArgMax" else -np.inf, dt)
            rows = b.node("Where", [b.node("IsNaN", [rows]), top, rows])
        idx = b.node(arg_op, [rows], axis=-1, keepdims=0, select_last_index=1)
        outs.append(b.node("Transpose", [idx], perm=inv))
    return outs


@register("cumprod", "Where+ReduceProd over a triangular mask")
def _cumprod(b, instr):
    return _cumulative(b, instr, 1, lambda r: b.reduce("ReduceProd", r, [-1], False))[0]


@register(["cummax", "cummin"], "Where+ReduceMax/ReduceMin+ArgMax/ArgMin over a triangular mask")
def _cummax(b, instr):
    big = instr.name == "cummax"
    fill = -np.inf if big else np.inf
    if np.dtype(_out(instr)).kind != "f":
        info = np.iinfo(_out(instr))
        fill = info.min if big else info.max
    op = "ReduceMax" if big else "ReduceMin"
    return _cumulative(b, instr, fill, lambda r: b.reduce(op, r, [-1], False),
                       "ArgMax" if big else "ArgMin")


@register("logcumsumexp", "Where+ReduceMax+Exp+ReduceSum+Log over a triangular mask")
def _logcumsumexp(b, instr):
    dt = _out(instr)

    def lse(r):
        m = b.reduce("ReduceMax", r, [-1], True)
        m = b.node("Where", [b.node("IsInf", [m]), b.scalar(0.0, dt), m])
        s = b.reduce("ReduceSum", b.node("Exp", [b.node("Sub", [r, m])]), [-1], True)
        return b.squeeze(b.node("Add", [b.node("Log", [s]), m]), [-1])
    return _cumulative(b, instr, -np.inf, lse)[0]
