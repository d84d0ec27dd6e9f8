"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky), with a decaying step.

The update follows torch's single-tensor implementation formula by formula, on NumPy arrays
(See Note [In-place parameter updates] in optimizer.py). ``state["ax"]`` is the average.
"""

from __future__ import annotations

from .._tensor import Tensor
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

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD, as ``torch.optim.ASGD``.

    >>> import graphgrad as torch
    >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = torch.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -0.8000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False,
                 capturable=False) -> None:
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
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
        for p_state in self.state.values():
            for key in ("eta", "mu"):
                if key in p_state and not isinstance(p_state[key], Tensor):
                    p_state[key] = step_tensor(float(p_state[key]))

    @no_grad_step
    def step(self, closure=None):
        """Performs one optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr, lambd, alpha = as_float(group["lr"]), group["lambd"], group["alpha"]
            t0, wd, maximize = group["t0"], group["weight_decay"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = step_tensor()
                    state["eta"] = step_tensor(lr)
                    state["mu"] = step_tensor(1.0)
                    state["ax"] = zeros_state(p)
                step_t, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
                count_step(step_t)
                d = p._data
                g = p._grad._data
                if maximize:
                    g = -g
                if wd != 0:
                    g = g + wd * d
                eta_value = float(eta._data)
                d *= 1 - lambd * eta_value
                d += -eta_value * g
                bump(p)
                if float(mu._data) != 1:
                    ax._data += (d - ax._data) * mu._data
                else:
                    ax._data[...] = d
                bump(ax)
                step = float(step_t._data)
                eta._data[()] = lr / ((1 + lambd * lr * step) ** alpha)
                mu._data[()] = 1 / max(1, step - t0)
                bump(eta)
                bump(mu)
        return loss
