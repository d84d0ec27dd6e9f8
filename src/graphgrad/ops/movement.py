"""Movement (shape) ops: views, permutations, broadcasting, concatenation, splitting, flips,
and basic indexing (ints, slices, steps, None, Ellipsis).

Forwards return NumPy views where NumPy can, like torch's views; rules move the gradient back.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._tensor import Tensor
from ._dispatch import apply, unary
from ._opdef import defop
from ._util import shape_arg, wrap_dim


# -- reshapes -----------------------------------------------------------------------------------
def _reshape_fwd(xp, x, shape, in_shape, strict=False):
    if strict:
        try:
            return xp.reshape(x, shape, copy=False)
        except ValueError:
            if math.prod(shape) == x.size:
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead.") from None
            raise
    return x.reshape(shape)


def _reshape_vjp(ns, g, shape, in_shape, strict=False):
    return ns.reshape(g, in_shape)


def _reshape_op(name, node, view=True):
    return defop(name, _reshape_fwd, _reshape_vjp, kind="movement", dtype_rule="same",
                 node=node, onnx="Reshape", view=view)


VIEW = _reshape_op("view", "ViewBackward0")
UNSAFE_VIEW = _reshape_op("reshape.copy", "UnsafeViewBackward0", view=False)
SQUEEZE = _reshape_op("squeeze", "SqueezeBackward0")
SQUEEZE_DIM = _reshape_op("squeeze.dim", "SqueezeBackward1")
SQUEEZE_DIMS = _reshape_op("squeeze.dims", "SqueezeBackward2")
UNSQUEEZE = _reshape_op("unsqueeze", "UnsqueezeBackward0")


def _infer_shape(shape, numel, name="shape"):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if any(s < -1 for s in shape):
        raise RuntimeError(f"invalid shape dimension {min(shape)}")
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _reshaped(op, input, shape, strict=False):
    x = input._data
    params = {"shape": shape, "in_shape": x.shape}
    if strict:
        params["strict"] = True
    return unary(op, input, params)


def reshape(input, *shape):
    x = input._data
    shape = _infer_shape(shape_arg(shape), x.size)
    op = VIEW
    if not x.flags.c_contiguous:
        try:  # torch names a reshape that had to copy UnsafeViewBackward0
            np.reshape(x, shape, copy=False)
        except ValueError:
            op = UNSAFE_VIEW
    return _reshaped(op, input, shape)


def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)) and not hasattr(
            shape[0], "__index__"):
        raise NotImplementedError("view(dtype) is not supported by graphgrad")
    shape = _infer_shape(shape_arg(shape), input._data.size)
    return _reshaped(VIEW, input, shape, strict=True)


def view_as(input, other):
    return view(input, other._data.shape)


def reshape_as(input, other):
    return reshape(input, other._data.shape)


def flatten(input, start_dim=0, end_dim=-1):
    s = input._data.shape
    if input._data.ndim == 0:
        return reshape(input, 1)
    a, b = wrap_dim(start_dim, len(s)), wrap_dim(end_dim, len(s))
    if a > b:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if a == b:
        return input
    return reshape(input, s[:a] + (math.prod(s[a:b + 1]),) + s[b + 1:])


def unflatten(input, dim, sizes):
    s = input._data.shape
    d = wrap_dim(dim, len(s))
    sizes = _infer_shape(tuple(sizes), s[d])
    return reshape(input, s[:d] + sizes + s[d + 1:])


def squeeze(input, dim=None):
    s = input._data.shape
    if dim is None:
        return _reshaped(SQUEEZE, input, tuple(n for n in s if n != 1))
    if isinstance(dim, (tuple, list)):
        axes = {wrap_dim(d, len(s)) for d in dim}
        return _reshaped(SQUEEZE_DIMS, input,
                         tuple(n for i, n in enumerate(s) if not (i in axes and n == 1)))
    d = wrap_dim(dim, len(s))
    if not s:
        return _reshaped(SQUEEZE_DIM, input, s)
    return _reshaped(SQUEEZE_DIM, input, s[:d] + s[d + 1:] if s[d] == 1 else s)


def unsqueeze(input, dim):
    s = input._data.shape
    d = wrap_dim(dim, len(s) + 1)
    return _reshaped(UNSQUEEZE, input, s[:d] + (1,) + s[d:])


# -- permutations -------------------------------------------------------------------------------
def _permute_vjp(ns, g, axes):
    return ns.permute(g, tuple(np.argsort(axes)))


PERMUTE = defop("permute", lambda xp, x, axes: x.transpose(axes), _permute_vjp,
                kind="movement", dtype_rule="same", node="PermuteBackward0", onnx="Transpose",
                view=True)
TRANSPOSE = defop("transpose", lambda xp, x, axes: x.transpose(axes), _permute_vjp,
                  kind="movement", dtype_rule="same", node="TransposeBackward0",
                  onnx="Transpose", view=True)
T_OP = defop("t", lambda xp, x, axes: xp.transpose(x, axes), _permute_vjp, kind="movement",
             dtype_rule="same", node="TBackward0", onnx="Transpose", view=True)


def permute(input, *dims):
    n = input._data.ndim
    dims = shape_arg(dims)
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    axes = tuple(wrap_dim(d, n) for d in dims)
    if len(set(axes)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return unary(PERMUTE, input, {"axes": axes})


def transpose(input, dim0, dim1):
    n = input._data.ndim
    a, b = wrap_dim(dim0, n), wrap_dim(dim1, n)
    axes = list(range(n))
    if n:
        axes[a], axes[b] = axes[b], axes[a]
    return unary(TRANSPOSE, input, {"axes": tuple(axes)})


swapaxes = swapdims = transpose


def t(input):
    n = input._data.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return unary(T_OP, input, {"axes": tuple(range(n))[::-1]})


def _numpy_T(self):
    n = self._data.ndim
    return unary(PERMUTE, self, {"axes": tuple(range(n))[::-1]})


def _mT(self):
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


# -- broadcasting ------------------------------------------------------------------------------
EXPAND = defop("expand", lambda xp, x, shape, in_shape: xp.broadcast_to(x, shape),
               lambda ns, g, shape, in_shape: ns.sum_to(g, in_shape), kind="movement",
               dtype_rule="same", node="ExpandBackward0", onnx="Expand", view=True)


def expand(input, *sizes):
    sizes = shape_arg(sizes)
    s = input._data.shape
    if len(sizes) < len(s):
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(s)}}}, size=[{len(sizes)}]): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(s)})")
    lead = len(sizes) - len(s)
    shape = tuple(sizes[i] if sizes[i] != -1 or i < lead else s[i - lead]
                  for i in range(len(sizes)))
    for i in range(lead, len(sizes)):
        if s[i - lead] != 1 and shape[i] != s[i - lead]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[i]}) must match the existing size "
                f"({s[i - lead]}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(s)}")
    if shape == s:
        return unary(EXPAND, input, {"shape": shape, "in_shape": s})
    return unary(EXPAND, input, {"shape": shape, "in_shape": s})


def expand_as(input, other):
    return expand(input, other._data.shape)


def broadcast_shapes(*shapes):
    from .._tensor import Size

    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    result = [1] * max((len(s) for s in shapes), default=0)
    for k, shape in enumerate(shapes):  # torch's loop, for its RuntimeError wording
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == 1 or shape[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[i]} at {i}! "
                    f"Mismatching argument at index {k} had {shape}; but expected shape should "
                    f"be broadcastable to {result}")
            result[i] = shape[i]
    return Size(result)


def _repeat_vjp(ns, g, reps, in_shape):
    padded = (1,) * (len(reps) - len(in_shape)) + tuple(in_shape)
    split = []
    for r, s in zip(reps, padded):
        split += [r, s]
    summed = ns.sum(ns.reshape(g, tuple(split)), tuple(range(0, len(split), 2)))
    return ns.reshape(summed, in_shape)


REPEAT = defop("repeat", lambda xp, x, reps, in_shape: xp.tile(x, reps), _repeat_vjp,
               kind="movement", dtype_rule="same", node="RepeatBackward0", onnx="Tile")


def repeat(input, *sizes):
    reps = shape_arg(sizes)
    if len(reps) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return unary(REPEAT, input, {"reps": reps, "in_shape": input._data.shape})


# -- concatenation and splitting ------------------------------------------------------------
def _cat_fwd(xp, *xs, axis, sizes):
    return xp.concatenate(xs, axis=axis)


def _cat_vjp(ns, g, axis, sizes):
    grads, start = [], 0
    lead = (slice(None),) * axis
    for n in sizes:
        grads.append(ns.getitem(g, lead + (slice(start, start + n),)))
        start += n
    return tuple(grads)


CAT = defop("cat", _cat_fwd, _cat_vjp, kind="movement", node="CatBackward0", onnx="Concat")


def _stack_fwd(xp, *xs, axis):
    return xp.stack(xs, axis=axis)


def _stack_vjp(ns, g, axis):
    n = ns.raw(g).shape[axis]
    lead = (slice(None),) * axis
    return tuple(ns.getitem(g, lead + (i,)) for i in range(n))


STACK = defop("stack", _stack_fwd, _stack_vjp, kind="movement", node="StackBackward0",
              onnx="Concat")


def _tensors_arg(tensors, name):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if len(tensors) == 0:
        raise ValueError(f"torch.{name}(): expected a non-empty list of Tensors")
    for t_ in tensors:
        if not isinstance(t_, Tensor):
            raise TypeError(f"{name}(): expected Tensor as element in argument 'tensors', but "
                            f"got {type(t_).__name__}")
    return list(tensors)


def cat(tensors, dim=0, *, axis=None):
    """Concatenates tensors along ``dim`` (promoting dtypes, as torch does)."""
    if axis is not None:  # NumPy's name, which torch's argument parser takes too
        dim = axis
    tensors = _tensors_arg(tensors, "cat")
    # NOTE: torch still accepts legacy 1-D empty tensors next to tensors of any rank.
    ranked = [x for x in tensors if not (x._data.ndim == 1 and x._data.shape[0] == 0)]
    if ranked and len(ranked) != len(tensors):
        tensors = ranked
    ref = tensors[0]._data
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    axis = wrap_dim(dim, ref.ndim)
    for i, x in enumerate(tensors):
        d = x._data
        if d.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and "
                               f"{d.ndim}")
        for k in range(ref.ndim):
            if k != axis and d.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {axis}. Expected size "
                    f"{ref.shape[k]} but got size {d.shape[k]} for tensor number {i} in the list.")
    sizes = tuple(x._data.shape[axis] for x in tensors)
    return apply(CAT, tuple(tensors), {"axis": axis, "sizes": sizes})


concat = concatenate = cat


def stack(tensors, dim=0):
    if isinstance(tensors, (list, tuple)) and len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    tensors = _tensors_arg(tensors, "stack")
    ref = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref)} "
                               f"at entry 0 and {list(x._data.shape)} at entry {i}")
    axis = wrap_dim(dim, len(ref) + 1)
    return apply(STACK, tuple(tensors), {"axis": axis})


def hstack(tensors):
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


def vstack(tensors):
    return cat([x if x._data.ndim > 1 else x.reshape(1, -1) for x in tensors], 0)


# -- indexing views -----------------------------------------------------------------------------
def _index_fwd(xp, x, key, in_shape):
    out = x[key]
    if type(out) is not xp.ndarray:  # a full integer index gives a NumPy scalar, not a view
        out = x[key + (Ellipsis,)]
    return out


def _index_vjp(ns, g, key, in_shape):
    return ns.index_grad(g, in_shape, key)


def _index_op(name, node, view=True):
    return defop(name, _index_fwd, _index_vjp, kind="movement", dtype_rule="same", node=node,
                 onnx="Slice", view=view)


SELECT = _index_op("select", "SelectBackward0")
SLICE = _index_op("slice", "SliceBackward0")
ALIAS = _index_op("alias", "AliasBackward0")
SPLIT = _index_op("split", "SplitBackward0", view="multi")
SPLIT_SIZES = _index_op("split_with_sizes", "SplitWithSizesBackward0", view="multi")
UNBIND = _index_op("unbind", "UnbindBackward0", view="multi")
INDEX_UNSQUEEZE = _index_op("getitem.unsqueeze", "UnsqueezeBackward0")

# The gradient of basic indexing as a differentiable op, for higher-order graphs.
INDEX_GRAD = defop(
    "index_backward",
    lambda xp, g, shape, key: _index_grad_fwd(xp, g, shape, key),
    lambda ns, gg, shape, key: ns.getitem(gg, key),
    kind="indexing", dtype_rule="same", node="IndexBackwardBackward0", onnx=None)


def _index_grad_fwd(xp, g, shape, key):
    out = xp.zeros(shape, dtype=g.dtype)
    out[key] = g
    return out


def _check_key(key, shape):
    """Normalises a basic index and checks it as torch does; returns (key, node op)."""
    if not isinstance(key, tuple):
        key = (key,)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:  # torch treats extra ellipses as no-ops
        first = key.index(Ellipsis)
        key = key[:first + 1] + tuple(k for k in key[first + 1:] if k is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    # Walk the key against the dims to check ints and pick the node torch would name.
    dim, last = 0, ALIAS
    ell_span = len(shape) - n_real
    out = []
    for k in key:
        if k is Ellipsis:
            dim += ell_span
            out.append(k)
        elif k is None:
            last = INDEX_UNSQUEEZE
            out.append(k)
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            last = SLICE
            out.append(k)
            dim += 1
        else:
            i = k.__index__() if not isinstance(k, int) else k
            size = shape[dim]
            if i < -size or i >= size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size "
                                 f"{size}")
            last = SELECT
            out.append(i)
            dim += 1
    return tuple(out), last


def legacy_sequence_key(key):
    """A list key holding tensors, sequences, slices, None or Ellipsis is read as a tuple, as
    torch 2.13 still does (deprecated, with its warning); other keys are returned unchanged."""
    if type(key) is not list or not 0 < len(key) < 32 or not any(
            k is None or k is Ellipsis or isinstance(k, (Tensor, list, tuple, slice)) for k in key):
        return key
    warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and "
                  "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                  "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                  "which will result either in an error or a different result", UserWarning,
                  stacklevel=3)
    return tuple(key)


def getitem(input, key):
    """``x[key]`` for basic indexing; advanced keys go to ``graphgrad.ops.indexing``."""
    if type(key) is list:
        key = legacy_sequence_key(key)
    if _is_basic(key):
        x = input._data
        key, op = _check_key(key, x.shape)
        return unary(op, input, {"key": key, "in_shape": x.shape})
    from .indexing import advanced_getitem

    return advanced_getitem(input, key)


def _is_basic(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if k is None or k is Ellipsis or isinstance(k, (int, slice)) and not isinstance(k, bool):
            continue
        if isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu":
            continue
        if isinstance(k, np.integer):
            continue
        return False
    return True


def narrow(input, dim, start, length):
    x = input._data
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    start = int(start)
    if start < 0:
        start += size
    if start < 0 or start > size or length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    return unary(SLICE, input, {"key": key, "in_shape": x.shape})


def select(input, dim, index):
    x = input._data
    d = wrap_dim(dim, x.ndim)
    key = (slice(None),) * d + (int(index),)
    key, _ = _check_key(key, x.shape)
    return unary(SELECT, input, {"key": key, "in_shape": x.shape})


def _pieces(op, input, sizes, d):
    x = input._data
    out, start = [], 0
    for n in sizes:
        key = (slice(None),) * d + (slice(start, start + n),)
        out.append(unary(op, input, {"key": key, "in_shape": x.shape}))
        start += n
    return _mark_multi(out)


def _mark_multi(outputs):
    """Outputs of one op that returns several views may not be modified in place (torch)."""
    for i, t in enumerate(outputs):
        if t._view[2] is None:
            t._view[2] = ("multi", i)
    return tuple(outputs)


def split(input, split_size_or_sections, dim=0):
    """Splits into chunks of ``split_size`` (the last may be smaller) or of the given sizes."""
    x = input._data
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        sizes = [min(step, size - i) for i in range(0, size, step)] if size else [0]
        return _pieces(SPLIT, input, sizes, d)
    sizes = [int(s) for s in split_size_or_sections]
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return _pieces(SPLIT_SIZES, input, sizes, d)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input._data.shape[wrap_dim(dim, input._data.ndim)]
    step = max(1, -(-size // chunks))
    return split(input, step, dim)


def unbind(input, dim=0):
    x = input._data
    d = wrap_dim(dim, x.ndim)
    return _mark_multi([unary(UNBIND, input, {"key": (slice(None),) * d + (i,),
                                              "in_shape": x.shape})
                        for i in range(x.shape[d])])


# -- flips and copies -------------------------------------------------------------------------
# torch's flip copies (NumPy's would be a view that writes through to the input)
FLIP = defop("flip", lambda xp, x, axes: xp.flip(x, axes).copy(),
             lambda ns, g, axes: ns.flip(g, axes), kind="movement", dtype_rule="same",
             node="FlipBackward0", onnx=None)
CLONE = defop("clone", lambda xp, x: x.copy(), lambda ns, g: g, kind="movement",
              dtype_rule="same", node="CloneBackward0", onnx="Identity")


def flip(input, *dims):
    dims = shape_arg(dims)
    axes = tuple(wrap_dim(d, input._data.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dims has duplicates, original flip dims size={len(dims)}")
    if input._data.ndim == 0:
        return unary(CLONE, input)
    return unary(FLIP, input, {"axes": axes})


def clone(input, *, memory_format=None):
    return unary(CLONE, input)


def contiguous(input, memory_format=None):
    if input._data.flags.c_contiguous:
        return input
    return unary(CLONE, input)


def _bind():
    T = Tensor
    for name in ("reshape", "view", "view_as", "reshape_as", "flatten", "unflatten", "squeeze",
                 "unsqueeze", "permute", "transpose", "swapaxes", "swapdims", "t", "expand",
                 "expand_as", "repeat", "split", "chunk", "unbind", "narrow", "select", "flip",
                 "clone", "contiguous"):
        setattr(T, name, globals()[name])
    T.T = property(_numpy_T)
    T.mT = property(_mT)
    T.__getitem__ = getitem


_bind()
