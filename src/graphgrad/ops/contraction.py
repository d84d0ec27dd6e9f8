"""Contractions beyond matmul: einsum, tensordot, and the fused add-products (addmm, baddbmm,
addmv, addbmm, addr).

An einsum runs as one- and two-operand contractions planned by ``_einsum_plan`` (see
Note [Einsum plans] there); each gradient is one einsum, so double backward works.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._dispatch import apply
from ._einsum_plan import Plan, compile_equation, sublist_labels, tensordot_plan
from ._opdef import defop
from ._util import wrap_dim
from .inplace import _check_target, _recording, _write

__all__ = ["einsum", "tensordot", "addmm", "baddbmm", "addmv", "addbmm", "addr"]


def _einsum_fwd(xp, *arrays, plan):
    if plan.widen:
        arrays = [a.astype(np.int64) if a.dtype.kind in "biu" and a.dtype != np.int64 else a
                  for a in arrays]
    out = xp.einsum(plan.eq, *arrays, optimize=plan.optimize)
    if len(arrays) == 1 and np.may_share_memory(out, arrays[0]):
        out = out.copy()  # a one-operand einsum can return a view (a transpose, a diagonal)
    return out


def _ein(ns, eq, operands, optimize):
    if ns.differentiable:
        return einsum(eq, *operands)
    return np.asarray(np.einsum(eq, *operands, optimize=optimize))


def _einsum_vjp(ns, g, *operands, plan, needs=(True,)):
    dtype = ns.raw(g).dtype
    grads = []
    for k, spec in enumerate(plan.grads):
        if not needs[k]:
            grads.append(None)
            continue
        helpers = [ns.const(np.eye(n, dtype=dtype) if kind == "eye" else np.ones(n, dtype))
                   for kind, n in spec.helpers]
        r = _ein(ns, spec.eq, (g, *operands[:k], *operands[k + 1:], *helpers), spec.optimize)
        grads.append(r if ns.raw(r).shape == spec.shape else ns.reshape(r, spec.shape))
    return tuple(grads)


# NOTE: torch has no einsum node (its grad_fns are those of the permute, bmm and sum ops einsum
# decomposes into); graphgrad's is one EinsumBackward0 per contraction: a deliberate difference.
EINSUM = defop("einsum", _einsum_fwd, _einsum_vjp, kind="contraction", save=(0, 1),
               dtype_rule="same", node="EinsumBackward0", needs_mask=True, onnx="Einsum")
EINSUM_UNARY = defop("einsum.unary", _einsum_fwd, _einsum_vjp, kind="contraction",
                     dtype_rule="same", node="EinsumBackward0", onnx="Einsum")


def _einsum_args(args):
    """(equation, operands) from torch's two calling forms: an equation with operands (or one
    list of them), or operands interleaved with sublists of label numbers."""
    if not args or (len(args) == 1 and isinstance(args[0], str)):
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        ops = args[0:len(args) - len(args) % 2:2]
        eq = ",".join(sublist_labels(s) for s in args[1::2][:len(ops)])
        if len(args) % 2:
            eq += "->" + sublist_labels(args[-1])
    elif isinstance(args[0], str):
        eq, ops = args[0], args[1:]
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = ops[0]
    else:
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type(args[0]).__name__}")
    for i, x in enumerate(ops):
        if not isinstance(x, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(x).__name__}")
    return eq, ops


def einsum(*args):
    """Sums products of operand elements over the labels an equation names.

    >>> import graphgrad as torch
    >>> torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 4)).shape
    torch.Size([2, 4])
    """
    equation, operands = _einsum_args(args)
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    dtype = operands[0]._data.dtype
    for x in operands[1:]:
        if x._data.dtype != dtype:
            raise RuntimeError(f"expected scalar type {operands[0].dtype} but found {x.dtype}")
    plan = compile_equation(equation, tuple(x._data.shape for x in operands))
    if type(plan) is Plan:
        op = EINSUM if len(operands) == 2 else EINSUM_UNARY
        return apply(op, tuple(operands), {"plan": plan})
    ops = list(operands)
    for inds, plans in plan:
        group = [ops[i] for i in inds]
        for i in reversed(inds):
            del ops[i]
        acc = group[0]
        if len(group) == 1:
            acc = apply(EINSUM_UNARY, (acc,), {"plan": plans[0]})
        for p, x in zip(plans, group[1:]):
            acc = apply(EINSUM, (acc, x), {"plan": p})
        ops.append(acc)
    return ops[0]


# -- tensordot ---------------------------------------------------------------------------------
def _tensordot_fwd(xp, a, b, plan, axes):
    # np.tensordot (BLAS) pays ~10 us of Python: worth it for large products only; it also
    # refuses a size-1 contracted dim that broadcasts (axes is None then)
    if axes is None or not plan.optimize:
        return xp.einsum(plan.eq, a, b, optimize=plan.optimize)
    return xp.tensordot(a, b, axes)


def _tensordot_vjp(ns, g, a, b, plan, axes, needs):
    return _einsum_vjp(ns, g, a, b, plan=plan, needs=needs)


# torch's tensordot is a reshape, mm and view; its grad_fn is the final ViewBackward0.
TENSORDOT = defop("tensordot", _tensordot_fwd, _tensordot_vjp, kind="contraction", save=(0, 1),
                  dtype_rule="same", node="ViewBackward0", needs_mask=True, onnx="Einsum")


def _tensordot_dims(dims, na, nb):
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.shape[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got "
                                     f"{dims.shape[0]}")
            return dims[0].tolist(), dims[1].tolist()
        dims = int(dims.item())
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(na, nb):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    dims_a, dims_b = dims
    return dims_a, dims_b


def tensordot(a, b, dims=2, out=None):
    """Contracts ``dims`` (an int: the last dims of ``a`` with the first of ``b``; or two lists
    of dims) of ``a`` and ``b``.

    >>> import graphgrad as torch
    >>> torch.tensordot(torch.ones(2, 3, 4), torch.ones(3, 4, 5)).shape
    torch.Size([2, 5])
    """
    for i, x in enumerate((a, b)):
        if not isinstance(x, Tensor):
            raise TypeError(f"tensordot(): argument '{('self', 'other')[i]}' must be Tensor, "
                            f"not {type(x).__name__}")
    sa, sb = a._data.shape, b._data.shape
    dims_a, dims_b = _tensordot_dims(dims, len(sa), len(sb))
    for name, d in (("dims_self", dims_a), ("dims_other", dims_b)):
        if not isinstance(d, (list, tuple)) or not all(isinstance(i, int) for i in d):
            raise TypeError(f"tensordot(): argument '{name}' must be tuple of ints, not "
                            f"{type(d).__name__}")
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims_a = tuple(wrap_dim(d, len(sa)) for d in dims_a)
    dims_b = tuple(wrap_dim(d, len(sb)) for d in dims_b)
    for dl in (dims_a, dims_b):
        if len(set(dl)) != len(dl):
            raise RuntimeError(f"dim {next(d for d in dl if dl.count(d) > 1)} appears multiple "
                               "times in the list of dims")
    broadcast = False
    for da, db in zip(dims_a, dims_b):
        if sa[da] != sb[db]:
            if sa[da] != 1 and sb[db] != 1:
                raise RuntimeError(f"contracted dimensions need to match, but first has size "
                                   f"{sa[da]} in dim {da} and second has size {sb[db]} in dim "
                                   f"{db}")
            broadcast = True
    plan = tensordot_plan(sa, sb, dims_a, dims_b)
    result = apply(TENSORDOT, (a, b), {"plan": plan,
                                       "axes": None if broadcast else (dims_a, dims_b)})
    if out is not None:
        return out.copy_(result)
    return result


# -- fused add-products: beta * input + alpha * product ------------------------------------------
def _add_product(name, node, product, vjp, skip_zero_alpha):
    """``beta * input + alpha * product(x, y)``, with ``input`` broadcast to the product."""

    def forward(xp, input, x, y, beta, alpha, dtype=None):
        if dtype is not None:  # addr promotes its three tensors as equals (a 0-d input too)
            input, x, y = (a.astype(dtype, copy=False) for a in (input, x, y))
        prod = product(xp, x, y)
        if alpha == 0 and skip_zero_alpha:
            # NOTE: BLAS reads neither matrix when alpha is 0, so torch's addmm, addmv and addbmm
            # drop NaNs in them; baddbmm and addr multiply (NaN * 0 stays NaN).
            prod = xp.zeros_like(prod)
        elif alpha != 1:
            prod = prod * alpha
        if beta == 0:
            return prod  # NOTE: as in torch, input is not read at all: its NaNs vanish
        return prod + (input if beta == 1 else input * beta)

    return defop(name, forward, vjp, kind="contraction", save=(1, 2), dtype_rule="same",
                 node=node, needs_mask=True, onnx="Gemm" if name == "addmm" else None)


def _scaled(g, s):
    return g if s == 1 else g * s


def _matrix_vjp(ns, g, x, y, beta, alpha, needs):
    """For products of matrices (mm, bmm, and the batch-summed mm of addbmm)."""
    return (_scaled(g, beta) if needs[0] else None,
            _scaled(ns.matmul(g, ns.mT(y)), alpha) if needs[1] else None,
            _scaled(_mat2_grad(ns, g, x, y), alpha) if needs[2] else None)


def _mat2_grad(ns, g, x, y):
    # NOTE: F.linear multiplies by weight.t(), a transposed view. Its gradient is made in the
    # same layout, (g.T @ x).T, so that after TBackward the weight's gradient is C-ordered and
    # storing it costs a plain copy, not a transposing one (as torch's mm_mat2_backward does).
    yr = ns.raw(y)
    if yr.ndim == 2 and yr.flags.f_contiguous and not yr.flags.c_contiguous:
        return ns.mT(ns.matmul(ns.mT(g), x))
    return ns.matmul(ns.mT(x), g)


def _addmv_vjp(ns, g, mat, vec, beta, alpha, needs):
    n, m = ns.raw(mat).shape
    return (_scaled(g, beta) if needs[0] else None,
            _scaled(ns.reshape(g, (n, 1)) * ns.reshape(vec, (1, m)), alpha) if needs[1] else None,
            _scaled(ns.matmul(ns.mT(mat), g), alpha) if needs[2] else None)


def _addr_vjp(ns, g, v1, v2, beta, alpha, dtype, needs):
    v1, v2 = ns.cast(v1, dtype), ns.cast(v2, dtype)
    return (_scaled(g, beta) if needs[0] else None,
            _scaled(ns.matmul(g, v2), alpha) if needs[1] else None,
            _scaled(ns.matmul(ns.mT(g), v1), alpha) if needs[2] else None)


def _batch_sum_mm(xp, x, y):
    return xp.tensordot(x, y, ((0, 2), (0, 1)))  # sum_b x[b] @ y[b] as one BLAS product


ADDMM = _add_product("addmm", "AddmmBackward0", lambda xp, x, y: xp.matmul(x, y), _matrix_vjp,
                     True)
BADDBMM = _add_product("baddbmm", "BaddbmmBackward0", lambda xp, x, y: xp.matmul(x, y),
                       _matrix_vjp, False)
ADDMV = _add_product("addmv", "AddmvBackward0", lambda xp, x, y: xp.matmul(x, y), _addmv_vjp,
                     True)
ADDBMM = _add_product("addbmm", "AddbmmBackward0", _batch_sum_mm, _matrix_vjp, True)
ADDR = _add_product("addr", "AddrBackward0", lambda xp, x, y: xp.multiply.outer(x, y),
                    _addr_vjp, False)

_TORCH_NAME = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


_ARG_NAMES = {"addmm": ("input", "mat1", "mat2"), "baddbmm": ("input", "batch1", "batch2"),
              "addbmm": ("input", "batch1", "batch2"), "addmv": ("input", "mat", "vec"),
              "addr": ("input", "vec1", "vec2")}


def _check_tensors(name, a, b, c):
    if isinstance(a, Tensor) and isinstance(b, Tensor) and isinstance(c, Tensor):
        return
    for i, x in enumerate((a, b, c)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{_ARG_NAMES[name][i]}' (position {i + 1}) must "
                            f"be Tensor, not {type(x).__name__}")


def _check_same_dtype(name, a, b, c):
    d = a._data.dtype
    if b._data.dtype == d and c._data.dtype == d and d.kind != "b":
        return
    if b._data.dtype != d or c._data.dtype != d:
        got = ", ".join(_TORCH_NAME.get(x._data.dtype.name, x._data.dtype.name)
                        for x in (a, b, c))
        raise RuntimeError(f"{name}: input tensors must have the same dtype, but got {got}")
    raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _check_ndim(name, x, arg, ndim):
    if x._data.ndim != ndim:
        raise RuntimeError(f"{name}: {arg} must be a {ndim}-D tensor, got {x._data.ndim}-D tensor")


def _check_expandable(input, shape):
    s = input._data.shape
    if len(s) > len(shape) or any(a != 1 and a != b for a, b in zip(s[::-1], shape[::-1])):
        raise RuntimeError(f"The expanded size of the tensor must match the existing size at "
                           f"each non-singleton dimension. Target sizes: {list(shape)}. Tensor "
                           f"sizes: {list(s)}")


def _coefficients(dtype, beta, alpha, name):
    """beta and alpha as Python numbers; an integral result truncates them as torch does (addr
    refuses float coefficients there instead)."""
    beta = beta.item() if isinstance(beta, Tensor) else beta
    alpha = alpha.item() if isinstance(alpha, Tensor) else alpha
    if np.dtype(dtype).kind in "biu":
        for arg, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float) and name == "addr":
                raise RuntimeError(f"For integral input tensors, argument {arg} must not be a "
                                   "floating point number.")
        beta, alpha = int(beta), int(alpha)
    return beta, alpha


def _apply(op, input, x, y, shape, beta, alpha, dtype, cast=False):
    if input._data.shape != shape:
        _check_expandable(input, shape)
    if type(beta) is not int or type(alpha) is not int:
        beta, alpha = _coefficients(dtype, beta, alpha, op.name)
    params = {"beta": beta, "alpha": alpha}
    if cast:
        params["dtype"] = dtype
    return apply(op, (input, x, y), params)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``; with beta=0 ``input`` is ignored (NaNs too).

    >>> import graphgrad as torch
    >>> torch.addmm(torch.zeros(2), torch.ones(2, 3), torch.ones(3, 2), alpha=2).tolist()
    [[6.0, 6.0], [6.0, 6.0]]
    """
    _check_tensors("addmm", input, mat1, mat2)
    try:
        _check_ndim("addmm", mat1, "mat1", 2)
        _check_ndim("addmm", mat2, "mat2", 2)
    except NotImplementedError:  # a sparse operand refuses its _data: graphgrad/sparse
        from ..sparse._linalg import entry

        return entry("addmm", input, mat1, mat2, beta=beta, alpha=alpha)
    (n, k), (k2, p) = mat1._data.shape, mat2._data.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    _check_same_dtype("addmm", input, mat1, mat2)
    return _apply(ADDMM, input, mat1, mat2, (n, p), beta, alpha, mat1._data.dtype)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    _check_tensors("baddbmm", input, batch1, batch2)
    return _batched(BADDBMM, input, batch1, batch2, beta, alpha, batch_dim=True)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum(bmm(batch1, batch2), 0)``."""
    _check_tensors("addbmm", input, batch1, batch2)
    return _batched(ADDBMM, input, batch1, batch2, beta, alpha, batch_dim=False)


def _batched(op, input, batch1, batch2, beta, alpha, batch_dim):
    _check_ndim(op.name, batch1, "batch1", 3)
    wrap_dim(2, batch2._data.ndim)  # torch reads batch2.size(2) first: IndexError below 3-D
    _check_ndim(op.name, batch2, "batch2", 3)
    (b, n, k), (b2, k2, p) = batch1._data.shape, batch2._data.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and "
                           f"{b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    _check_same_dtype(op.name, input, batch1, batch2)
    shape = (b, n, p) if batch_dim else (n, p)
    return _apply(op, input, batch1, batch2, shape, beta, alpha, batch1._data.dtype)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    _check_tensors("addmv", input, mat, vec)
    if mat._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, "
                           f"{mat._data.ndim}, {vec._data.ndim}")
    (n, m), (m2,) = mat._data.shape, vec._data.shape
    if m != m2:
        raise RuntimeError(f"size mismatch, got input ({input._data.shape}), mat ({n}x{m}), "
                           f"vec ({m2})")
    _check_same_dtype("addmv", input, mat, vec)
    return _apply(ADDMV, input, mat, vec, (n,), beta, alpha, mat._data.dtype)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (dtypes promote, unlike addmm)."""
    _check_tensors("addr", input, vec1, vec2)
    for arg, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {arg}, but got {v._data.ndim}-D")
    dtype = _dtype.combine([_dtype.from_numpy_dtype(x._data.dtype) for x in (input, vec1, vec2)],
                           [], []).np
    return _apply(ADDR, input, vec1, vec2, (vec1._data.shape[0], vec2._data.shape[0]), beta,
                  alpha, dtype, cast=True)


def _inplace(fn):
    name = fn.__name__ + "_"

    def method(self, *args, **kwargs):
        _check_target(self, name, _recording(self, *args))
        return _write(self, fn(self, *args, **kwargs), name)

    method.__name__ = name
    method.__doc__ = f"In-place ``{fn.__name__}``: writes the result into this tensor."
    return method


for _fn in (addmm, baddbmm, addmv, addbmm, addr):
    setattr(Tensor, _fn.__name__, _fn)
    setattr(Tensor, _fn.__name__ + "_", _inplace(_fn))
