"""Weight averaging, as ``torch.optim.swa_utils``: AveragedModel (SWA and EMA), the SWALR
scheduler and update_bn, which recomputes BatchNorm statistics for averaged weights.

Averages are computed with graphgrad's tensor ops under no_grad, in torch's order of
operations, so they round as torch's CPU path does.
"""

from __future__ import annotations

import itertools
import math
from copy import deepcopy

from .. import _dtype
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA over lists of tensors: ``ema.lerp_(current, 1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean over lists of tensors."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            weight = float(1 / (num_averaged + 1))
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                diff = p_model - p_avg
                if isinstance(num_averaged, int):
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))
                else:
                    p_avg.addcdiv_(diff, num_averaged + 1)

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``decay * ema + (1 - decay) * current``, one tensor at a time."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean ``avg + (current - avg) / (n + 1)``, one tensor at a time."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_dtype(self_params, model_params):
    """Pairs grouped by dtype in order of first appearance (torch groups by device too)."""
    groups: dict = {}
    for a, b in zip(self_params, model_params):
        pair = groups.setdefault(a.dtype, ([], []))
        pair[0].append(a)
        pair[1].append(b)
    return list(groups.values())


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are averaged by ``update_parameters(model)``:
    a running mean (SWA) by default, or ``avg_fn`` / ``multi_avg_fn`` (e.g. EMA).

    >>> import graphgrad as torch
    >>> model = torch.nn.Linear(1, 1, bias=False)
    >>> swa = torch.optim.swa_utils.AveragedModel(model)
    >>> for w in (1.0, 3.0):
    ...     with torch.no_grad():
    ...         _ = model.weight.fill_(w)
    ...     swa.update_parameters(model)
    >>> swa.module.weight
    Parameter containing:
    tensor([[2.]], requires_grad=True)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        from .. import tensor

        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model) -> None:
        """Folds ``model``'s current parameters (and buffers with use_buffers) into the
        average; the first call copies them."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        self_detached, model_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        with no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach()
                self_detached.append(p_averaged.detach())
                model_detached.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)
            if self.n_averaged > 0:
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    for self_params, model_params in _group_by_dtype(self_detached,
                                                                     model_detached):
                        if self.multi_avg_fn:
                            self.multi_avg_fn(self_params, model_params, self.n_averaged)
                        else:
                            # torch's CPU path: the per-tensor running mean.
                            avg_fn = get_swa_avg_fn()
                            for p_averaged, p_model in zip(self_params, model_params):
                                p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))
                else:
                    for p_averaged, p_model in zip(self_detached, model_detached):
                        p_averaged.detach().copy_(
                            self.avg_fn(p_averaged.detach(), p_model, self.n_averaged))
            if not self.use_buffers:
                # Buffers (BatchNorm statistics) are copied, not averaged: see update_bn.
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach())
            self.n_averaged += 1


def update_bn(loader, model, device=None) -> None:
    """Recomputes every BatchNorm's running statistics with one pass over ``loader`` (a
    cumulative average, momentum None), then restores momenta and the training mode."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to ``swa_lr`` over ``anneal_epochs`` (cosine or linear),
    then holds it, as ``torch.optim.swa_utils.SWALR``."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # Recover the lr before annealing from the current one, then anneal from it.
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def state_dict(self) -> dict:
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
