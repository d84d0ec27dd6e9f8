"""Indexed writes beyond scatter/index_add: index_fill, index_copy, masked_scatter,
scatter_reduce (sum, prod, mean, amax, amin; include_self) and index_reduce, with their
in-place forms.

They use gather.py's index plans (Note [Index keys] there). scatter_reduce's rules are torch's
(``scatter_reduce_backward``): prod divides out each factor, handling zeros apart; amax/amin
share the gradient evenly among the values equal to the result; mean divides by the count.
index_reduce is scatter_reduce with its vector index spread over the source's shape.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor, wrap
from ._dispatch import apply, unary
from ._namespace import RAW
from ._opdef import defop
from ._util import wrap_dim
from .gather import (
    _index_array,
    _mask_array,
    _region_plan,
    _scatter_plans,
    _slot_plan,
)

__all__ = ["index_fill", "index_copy", "masked_scatter", "scatter_reduce", "index_reduce"]


def _long_index(index, name, error):
    """An int64 index, as torch requires for index_fill/index_copy (each raising its own
    error type)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype != np.int64:
        if error is IndexError:
            raise IndexError(f"{name}(): Expected dtype int64 for index.")
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {index.dtype}")
    return a


# -- index_fill ---------------------------------------------------------------------------------
def _index_fill_fwd(xp, x, plan, value):
    out = x.copy()
    out.reshape(plan.view)[plan.key] = value
    return out


def _index_fill_vjp(ns, g, plan, value):
    return ns.where(ns.const(plan.written()), 0.0, g)


def _index_fill_tensor_fwd(xp, x, value, plan):
    return _index_fill_fwd(xp, x, plan, value.astype(x.dtype))


def _index_fill_tensor_vjp(ns, g, plan):
    m = ns.const(plan.written())
    return ns.where(m, 0.0, g), ns.sum(ns.where(m, g, 0.0))


INDEX_FILL = defop("index_fill.int_Scalar", _index_fill_fwd, _index_fill_vjp, kind="indexing",
                   dtype_rule="same", node="IndexFillBackward0", onnx=None)
INDEX_FILL_TENSOR = defop("index_fill.int_Tensor", _index_fill_tensor_fwd,
                          _index_fill_tensor_vjp, kind="indexing", dtype_rule="same",
                          node="IndexFillBackward1", onnx=None)


def index_fill(input, dim, index, value):
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a
    number or a 0-d tensor); negative indices count from the end."""
    x = input._data
    axis = wrap_dim(dim, x.ndim)
    idx = _long_index(index, "index_fill_", IndexError)
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = (x.shape or (1,))[axis]
    idx = idx.reshape(-1)
    if idx.size and (idx.min() < -size or idx.max() >= size):
        bad = idx[(idx < -size) | (idx >= size)][0]
        raise IndexError(f"index {bad} is out of bounds for dimension {axis} with size {size}")
    plan = _slot_plan(x.shape, axis, idx % size if size else idx, x.shape)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return apply(INDEX_FILL_TENSOR, (input, value), {"plan": plan})
    fill = np.asarray(value).astype(x.dtype)  # the input's type: 2.7 fills an int tensor with 2
    return unary(INDEX_FILL, input, {"plan": plan, "value": fill})


# -- index_copy ---------------------------------------------------------------------------------
def _index_copy_fwd(xp, x, src, plan):
    out = x.copy()
    out.reshape(plan.view)[plan.key] = src.reshape(plan.read_shape)
    return out


def _index_copy_vjp(ns, g, plan):
    return ns.where(ns.const(plan.written()), 0.0, g), plan.read(ns, g)


INDEX_COPY = defop("index_copy", _index_copy_fwd, _index_copy_vjp, kind="indexing",
                   dtype_rule="same", node="IndexCopyBackward0", onnx=None)


def index_copy(input, dim, index, source):
    """A copy of ``input`` with slice ``i`` of ``source`` written at ``index[i]`` along
    ``dim``."""
    x, s = input._data, source._data
    axis = wrap_dim(dim, x.ndim)
    idx = _long_index(index, "index_copy_", RuntimeError)
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    idx = idx.reshape(-1)
    n_src = s.shape[axis] if s.ndim else 1
    if idx.size != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({n_src})")
    if x.dtype != s.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {input.dtype} and (source) {source.dtype}")
    if s.ndim and (s.ndim != x.ndim or any(a != b for d, (a, b) in enumerate(zip(s.shape, x.shape))
                                           if d != axis)):
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination shape {list(x.shape)}, source shape "
                           f"{list(s.shape)}, dim {axis}")
    size = (x.shape or (1,))[axis]
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {axis} "
                         f"with size {size}")
    plan = _slot_plan(x.shape, axis, idx, s.shape)
    return apply(INDEX_COPY, (input, source), {"plan": plan})


# -- masked_scatter -----------------------------------------------------------------------------
def _masked_scatter_fwd(xp, x, src, mask, shape, count, src_shape):
    out = np.array(np.broadcast_to(x, shape))
    out[mask] = src.reshape(-1)[:count]
    return out


def _masked_scatter_vjp(ns, g, mask, shape, count, src_shape):
    picked = ns.getitem(g, mask)
    n = int(np.prod(src_shape))
    g_src = ns.index_put_grad(picked, (n,), (np.arange(count),))
    return ns.where(ns.const(mask), 0.0, g), ns.reshape(g_src, src_shape)


MASKED_SCATTER = defop("masked_scatter", _masked_scatter_fwd, _masked_scatter_vjp,
                       kind="indexing", dtype_rule="same", node="MaskedScatterBackward0",
                       onnx=None)


def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` holds (row-major) filled with consecutive
    elements of ``source``; input and mask broadcast together."""
    m = _mask_array(mask, "masked_scatter_")
    x, s = input._data, source._data
    if x.dtype != s.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{input.dtype} and {source.dtype}")
    try:
        shape = np.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        raise RuntimeError(f"masked_scatter: shapes {list(x.shape)} and {list(m.shape)} cannot "
                           "be broadcast together") from None
    m = np.broadcast_to(m, shape)
    count = int(m.sum())
    if count > s.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply(MASKED_SCATTER, (input, source),
                 {"mask": m, "shape": shape, "count": count, "src_shape": s.shape})


# -- scatter_reduce -------------------------------------------------------------------------------
_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
           "amin": np.minimum}


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = True if dtype == np.bool_ else (np.inf if dtype.kind == "f" else np.iinfo(dtype).max)
    low = False if dtype == np.bool_ else (-np.inf if dtype.kind == "f" else np.iinfo(dtype).min)
    return low if reduce == "amax" else big


def _scatter_reduce_raw(x, part, plan, reduce, include_self):
    """The forward on arrays: ``part`` is already laid out as the index (read_shape)."""
    out = x.copy()
    view = out.reshape(plan.view)
    if not include_self:
        view[plan.key] = _identity(reduce, x.dtype)
    _UFUNCS[reduce].at(view, plan.key, part)
    if reduce == "mean":
        count = _counts(plan, include_self, x.dtype)
        if x.dtype.kind == "f":
            out = out / count
        else:
            out = np.floor_divide(out, count.astype(x.dtype))
    return out


def _counts(plan, include_self, dtype):
    """How many values each position of the result averages (at least 1)."""
    count = np.full(plan.view, 1 if include_self else 0, dtype=np.float64)
    np.add.at(count, plan.key, 1)
    count[count == 0] = 1
    return count.reshape(plan.in_shape).astype(dtype if dtype.kind == "f" else np.int64)


def _scatter_reduce_fwd(xp, x, src, plan, src_plan, reduce, include_self):
    return _scatter_reduce_raw(x, src_plan.read(RAW, src).reshape(plan.read_shape), plan,
                               reduce, include_self)


def _reduce_again(ns, x, part, plan, reduce, include_self):
    """scatter_reduce of ``x`` with the index-laid-out ``part``, recorded under DIFF."""
    if not ns.differentiable:
        return _scatter_reduce_raw(x, part.reshape(plan.read_shape), plan, reduce, include_self)
    ident = _region_plan(plan.read_shape, ns.raw(part).shape)
    return apply(SCATTER_REDUCE, (x, part), {"plan": plan, "src_plan": ident, "reduce": reduce,
                                             "include_self": include_self})


def _scatter_reduce_vjp(ns, g, x, src, out, plan, src_plan, reduce, include_self):
    read = lambda t: plan.read(ns, t)  # noqa: E731 - the gradient's values at the index
    rx, rout = ns.raw(x), ns.raw(out)
    part = src_plan.read(ns, src)
    rpart = ns.raw(part)
    if reduce == "sum":
        gx, gp = g, read(g)
    elif reduce == "mean":
        gx = g / ns.const(_counts(plan, include_self, rx.dtype))
        gp = read(gx)
    elif reduce in ("amax", "amin"):
        self_hit = rx == rout
        part_hit = rpart == plan.read(RAW, rout)
        shares = self_hit.astype(rx.dtype)
        np.add.at(shares.reshape(plan.view), plan.key, part_hit.reshape(plan.read_shape))
        spread = g / ns.const(np.where(shares == 0, 1, shares))
        gx = ns.where(ns.const(self_hit), spread, 0.0)
        gp = ns.where(ns.const(part_hit), read(spread), 0.0)
    else:
        gx, gp = _prod_grads(ns, g, x, part, out, plan, include_self)
    if not include_self:
        gx = ns.where(ns.const(plan.written()), 0.0, gx)
    return gx, src_plan.read_grad(ns, gp)


