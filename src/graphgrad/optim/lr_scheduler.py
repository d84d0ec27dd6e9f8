"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``.

Each scheduler rewrites its optimizer's ``group["lr"]`` on ``step()``. The formulas are
torch's chainable (recursive) forms, so schedulers compose and match torch's float results;
``step(epoch)`` uses the closed form where torch has one.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from functools import wraps
from weakref import ref

from .._tensor import Tensor
from .optimizer import Optimizer, as_float

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "SequentialLR", "PolynomialLR", "CosineAnnealingLR",
           "ChainedScheduler", "ReduceLROnPlateau", "CosineAnnealingWarmRestarts",
           "OneCycleLR", "CyclicLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")


def _copy(value):
    return value.clone() if isinstance(value, Tensor) else value


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per param group (a scalar is repeated)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def _group_values(optimizer: Optimizer, key: str) -> list:
    """``group[key]`` for every group, tensors copied so callers cannot alias them."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group: dict, key: str, value) -> None:
    """Sets ``group[key]``; a tensor-valued entry is filled in place, as torch does."""
    if isinstance(group[key], Tensor):
        group[key].fill_(as_float(value))
    else:
        group[key] = value


class LRScheduler:
    """Base class: subclasses implement ``get_lr`` (the next lrs, from the current ones).

    Construction sets ``group["initial_lr"]`` (when ``last_epoch == -1``) and takes the first
    step, so ``get_last_lr()`` is the lr of epoch 0.
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\nThis typically happens "
                        "when:\n1. You're trying to resume training from a checkpoint but "
                        "haven't properly loaded the optimizer state\n2. You're using "
                        "last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_step_called(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict:
        """Every attribute but the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates the last ``step()`` set, one per param group."""
        return self._last_lr

    def get_lr(self) -> list:
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning "
                              "rate scheduler initialization. Please, make sure to call "
                              "`optimizer.step()` before `lr_scheduler.step()`. See more details "
                              "at https://pytorch.org/docs/stable/optim.html#how-to-adjust-"
                              "learning-rate", UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                              "In PyTorch 1.1.0 and later, you should call them in the opposite "
                              "order: `optimizer.step()` before `lr_scheduler.step()`.  Failure "
                              "to do this will result in PyTorch skipping the first value of "
                              "the learning rate schedule. See more details at "
                              "https://pytorch.org/docs/stable/optim.html#how-to-adjust-"
                              "learning-rate", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=3)


_LRScheduler = LRScheduler


def _track_step_called(opt: Optimizer) -> None:
    """Wraps ``opt.step`` once so schedulers can warn when they step before the optimizer."""
    if hasattr(opt.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = ref(opt)
    func = opt.step.__func__

    @wraps(func)
    def wrapper(*args, **kwargs):
        o = opt_ref()
        o._opt_called = True
        return func.__get__(o, o.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    opt.step = wrapper


class _LambdaState:
    """state_dict / load_state_dict for schedulers holding ``lr_lambdas``: callable objects'
    ``__dict__`` is saved, plain functions are not (as torch)."""

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


def _lambdas(optimizer: Optimizer, lr_lambda) -> list:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                         f"{len(lr_lambda)}")
    return list(lr_lambda)


class LambdaLR(_LambdaState, LRScheduler):
    """lr = initial lr * ``lr_lambda(epoch)`` (one function, or one per group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas,
                                                                      self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """lr *= ``lr_lambda(epoch)`` every step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """lr *= gamma every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr *= gamma at each milestone epoch (a repeated milestone multiplies again)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial lr * factor until ``total_iters``, then the initial lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """lr moves linearly from ``start_factor`` to ``end_factor`` times the initial lr over
    ``total_iters`` steps."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        scale = 1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)
        return [group["lr"] * scale for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr *= gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr decays as ``(1 - epoch / total_iters) ** power`` times the initial lr."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        factor = ((1.0 - self.last_epoch / self.total_iters)
                  / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to ``eta_min`` over ``T_max`` epochs, in torch's
    recursive form (it keeps oscillating past ``T_max``)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        groups, e, T, lo = self.optimizer.param_groups, self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and e > 0:
            return [lo + (base_lr - lo) * (1 + math.cos(e * math.pi / T)) / 2
                    for base_lr in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [group["lr"] + (base_lr - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
                * (group["lr"] - lo) + lo for group in groups]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


def _check_children(owner: str, optimizer, schedulers) -> None:
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {i} in the given schedulers sequence.")
        if optimizer is not scheduler.optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {scheduler.__class__.__name__} at index {i} "
                             f"has {scheduler.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


class _Composite:
    """state_dict / load_state_dict for schedulers made of schedulers."""

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers
        for s, saved in zip(self._schedulers, schedulers):
            s.load_state_dict(saved)


class SequentialLR(_Composite, LRScheduler):
    """Runs ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1) -> None:
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_children(name, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # The children stepped once each when made; undo that and restart the first.
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite, LRScheduler):
    """Steps every scheduler in the list on each ``step()``."""

    def __init__(self, schedulers, optimizer=None) -> None:
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_children(name, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs (``T_i`` grows by ``T_mult``)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr rises from ``max_lr / div_factor`` to ``max_lr`` then anneals to
    ``initial_lr / final_div_factor``; momentum (SGD) or beta1 (Adam) cycles inversely."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        up = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                _phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                       "max_momentum")]
        else:
            self._schedule_phases = [
                _phase(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                       "max_momentum")]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_mom, b_mom, group in zip(max_momentums, base_momentums,
                                               optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m_mom, *group["betas"][1:])
                    else:
                        group["momentum"] = m_mom
                    group["max_momentum"] = m_mom
                    group["base_momentum"] = b_mom
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._warn_outside_step()
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]],
                                                     group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


def _phase(end_step, start_lr, end_lr, start_momentum, end_momentum) -> dict:
    return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
            "start_momentum": start_momentum, "end_momentum": end_momentum}


class ReduceLROnPlateau(LRScheduler):
    """lr *= factor when a metric has stopped improving for ``patience`` epochs."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch) -> None:
        n = len(self.optimizer.param_groups)
        if n != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({n}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to "
                    "a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * n
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a, best) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


# CyclicLR lives in its own file; imported last as it subclasses LRScheduler.
from .cyclic_lr import CyclicLR  # noqa: E402
