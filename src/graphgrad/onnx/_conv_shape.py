"""Converters of the movement, indexing and creation ops.

Views that keep every axis's extent symbolic (reshape, transpose, expand, basic slicing) map
to ONNX ops fed by shape tensors, so a dynamic batch stays dynamic. Selections whose pattern
is fixed at capture time (advanced indexing, gather with a baked index, diagonal, roll) use
Note [Index maps]: the op's own forward, run on ``arange`` over the input's positions, says
which input element each output element reads; one ONNX Gather replays that map.
"""

from __future__ import annotations

import numpy as np

from ..compiler.ir import Value
from .builder import INT64_MAX, INT64_MIN, ExportError
from .ops import arg, register


def _out(instr):
    return instr.outs[0].dtype


# -- Note [Index maps] ----------------------------------------------------------------------
def _index_map(instr, sources):
    """Runs the instr's forward with input ``i`` of ``sources`` replaced by its flat positions
    (offset so that every source has its own range); returns the output's positions."""
    args, offset = list(instr.ins), 0
    for i in sources:
        v = instr.ins[i]
        n = int(np.prod(v.shape, dtype=np.int64))
        args[i] = np.arange(offset, offset + n, dtype=np.int64).reshape(v.shape)
        offset += n
    for i, x in enumerate(args):
        if isinstance(x, Value):
            raise ExportError(f"{instr.name}: input {i} is computed, not a fixed pattern")
    out = instr.op.forward(np, *args, **instr.params)
    if isinstance(out, tuple):
        out = out[0]
    return np.asarray(out)


def _gather_map(b, instr, sources=(0,)):
    """Output = concat(flat sources)[index map]."""
    idx = _index_map(instr, sources)
    flat = [b.reshape(b.x(instr.ins[i]), [-1]) for i in sources]
    src = flat[0] if len(flat) == 1 else b.node("Concat", flat, axis=0)
    return b.node("Gather", [src, b.const(idx.astype(np.int64))], axis=0)


def _map_converter(sources=(0,)):
    def convert(b, instr):
        return _gather_map(b, instr, sources)
    return convert


register(["index", "gather", "take", "index_select", "masked_select", "diagonal",
          "diag.matrix", "rot90", "roll"], "Gather (index map)")(_map_converter())


@register("trace", "Gather+ReduceSum (index map)")
def _trace(b, instr):
    n = min(instr.ins[0].shape[:2]) if instr.ins[0].shape else 0
    idx = np.arange(n) * (instr.ins[0].shape[1] + 1)
    flat = b.reshape(b.x(instr.ins[0]), [-1])
    return b.reduce("ReduceSum", b.gather(flat, idx, 0), None, False)


@register(["scatter.src", "index_copy", "masked_scatter"], "Gather (index map)")
def _scatter_src(b, instr):
    return _gather_map(b, instr, (0, 1))


@register(["scatter.value", "index_fill.int_Scalar", "masked_fill.Scalar"], "Where (index map)")
def _fill_map(b, instr):
    # Which output elements were filled: run the forward with x = positions, fill = -1.
    args = list(instr.ins)
    x = instr.ins[0]
    n = int(np.prod(x.shape, dtype=np.int64))
    args[0] = np.arange(n, dtype=np.int64).reshape(x.shape)
    params = dict(instr.params)
    for k in ("value", "fill"):
        if k in params and np.ndim(params[k]) == 0:
            params[k] = -1
    for i, a in enumerate(args[1:], 1):
        if isinstance(a, Value):
            raise ExportError(f"{instr.name}: a fill value computed in the graph")
        if np.ndim(a) == 0 and isinstance(a, (int, float, np.ndarray, np.generic)):
            args[i] = -1
    out = np.asarray(instr.op.forward(np, *args, **params))
    value = instr.params.get("value", instr.params.get("fill"))
    if value is None:
        value = next(a for a in instr.ins[1:] if isinstance(a, (int, float)))
    mask = b.const(out < 0)
    return b.node("Where", [mask, b.scalar(value, _out(instr)), b.x(x)])


@register(["masked_fill.Tensor", "index_fill.int_Tensor"], "Where (index map)")
def _fill_tensor(b, instr):
    x, v = instr.ins[0], instr.ins[1]
    n = int(np.prod(x.shape, dtype=np.int64))
    args = [np.arange(n, dtype=np.int64).reshape(x.shape), np.asarray(-1, dtype=np.int64)]
    args += list(instr.ins[2:])
    out = np.asarray(instr.op.forward(np, *args, **instr.params))
    val = b.cast(b.x(v), v.dtype, _out(instr))
    return b.node("Where", [b.const(out < 0), val, b.x(x)])


