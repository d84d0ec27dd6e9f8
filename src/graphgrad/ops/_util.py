"""Argument helpers shared by the op families: dims and shapes, checked as torch checks them."""

from __future__ import annotations

__all__ = ["wrap_dim", "dims_arg", "shape_arg", "reduced_shape"]


def wrap_dim(dim, ndim: int) -> int:
    """A possibly negative dim as an index; 0-d tensors accept -1 and 0, as in torch."""
    if not isinstance(dim, int):
        index = getattr(type(dim), "__index__", None)
        if index is None:  # torch's argument parser: TypeError (x.sum(1.0), x.softmax("a"))
            raise TypeError(f"argument 'dim' must be int, not {type(dim).__name__}")
        dim = index(dim)
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def dims_arg(dim, ndim: int):
    """``dim=`` of a reduction as a sorted tuple of axes, or None for all of them."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return None
        axes = tuple(sorted({wrap_dim(d, ndim) for d in dim}))
        if len(axes) != len(dim):
            raise RuntimeError(f"dim {wrap_dim(dim[0], ndim)} appears multiple times in the list "
                               "of dims")
    else:
        axes = (wrap_dim(dim, ndim),)
    if ndim == 0:
        return ()
    return axes


def shape_arg(size) -> tuple:
    """Sizes given as ints, a tuple/list, or a Size."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if not isinstance(s, int):
            try:
                s = s.__index__()
            except AttributeError:
                raise TypeError(f"expected a sequence of integers, but got {type(s).__name__}"
                                ) from None
        out.append(s)
    return tuple(out)


def reduced_shape(shape: tuple, axes) -> tuple:
    """``shape`` with the reduced axes kept as size 1 (``keepdim=True``)."""
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))
