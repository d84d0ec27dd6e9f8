"""``F.linear`` and ``F.bilinear``: affine maps composed from the op table's contractions, so
their graphs carry torch's node names (AddmmBackward0 for a 2-d input with bias)."""

from __future__ import annotations

from ...amp import autocast_mode as _autocast
from ...ops.contraction import addmm, einsum

__all__ = ["linear", "bilinear"]


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    >>> import graphgrad as torch
    >>> x, w, b = torch.ones(2, 3), torch.ones(4, 3), torch.zeros(4)
    >>> torch.nn.functional.linear(x, w, b).shape
    torch.Size([2, 4])
    """
    low = _autocast.lower_dtype()
    if low is not None:  # linear is on torch's autocast list: its operands are cast together
        input, weight, bias = (_autocast.lower_cast(t, low) for t in (input, weight, bias))
    if input.dim() == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1 @ weight[k] @ x2 + bias[k]`` over the leading (batch) dims."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if weight.dim() != 3 or weight.shape[1] != input1.shape[-1] or \
            weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(f"bilinear(): weight of shape {list(weight.shape)} does not fit "
                           f"inputs of sizes {input1.shape[-1]} and {input2.shape[-1]}")
    out = einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias
