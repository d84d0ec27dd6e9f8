"""Gather/scatter family: gather, scatter, scatter_add, index_select, index_add, masked_fill,
masked_select, take, take_along_dim and one_hot. (One-argument ``where(cond)`` is
``elementwise.where``, which hands it to ``nonzero``.)

Note [Index keys]: every op here that reads through an index tensor reads
``x.reshape(view)[key]``, for a NumPy key built once from the index (an open mesh of aranges
around the index for gather, a slice-then-array key for index_select, flat positions for take)
and kept in an ``IndexPlan``. So one pair of rules serves them all: the gradient of a read is
``g`` scatter-added into zeros at the key (``ns.index_put_grad``; repeated indices
accumulate), and the gradient of that is the read again. ``view`` makes a 0-d input 1-d (or
flattens it, for take); the writes (scatter, index_add) use the same keys. Index arrays travel
as params, so torch's ``next_functions`` (which never list the index) come out the same.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._dispatch import apply, unary
from ._namespace import RAW
from ._opdef import defop
from ._util import wrap_dim

__all__ = ["gather", "scatter", "scatter_add", "index_select", "index_add", "masked_fill",
           "masked_select", "take", "take_along_dim"]


# -- index plans (Note [Index keys]) ----------------------------------------------------------
def _fit(ns, t, shape):
    """``t`` reshaped to ``shape``, recording nothing when it already has that shape."""
    return t if ns.raw(t).shape == shape else ns.reshape(t, shape)


class IndexPlan:
    """Where a key points: ``key`` indexes an input of shape ``in_shape`` reshaped to ``view``
    and reads an array of ``read_shape``, which the op returns as ``out_shape``."""

    __slots__ = ("key", "view", "read_shape", "in_shape", "out_shape")

    def __init__(self, key, view, read_shape, in_shape, out_shape=None):
        self.key = key
        self.view = view
        self.read_shape = read_shape
        self.in_shape = in_shape
        self.out_shape = read_shape if out_shape is None else out_shape

    def read(self, ns, x):
        return _fit(ns, ns.getitem(_fit(ns, x, self.view), self.key), self.out_shape)

    def read_grad(self, ns, g):
        """The gradient of ``read``: ``g`` added into zeros of the input's shape at the key."""
        g = _fit(ns, g, self.read_shape)
        return _fit(ns, ns.index_put_grad(g, self.view, self.key), self.in_shape)

    def written(self):
        """The positions the key addresses, as a bool array of the input's shape."""
        mask = np.zeros(self.view, dtype=bool)
        mask[self.key] = True
        return mask.reshape(self.in_shape)


def along_dim_key(index, axis):
    """The key that reads ``x[..., index[p], ...]`` (``index[p]`` at ``axis``) at each position
    ``p`` of ``index``: the index itself there, broadcast aranges on the other dims."""
    n = index.ndim
    return tuple(index if k == axis else np.arange(s).reshape((s,) + (1,) * (n - 1 - k))
                 for k, s in enumerate(index.shape))


def _along_dim_plan(idx, axis, in_shape):
    view = in_shape or (1,)
    if idx.size == 0:  # torch skips the rank checks for an empty index; keep the key's rank
        key_index = np.zeros((0,) * len(view), np.int64)
    else:
        key_index = idx.reshape(idx.shape or (1,))
    return IndexPlan(along_dim_key(key_index, axis), view, key_index.shape, in_shape, idx.shape)


def _region_plan(read_shape, shape):
    """The leading ``read_shape`` block of an array of ``shape`` (scatter's used part of src)."""
    view = shape or (1,)
    if 0 in read_shape:
        read_shape = (0,) * len(view)
    return IndexPlan(tuple(slice(0, s) for s in read_shape), view, read_shape, shape)


# -- argument checks (torch's messages and exception types) -------------------------------------
def _index_array(index, name, long_only=False, arg="index"):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype != np.int64 and (long_only or a.dtype != np.int32):
        wanted = "int64" if long_only else "int32/int64"
        raise RuntimeError(f"{name}(): Expected dtype {wanted} for {arg}, but got "
                           f"{_dtype.from_numpy_dtype(a.dtype)}")
    return a


