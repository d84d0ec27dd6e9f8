"""Adam (and, with ``decoupled_weight_decay``, AdamW): adaptive moment estimation.

The update follows torch's single-tensor implementation formula by formula, in the
parameter's dtype, on NumPy arrays (See Note [In-place parameter updates] in optimizer.py).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
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

__all__ = ["Adam"]


def lerp_(a: np.ndarray, end, weight: float) -> None:
    """``a.lerp_(end, weight)`` with torch's two branches (exact at both ends)."""
    if abs(weight) < 0.5:
        a += weight * (end - a)
    else:
        a[...] = end + (weight - 1) * (end - a)


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False) -> None:
        check_lr(lr)
        check_betas(eps, betas, weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
        self._steps_to_tensors()

    @no_grad_step
    def step(self, closure=None):
        """Performs one optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = (as_float(b) for b in group["betas"])
            lr, wd, eps = as_float(group["lr"]), group["weight_decay"], group["eps"]
            amsgrad, maximize = group["amsgrad"], group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = step_tensor()
                    state["exp_avg"] = zeros_state(p)
                    state["exp_avg_sq"] = zeros_state(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = zeros_state(p)
                step = count_step(state["step"])
                d = p._data
                g = p._grad._data
                if maximize:
                    g = -g
                if wd != 0:
                    if decoupled:
                        d *= 1 - lr * wd
                    else:
                        g = g + wd * d
                m, v = state["exp_avg"], state["exp_avg_sq"]
                lerp_(m._data, g, 1 - beta1)
                v._data *= beta2
                v._data += ((1 - beta2) * g) * g
                bump(m)
                bump(v)
                step_size = lr / (1 - beta1 ** step)
                bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
                if amsgrad:
                    vmax = state["max_exp_avg_sq"]
                    np.maximum(vmax._data, v._data, out=vmax._data)
                    bump(vmax)
                    denom = np.sqrt(vmax._data) / bias_correction2_sqrt
                else:
                    denom = np.sqrt(v._data) / bias_correction2_sqrt
                denom += eps
                d += (-step_size * m._data) / denom
                bump(p)
        return loss