# -- reshapes and transposes --------------------------------------------------------------
@register(["view", "reshape.copy", "squeeze", "squeeze.dim", "squeeze.dims", "unsqueeze"],
          "Reshape")
def _reshape(b, instr):
    shape = instr.params["shape"]
    if any(int(s) == 0 for s in shape):  # a size-0 axis, not ONNX's "copy this axis"
        return b.node("Reshape", [arg(b, instr, 0), b.i64(shape)], allowzero=1)
    return b.reshape(arg(b, instr, 0), shape)


@register(["permute", "transpose", "t"], "Transpose")
def _transpose(b, instr):
    axes = instr.params.get("axes")
    if len(instr.ins[0].shape) < 2:
        return b.node("Identity", [arg(b, instr, 0)])
    return b.node("Transpose", [arg(b, instr, 0)],
                  perm=None if axes is None else [int(a) for a in axes])


@register("expand", "Expand")
def _expand(b, instr):
    return b.node("Expand", [arg(b, instr, 0), b.i64(instr.params["shape"])])


@register("repeat", "Tile")
def _repeat(b, instr):
    x = arg(b, instr, 0)
    reps = list(instr.params["reps"])
    extra = len(reps) - len(instr.ins[0].shape)
    if extra > 0:
        x = b.unsqueeze(x, list(range(extra)))
    return b.node("Tile", [x, b.i64(reps)])


@register("cat", "Concat")
def _cat(b, instr):
    axis = int(instr.params["axis"])
    ins = [b.cast(b.x(v), v.dtype, _out(instr)) for v in instr.ins
           if isinstance(v, Value) and not (v.shape == (0,) and len(instr.outs[0].shape) > 1)]
    return b.node("Concat", ins, axis=axis) if len(ins) > 1 else b.node("Identity", ins)


@register("stack", "Unsqueeze+Concat")
def _stack(b, instr):
    axis = int(instr.params["axis"])
    ins = [b.unsqueeze(b.cast(b.x(v), v.dtype, _out(instr)), [axis]) for v in instr.ins
           if isinstance(v, Value)]
    return b.node("Concat", ins, axis=axis) if len(ins) > 1 else b.node("Identity", ins)


# -- basic indexing: ints, slices, None, Ellipsis --------------------------------------------
@register(["select", "slice", "alias", "split", "split_with_sizes", "unbind",
           "getitem.unsqueeze"], "Slice+Squeeze+Unsqueeze")
def _basic_index(b, instr):
    x = arg(b, instr, 0)
    key = instr.params["key"]
    key = key if isinstance(key, tuple) else (key,)
    ndim = len(instr.ins[0].shape)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    expanded = []
    for k in key:
        if k is Ellipsis:
            expanded += [slice(None)] * (ndim - n_real)
        else:
            expanded.append(k)
    expanded += [slice(None)] * (ndim - sum(1 for k in expanded if k is not None))
    starts, ends, axes, steps, drop, new = [], [], [], [], [], []
    axis = 0
    out_axis = 0
    for k in expanded:
        if k is None:
            new.append(out_axis)
            out_axis += 1
            continue
        if isinstance(k, slice):
            step = 1 if k.step is None else int(k.step)
            start = k.start if k.start is not None else (0 if step > 0 else INT64_MAX)
            stop = k.stop if k.stop is not None else (INT64_MAX if step > 0 else INT64_MIN)
            if not (k.start in (None, 0) and k.stop is None and step == 1):
                starts.append(start)
                ends.append(stop)
                axes.append(axis)
                steps.append(step)
            out_axis += 1
        else:
            i = int(k)
            starts.append(i)
            ends.append(i + 1 if i != -1 else INT64_MAX)
            axes.append(axis)
            steps.append(1)
            drop.append(axis)
        axis += 1
    if axes:
        x = b.slice(x, starts, ends, axes, steps)
    if drop:
        x = b.squeeze(x, drop)
    if new:
        x = b.unsqueeze(x, new)
    return x if (axes or drop or new) else b.node("Identity", [x])


@register("flip", "Slice (step -1)")
def _flip(b, instr):
    axes = [int(a) for a in instr.params["axes"]]
    n = len(axes)
    return b.slice(arg(b, instr, 0), [-1] * n, [INT64_MIN] * n, axes, [-1] * n)


@register(["tril", "triu"], "Trilu", 14)
def _trilu(b, instr):
    k = b.const(np.array(int(instr.params.get("diagonal", 0)), dtype=np.int64))
    return b.node("Trilu", [arg(b, instr, 0), k], upper=int(instr.name == "triu"))