def _check_bounds(idx, size, dim, name):
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)].flat[0]
        raise RuntimeError(f"{name}(): index {bad} is out of bounds for dimension {dim} with "
                           f"size {size}")


def _first_bad(idx, size):
    """The first index outside [0, size), or None."""
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        return int(idx[(idx < 0) | (idx >= size)].flat[0])
    return None


def _check_slot_bounds(idx, shape, axis, name):
    """index_select / index_add: torch's exception type depends on the CPU kernel it picks.

    index_select along dim 1 of a >= 2-d tensor and index_add along the first or last dim of
    a >= 2-d tensor run kernels that raise RuntimeError; every other case raises IndexError
    "index out of range in self" (measured on torch 2.13).
    """
    size = (shape or (1,))[axis]
    bad = _first_bad(idx, size)
    if bad is None:
        return
    nd = len(shape)
    if name == "index_select" and nd > 1 and axis == 1:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    if name == "index_add" and nd > 1 and axis in (0, nd - 1):
        raise RuntimeError(f"index {bad} is out of bounds for dimension {axis} with size {size}")
    raise IndexError(f"index out of range in self ({name}(): index {bad}, dimension {axis} "
                     f"of size {size})")


def _rank(shape):
    return max(len(shape), 1)


def _check_along_dim(name, idx_shape, x_shape, axis, src_shape=None):
    """gather/scatter: same ranks, and the index no larger than self (but along ``axis``) and
    than src."""
    if _rank(idx_shape) != _rank(x_shape):
        raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions as "
                           f"{'input' if src_shape is None else 'self'} tensor (index "
                           f"{list(idx_shape)}, self {list(x_shape)})")
    if src_shape is not None and _rank(idx_shape) != _rank(src_shape):
        raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions as "
                           f"src tensor (index {list(idx_shape)}, src {list(src_shape)})")
    view, iv = x_shape or (1,), idx_shape or (1,)
    sv = None if src_shape is None else (src_shape or (1,))
    for d, s in enumerate(iv):
        if (d != axis and s > view[d]) or (sv is not None and s > sv[d]):
            also = "" if sv is None else f" and to be no larger size than src {list(src_shape)}"
            raise RuntimeError(f"{name}(): Size does not match at dimension {d}: expected index "
                               f"{list(idx_shape)} to be no larger than self {list(x_shape)} "
                               f"apart from dimension {axis}{also}")


def _vector_index(index, name):
    idx = _index_array(index, name)
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{idx.ndim} with size {list(idx.shape)}")
    return idx.reshape(-1)


def _same_dtype(name, x, src):
    if x._data.dtype != src._data.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype (got "
                           f"{x.dtype} and {src.dtype})")


# -- gather --------------------------------------------------------------------------------
def _read_fwd(xp, x, plan):
    return plan.read(RAW, x)


def _read_vjp(ns, g, plan):
    return plan.read_grad(ns, g)


GATHER = defop("gather", _read_fwd, _read_vjp, kind="indexing", dtype_rule="same",
               node="GatherBackward0", onnx="GatherElements")


def _gather(input, axis, idx, name="gather"):
    x = input._data
    if idx.size:
        _check_along_dim(name, idx.shape, x.shape, axis)
        _check_bounds(idx, (x.shape or (1,))[axis], axis, name)
    return unary(GATHER, input, {"plan": _along_dim_plan(idx, axis, x.shape)})


def gather(input, dim, index, *, sparse_grad=False):
    """``out[p] = input[..., index[p], ...]``, the index taking the place of dim ``dim``."""
    idx = _index_array(index, "gather")
    return _gather(input, wrap_dim(dim, input._data.ndim), idx)


# -- scatter / scatter_add -------------------------------------------------------------------
def _scatter_fwd(xp, x, src, plan, src_plan):
    out = x.copy()
    out.reshape(plan.view)[plan.key] = src_plan.read(RAW, src)
    return out


def _scatter_vjp(ns, g, plan, src_plan):
    kept = ns.where(ns.const(plan.written()), 0.0, g)
    return kept, src_plan.read_grad(ns, plan.read(ns, g))


def _scatter_value_fwd(xp, x, plan, value):
    out = x.copy()
    out.reshape(plan.view)[plan.key] = value
    return out