def _prod_grads(ns, g, x, part, out, plan, include_self):
    """torch's rule: each factor divided out of the product, with zeros replaced by one (a
    factor that is the only zero at its position gets the product of the others)."""
    rx, rpart = ns.raw(x), ns.raw(part)
    self_zero = ns.const(rx == 0)
    masked_self = ns.where(self_zero, 1.0, x)
    gx = g * _reduce_again(ns, masked_self, part, plan, "prod", include_self) / masked_self
    part_zero = rpart == 0
    zeros_at = np.zeros(plan.view, dtype=np.int64)
    np.add.at(zeros_at, plan.key, part_zero.reshape(plan.read_shape).astype(np.int64))
    single = ns.const(part_zero & (zeros_at[plan.key].reshape(rpart.shape) == 1))
    masked_part = ns.where(single, 1.0, part)
    others = plan.read(ns, g * _reduce_again(ns, x, masked_part, plan, "prod", include_self))
    divided = plan.read(ns, g * out) / ns.where(ns.const(part_zero), 1.0, part)
    return gx, ns.where(single, others, divided)


SCATTER_REDUCE = defop("scatter_reduce.two", _scatter_reduce_fwd, _scatter_reduce_vjp,
                       kind="indexing", save=(0, 1, "out"), dtype_rule="same",
                       node="ScatterReduceBackward0", onnx="ScatterElements")


def _check_reduce(reduce, allowed, name):
    if reduce not in allowed:
        raise RuntimeError(f"{name}(): Expected reduce to be one of {', '.join(allowed[:-1])} or "
                           f"{allowed[-1]} but got {reduce}.")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of ``input`` with each ``src[p]`` combined into the position ``index[p]`` names
    along ``dim`` by ``reduce`` (sum, prod, mean, amax, amin); with ``include_self=False`` the
    scattered positions start from the reduction's identity instead of ``input``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' (position 4) must be Tensor, not "
                        f"{type(src).__name__}")
    _check_reduce(reduce, _REDUCES, "scatter_reduce")
    idx = _index_array(index, "scatter_reduce")
    axis = wrap_dim(dim, input._data.ndim)
    if input._data.dtype != src._data.dtype:
        raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype (got "
                           f"{input.dtype} and {src.dtype})")
    plan, src_plan = _scatter_plans("scatter_reduce", input, axis, idx, src)
    return apply(SCATTER_REDUCE, (input, src), {"plan": plan, "src_plan": src_plan,
                                                "reduce": reduce,
                                                "include_self": bool(include_self)})


# -- index_reduce -------------------------------------------------------------------------------
_warned: list = []


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``index_add`` with ``reduce`` (prod, mean, amax, amin) in place of the sum: slice ``i`` of
    ``source`` is combined into slice ``index[i]`` of ``input`` along ``dim``."""
    if not _warned:  # once per process, as torch's TORCH_WARN_ONCE
        _warned.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=2)
    _check_reduce(reduce, _REDUCES[1:], "index_reduce")
    x, s = input._data, source._data
    axis = wrap_dim(dim, x.ndim)
    idx = _index_array(index, "index_reduce")
    if idx.ndim > 1:
        raise IndexError(f"index_reduce_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    idx = idx.reshape(-1)
    n_src = s.shape[axis] if s.ndim else 1
    if idx.size != n_src:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {axis}")
    if x.dtype != s.dtype:
        raise RuntimeError(f"index_reduce_(): self ({input.dtype}) and source ({source.dtype}) "
                           "must have the same scalar type")
    if s.ndim != x.ndim or any(a != b for d, (a, b) in enumerate(zip(s.shape, x.shape))
                               if d != axis):
        raise RuntimeError("index_reduce_(): Source/destination tensor must have same slice "
                           f"shapes. Destination shape {list(x.shape)}, source shape "
                           f"{list(s.shape)}, dim {axis}")
    size = (x.shape or (1,))[axis]
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError("index out of range in self")
    # the vector index spread over the source's shape: a scatter along dim
    view = [1] * max(s.ndim, 1)
    view[axis] = idx.size
    spread = np.broadcast_to(idx.reshape(view), s.shape or (1,)).reshape(s.shape)
    return scatter_reduce(input, axis, wrap(spread, False, None), source, reduce,
                          include_self=include_self)


def _bind():
    from .inplace import _make_inplace

    for name in __all__:
        setattr(Tensor, name, globals()[name])
    # index_fill/index_copy/masked_scatter rules read masks and indices only; scatter_reduce's
    # (and index_reduce's) read self's old values.
    for name, saves in (("index_fill", False), ("index_copy", False), ("masked_scatter", False),
                        ("scatter_reduce", True), ("index_reduce", True)):
        setattr(Tensor, name + "_", _make_inplace(name + "_", globals()[name], saves))


_bind()
