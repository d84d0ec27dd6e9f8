"""Scalar math helpers that generated numba kernels import (compiled on first use).

``tanh_f32`` is a rational approximation (Eigen's, clamped to |x| <= 7.9): it is branch-free,
so LLVM vectorizes the loop around it, where libm's ``tanhf`` is a call per element (about
25x slower here). Its error against float64 tanh is at most 7 float32 ulp (3.6e-7 relative).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_f32 = np.float32


@njit(cache=True, error_model="numpy", inline="always")
def tanh_f32(x):
    c = _f32(7.90531110763549805)
    y = min(max(x, -c), c)
    y2 = y * y
    p = y2 * _f32(-2.76076847742355e-16) + _f32(2.00018790482477e-13)
    p = p * y2 + _f32(-8.60467152213735e-11)
    p = p * y2 + _f32(5.12229709037114e-08)
    p = p * y2 + _f32(1.48572235717979e-05)
    p = p * y2 + _f32(6.37261928875436e-04)
    p = p * y2 + _f32(4.89352455891786e-03)
    p = p * y
    q = y2 * _f32(1.19825839466702e-06) + _f32(1.18534705686654e-04)
    q = q * y2 + _f32(2.26843463243900e-03)
    q = q * y2 + _f32(4.89352518554385e-03)
    r = p / q
    # tiny inputs: tanh(x) == x to float32 precision (and keeps -0.0); NaN passes through
    return x if (abs(x) < _f32(0.0004) or x != x) else r


@njit(cache=True, error_model="numpy", inline="always")
def tanh_f64(x):
    return math.tanh(x)


@njit(cache=True, error_model="numpy", fastmath={"reassoc"})
def radd(a, b):
    # a reduction's add, allowed to reassociate so that LLVM vectorizes the accumulation (the
    # flag is per instruction and survives LLVM's inlining; the kernel's own math keeps
    # strict IEEE order)
    return a + b
