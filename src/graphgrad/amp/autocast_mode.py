"""``autocast``: torch's mixed-precision region, as a context manager and decorator.

An enabled CPU region really casts, as torch's CPU autocast does: the ops of torch's
lower-precision list (matmul, mm, bmm, addmm, baddbmm, addbmm, linear, the convolutions,
prelu, scaled_dot_product_attention, ...) cast their float32/float16/bfloat16 tensor operands to
the region's dtype (bfloat16 by default) and return that dtype; the ops of torch's float32 list
(the losses, prod, the linear-algebra solvers, ...) cast bfloat16/float16 operands to float32.
float64 operands and every other op are left alone, and an op given ``dtype=`` keeps it. The
casts are recorded (ToCopyBackward0), so gradients come back in the parameters' dtypes. The
dispatcher applies the lists (``ops/_narrow.py``); ``LOWER`` and ``FP32`` below name the op
records. CUDA regions disable themselves with torch's warning (no CUDA here).
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import _dtype
from .._device import device as _device

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
           "get_autocast_dtype", "set_autocast_dtype", "is_autocast_cpu_enabled",
           "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
           "get_autocast_gpu_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
           "custom_fwd", "custom_bwd"]

# torch's "CPU Ops that can autocast to bfloat16" (and to float16), by graphgrad op-record name
LOWER = frozenset({"mm", "bmm", "matmul", "matmul.vecmat", "addmm", "baddbmm", "addbmm",
                   "convolution", "convolution_weight", "_prelu_kernel", "linalg_vecdot",
                   "scaled_dot_product_attention", "conv_tbc"})
# torch's "CPU Ops that can autocast to float32" found in graphgrad's op records (the losses are
# cast in nn.functional, where they are composed)
FP32 = frozenset({"prod", "binary_cross_entropy", "cholesky_inverse", "cholesky_solve",
                  "linalg_cholesky_ex", "linalg_inv_ex", "linalg_lu_solve", "linalg_qr",
                  "linalg_svd", "linalg_eigh", "linalg_solve", "linalg_solve_triangular",
                  "linalg_pinv", "geqrf", "linalg_lu_factor_ex", "linalg_det", "linalg_slogdet",
                  "linalg_matrix_exp", "linalg_lu", "linalg_ldl_factor_ex", "linalg_ldl_solve"})

class _State(threading.local):
    def __init__(self):
        self.enabled = {}
        self.dtype = {}
        self.cache = True
        self.nesting = 0


_state = _State()
_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16"}


def _publish():
    """Tells the dispatcher the CPU region's dtype (None: no casting)."""
    from ..ops import _dispatch, _narrow

    if _state.enabled.get("cpu", False):
        _narrow.set_autocast(get_autocast_dtype("cpu").np)
        _dispatch._narrow = _narrow
    else:
        _narrow.set_autocast(None)


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` accepts the device type (cpu and cuda, as in torch)."""
    return device_type in ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia")


def is_autocast_enabled(device_type=None) -> bool:
    """Whether an enabled autocast region is active for the device type ('cuda' by default)."""
    return _state.enabled.get("cuda" if device_type is None else device_type, False)


def set_autocast_enabled(device_type, enabled=None) -> None:
    if enabled is None:  # torch's old one-argument form sets CUDA's flag
        device_type, enabled = "cuda", device_type
    _state.enabled[device_type] = bool(enabled)
    if device_type == "cpu":
        _publish()


def get_autocast_dtype(device_type) -> _dtype.dtype:
    """The dtype an autocast region of ``device_type`` casts to (bfloat16 on CPU)."""
    name = _state.dtype.get(device_type)
    return _dtype._NAMES[name or _DEFAULT_DTYPE.get(device_type, "float16")]


def set_autocast_dtype(device_type, dtype) -> None:
    _state.dtype[device_type] = dtype.name
    if device_type == "cpu":
        _publish()


def is_autocast_cpu_enabled() -> bool:
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled) -> None:
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dtype.dtype:
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> _dtype.dtype:
    return get_autocast_dtype("cuda")


def is_autocast_cache_enabled() -> bool:
    return _state.cache


def set_autocast_cache_enabled(enabled) -> None:
    _state.cache = bool(enabled)


def clear_autocast_cache() -> None:
    """No cast cache is kept (each cast is recorded where it happens)."""


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


def fp32_function(fn):
    """Wraps a composed function of torch's CPU float32 list (a loss): in an enabled CPU region
    its bfloat16/float16 tensor arguments are cast to float32 first, as torch's op would."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if not _state.enabled.get("cpu", False):
            return fn(*args, **kwargs)
        args = [_to_fp32(a) for a in args]
        kwargs = {k: _to_fp32(v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    return run


def _to_fp32(value):
    from .._tensor import Tensor

    if isinstance(value, Tensor) and value._data.dtype.itemsize == 2 and \
            value.dtype.is_floating_point:
        return value.to(_dtype.float32)
    return value


def lower_cast(value, dtype):
    """``value`` cast to the region's lower dtype when autocast would cast it (a float32,
    float16 or bfloat16 tensor; float64 and everything else as they are)."""
    from .._tensor import Tensor

    if isinstance(value, Tensor) and value.dtype is not dtype and value.dtype in (
            _dtype.float32, _dtype.float16, _dtype.bfloat16):
        return value.to(dtype)
    return value


def lower_dtype():
    """The dtype of the enabled CPU region, or None."""
    return get_autocast_dtype("cpu") if _state.enabled.get("cpu", False) else None


def _cpu_dtypes():
    return (_dtype.bfloat16, _dtype.float16)


class autocast:
    """Marks a region (or a function, as a decorator) as autocast, with torch's arguments.

    >>> import graphgrad as torch
    >>> with torch.autocast("cpu", enabled=False):
    ...     torch.is_autocast_enabled("cpu")
    False
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            _device(device_type)  # an unknown type raises torch's RuntimeError here
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", UserWarning, stacklevel=2)
                enabled = False
            elif device_type == "cpu" and dtype is not None and dtype not in _cpu_dtypes():
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                              "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                              "torch.float16 currently.", UserWarning, stacklevel=2)
                enabled = False
        if self.fast_dtype is None:
            self.fast_dtype = get_autocast_dtype(device_type)
        if enabled and self.fast_dtype is _dtype.bfloat16:
            _dtype.bfloat16.np  # noqa: B018 - needs ml_dtypes: says which extra, before the region
        self._enabled = bool(enabled)

    def __enter__(self):
        self._prev = _state.enabled.get(self.device, False)
        self._prev_dtype = _state.dtype.get(self.device)
        self._prev_cache = _state.cache
        _state.enabled[self.device] = self._enabled
        _state.dtype[self.device] = self.fast_dtype.name
        _state.cache = self._cache_enabled
        _state.nesting += 1
        if self.device == "cpu":
            _publish()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _state.enabled[self.device] = self._prev
        _state.dtype[self.device] = self._prev_dtype
        _state.cache = self._prev_cache
        _state.nesting -= 1
        if self.device == "cpu":
            _publish()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def custom_fwd(fwd=None, *, device_type=None, cast_inputs=None):
    """A custom Function's forward under autocast; with ``cast_inputs``, its floating tensor
    arguments are cast to that dtype and the forward runs with autocast off, as torch."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    if cast_inputs is None:
        return fwd

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        dev = device_type or "cuda"
        if not is_autocast_enabled(dev):
            return fwd(*args, **kwargs)
        args = [_cast_arg(a, cast_inputs) for a in args]
        kwargs = {k: _cast_arg(v, cast_inputs) for k, v in kwargs.items()}
        with autocast(dev, enabled=False):
            return fwd(*args, **kwargs)
    return decorate_fwd


def _cast_arg(value, dtype):
    from .._tensor import Tensor

    if isinstance(value, Tensor) and value.is_floating_point() and value.dtype is not \
            _dtype.float64:
        return value.to(dtype)
    return value


def custom_bwd(bwd=None, *, device_type=None):
    """A custom Function's backward under autocast: runs it as is."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
