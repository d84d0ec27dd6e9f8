"""CyclicLR: the cyclical learning-rate policy (Smith, 2017), as
``torch.optim.lr_scheduler.CyclicLR``; re-exported from ``optim.lr_scheduler``.

lr cycles between ``base_lr`` and ``max_lr`` (triangular, triangular2, exp_range or a custom
``scale_fn``); with ``cycle_momentum`` momentum (or Adam's beta1) cycles inversely.
"""

from __future__ import annotations

import math
import types
from functools import partial

from .lr_scheduler import LRScheduler, _format_param, _set_group_value
from .optimizer import Optimizer

__all__ = ["CyclicLR"]


class CyclicLR(LRScheduler):
    """Cyclical learning rates, stepped once per batch.

    >>> import graphgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.55, 1.0, 0.55, 0.1]
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9,
                 last_epoch=-1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in self.optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(self.max_momentums,
                                                         self.base_momentums,
                                                         optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m_momentum, *group["betas"][1:])
                    else:
                        group["momentum"] = m_momentum
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        """The scaling policy: the custom ``scale_fn`` if given, else the mode's."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma ** x

    def get_lr(self) -> list:
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        # Custom functions scale by cycle or by iteration as scale_mode says.
        arg = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(arg)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            momentums = [max_m - (max_m - base_m) * scale_factor * self.scale_fn(arg)
                         for base_m, max_m in zip(self.base_momentums, self.max_momentums)]
            for group, momentum in zip(self.optimizer.param_groups, momentums):
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self) -> dict:
        """The base state without the scale functions; a callable object's ``__dict__`` is
        kept, as torch does, plain functions and lambdas are not."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()