def _scatter_value_vjp(ns, g, plan, value):
    return ns.where(ns.const(plan.written()), 0.0, g)


def _scatter_add_fwd(xp, x, src, plan, src_plan):
    out = x.copy()
    xp.add.at(out.reshape(plan.view), plan.key, src_plan.read(RAW, src))
    return out


def _scatter_add_vjp(ns, g, plan, src_plan):
    return g, src_plan.read_grad(ns, plan.read(ns, g))


_REDUCE_UFUNCS = {"add": np.add, "multiply": np.multiply}


def _scatter_reduce_fwd(xp, x, *src, plan, src_plan, value, reduce):
    out = x.copy()
    part = src_plan.read(RAW, src[0]) if src else np.asarray(value).astype(x.dtype)
    _REDUCE_UFUNCS[reduce].at(out.reshape(plan.view), plan.key, part)
    return out


SCATTER = defop("scatter.src", _scatter_fwd, _scatter_vjp, kind="indexing", dtype_rule="same",
                node="ScatterBackward0", onnx="ScatterElements")
SCATTER_VALUE = defop("scatter.value", _scatter_value_fwd, _scatter_value_vjp, kind="indexing",
                      dtype_rule="same", node="ScatterBackward1", onnx="ScatterElements")
SCATTER_ADD = defop("scatter_add", _scatter_add_fwd, _scatter_add_vjp, kind="indexing",
                    dtype_rule="same", node="ScatterAddBackward0", onnx="ScatterElements")
# NOTE: torch has no derivative for scatter with reduce= (its backward raises); graphgrad's
# result is simply not differentiable.
SCATTER_REDUCE = defop("scatter.reduce", _scatter_reduce_fwd, kind="indexing",
                       dtype_rule="same", onnx="ScatterElements")


def _scatter_plans(name, input, axis, idx, src):
    """The plans for self and (when ``src`` is a tensor) src, after torch's checks."""
    x = input._data
    src_shape = src._data.shape if isinstance(src, Tensor) else None
    if idx.size:
        _check_along_dim(name, idx.shape, x.shape, axis, src_shape)
        _check_bounds(idx, (x.shape or (1,))[axis], axis, name)
    plan = _along_dim_plan(idx, axis, x.shape)
    return plan, None if src_shape is None else _region_plan(plan.read_shape, src_shape)


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """A copy of ``input`` with ``src[p]`` (or ``value``) written at ``index[p]`` along ``dim``;
    with ``reduce='add'`` / ``'multiply'`` combined into the existing values instead."""
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    if not isinstance(src, Tensor) and src is not None:
        src, value = None, src
    if reduce is not None and reduce not in _REDUCE_UFUNCS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    idx = _index_array(index, "scatter")
    axis = wrap_dim(dim, input._data.ndim)
    if src is not None:
        _same_dtype("scatter", input, src)
    plan, src_plan = _scatter_plans("scatter", input, axis, idx, src)
    if reduce is not None:
        inputs = (input,) if src is None else (input, src)
        return apply(SCATTER_REDUCE, inputs, {"plan": plan, "src_plan": src_plan,
                                              "value": value, "reduce": reduce})
    if src is None:
        return unary(SCATTER_VALUE, input, {"plan": plan, "value": value})
    return apply(SCATTER, (input, src), {"plan": plan, "src_plan": src_plan})


