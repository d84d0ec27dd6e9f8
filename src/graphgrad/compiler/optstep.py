"""A replay-time SGD step: the opaque ``optimizer.step()`` instr's callable for plain SGD.

It does what ``SGD.step`` does (``p -= lr * g`` in eager's arithmetic, the version bump, the
global step counter) without the hook wrapper, grad-mode switch and per-parameter frame walk.
``lr`` is read from the param group on every call, so schedulers keep working. Anything the
fast path does not cover (hooks, momentum, weight decay, maximize, a closure, a subclass)
runs the real step: the result is always eager's.
"""

from __future__ import annotations

import numpy as np

from .._step import advance_step
from .._tensor import version_cell

__all__ = ["lower_step"]

# Below this many elements a NumPy in-place update beats a kernel call.
_KERNEL_MIN = 1 << 12

_SGD_SRC = '''
import numba


@numba.njit(cache=True, nogil=True, error_model="numpy")
def sgd_update(d, g, neg_lr):
    # d += (-lr) * g with eager's rounding: -lr is cast to d's dtype as NumPy's weak scalar is
    for i in range(d.shape[0]):
        d[i] += neg_lr * g[i]
'''

_kernel = None


def _update_kernel():
    """The numba in-place update (one pass, no temporary), or False without numba."""
    global _kernel
    if _kernel is None:
        from .codegen import numba_available

        if not numba_available():
            _kernel = False
        else:
            from .codegen import cache

            cache.configure_numba()
            _kernel = cache.load_source(_SGD_SRC).sgd_update
    return _kernel


def lower_step(owner, fn, args, kwargs, site):
    """The fast callable for ``owner.step(*args[1:], **kwargs)`` when ``owner`` is a plain SGD,
    else None (the caller records the real step)."""
    from ..optim import optimizer as _opt
    from ..optim.sgd import SGD

    if type(owner) is not SGD or len(args) != 1 or kwargs:
        return None
    opt = owner
    gpre, gpost = _opt._global_pre_hooks, _opt._global_post_hooks

    def step(*_):
        if (gpre or gpost or opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks
                or opt._in_step):
            fn(*args, **kwargs)
            return
        groups = opt.param_groups
        for group in groups:
            if (group["momentum"] or group["weight_decay"] or group["maximize"]
                    or type(group["lr"]) not in _NUMBERS):
                fn(*args, **kwargs)
                return
        for group in groups:
            neg = -group["lr"]
            for p in group["params"]:
                gt = p._grad
                if gt is None:
                    continue
                d, g = p._data, gt._data
                dt = d.dtype
                if d.ndim == 0 and g.ndim == 0 and dt in _FLOATS and g.dtype == dt:
                    # 0-d: NumPy scalar arithmetic, the same float rounding as the array ops
                    d[()] = d[()] + _FLOATS[dt](neg) * g[()]
                elif (d.size >= _KERNEL_MIN and g.dtype == dt and dt in _FLOATS
                      and d.flags.c_contiguous and g.flags.c_contiguous
                      and d.shape == g.shape and (_kernel or _update_kernel())):
                    _kernel(d.reshape(-1), g.reshape(-1), _FLOATS[dt](neg))
                else:
                    d += neg * g
                cell = p._vc or version_cell(p)
                cell[0] += 1
                if len(cell) == 1:
                    cell.append(site)
                else:
                    cell[1] = site
        advance_step()
    return step


_NUMBERS = (float, int)
_FLOATS = {np.dtype(np.float32): np.float32, np.dtype(np.float64): np.float64}
