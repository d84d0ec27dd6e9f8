"""Adamax: the infinity-norm variant of Adam (Kingma & Ba, section 7).

The update follows torch's single-tensor implementation formula by formula, in the
parameter's dtype, on NumPy arrays (See Note [In-place parameter updates] in optimizer.py).
"""

from __future__ import annotations

import numpy as np

from .adam import lerp_
from .optimizer import (
    Optimizer,
    as_float,
    bump,
    check_betas,
    check_lr,
    count_step,
    no_grad_step,
    step_tensor,
    zeros_state,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, as ``torch.optim.Adamax``.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False,
                 capturable=False) -> None:
        check_lr(lr)
        check_betas(eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        self._steps_to_tensors()

    @no_grad_step
    def step(self, closure=None):
        """Performs one optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = (as_float(b) for b in group["betas"])
            lr, wd, eps = as_float(group["lr"]), group["weight_decay"], group["eps"]
            maximize = group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = step_tensor()
                    state["exp_avg"] = zeros_state(p)
                    state["exp_inf"] = zeros_state(p)
                step = count_step(state["step"])
                d = p._data
                g = p._grad._data
                if maximize:
                    g = -g
                if wd != 0:
                    g = g + wd * d
                m, u = state["exp_avg"], state["exp_inf"]
                lerp_(m._data, g, 1 - beta1)
                u._data *= beta2
                norm = np.abs(g)
                norm += eps
                np.maximum(u._data, norm, out=u._data)
                bump(m)
                bump(u)
                clr = lr / (1 - beta1 ** step)
                d += -clr * (m._data / u._data)
                bump(p)
        return loss
