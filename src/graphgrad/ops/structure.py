"""Structural ops: tril, triu, diag, diagonal, trace, roll, rot90, pad, meshgrid, broadcast_to,
broadcast_tensors, kron.

Most rules are the op itself run with inverted parameters (roll back, rotate back, pad with
the negated widths), so ``_rerun`` calls the op's forward on arrays, or the op through the
dispatcher when the rule must itself be differentiable (Note [Rules namespace]).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor
from . import movement
from ._dispatch import apply, unary
from ._namespace import DIFF, RAW
from ._opdef import defop
from ._util import wrap_dim
from .inplace import _make_inplace


def _rerun(ns, op, x, **params):
    """``op`` applied to ``x`` inside a rule: recorded under DIFF, plain arrays under RAW."""
    if ns.differentiable:
        return unary(op, x, params)
    return op.forward(np, x, **params)


def _movement(name, forward, vjp, node, onnx=None, view=False):
    return defop(name, forward, vjp, kind="movement", dtype_rule="same", node=node, onnx=onnx,
                 view=view)


# -- triangles ------------------------------------------------------------------------------
# np.tril/np.triu act on the last two axes, as torch's do on batches of matrices.
TRIL = _movement("tril", lambda xp, x, diagonal: xp.tril(x, diagonal),
                 lambda ns, g, diagonal: _rerun(ns, TRIL, g, diagonal=diagonal),
                 "TrilBackward0", "Trilu")
TRIU = _movement("triu", lambda xp, x, diagonal: xp.triu(x, diagonal),
                 lambda ns, g, diagonal: _rerun(ns, TRIU, g, diagonal=diagonal),
                 "TriuBackward0", "Trilu")


# -- diagonals ------------------------------------------------------------------------------
def _diagonal_fwd(xp, x, offset, dim1, dim2, in_shape):
    d = xp.diagonal(x, offset, dim1, dim2)
    if x.flags.writeable:
        # NumPy hands out a read-only view; torch's is writable, and so in-place ops through
        # it reach the base (Note [Views])
        d.flags.writeable = True
    return d


def _diagonal_scatter_fwd(xp, g, offset, dim1, dim2, in_shape):
    """A zero array of ``in_shape`` holding ``g`` on the given diagonal."""
    out = xp.zeros(in_shape, dtype=g.dtype)
    d = xp.diagonal(out, offset, dim1, dim2)
    d.flags.writeable = True
    d[...] = g
    return out


def _diagonal_vjp(ns, g, offset, dim1, dim2, in_shape):
    return _rerun(ns, DIAGONAL_SCATTER, g, offset=offset, dim1=dim1, dim2=dim2,
                  in_shape=in_shape)


def _diagonal_of_vjp(ns, g, offset, dim1, dim2, in_shape):
    return _rerun(ns, DIAGONAL, g, offset=offset, dim1=dim1, dim2=dim2,
                  in_shape=ns.raw(g).shape)


DIAGONAL = _movement("diagonal", _diagonal_fwd, _diagonal_vjp, "DiagonalBackward0", view=True)
# torch.diag of a matrix copies its diagonal; of a vector, builds the matrix
DIAG_COPY = _movement("diag.matrix", lambda xp, x, **p: _diagonal_fwd(xp, x, **p).copy(),
                      _diagonal_vjp, "DiagonalBackward0_copy")
DIAG_EMBED = _movement("diag.vector", _diagonal_scatter_fwd, _diagonal_of_vjp,
                       "DiagEmbedBackward0")
# The gradient of a diagonal, as an op, for higher-order graphs.
DIAGONAL_SCATTER = _movement("diagonal_backward", _diagonal_scatter_fwd, _diagonal_of_vjp,
                             "DiagonalBackwardBackward0")


def _trace_fwd(xp, x):
    if x.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return xp.trace(x, dtype=np.int64 if x.dtype.kind in "iu" else None)


def _trace_vjp(ns, g, in_shape):
    eye = np.eye(in_shape[0], in_shape[1], dtype=np.result_type(ns.raw(g)))
    return g * ns.const(eye)


TRACE = defop("trace", lambda xp, x, in_shape: _trace_fwd(xp, x), _trace_vjp, kind="reduction",
              dtype_rule="same", node="TraceBackward0")


# -- roll and rot90 -------------------------------------------------------------------------
def _roll_fwd(xp, x, shifts, axes):
    return xp.roll(x, shifts, axes)


def _roll_vjp(ns, g, shifts, axes):
    back = None if shifts is None else tuple(-s for s in shifts) if axes is not None else -shifts
    return _rerun(ns, ROLL, g, shifts=back, axes=axes)


ROLL = _movement("roll", _roll_fwd, _roll_vjp, "RollBackward0")
ROT90 = _movement("rot90", lambda xp, x, k, axes: xp.rot90(x, k, axes).copy(),
                  lambda ns, g, k, axes: _rerun(ns, ROT90, g, k=-k, axes=axes),
                  "Rot90Backward0")


# -- kron -----------------------------------------------------------------------------------
def _interleave(a, b):
    return tuple(s for pair in zip(a, b) for s in pair)


def _kron_vjp(ns, g, a, b, needs):
    """``kron(a, b)[.., i*nb + j, ..] = a[.., i, ..] * b[.., j, ..]``: seen with every dim split
    in two (a's index, b's index), the output is a broadcast product; sum the other side out."""
    sa, sb = ns.raw(a).shape, ns.raw(b).shape
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + sa
    pb = (1,) * (n - len(sb)) + sb
    g2 = ns.reshape(g, _interleave(pa, pb))
    ga = gb = None
    if needs[0]:
        b2 = ns.reshape(b, _interleave((1,) * n, pb))
        ga = ns.reshape(ns.sum(g2 * b2, tuple(range(1, 2 * n, 2))), sa)
    if needs[1]:
        a2 = ns.reshape(a, _interleave(pa, (1,) * n))
        gb = ns.reshape(ns.sum(g2 * a2, tuple(range(0, 2 * n, 2))), sb)
    return ga, gb


KRON = defop("kron", lambda xp, a, b: xp.kron(a, b), _kron_vjp, kind="contraction",
             save=(0, 1), needs_mask=True, node="UnsafeViewBackward0")


# -- pad ------------------------------------------------------------------------------------
def _constant_pad_fwd(xp, x, widths, value):
    """Pads each dim by ``widths[d] = (before, after)``; negative widths crop."""
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, x.shape))
    x = x[crop]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    out = xp.full(tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, grow)), value,
                  dtype=x.dtype)
    out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape, grow))] = x
    return out


def _constant_pad_vjp(ns, g, widths, value):
    back = tuple((-lo, -hi) for lo, hi in widths)
    return _rerun(ns, CONSTANT_PAD, g, widths=back, value=0)


CONSTANT_PAD = _movement("constant_pad_nd", _constant_pad_fwd, _constant_pad_vjp,
                         "ConstantPadNdBackward0", "Pad")


def _gather_fwd(xp, x, index, in_shape, gather=None):
    """Reflect/replicate/circular padding: along each padded axis, output position ``j`` reads
    input position ``idx[j]``."""
    for axis, idx in index:
        x = x.take(idx, axis=axis)
    return x


def _scatter_fwd(xp, g, index, in_shape, gather=None):
    """The transpose of ``_gather_fwd``: each output gradient is added back to the input
    position it was read from."""
    for axis, idx in reversed(index):
        shape = g.shape[:axis] + (in_shape[axis],) + g.shape[axis + 1:]
        out = xp.zeros(shape, dtype=g.dtype)
        xp.add.at(out, (slice(None),) * axis + (idx,), g)
        g = out
    return g


def _gather_vjp(ns, g, index, in_shape):
    return _rerun(ns, PAD_SCATTER, g, index=index, in_shape=in_shape, gather=_GATHER_FOR_RULES)


def _scatter_vjp(ns, g, index, in_shape, gather):
    return _rerun(ns, gather, g, index=index, in_shape=in_shape)


def _gather_pad(name, node):
    return _movement(name, _gather_fwd, _gather_vjp, node, "Pad")


_GATHER_PADS = {
    ("reflect", 1): _gather_pad("reflection_pad1d", "ReflectionPad1DBackward0"),
    ("reflect", 2): _gather_pad("reflection_pad2d", "ReflectionPad2DBackward0"),
    ("reflect", 3): _gather_pad("reflection_pad3d", "ReflectionPad3DBackward0"),
    ("replicate", 1): _gather_pad("replication_pad1d", "ReplicationPad1DBackward0"),
    ("replicate", 2): _gather_pad("replication_pad2d", "ReplicationPad2DBackward0"),
    ("replicate", 3): _gather_pad("replication_pad3d", "ReplicationPad3DBackward0"),
}
# torch builds circular padding from slice copies, so its grad_fn is CopySlices
CIRCULAR_PAD = _gather_pad("pad.circular", "CopySlices")
# The gradient of a gather pad, as an op, for higher-order graphs; its own rule gathers again.
PAD_SCATTER = _movement("pad_backward", _scatter_fwd, _scatter_vjp, "PadBackwardBackward0")
_GATHER_FOR_RULES = CIRCULAR_PAD


def _pad_index(mode, n, lo, hi):
    """Which input position each output position of a padded axis of size ``n`` reads.

    Reflect and replicate count positions from the uncropped input; circular padding wraps
    around what is left after cropping, as torch's slice copies do."""
    if mode == "circular":
        start, stop = max(-lo, 0), n - max(-hi, 0)
        j = np.arange(-max(lo, 0), stop - start + max(hi, 0))
        return j % (stop - start) + start if j.size else j
    j = np.arange(-lo, n + hi)
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    return np.clip(j, 0, n - 1)


