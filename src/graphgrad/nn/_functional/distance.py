"""``F.normalize``, ``F.cosine_similarity`` and ``F.pairwise_distance``, composed from vector
norms as torch composes them, so values and gradients (also at eps) are torch's.
"""

from __future__ import annotations

import numpy as np

from ..._dtype import get_default_dtype
from ...autograd.grad_mode import no_grad

__all__ = ["normalize", "cosine_similarity", "pairwise_distance"]


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(norm_p(input, dim), eps)``.

    >>> import graphgrad as torch
    >>> torch.nn.functional.normalize(torch.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    if out is None:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
        return input / denom
    with no_grad():
        denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
        return out.copy_(input / denom)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 * x2, dim) / (max(|x1|, eps) * max(|x2|, eps))``, each input divided by its own
    norm first (keeps the result within [-1, 1]); inputs broadcast against each other.

    >>> import graphgrad as torch
    >>> torch.nn.functional.cosine_similarity(torch.tensor([[1.0, 0.0]]),
    ...                                       torch.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    if not x1.is_floating_point():
        x1 = x1.to(get_default_dtype())
    if not x2.is_floating_point():
        x2 = x2.to(get_default_dtype())
    shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    # NOTE: torch clamps clones of the norms in place under no_grad: the values are clamped,
    # the gradient flows as if they were not.
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``norm_p(x1 - x2 + eps)`` over the last dim of the broadcast inputs."""
    dim = max(x1.dim(), x2.dim())
    return (x1 - x2 + eps).norm(p, dim - 1, keepdim)
