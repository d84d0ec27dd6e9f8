"""``torch.gradient``: central differences in the interior and one-sided differences of order
1 or 2 at the edges, over uniform spacing or given coordinates (NumPy's formulas, which torch
follows). A composite of slicing and arithmetic, so it is differentiable."""

from __future__ import annotations

import numpy as np

from ._tensor import Tensor, wrap
from .ops.movement import cat as _cat

__all__ = ["gradient"]


def _as_dims(dim, ndim):
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {d})")
        out.append(d % ndim)
    return out


def _spacings(spacing, n, dim_given, ndim):
    """One entry per differentiated dim: a Python number or a 1-D coordinate array."""
    if isinstance(spacing, (int, float, np.number)) and not isinstance(spacing, bool):
        return [float(spacing)] * n
    if isinstance(spacing, Tensor):
        spacing = [spacing]
    spacing = list(spacing)
    if len(spacing) != n and not dim_given:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {ndim}', since dim argument "
                           f"was not given, but got a list of length {len(spacing)}")
    if len(spacing) != n:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                           f"it's spacing and dim arguments to have the same length, but got "
                           f"a spacing argument of length {len(spacing)} and a dim argument of "
                           f"length {n}.")
    out = []
    for s in spacing:
        if isinstance(s, Tensor):
            if s.dim() != 1:
                raise RuntimeError("torch.gradient expected each element of spacing to have "
                                   f"one dimension, but got an element with {s.dim()} "
                                   "dimensions!")
            out.append(s._data.astype(np.float64))
        else:
            out.append(float(s))
    return out


def _coef(c, dtype, dim, ndim):
    """A per-position coefficient array broadcasting along ``dim``."""
    c = np.asarray(c, dtype=dtype)
    shape = [1] * ndim
    shape[dim] = c.shape[0] if c.ndim else 1
    return wrap(c.reshape(shape), False, None)


def _one_dim(f, dim, h, edge_order):
    n = f.shape[dim]
    nd = f.dim()
    dt = f._data.dtype
    s = f.narrow

    def cat(parts):
        return _cat(parts, dim)
    if isinstance(h, float):
        interior = (s(dim, 2, n - 2) - s(dim, 0, n - 2)) / (2.0 * h)
        if edge_order == 1:
            first = (s(dim, 1, 1) - s(dim, 0, 1)) / h
            last = (s(dim, n - 1, 1) - s(dim, n - 2, 1)) / h
        else:
            first = (-1.5 * s(dim, 0, 1) + 2.0 * s(dim, 1, 1) - 0.5 * s(dim, 2, 1)) / h
            last = (0.5 * s(dim, n - 3, 1) - 2.0 * s(dim, n - 2, 1) + 1.5 * s(dim, n - 1, 1)) / h
        return cat([first, interior, last])
    if h.shape[0] != n:
        raise RuntimeError(f"torch.gradient expected each tensor to be on the same device as "
                           f"the input, and each spacing tensor of size {n}, got {h.shape[0]}")
    dx = np.diff(h)
    d1, d2 = dx[:-1], dx[1:]
    a = -d2 / (d1 * (d1 + d2))
    b = (d2 - d1) / (d1 * d2)
    c = d1 / (d2 * (d1 + d2))
    interior = (_coef(a, dt, dim, nd) * s(dim, 0, n - 2) + _coef(b, dt, dim, nd) * s(dim, 1, n - 2)
                + _coef(c, dt, dim, nd) * s(dim, 2, n - 2))
    if edge_order == 1:
        first = (s(dim, 1, 1) - s(dim, 0, 1)) / float(dx[0])
        last = (s(dim, n - 1, 1) - s(dim, n - 2, 1)) / float(dx[-1])
    else:
        e1, e2 = float(dx[0]), float(dx[1])
        first = (-(2 * e1 + e2) / (e1 * (e1 + e2)) * s(dim, 0, 1)
                 + (e1 + e2) / (e1 * e2) * s(dim, 1, 1) - e1 / (e2 * (e1 + e2)) * s(dim, 2, 1))
        e1, e2 = float(dx[-2]), float(dx[-1])
        last = (e2 / (e1 * (e1 + e2)) * s(dim, n - 3, 1) - (e2 + e1) / (e1 * e2) * s(dim, n - 2, 1)
                + (2 * e2 + e1) / (e2 * (e1 + e2)) * s(dim, n - 1, 1))
    return cat([first, interior, last])


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates the derivative of ``input`` along each of ``dim`` (all dims by default);
    returns a tuple with one tensor per dim.

    >>> import graphgrad as torch
    >>> torch.gradient(torch.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for size in input.shape:
        if size < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    dims = _as_dims(dim, input.dim())
    hs = _spacings(spacing, len(dims), dim is not None, input.dim())
    if not input.is_floating_point():
        from ._dtype import get_default_dtype
        input = input.to(get_default_dtype())
    return tuple(_one_dim(input, d, h, edge_order) for d, h in zip(dims, hs))
