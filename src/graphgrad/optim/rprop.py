"""Rprop: resilient backpropagation, per-coordinate step sizes adapted by gradient signs.

The update follows torch's single-tensor implementation formula by formula, in the
parameter's dtype, on NumPy arrays (See Note [In-place parameter updates] in optimizer.py).
"""

from __future__ import annotations

import numpy as np

from .._tensor import wrap
from .optimizer import (
    Optimizer,
    as_float,
    bump,
    check_lr,
    count_step,
    no_grad_step,
    step_tensor,
    zeros_state,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop, as ``torch.optim.Rprop``: a step grows by ``etas[1]`` while the gradient keeps
    its sign, shrinks by ``etas[0]`` when it flips, clamped to ``step_sizes``.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False,
                 differentiable=False) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
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
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            maximize = group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                g = p._grad._data
                if len(state) == 0:
                    state["step"] = step_tensor()
                    state["prev"] = zeros_state(p)
                    state["step_size"] = wrap(np.full_like(g, as_float(group["lr"])), False,
                                              None)
                count_step(state["step"])
                if maximize:
                    g = -g
                prev, step_size = state["prev"], state["step_size"]
                sign = np.empty_like(prev._data)  # an array even for a 0-d parameter
                np.multiply(g, prev._data, out=sign)
                np.sign(sign, out=sign)
                sign[sign > 0] = etaplus
                sign[sign < 0] = etaminus
                sign[sign == 0] = 1
                s = step_size._data
                s *= sign
                np.clip(s, step_size_min, step_size_max, out=s)
                g = np.array(g, copy=True)
                # NOTE: a sign flip zeroes the gradient, so the next step sees no flip.
                g[sign == etaminus] = 0
                p._data += -np.sign(g) * s
                prev._data[...] = g
                bump(step_size)
                bump(prev)
                bump(p)
        return loss