_PAD_COMBINATIONS = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _check_gather_pad(mode, shape, widths, k):
    """torch's checks for reflect/replicate/circular padding of the last ``k`` dims."""
    ndim = len(shape)
    if k > 3 or ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {2 * k} is not supported for {ndim}D input "
                                  f"tensor.\n{_PAD_COMBINATIONS}")
    if mode == "circular":
        for axis in range(ndim - k, ndim):
            (lo, hi), n = widths[axis], shape[axis]
            if lo > n or hi > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            kept = n - max(-lo, 0) - max(-hi, 0)
            if kept < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
            if lo > kept or hi > kept:
                # torch's slice copies would then read the slice they write
                raise RuntimeError("unsupported operation: some elements of the input tensor and "
                                   "the written-to tensor refer to a single memory location. "
                                   "Please clone() the tensor before performing the operation.")
        return
    if any(s == 0 for s in shape[ndim == k + 2:]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{list(shape)}")
    axes = range(ndim - k, ndim)
    out = [shape[a] + sum(widths[a]) for a in axes]
    # torch only refuses when every padded dim would be empty
    if max(out) < 1:
        names = "DHW"[3 - k:]
        sizes = ", ".join(f"{c}: {shape[a]}" for c, a in zip(names, axes))
        got = " ".join(f"{c}: {o}" for c, o in zip(names, out))
        raise RuntimeError(f"input ({sizes}) is too small. Calculated output {got}")
    if min(out) < 0:
        new_shape = list(shape[:ndim - k]) + out
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                           f"{new_shape}")
    for axis in axes:
        (lo, hi), n = widths[axis], shape[axis]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{axis} of input {list(shape)}")


