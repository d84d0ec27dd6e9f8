"""SGD: stochastic gradient descent with momentum, dampening, Nesterov and weight decay.

The update follows torch's single-tensor implementation formula by formula, on each
parameter's NumPy array (See Note [In-place parameter updates] in optimizer.py).
"""

from __future__ import annotations

import numpy as np

from .._tensor import wrap
from .optimizer import Optimizer, as_float, bump, check_lr, no_grad_step

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None) -> None:
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @no_grad_step
    def step(self, closure=None):
        """Performs one optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = as_float(group["lr"])
            wd, momentum = group["weight_decay"], group["momentum"]
            dampening, nesterov = group["dampening"], group["nesterov"]
            maximize = group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                d = p._data
                g = p._grad._data
                if maximize:
                    g = -g
                if wd != 0:
                    g = g + wd * d
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = wrap(np.array(g, copy=True), False,
                                                              None)
                    else:
                        b = buf._data
                        b *= momentum
                        b += (1 - dampening) * g
                        bump(buf)
                    g = g + momentum * buf._data if nesterov else buf._data
                _add_scaled(d, g, -lr)
                bump(p)
        return loss


_CHUNK = 1 << 16


def _add_scaled(d, g, s):
    """``d += s * g`` without a gradient-sized temporary (in chunks for large arrays; the
    same rounding: the product, then the sum, element by element): the update's temporary
    was the peak of a compiled model's training step."""
    if (g.size <= _CHUNK or d.shape != g.shape or d.dtype != g.dtype
            or not (d.flags.c_contiguous and g.flags.c_contiguous)):
        d += s * g
        return
    fd, fg = d.reshape(-1), g.reshape(-1)
    tmp = np.empty(_CHUNK, d.dtype)
    for i in range(0, fd.size, _CHUNK):
        j = min(i + _CHUNK, fd.size)
        t = tmp[:j - i]
        np.multiply(fg[i:j], s, out=t)
        fd[i:j] += t
