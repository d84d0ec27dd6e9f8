"""``F.embedding_bag``: per-bag sums, means or maxima of embedding rows, as a composite of
``F.embedding`` (row lookup, padding and ``max_norm`` as torch) and ``index_add`` (per-bag
reduction); ``max`` picks each bag's maximising row per feature with ``gather``.

Bags are described once in NumPy (which input position belongs to which bag, which positions
are padding), so the differentiable part is three ops whatever the number of bags.
"""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...ops.creation import tensor, zeros
from ...ops.embedding import _renorm_, embedding

__all__ = ["embedding_bag"]


def _bags(input, offsets, include_last_offset):
    """(flat indices, bag of each covered position, number of bags) as NumPy arrays."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        rows, cols = input.shape
        return input._data.reshape(-1), np.repeat(np.arange(rows), cols), rows
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    idx, off = input._data, offsets._data.astype(np.int64)
    n = idx.size
    if off.size and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {off[0]}")
    if off.size and off[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {off[-1]}")
    ends = off[1:] if include_last_offset else np.append(off[1:], n)
    starts = off[:-1] if include_last_offset else off
    lengths = ends - starts
    if (lengths < 0).any():
        raise RuntimeError("embedding_bag: offsets must be non-decreasing")
    return idx, np.repeat(np.arange(starts.size), lengths), starts.size


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Reduces the embeddings of each bag of indices to one row: ``mode`` is ``sum``, ``mean``
    or ``max``; bags are the rows of a 2-d ``input`` or the runs of a 1-d ``input`` starting at
    ``offsets``. Padding indices and empty bags contribute nothing (an empty bag gives zeros).

    >>> import graphgrad as torch
    >>> w = torch.arange(6.0).reshape(3, 2)
    >>> torch.nn.functional.embedding_bag(torch.tensor([0, 2, 1]), w, torch.tensor([0, 2]))
    tensor([[2., 3.],
            [2., 3.]])
    """
    if not weight.dtype.is_floating_point and input.is_floating_point():
        weight, input = input, weight  # torch's deprecated (weight, input) argument order
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    idx, bag, num_bags = _bags(input, offsets, include_last_offset)
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    num, dim = weight.shape
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if padding_idx is not None and not -num <= padding_idx < num:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                           f"through {num - 1}, but got {padding_idx}")
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        # torch's embedding_bag kernel raises RuntimeError here (F.embedding: IndexError)
        at = int(np.flatnonzero((idx < 0) | (idx >= num))[0])
        raise RuntimeError(f"Index {at} of input takes value {int(idx.flat[at])} which is not "
                           f"in the valid range [0, {num})")
    covered = idx[:bag.size]
    keep = covered != (padding_idx % num) if padding_idx is not None else None
    pos = np.flatnonzero(keep) if keep is not None else np.arange(bag.size)
    kept_bag = bag[pos]
    rows = embedding(tensor(covered[pos]), weight, scale_grad_by_freq=scale_grad_by_freq)
    if mode == "max":
        return _bag_max(rows, kept_bag, num_bags, dim)
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)
        rows = rows * psw[tensor(pos)].unsqueeze(1)
    if mode == "mean":
        counts = np.bincount(kept_bag, minlength=num_bags)
        scale = (1.0 / np.maximum(counts, 1))[kept_bag].astype(rows._data.dtype)
        rows = rows * tensor(scale[:, None])
    out = zeros((num_bags, dim), dtype=weight.dtype)
    return out.index_add(0, tensor(kept_bag), rows)


def _bag_max(rows: Tensor, kept_bag, num_bags, dim):
    """Per bag and feature, the largest of the bag's rows (the first on ties), zeros for empty
    bags; the gradient reaches only the chosen rows, as torch's."""
    out = zeros((num_bags, dim), dtype=rows.dtype)
    if kept_bag.size == 0:
        return out + rows.sum(0)  # keeps the weight in the graph, as torch does
    r = rows._data
    counts = np.bincount(kept_bag, minlength=num_bags)
    full = np.flatnonzero(counts)
    starts = np.searchsorted(kept_bag, full)
    best = np.maximum.reduceat(r, starts, axis=0)
    group = np.repeat(np.arange(full.size), counts[full])
    where = np.where(r == best[group], np.arange(r.shape[0])[:, None], r.shape[0])
    first = np.minimum.reduceat(where, starts, axis=0)
    return out.index_add(0, tensor(full), rows.gather(0, tensor(first)))