@register("constant_pad_nd", "Pad")
def _constant_pad(b, instr):
    widths = instr.params["widths"]
    if not widths:
        return b.node("Identity", [arg(b, instr, 0)])
    pads = [int(lo) for lo, _ in widths] + [int(hi) for _, hi in widths]
    value = b.scalar(instr.params.get("value", 0), _out(instr))
    return b.node("Pad", [arg(b, instr, 0), b.i64(pads), value], mode="constant")


@register(["reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d",
           "replication_pad2d", "replication_pad3d", "pad.circular"], "Gather (per padded axis)")
def _gather_pad(b, instr):
    x = arg(b, instr, 0)
    for axis, idx in instr.params["index"]:
        x = b.gather(x, np.asarray(idx), axis)
    return x


@register("kron", "Unsqueeze+Mul+Reshape")
def _kron(b, instr):
    a, c = instr.ins[0], instr.ins[1]
    n = max(len(a.shape), len(c.shape))
    sa = (1,) * (n - len(a.shape)) + a.shape
    sc = (1,) * (n - len(c.shape)) + c.shape
    xa = b.reshape(b.cast(b.x(a), a.dtype, _out(instr)), [d for s in sa for d in (s, 1)])
    xc = b.reshape(b.cast(b.x(c), c.dtype, _out(instr)), [d for s in sc for d in (1, s)])
    return b.reshape(b.node("Mul", [xa, xc]), [p * q for p, q in zip(sa, sc)])


@register("block_diag", "Pad+Concat")
def _block_diag(b, instr):
    rows = []
    width = instr.params["shape"][1]
    for v, (_r0, c0, h, w) in zip([v for v in instr.ins if isinstance(v, Value)],
                                 instr.params["blocks"]):
        x = b.reshape(b.cast(b.x(v), v.dtype, _out(instr)), [h, w])
        pads = b.i64([0, c0, 0, width - c0 - w])
        rows.append(b.node("Pad", [x, pads, b.scalar(0, _out(instr))], mode="constant"))
    return b.node("Concat", rows, axis=0) if len(rows) > 1 else rows[0]


@register("linalg_cross", "Gather+Mul+Sub")
def _cross(b, instr):
    dt = _out(instr)
    axis = int(instr.params["axis"])
    a, c = arg(b, instr, 0, dt), arg(b, instr, 1, dt)

    def g(x, idx):
        return b.gather(x, idx, axis)
    return b.node("Sub", [b.node("Mul", [g(a, [1, 2, 0]), g(c, [2, 0, 1])]),
                          b.node("Mul", [g(a, [2, 0, 1]), g(c, [1, 2, 0])])])


# -- creation and writes -----------------------------------------------------------------
@register(["zero", "fill"], "Expand")
def _fill(b, instr):
    x = instr.ins[0]
    value = b.scalar(np.asarray(instr.params.get("values", 0)).astype(x.dtype), x.dtype)
    return b.node("Expand", [value, b.shape_of(b.x(x))])


@register(["fill.Tensor", "copy"], "Cast+Expand")
def _copy(b, instr):
    x, src = instr.ins[0], instr.ins[1]
    v = b.cast(b.x(src), src.dtype, x.dtype) if isinstance(src, Value) else b.scalar(src, x.dtype)
    return b.node("Expand", [v, b.shape_of(b.x(x))])


@register("one_hot", "Unsqueeze+Equal+Cast")
def _one_hot(b, instr):
    n = int(instr.params["num_classes"])
    x = b.unsqueeze(arg(b, instr, 0), [-1])
    eq = b.node("Equal", [x, b.const(np.arange(n, dtype=np.int64))])
    return b.cast(eq, np.bool_, _out(instr))


@register("embedding", "Gather")
def _embedding(b, instr):
    return b.node("Gather", [arg(b, instr, 0), arg(b, instr, 1)], axis=0)


@register("index_put", "Gather/ScatterND (index map)")
def _index_put(b, instr):
    if instr.params.get("accumulate"):
        raise ExportError("index_put with accumulate=True has no fixed-pattern mapping")
    return _gather_map(b, instr, (0, 1))


@register(["diag.vector", "diagonal_backward"], "Concat+Gather (index map into zeros)")
def _place(b, instr):
    # The forward writes its input into zeros: run it on positions 1..n, 0 stays "zero".
    g = instr.ins[0]
    n = int(np.prod(g.shape, dtype=np.int64))
    pos = np.arange(1, n + 1, dtype=np.int64).reshape(g.shape)
    idx = np.asarray(instr.op.forward(np, pos, *instr.ins[1:], **instr.params))
    src = b.node("Concat", [b.const(np.zeros(1, dtype=_out(instr))),
                            b.reshape(b.x(g), [-1])], axis=0)
    return b.node("Gather", [src, b.const(idx.astype(np.int64))], axis=0)
