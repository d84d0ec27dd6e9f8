"""``F.embedding``: rows of a weight matrix picked by integer indices, as a fused primitive.

Its decomposition is ``weight[indices]`` (advanced indexing); it is fused because its gradient
differs: the row at ``padding_idx`` gets none, and ``scale_grad_by_freq`` divides each row's
gradient by how often its index occurs in the batch. ``max_norm`` renormalizes the rows that
are looked up, in place and outside autograd, before the lookup (torch's embedding_renorm_).
"""

from __future__ import annotations

import numpy as np

from ._dispatch import apply
from ._opdef import defop
from .inplace import _bump

__all__ = ["embedding"]


def _embedding_fwd(xp, weight, indices, padding_idx, scale_grad_by_freq, num_weights):
    return xp.take(weight, indices, axis=0)


def _embedding_vjp(ns, g, indices, padding_idx, scale_grad_by_freq, num_weights):
    idx = ns.raw(indices)
    rg = ns.raw(g)
    if padding_idx >= 0:
        keep = (idx != padding_idx).astype(rg.dtype)
        g = g * ns.const(keep[..., None])
    if scale_grad_by_freq:
        counts = np.bincount(idx.ravel(), minlength=num_weights).astype(rg.dtype)
        g = g * ns.const((1.0 / counts[idx])[..., None])
    return ns.index_put_grad(g, (num_weights, rg.shape[-1]), (idx,)), None


EMBEDDING = defop("embedding", _embedding_fwd, _embedding_vjp, kind="indexing", save=(1,),
                  dtype_rule="same", node="EmbeddingBackward0", onnx="Gather",
                  hidden_inputs=(1,))


def _renorm_(weight, idx, max_norm, norm_type):
    """Rows of ``weight`` named in ``idx`` whose ``norm_type``-norm exceeds ``max_norm`` are
    scaled to ``max_norm / (norm + 1e-7)`` of themselves, in place (torch's embedding_renorm_)."""
    rows = np.unique(idx)
    w = weight._data
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
    big = norms > max_norm
    if big.any():
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[rows[big]] *= scale[:, None]
        _bump(weight)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Looks up rows of ``weight`` (num_embeddings, dim) at the integer ``input``.

    >>> import graphgrad as torch
    >>> w = torch.arange(6.0).reshape(3, 2)
    >>> torch.nn.functional.embedding(torch.tensor([[2, 0]]), w)
    tensor([[[4., 5.],
             [0., 1.]]])
    """
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= num or padding_idx < 0 and padding_idx < -num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise RuntimeError("embedding: sparse=True needs sparse gradients, which graphgrad "
                           "does not have; use sparse=False")
    idx = input._data
    if idx.dtype not in (np.int64, np.int32):
        kind = {"float32": "Float", "float64": "Double", "bool": "Bool", "int16": "Short",
                "int8": "Char", "uint8": "Byte", "float16": "Half"}.get(idx.dtype.name, "")
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got torch.{kind}Tensor "
                           "instead (while checking arguments for embedding)")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    return apply(EMBEDDING, (weight, input), {"padding_idx": padding_idx,
                                              "scale_grad_by_freq": bool(scale_grad_by_freq),
                                              "num_weights": num})