def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src[p]`` added at ``index[p]`` along ``dim`` (repeats sum)."""
    idx = _index_array(index, "scatter_add")
    axis = wrap_dim(dim, input._data.ndim)
    _same_dtype("scatter_add", input, src)
    plan, src_plan = _scatter_plans("scatter_add", input, axis, idx, src)
    return apply(SCATTER_ADD, (input, src), {"plan": plan, "src_plan": src_plan})


# -- index_select / index_add ----------------------------------------------------------------
INDEX_SELECT = defop("index_select", _read_fwd, _read_vjp, kind="indexing", dtype_rule="same",
                     node="IndexSelectBackward0", onnx="Gather")


def _slot_plan(x_shape, axis, idx, out_shape):
    """The key ``[:, ..., :, idx]`` (``idx`` at ``axis``) over ``x_shape`` (0-d made 1-d)."""
    view = x_shape or (1,)
    read_shape = view[:axis] + (idx.size,) + view[axis + 1:]
    return IndexPlan((slice(None),) * axis + (idx,), view, read_shape, x_shape, out_shape)


def index_select(input, dim, index):
    """The slices of ``input`` at positions ``index`` (a vector) along ``dim``."""
    x = input._data
    axis = wrap_dim(dim, x.ndim)
    idx = _vector_index(index, "index_select")
    if x.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    _check_slot_bounds(idx, x.shape, axis, "index_select")
    out_shape = x.shape[:axis] + (idx.size,) + x.shape[axis + 1:] if x.ndim else ()
    return unary(INDEX_SELECT, input, {"plan": _slot_plan(x.shape, axis, idx, out_shape)})


def _index_add_fwd(xp, x, src, plan, alpha):
    out = x.copy()
    part = src.reshape(plan.read_shape)
    xp.add.at(out.reshape(plan.view), plan.key, part if alpha == 1 else part * alpha)
    return out


def _index_add_vjp(ns, g, plan, alpha):
    g_src = plan.read(ns, g)
    return g, g_src if alpha == 1 else g_src * alpha


INDEX_ADD = defop("index_add", _index_add_fwd, _index_add_vjp, kind="indexing",
                  dtype_rule="same", node="IndexAddBackward0", onnx=None)


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` slices added at ``index`` along ``dim``."""
    x, s = input._data, source._data
    axis = wrap_dim(dim, x.ndim)
    idx = _vector_index(index, "index_add")
    n_src = s.shape[axis] if s.ndim else 1
    if idx.size != n_src:
        raise RuntimeError(f"index_add(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {axis}")
    if s.ndim != x.ndim or any(a != b for d, (a, b) in enumerate(zip(s.shape, x.shape))
                               if d != axis):
        raise RuntimeError("index_add(): source tensor shape must match self tensor shape, "
                           f"excluding the specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(s.shape)}")
    if x.dtype != s.dtype:
        raise RuntimeError(f"index_add(): self ({input.dtype}) and source ({source.dtype}) must "
                           "have the same scalar type")
    _check_slot_bounds(idx, x.shape, axis, "index_add")
    if x.dtype.kind != "f":
        alpha = int(alpha)  # torch casts alpha to the tensor's type first (2.5 -> 2)
    plan = _slot_plan(x.shape, axis, idx, s.shape)
    return apply(INDEX_ADD, (input, source), {"plan": plan, "alpha": alpha})


# -- masked_fill / masked_select ---------------------------------------------------------------
def _mask_array(mask, name):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"{name}(): expected a boolean mask, but got mask with dtype "
                           f"{mask.dtype}")
    return mask._data


def _masked_fill_fwd(xp, x, mask, fill):
    # the fill takes the input's dtype, whatever its own (torch does not promote here)
    return xp.where(mask, xp.asarray(fill).astype(x.dtype), x)


def _masked_fill_vjp(ns, g, mask, fill):
    return ns.where(ns.const(mask), 0.0, g)


def _masked_fill_tensor_fwd(xp, x, value, mask):
    return _masked_fill_fwd(xp, x, mask, value)


def _masked_fill_tensor_vjp(ns, g, mask):
    m = ns.const(mask)
    return ns.where(m, 0.0, g), ns.sum(ns.where(m, g, 0.0))


MASKED_FILL = defop("masked_fill.Scalar", _masked_fill_fwd, _masked_fill_vjp, kind="indexing",
                    dtype_rule="same", node="MaskedFillBackward0", onnx="Where")
MASKED_FILL_TENSOR = defop("masked_fill.Tensor", _masked_fill_tensor_fwd, _masked_fill_tensor_vjp,
                           kind="indexing", dtype_rule="same", node="MaskedFillBackward1",
                           onnx="Where")


def masked_fill(input, mask, value):
    """``input`` with ``value`` (a number or a 0-d tensor) where ``mask`` holds; the mask and
    the input broadcast together."""
    m = _mask_array(mask, "masked_fill")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return apply(MASKED_FILL_TENSOR, (input, value), {"mask": m})
    return unary(MASKED_FILL, input, {"mask": m, "fill": value})


