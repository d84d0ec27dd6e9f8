"""Adagrad: per-coordinate learning rates from the running sum of squared gradients.

The update follows torch's single-tensor implementation formula by formula, on NumPy arrays
(See Note [In-place parameter updates] in optimizer.py). Sparse gradients do not exist here.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from .optimizer import Optimizer, as_float, bump, check_lr, count_step, no_grad_step, step_tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad``; its state is created at construction, as torch's.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = torch.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.9000, 1.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False,
                 fused=None) -> None:
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p: Tensor, initial_accumulator_value) -> None:
        state = self.state[p]
        state["step"] = step_tensor()
        state["sum"] = wrap(np.full_like(p._data, initial_accumulator_value), False, None)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        self._steps_to_tensors()

    @no_grad_step
    def step(self, closure=None):
        """Performs one optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = as_float(group["lr"]), group["lr_decay"], group["eps"]
            wd, maximize = group["weight_decay"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:  # a group added after construction (torch has no state)
                    self._init_state(p, group["initial_accumulator_value"])
                step = count_step(state["step"])
                d = p._data
                g = p._grad._data
                if maximize:
                    g = -g
                if wd != 0:
                    g = g + wd * d
                clr = lr / (1 + (step - 1) * lr_decay)
                acc = state["sum"]
                acc._data += g * g
                bump(acc)
                std = np.sqrt(acc._data)
                std += eps
                d += (-clr * g) / std
                bump(p)
        return loss
