"""Shape ops beyond movement.py: movedim, ravel, atleast_nd, column/depth stacking, tensor_split
and its h/v/d forms, fliplr/flipud, diag_embed/diagflat, the *_scatter ops, sliding windows
(``Tensor.unfold``), ``as_strided``, index arithmetic (tril/triu_indices, unravel_index),
vander, and the in-place metadata changes (``t_``, ``transpose_``, ``squeeze_``...).

Composites of movement.py's differentiable ops where torch's gradient is the composite's;
``unfold`` and ``as_strided`` are view records whose rules scatter-add into the input.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from . import elementwise as E
from . import movement as M
from ._dispatch import unary
from ._opdef import defop
from ._util import shape_arg, wrap_dim

__all__ = ["movedim", "moveaxis", "ravel", "atleast_1d", "atleast_2d", "atleast_3d",
           "column_stack", "dstack", "row_stack", "tensor_split", "hsplit", "vsplit", "dsplit",
           "split_with_sizes", "fliplr", "flipud", "diag_embed", "diagflat", "diagonal_scatter",
           "select_scatter", "slice_scatter", "narrow_copy", "unsafe_chunk", "unsafe_split",
           "as_strided", "index_put", "index_put_", "put", "tril_indices", "triu_indices",
           "unravel_index", "vander"]


def _const(a):
    return wrap(np.asarray(a), False, None)


def _dims(d, ndim, name):
    items = (d,) if isinstance(d, int) else tuple(d)
    return tuple(wrap_dim(i, ndim) for i in items)


# -- movedim / ravel / atleast -------------------------------------------------------------------
def movedim(input, source, destination):
    """Moves the dims ``source`` to the positions ``destination``; the rest keep their order."""
    nd = input._data.ndim
    src, dst = _dims(source, nd, "source"), _dims(destination, nd, "destination")
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if nd == 0:
        return M.permute(input, ())
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    perm = tuple(o if o is not None else next(rest) for o in order)
    return M.permute(input, perm)


moveaxis = movedim


def ravel(input):
    """The elements as a 1-D tensor (a view when the input is contiguous)."""
    return M.reshape(input, -1)


def _atleast(nd, tensors):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    items = tensors[0] if len(tensors) == 1 and not single else tensors
    out = []
    for t in items:
        s = t._data.shape
        if len(s) >= nd:
            out.append(t)
        elif nd == 3 and len(s) == 2:
            out.append(M.reshape(t, s + (1,)))
        elif nd == 3 and len(s) == 1:
            out.append(M.reshape(t, (1,) + s + (1,)))
        else:
            out.append(M.reshape(t, (1,) * (nd - len(s)) + s))
    return out[0] if single else tuple(out)


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


def column_stack(tensors):
    """Stacks 0-d and 1-d tensors as columns, others along dim 1."""
    cols = [M.reshape(t, (-1, 1)) if t._data.ndim <= 1 else t
            for t in M._tensors_arg(tensors, "column_stack")]
    return M.hstack(cols)


def dstack(tensors):
    """Concatenates along the third dim after ``atleast_3d``."""
    items = M._tensors_arg(tensors, "dstack")
    return M.cat(list(_atleast(3, (items,))), 2)


row_stack = M.vstack


# -- splitting ----------------------------------------------------------------------------------
def tensor_split(input, indices_or_sections, dim=0):
    """Splits into ``sections`` nearly equal parts (the first ``n % sections`` one longer), or at
    the given indices; the parts are views."""
    x = input._data
    if x.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, x.ndim)
    n = x.shape[d]
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        a = arg._data
        if a.dtype.kind not in "iu":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have "
                               f"integer dtype, but got {arg.dtype}")
        if a.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {a.ndim} dims")
        arg = int(a) if a.ndim == 0 else [int(i) for i in a]
    if isinstance(arg, int):
        if arg <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {arg}")
        q, r = divmod(n, arg)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (arg - r))
        pairs = zip(bounds[:-1].tolist(), bounds[1:].tolist())
    else:
        cuts = [int(i) for i in arg]
        pairs = zip([0] + cuts, cuts + [None])
    pre = (slice(None),) * d
    return tuple(M.getitem(input, pre + (slice(a, b),)) for a, b in pairs)


def _directional_split(input, arg, dim, name, min_dims):
    x = input._data
    if x.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {x.ndim} dimensions!")
    if isinstance(arg, int) and not isinstance(arg, bool):
        size = x.shape[dim]
        if arg == 0 or size % arg:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the "
                               f"split_size {arg}!")
    return tensor_split(input, arg, dim)


def hsplit(input, indices_or_sections):
    """Splits along dim 1 (dim 0 for a 1-d tensor)."""
    dim = 0 if input._data.ndim == 1 else 1
    return _directional_split(input, indices_or_sections, dim, "hsplit", 1)


def vsplit(input, indices_or_sections):
    return _directional_split(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    return _directional_split(input, indices_or_sections, 2, "dsplit", 3)


def split_with_sizes(input, split_sizes, dim=0):
    return M.split(input, list(split_sizes), dim)


def _unmark(parts):
    """unsafe_split/unsafe_chunk: the parts may be modified in place (no multi-view check)."""
    for t in parts:
        if t._view is not None and type(t._view[2]) is tuple:
            t._view[2] = None
    return parts


def unsafe_split(input, split_size, dim=0):
    return _unmark(M.split(input, split_size, dim))


def unsafe_chunk(input, chunks, dim=0):
    return _unmark(M.chunk(input, chunks, dim))


def narrow_copy(input, dim, start, length):
    return M.clone(M.narrow(input, dim, start, length))


# -- flips and diagonals ------------------------------------------------------------------------
def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return M.flip(input, 1)


def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return M.flip(input, 0)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Tensors whose (``dim1``, ``dim2``) diagonals at ``offset`` hold the last dim of
    ``input``; zeros elsewhere."""
    from .structure import pad

    x = input._data
    nd = x.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = x.shape[-1] if x.ndim else 1
    v = input if x.ndim else M.reshape(input, (1,))
    eye = _const(np.eye(n, dtype=bool))
    mat = E.where(eye, M.unsqueeze(v, -1), _const(np.zeros((), x.dtype)))
    k = abs(offset)
    if k:
        mat = pad(mat, (k, 0, 0, k) if offset > 0 else (0, k, k, 0))
    # the new dims are last; move them to d1 < d2 (swapped when dim1 > dim2)
    lo, hi = (d1, d2) if d1 < d2 else (d2, d1)
    src = (nd - 2, nd - 1) if d1 < d2 else (nd - 1, nd - 2)
    return movedim(mat, src, (lo, hi))