def _masked_select_fwd(xp, x, mask, shape):
    return xp.broadcast_to(x, shape)[xp.broadcast_to(mask, shape)]


def _masked_select_vjp(ns, g, mask, shape):
    return ns.index_grad(g, shape, np.broadcast_to(mask, shape))


MASKED_SELECT = defop("masked_select", _masked_select_fwd, _masked_select_vjp,
                      kind="indexing", dtype_rule="same", node="MaskedSelectBackward0",
                      onnx="Compress")


def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` holds, as a 1-d tensor (both broadcast)."""
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast_shape("masked_select", input._data.shape, mask._data.shape)
    return unary(MASKED_SELECT, input, {"mask": mask._data, "shape": shape})


def _broadcast_shape(name, a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        raise RuntimeError(f"{name}(): shapes {list(a)} and {list(b)} cannot be broadcast "
                           "together") from None


# -- take / take_along_dim ----------------------------------------------------------------------
TAKE = defop("take", _read_fwd, _read_vjp, kind="indexing", dtype_rule="same",
             node="TakeBackward0", onnx="Gather")


def take(input, index):
    """``input`` flattened, read at ``index`` (negative positions count from the end)."""
    x = input._data
    idx = _index_array(index, "take", long_only=True)
    n = x.size
    if idx.size:
        if n == 0:
            raise IndexError("take(): tried to take from an empty tensor")
        if idx.min() < -n or idx.max() >= n:
            bad = idx[(idx < -n) | (idx >= n)].flat[0]
            raise IndexError(f"take(): out of range: tried to access index {bad} on a tensor of "
                             f"{n} elements.")
    flat = idx.reshape(-1)  # NumPy's negative positions are torch's
    plan = IndexPlan((flat,), (n,), flat.shape, x.shape, idx.shape)
    return unary(TAKE, input, {"plan": plan})


def take_along_dim(input, indices, dim=None):
    """``gather`` with ``indices`` broadcast against ``input`` (all but ``dim``); without
    ``dim``, of the flattened input."""
    from .movement import expand, reshape

    idx = _index_array(indices, "take_along_dim", long_only=True, arg="indices")
    x = input._data
    if dim is None:
        return _gather(reshape(input, -1), 0, idx.reshape(-1), "take_along_dim")
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = wrap_dim(dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError("take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {x.ndim} dimensions for input, and {idx.ndim} "
                           "dimensions for indices")
    common = _broadcast_shape("take_along_dim", _without(x.shape, axis), _without(idx.shape, axis))
    size = x.shape[axis]
    # NOTE: torch wraps these indices around the dim's size (-1 is the last, size is the first)
    idx = np.broadcast_to(idx % size if size else idx, _with(common, axis, idx.shape[axis]))
    return _gather(expand(input, _with(common, axis, size)), axis, idx, "take_along_dim")


def _without(shape, axis):
    return shape[:axis] + (1,) + shape[axis + 1:]


def _with(shape, axis, size):
    return shape[:axis] + (size,) + shape[axis + 1:]


# -- one_hot ------------------------------------------------------------------------------------
def _one_hot_fwd(xp, x, num_classes):
    return (x[..., None] == xp.arange(num_classes)).astype(np.int64)


ONE_HOT = defop("one_hot", _one_hot_fwd, kind="indexing", dtype_rule="same", onnx="OneHot")


def one_hot(tensor, num_classes=-1):
    """int64 indicator vectors of the class indices in ``tensor`` (``torch.nn.functional``);
    ``num_classes=-1`` takes the largest class plus one."""
    x = tensor._data
    if x.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if x.size == 0 and num_classes <= 0:  # torch refuses 0 and -2 as well as -1 here
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if num_classes == -1:
        num_classes = int(x.max()) + 1
    if x.size:
        if x.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if x.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return unary(ONE_HOT, tensor, {"num_classes": num_classes})


def _bind():
    from .inplace import _make_inplace

    for name in __all__:
        setattr(Tensor, name, globals()[name])
    # In-place forms: the out-of-place rules of these ops never read the old values of
    # ``self`` (only indices and masks), so no copy of them is kept.
    for name in ("scatter", "scatter_add", "index_add", "masked_fill"):
        setattr(Tensor, name + "_", _make_inplace(name + "_", globals()[name], False))


_bind()
