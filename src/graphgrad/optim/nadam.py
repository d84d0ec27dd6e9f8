"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule (Dozat, 2016).

The update follows torch's single-tensor implementation formula by formula, in the
parameter's dtype, on NumPy arrays (See Note [In-place parameter updates] in optimizer.py).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, as ``torch.optim.NAdam``; ``decoupled_weight_decay=True`` gives NAdamW.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8944, -0.8944], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False) -> None:
        check_lr(lr)
        check_betas(eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
        self._steps_to_tensors()
        for p_state in self.state.values():
            if "mu_product" in p_state and not isinstance(p_state["mu_product"], Tensor):
                p_state["mu_product"] = step_tensor(float(p_state["mu_product"]))

    @no_grad_step
    def step(self, closure=None):
        """Performs one optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = (as_float(b) for b in group["betas"])
            lr, wd, eps = as_float(group["lr"]), group["weight_decay"], group["eps"]
            momentum_decay, maximize = group["momentum_decay"], group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = step_tensor()
                    state["mu_product"] = step_tensor(1.0)
                    state["exp_avg"] = zeros_state(p)
                    state["exp_avg_sq"] = zeros_state(p)
                step_t, mu_product = state["step"], state["mu_product"]
                step = count_step(step_t)
                d = p._data
                g = p._grad._data
                if maximize:
                    g = -g
                bias_correction2 = 1 - beta2 ** step
                if wd != 0:
                    if decoupled:
                        d *= 1 - lr * wd
                    else:
                        g = g + wd * d
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                # NOTE: torch keeps mu_product as a 0-d tensor of the scalar dtype, so the
                # running product is rounded there on every step.
                mu_product._data *= mu
                bump(mu_product)
                mu_prod = float(mu_product._data)
                m, v = state["exp_avg"], state["exp_avg_sq"]
                lerp_(m._data, g, 1 - beta1)
                v._data *= beta2
                v._data += ((1 - beta2) * g) * g
                bump(m)
                bump(v)
                denom = np.sqrt(v._data / bias_correction2)
                denom += eps
                d += (-lr * (1.0 - mu) / (1.0 - mu_prod)) * (g / denom)
                d += ((-lr * mu_next) / (1.0 - mu_prod * mu_next)) * (m._data / denom)
                bump(p)
        return loss