def diagflat(input, offset=0):
    """A 2-d tensor with the flattened input on diagonal ``offset``."""
    from .structure import diag

    return diag(M.reshape(input, -1), offset)


def _scatter_into(input, src, view_of, name):
    """A copy of ``input`` with the region ``view_of(copy)`` replaced by ``src``."""
    out = M.clone(input)
    region = view_of(out)
    if region._data.shape != src._data.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src._data.shape)}, slice size = "
                           f"{list(region._data.shape)}")
    region.copy_(src)
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2), "diagonal")


def select_scatter(input, src, dim, index):
    return _scatter_into(input, src, lambda t: M.select(t, dim, index), "select")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, input._data.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: M.getitem(t, key), "slice")


# -- sliding windows: Tensor.unfold -------------------------------------------------------------
def _unfold_fwd(xp, x, axis, size, step, in_shape):
    if x.ndim == 0:
        return x.reshape(1)
    count = (x.shape[axis] - size) // step + 1
    st = x.strides
    shape = x.shape[:axis] + (count,) + x.shape[axis + 1:] + (size,)
    strides = st[:axis] + (st[axis] * step,) + st[axis + 1:] + (st[axis],)
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable)


def _unfold_vjp(ns, g, axis, size, step, in_shape):
    """Overlapping windows add their gradients into the input positions they cover."""
    if not in_shape:
        return ns.reshape(g, ())
    nd = len(in_shape)
    count = (in_shape[axis] - size) // step + 1
    if not ns.differentiable:
        out = np.zeros(in_shape, dtype=g.dtype)
        gm = np.moveaxis(g, -1, axis + 1)  # (..., count, size, ...)
        pre = (slice(None),) * axis
        for k in range(size):
            out[pre + (slice(k, k + step * (count - 1) + 1, step),)] += gm[pre + (slice(None), k)]
        return out
    idx = np.arange(count)[:, None] * step + np.arange(size)
    perm = tuple(range(axis + 1)) + (nd,) + tuple(range(axis + 1, nd))
    return ns.index_put_grad(ns.permute(g, perm), in_shape, (slice(None),) * axis + (idx,))


