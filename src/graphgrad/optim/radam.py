"""RAdam: Adam whose adaptive step is rectified while its variance estimate is unreliable.

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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, as ``torch.optim.RAdam``; ``decoupled_weight_decay=True`` gives RAdamW.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -0.8000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False) -> None:
        check_lr(lr)
        check_betas(eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("capturable", False)
        self._steps_to_tensors()

    @no_grad_step
    def step(self, closure=None):
        """Performs one optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = (as_float(b) for b in group["betas"])
            lr, wd, eps = as_float(group["lr"]), group["weight_decay"], group["eps"]
            maximize, decoupled = group["maximize"], group["decoupled_weight_decay"]
            rho_inf = 2 / (1 - beta2) - 1
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = step_tensor()
                    state["exp_avg"] = zeros_state(p)
                    state["exp_avg_sq"] = zeros_state(p)
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
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                corrected = m._data / bias_correction1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    denom = np.sqrt(v._data)
                    denom += eps
                    adaptive_lr = (bias_correction2 ** 0.5) / denom
                    d -= ((corrected * lr) * adaptive_lr) * rect
                else:
                    d -= corrected * lr
                bump(p)
        return loss
