"""RMSprop: gradients scaled by a running root mean square, optionally centered and with momentum.

The update follows torch's single-tensor implementation formula by formula, on NumPy arrays
(See Note [In-place parameter updates] in optimizer.py).
"""

from __future__ import annotations

import numpy as np

from .adam import lerp_
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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = torch.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.9000, 1.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False) -> None:
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
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
            lr, alpha, eps = as_float(group["lr"]), group["alpha"], group["eps"]
            wd, momentum = group["weight_decay"], group["momentum"]
            centered, maximize = group["centered"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = step_tensor()
                    state["square_avg"] = zeros_state(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_state(p)
                    if centered:
                        state["grad_avg"] = zeros_state(p)
                count_step(state["step"])
                d = p._data
                g = p._grad._data
                if maximize:
                    g = -g
                if wd != 0:
                    g = g + wd * d
                sq = state["square_avg"]
                sq._data *= alpha
                sq._data += ((1 - alpha) * g) * g
                bump(sq)
                if centered:
                    ga = state["grad_avg"]
                    lerp_(ga._data, g, 1 - alpha)
                    bump(ga)
                    avg = np.sqrt(sq._data - ga._data * ga._data)
                else:
                    avg = np.sqrt(sq._data)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf._data *= momentum
                    buf._data += g / avg
                    bump(buf)
                    d += -lr * buf._data
                else:
                    d += (-lr * g) / avg
                bump(p)
        return loss