def pad(input, pad, mode="constant", value=None):
    """``torch.nn.functional.pad``: ``pad`` holds (before, after) widths from the last dim
    backwards; negative widths crop."""
    shape = input._data.shape
    pads = tuple(int(p) for p in pad)
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pads) // 2
    if k > len(shape):
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pads)} and input of dimension "
                           f"{len(shape)}")
    widths = [(0, 0)] * len(shape)
    for i in range(k):
        widths[len(shape) - 1 - i] = (pads[2 * i], pads[2 * i + 1])
    if mode == "constant":
        for axis, (lo, hi) in enumerate(widths):
            if shape[axis] + min(lo, 0) + min(hi, 0) < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        return unary(CONSTANT_PAD, input, {"widths": tuple(widths),
                                           "value": 0 if value is None else value})
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if mode != "circular" and input._data.dtype == np.bool_:
        kind = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f"\"{kind}_pad{k}d\" not implemented for 'Bool'")
    _check_gather_pad(mode, shape, widths, k)
    index = tuple((axis, _pad_index(mode, shape[axis], *widths[axis]))
                  for axis in range(len(shape) - k, len(shape)))
    op = CIRCULAR_PAD if mode == "circular" else _GATHER_PADS[mode, k]
    return unary(op, input, {"index": index, "in_shape": shape})


# -- the rules namespaces ----------------------------------------------------------------------
def _extend_rules_namespaces():
    """tril, triu and diagonal for other families' rules (Note [Rules namespace])."""
    funcs = {
        "tril": (np.tril, lambda x, k=0: tril(x, k)),
        "triu": (np.triu, lambda x, k=0: triu(x, k)),
        "diagonal": (np.diagonal, lambda x, offset=0, dim1=0, dim2=1: diagonal(x, offset, dim1,
                                                                              dim2)),
    }
    for name, (raw, diff) in funcs.items():
        if not hasattr(RAW, name):
            setattr(RAW, name, staticmethod(raw))
        if not hasattr(DIFF, name):
            setattr(DIFF, name, staticmethod(diff))


