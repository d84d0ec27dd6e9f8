"""AdamW: Adam with weight decay decoupled from the gradient (Loshchilov & Hutter).

It is torch's Adam with ``decoupled_weight_decay=True`` and a default weight decay of 1e-2.
"""

from __future__ import annotations

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """AdamW, as ``torch.optim.AdamW``: ``p *= 1 - lr * weight_decay`` before the Adam update.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8500, -0.8500], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state) -> None:
        # AdamW always decouples, whatever a loaded state dict says.
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