UNFOLD = defop("unfold", _unfold_fwd, _unfold_vjp, kind="movement", dtype_rule="same",
               node="UnfoldBackward0", view=True)


def unfold(self, dimension, size, step):
    """Sliding windows of ``size`` elements every ``step`` along ``dimension``, as a new last
    dim (a view)."""
    x = self._data
    axis = wrap_dim(dimension, x.ndim)
    n = x.shape[axis] if x.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {axis} is {n} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return unary(UNFOLD, self, {"axis": axis, "size": int(size), "step": int(step),
                                "in_shape": x.shape})


# -- as_strided ---------------------------------------------------------------------------------
def _storage(a):
    """The array owning ``a``'s memory and ``a``'s offset into it, in elements."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root, (a.ctypes.data - root.ctypes.data) // a.itemsize


def _positions(shape, strides, offset):
    pos = np.full((), offset, dtype=np.int64)
    for n, s in zip(shape, strides):
        pos = pos[..., None] + np.arange(n, dtype=np.int64) * s
    return pos


def _as_strided_fwd(xp, x, size, stride, offset, in_pos, out_pos, length):
    root, _ = _storage(x)
    flat = np.lib.stride_tricks.as_strided(root, (length,), (x.itemsize,),
                                           writeable=x.flags.writeable)
    s = tuple(st * x.itemsize for st in stride)
    return np.lib.stride_tricks.as_strided(flat[offset:], size, s, writeable=x.flags.writeable)


def _as_strided_vjp(ns, g, size, stride, offset, in_pos, out_pos, length):
    """torch's rule: the output's gradient is summed per storage element, then read back at
    the input's elements."""
    storage = ns.index_put_grad(g, (length,), (out_pos,))
    return ns.getitem(storage, (in_pos,))


AS_STRIDED_CALL = defop("as_strided.default", _as_strided_fwd, _as_strided_vjp, kind="movement",
                        dtype_rule="same", node="AsStridedBackward0", view=True)


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given sizes, strides (in elements) and offset."""
    x = input._data
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    root, own = _storage(x)
    offset = own if storage_offset is None else int(storage_offset)
    length = root.nbytes // x.itemsize
    need = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    if need > length or offset < 0:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {x.itemsize} requiring a storage size "
                           f"of {need * x.itemsize} are out of bounds for storage of size "
                           f"{length * x.itemsize}")
    in_pos = _positions(x.shape, tuple(s // x.itemsize for s in x.strides), own)
    return unary(AS_STRIDED_CALL, input, {
        "size": size, "stride": stride, "offset": offset, "in_pos": in_pos,
        "out_pos": _positions(size, stride, offset), "length": length})


def storage_offset(self):
    return _storage(self._data)[1]


# -- indexed writes as functions: index_put, put, fill_diagonal_ ----------------------------------
def index_put(input, indices, values, accumulate=False):
    return input.index_put(indices, values, accumulate)


def index_put_(input, indices, values, accumulate=False):
    return input.index_put_(indices, values, accumulate)


def _flat_key(self, index, name):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{getattr(index, 'dtype', type(index).__name__)}")
    n = self._data.size
    idx = index._data.reshape(-1)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad][0])} on a tensor "
                         f"of {n} elements.")
    return tuple(_const(i) for i in np.unravel_index(np.where(idx < 0, idx + n, idx),
                                                      self._data.shape))


def put_(self, index, source, accumulate=False):
    """Writes ``source`` at the flat positions ``index`` (row-major)."""
    if index._data.size != source._data.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source._data.size}, "
                           f"index.numel() = {index._data.size}")
    if self._data.dtype != source._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {self.dtype} and source.dtype = {source.dtype}")
    key = _flat_key(self, index, "put_")
    return self.index_put_(key, M.reshape(source, -1), accumulate)


def put(input, index, source, accumulate=False):
    return put_(M.clone(input), index, source, accumulate)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal (all dims equal past 2-d); ``wrap`` continues a tall matrix's
    diagonal every ``cols + 1`` rows, as NumPy."""
    s = self._data.shape
    if len(s) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(s) > 2 and len(set(s)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if len(s) == 2:
        step = s[1] + 1
        end = self._data.size if wrap or s[0] <= s[1] else s[1] * s[1]
    else:
        step = 1 + int(np.sum(np.cumprod(s[:-1])))
        end = self._data.size
    flat = np.arange(0, end, step)
    key = tuple(_const(i) for i in np.unravel_index(flat, s))
    value = fill_value if isinstance(fill_value, Tensor) else _const(
        np.asarray(fill_value).astype(self._data.dtype))
    return self.index_put_(key, value.to(self.dtype))


# -- index arithmetic and vander -----------------------------------------------------------------
def _triangle_indices(fn, row, col, offset, dtype):
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    if dt.np.kind not in "iu":
        names = {"float32": "Float", "float64": "Double", "float16": "Half", "bool": "Bool"}
        raise NotImplementedError(f"\"{fn.__name__}\" not implemented for "
                                  f"'{names.get(dt.np.name, dt.np.name)}'")
    r, c = fn(row, offset, col)
    return _const(np.stack([r, c]).astype(dt.np).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, col) coordinates of the lower triangle of a ``row x col`` matrix."""
    return _triangle_indices(np.tril_indices, row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices(np.triu_indices, row, col, offset, dtype)


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in ``shape``, one tensor per dim."""
    if not isinstance(indices, Tensor):
        indices = _const(np.asarray(indices))
    a = indices._data
    if a.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = shape_arg((shape,)) if not isinstance(shape, int) else (shape,)
    if any(s < 0 for s in shape):
        raise RuntimeError("'shape' cannot have negative values, but got "
                           f"{tuple(shape)}")
    # torch wraps every coordinate (floor modulo), so out-of-range indices do not raise
    out, rest = [], a.astype(np.int64)
    for size in reversed(shape):
        out.append(np.mod(rest, size) if size else rest * 0)
        rest = np.floor_divide(rest, size) if size else rest
    return tuple(_const(c) for c in reversed(out))


def vander(x, N=None, increasing=False):
    """Columns are powers of ``x`` (decreasing by default), built by cumprod as torch."""
    from .sorting import cumprod

    a = x._data
    if a.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = a.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if a.dtype.kind in "biu":
        x = x.to(_dtype.int64)
    if n <= 1:  # no power of x: a constant, as torch's (no history)
        return _const(np.ones((a.shape[0], n), x._data.dtype))
    ones = _const(np.ones((a.shape[0], 1), x._data.dtype))
    cols = M.cat([ones, M.expand(M.unsqueeze(x, 1), (a.shape[0], n - 1))], 1)
    out = cumprod(cols, 1)
    return out if increasing else M.flip(out, 1)


# -- in-place metadata changes ------------------------------------------------------------------
def _metadata_inplace(name, fn):
    def method(self, *args, **kwargs):
        from .inplace import _check_target, _recording

        _check_target(self, name, _recording(self))
        out = fn(self, *args, **kwargs)
        self._data = out._data
        if out._fn is not None:
            self._fn = out._fn
        if self._view is not None and out._view is not None:
            self._view = out._view
        return self
    method.__name__ = name
    return method


def _bind():
    T = Tensor
    for name in ("movedim", "moveaxis", "ravel", "tensor_split", "hsplit", "vsplit", "dsplit",
                 "split_with_sizes", "fliplr", "flipud", "diag_embed", "diagflat",
                 "diagonal_scatter", "select_scatter", "slice_scatter", "narrow_copy",
                 "unsafe_chunk", "unsafe_split", "as_strided", "put"):
        setattr(T, name, globals()[name])
    T.unfold = unfold
    T.put_ = put_
    T.fill_diagonal_ = fill_diagonal_
    T.storage_offset = storage_offset
    for name, fn in (("t_", M.t), ("transpose_", M.transpose), ("swapaxes_", M.transpose),
                     ("swapdims_", M.transpose), ("squeeze_", M.squeeze),
                     ("unsqueeze_", M.unsqueeze)):
        setattr(T, name, _metadata_inplace(name, fn))


_bind()