# -- public functions -------------------------------------------------------------------------
def _matrix_arg(name, input):
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(input, diagonal=0):
    """The lower triangle of (each matrix in) ``input``: entries on and below ``diagonal``."""
    _matrix_arg("tril", input)
    return unary(TRIL, input, {"diagonal": int(diagonal)})


def triu(input, diagonal=0):
    _matrix_arg("triu", input)
    return unary(TRIU, input, {"diagonal": int(diagonal)})


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of the ``(dim1, dim2)`` planes, as the last dim."""
    n = input._data.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return unary(DIAGONAL, input, {"offset": int(offset), "dim1": d1, "dim2": d2,
                                   "in_shape": input._data.shape})


def diag(input, diagonal=0):
    """A 1-D input becomes a matrix with it on ``diagonal``; a matrix gives its diagonal."""
    x = input._data
    k = int(diagonal)
    if x.ndim == 1:
        size = x.shape[0] + abs(k)
        return unary(DIAG_EMBED, input, {"offset": k, "dim1": 0, "dim2": 1,
                                         "in_shape": (size, size)})
    if x.ndim == 2:
        return unary(DIAG_COPY, input, {"offset": k, "dim1": 0, "dim2": 1, "in_shape": x.shape})
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


def trace(input):
    """The sum of the main diagonal of a matrix (integers sum to int64)."""
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    return unary(TRACE, input, {"in_shape": input._data.shape})


def _int_tuple(v):
    return tuple(int(s) for s in v) if isinstance(v, (tuple, list)) else (int(v),)


def roll(input, shifts, dims=None):
    """Rolls along ``dims`` (the flattened tensor when None), wrapping around."""
    shifts = _int_tuple(shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    n = input._data.ndim
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:0")
        return unary(ROLL, input, {"shifts": shifts[0], "axes": None})
    dims = _int_tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if n == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    axes = tuple(wrap_dim(d, n) for d in dims)
    return unary(ROLL, input, {"shifts": shifts, "axes": axes})


def rot90(input, k=1, dims=(0, 1)):
    """Rotates by 90 degrees ``k`` times, from the first of ``dims`` towards the second."""
    dims = tuple(dims)
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    axes = (wrap_dim(dims[0], n), wrap_dim(dims[1], n))
    if axes[0] == axes[1]:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return unary(ROT90, input, {"k": int(k) % 4, "axes": axes})


def kron(input, other):
    """The Kronecker product; the operand of lower rank gets leading size-1 dims."""
    return apply(KRON, (input, other))


def broadcast_to(input, size):
    """``input.expand(size)`` (grad_fn ExpandBackward0, as in torch)."""
    return movement.expand(input, size)


def _broadcast_shape(tensors):
    shape = ()
    for t in tensors:
        s = t._data.shape
        try:
            shape = tuple(np.broadcast_shapes(shape, s))
        except ValueError:
            n = max(len(shape), len(s))
            pa, pb = (1,) * (n - len(shape)) + shape, (1,) * (n - len(s)) + s
            dim = next(i for i in range(n) if pa[i] != pb[i] and 1 not in (pa[i], pb[i]))
            raise RuntimeError(f"The size of tensor a ({pa[dim]}) must match the size of tensor "
                               f"b ({pb[dim]}) at non-singleton dimension {dim}") from None
    return shape


def _tensor_list(name, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return tensors


def broadcast_tensors(*tensors):
    """Each tensor expanded to the common broadcast shape (itself when it already has it)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    shape = _broadcast_shape(tensors)
    return tuple(t if t._data.shape == shape else movement.expand(t, shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: output ``i`` varies along dim ``i`` (``'ij'``) or, for the first two,
    along the swapped dims (``'xy'``, Cartesian)."""
    tensors = _tensor_list("meshgrid", tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got a tensor of shape {list(t._data.shape)}")
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        order[0], order[1] = 1, 0
    shape = tuple(tensors[i]._data.size for i in order)
    grids = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[order.index(i)] = -1
        grids.append(movement.expand(movement.reshape(t, *view), shape))
    return tuple(grids)


_extend_rules_namespaces()

__all__ = ["tril", "triu", "diag", "diagonal", "trace", "roll", "rot90", "kron", "broadcast_to",
           "broadcast_tensors", "meshgrid"]

for _name in ("tril", "triu", "diag", "diagonal", "trace", "roll", "rot90", "kron",
              "broadcast_to"):
    setattr(Tensor, _name, globals()[_name])
# tril_/triu_ save nothing (their rule masks the gradient), so no snapshot of the old value
Tensor.tril_ = _make_inplace("tril_", tril, False)
Tensor.triu_ = _make_inplace("triu_", triu, False)
