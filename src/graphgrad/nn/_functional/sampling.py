"""Sampling composites: ``gumbel_softmax``, ``affine_grid`` and ``grid_sample``.

``grid_sample`` works out in NumPy where each output point reads the input (the unnormalised,
padded source coordinate and its piecewise-constant derivative with respect to the grid) and
which neighbours it mixes; the differentiable part is one ``index_select`` of channel-last rows
and a weighted sum whose weights are tensor ops of the grid, so gradients reach input and grid.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from ...ops.creation import linspace, tensor, zeros_like
from ...ops.movement import stack

__all__ = ["gumbel_softmax", "affine_grid", "grid_sample"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax distribution over ``dim``; ``hard=True`` returns the
    one-hot of its argmax whose gradient is the soft sample's (straight-through).

    >>> import graphgrad as torch
    >>> y = torch.nn.functional.gumbel_softmax(torch.zeros(2, 3), hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -logits.detach().new_empty(logits.shape).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _base_coords(n, align_corners, dtype):
    """torch's linspace_from_neg_one: the normalised centres of ``n`` pixels."""
    if n <= 1:
        return tensor([0.0], dtype=dtype)
    steps = linspace(-1, 1, n, dtype=dtype)
    return steps if align_corners else steps * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4) over an output
    of ``size`` (N, C, H, W) or (N, C, D, H, W), in ``grid_sample``'s normalised coordinates.

    >>> import graphgrad as torch
    >>> theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> torch.nn.functional.affine_grid(theta, [1, 1, 1, 2], align_corners=True)
    tensor([[[[-1.,  0.],
              [ 1.,  0.]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n, d = size[0], len(spatial)
    # The base grid holds (x, y[, z], 1) per output point, x running along the last dim.
    axes = [_base_coords(s, align_corners, theta.dtype) for s in reversed(spatial)]
    mesh = np.meshgrid(*[a.numpy() for a in reversed(axes)], indexing="ij")
    base = np.stack([*reversed(mesh), np.ones(spatial, dtype=mesh[0].dtype)], axis=-1)
    base = tensor(base.reshape(1, -1, d + 1)).expand(n, -1, -1)
    return base.bmm(theta.transpose(1, 2)).reshape(n, *spatial, d)


def _clip(x, deriv, size):
    """torch's clip_coordinates_set_grad: clamp to [0, size - 1], slope 0 at and past the ends."""
    inside = (x > 0) & (x < size - 1)
    return np.clip(x, 0, size - 1), np.where(inside, deriv, 0)


def _reflect(x, deriv, twice_low, twice_high):
    """torch's reflect_coordinates_set_grad: fold ``x`` into [low, high] by mirror images."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(deriv)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = x - low
    sign = np.where(shifted < 0, -1, 1)
    dist = np.abs(shifted)
    flips = np.floor(dist / span)
    extra = np.fmod(dist, span)
    even = flips % 2 == 0
    out = np.where(even, extra + low, span - extra + low)
    return out, deriv * sign * np.where(even, 1, -1)


def _source(g, size, padding_mode, align_corners, pad=True):
    """The input coordinate of normalised grid values ``g`` along a dim of ``size`` and its
    derivative with respect to ``g`` (NumPy arrays)."""
    if align_corners:
        scale = (size - 1) / 2
        x = (g + 1) / 2 * (size - 1)
    else:
        scale = size / 2
        x = ((g + 1) * size - 1) / 2
    deriv = np.full_like(x, scale)
    if not pad or padding_mode == "zeros":
        return x, deriv
    if padding_mode == "reflection":
        bounds = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        x, deriv = _reflect(x, deriv, *bounds)
    return _clip(x, deriv, size)


def _tap(i, size, padding_mode, align_corners):
    """Bicubic taps: the padded integer coordinate ``i`` and whether it lies inside."""
    if padding_mode == "border":
        i = np.clip(i, 0, size - 1)
    elif padding_mode == "reflection":
        bounds = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        i = np.clip(np.rint(_reflect(i.astype(np.float64), i, *bounds)[0]), 0, size - 1)
        i = i.astype(np.int64)
    return i, (i >= 0) & (i < size)


def _cubic_weights(t):
    """The four cubic-convolution coefficients (A = -0.75) at fractions ``t`` (tensor ops)."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalised points of ``grid``
    (N, Ho, Wo, 2) or (N, Do, Ho, Wo, 3), ``(x, y[, z])`` in [-1, 1].

    >>> import graphgrad as torch
    >>> img = torch.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid = torch.tensor([[[[0.0, 0.0], [1.0, -1.0]]]])
    >>> torch.nn.functional.grid_sample(img, grid, align_corners=True)
    tensor([[[[1.5000, 1.0000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    _check(input, grid, mode)
    n, c, *spatial = input.shape
    d = len(spatial)
    out_shape = grid.shape[1:-1]
    g_raw = grid.detach().numpy().reshape(n, -1, d)
    gs = grid.reshape(n, -1, d)
    dims = []  # per spatial dim (W first): integer taps, validity, tap weights (tensors)
    for k in range(d):
        size = spatial[d - 1 - k]
        x, deriv = _source(g_raw[..., k], size, padding_mode, align_corners,
                           pad=mode != "bicubic")
        if mode == "nearest":
            i = np.rint(x).astype(np.int64)
            dims.append(([i], [(i >= 0) & (i < size)], None))
            continue
        x0 = np.floor(x)
        # t = x - floor(x) with slope ``deriv``: the gradient torch's kernels give the grid.
        t = gs[..., k] * tensor(deriv.astype(g_raw.dtype)) + tensor(
            (x - x0 - g_raw[..., k] * deriv).astype(g_raw.dtype))
        x0 = x0.astype(np.int64)
        if mode == "bilinear":
            taps = [x0, x0 + 1]
            dims.append((taps, [(i >= 0) & (i < size) for i in taps], [1 - t, t]))
        else:
            taps, valid = zip(*[_tap(x0 + j - 1, size, padding_mode, align_corners)
                                for j in range(4)])
            dims.append((list(taps), list(valid), _cubic_weights(t)))
    strides = np.cumprod([1, *spatial[::-1]])[:d]
    lin, masks, weights = [], [], []
    for corner in itertools.product(*[range(len(taps)) for taps, _, _ in dims]):
        index = sum(dims[k][0][j] * strides[k] for k, j in enumerate(corner))
        valid = np.logical_and.reduce([dims[k][1][j] for k, j in enumerate(corner)])
        lin.append(np.where(valid, index, 0))
        masks.append(valid)
        if mode != "nearest":
            w = dims[0][2][corner[0]]
            for k in range(1, d):
                w = w * dims[k][2][corner[k]]
            weights.append(w)
    # Channels last, one row per (batch, pixel): an index_select of rows, whose gradient
    # (index_add) is about twice as fast as gather's scatter over a channel-broadcast index.
    p = int(np.prod(spatial))
    rows = input.reshape(n, c, p).transpose(1, 2).reshape(n * p, c)
    flat = (np.stack(lin, axis=1) + (np.arange(n) * p)[:, None, None]).reshape(-1)
    values = rows.index_select(0, tensor(flat)).reshape(n, len(lin), -1, c)
    mask = np.stack(masks, axis=1)[..., None].astype(g_raw.dtype)
    if mode == "nearest":
        out = (values * tensor(mask)).sum(1)
        if grid.requires_grad:  # torch gives the grid a zero gradient, not none
            out = out + grid.reshape(-1)[:0].sum()
    else:
        out = (values * (stack(weights, 1).unsqueeze(-1) * tensor(mask))).sum(1)
    out = out.transpose(1, 2)
    return out.reshape(n, c, *out_shape)


def _check(input, grid, mode):
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and input.dim() == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype} but found {grid.dtype}")
    if any(s == 0 for s in input.shape[2:]):
        raise RuntimeError("grid_sampler(): expected input to have non-empty spatial dimensions, "
                           f"but input has sizes {list(input.shape)}")

