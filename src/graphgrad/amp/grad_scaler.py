"""``GradScaler``: loss scaling with inf/nan step skipping, as torch's ``torch.amp.GradScaler``.

It is torch's algorithm on graphgrad tensors: ``scale`` multiplies by the float32 scale,
``unscale_`` multiplies the gradients by its float32 reciprocal and records non-finite values,
``step`` skips the optimizer step when any were found, ``update`` backs the scale off after a
skip and grows it after ``growth_interval`` clean steps. A 'cuda' scaler disables itself with
torch's warning (no CUDA here); a disabled scaler passes everything through.
"""

from __future__ import annotations

import enum
import warnings
from collections import abc, defaultdict

import numpy as np

from .._dtype import float32
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.creation import tensor

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf": None}


def _f32(x) -> float:
    return float(np.float32(x))


class GradScaler:
    """Scales a loss before ``backward`` so small gradients survive reduced precision.

    >>> import graphgrad as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    >>> opt = torch.optim.SGD([w], lr=0.1)
    >>> scaler = torch.amp.GradScaler("cpu")
    >>> scaler.scale((w * w).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    >>> w
    Parameter containing:
    tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_fresh_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)

    def _lazy_init(self):
        if self._scale is None:
            self._scale = _f32(self._init_scale)
            self._growth_tracker = int(self._init_growth_tracker)

    def _scale_tensor(self) -> Tensor:
        # A 0-d float32 tensor, as torch's: a 0-d float16 loss times it is float32.
        return tensor(self._scale, dtype=float32)

    def scale(self, outputs):
        """Multiplies a tensor (or each tensor of an iterable) by the scale factor."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            self._lazy_init()
            return outputs * self._scale_tensor()

        def apply_scale(val):
            if isinstance(val, Tensor):
                self._lazy_init()
                return val * self._scale_tensor()
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype.name == "float16":
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not np.isfinite(grad._data).all():
                        found = True
                    if inv_scale != 1.0:
                        grad.mul_(inv_scale)
        return found

    def unscale_(self, optimizer) -> None:
        """Divides ``optimizer``'s gradients by the scale, once per step, noting infs/NaNs."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = _f32(1.0 / self._scale)
        state["found_inf"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales (if not done yet), then runs ``optimizer.step`` unless a gradient was
        non-finite; returns the step's return value or None."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Backs the scale off after a skipped step, grows it after ``growth_interval`` clean
        ones, or sets ``new_scale``."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale = _f32(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if (not isinstance(new_scale, Tensor) or new_scale.numel() != 1
                        or new_scale.requires_grad):
                    raise AssertionError(reason)
                self._scale = _f32(new_scale.item())
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale = _f32(np.float32(self._scale) * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = np.float32(self._scale) * np.float32(self._growth_factor)
                    if np.isfinite(grown):
                        self._scale = float(grown)
                    self._growth_tracker = 0
                else:
                    self._growth_tracker = successful
        self._per_optimizer_states = defaultdict(_fresh_state)

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return (self._init_growth_tracker if self._growth_tracker is None
                else self._growth_tracker)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = _f32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = int(state_dict["_growth_tracker"])
