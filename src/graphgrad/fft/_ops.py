"""The three FFT primitives torch differentiates: complex-to-complex, real-to-complex and
complex-to-real, over a set of axes, with their adjoints as torch writes them.

Sizes (``n``/``s``) are applied before a primitive by narrowing or zero-padding its input, so
a primitive always transforms its input's own length (except c2r, whose real output length
``last`` cannot be read from the half spectrum). ``norm`` is NumPy's (and torch's) name for the
scaling; the adjoint of a transform is the opposite direction with the dual scaling.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..ops import _dispatch
from ..ops._dispatch import apply
from ..ops._opdef import defop

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.complex64): np.complex64,
               np.dtype(np.float64): np.complex128, np.dtype(np.complex128): np.complex128}
_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64,
            np.dtype(np.float32): np.float32, np.dtype(np.float64): np.float64}


def _c2c_fwd(xp, x, axes, norm, forward):
    fn = np.fft.fftn if forward else np.fft.ifftn
    return fn(x, axes=axes, norm=norm).astype(_COMPLEX_OF[x.dtype], copy=False)


def _r2c_fwd(xp, x, axes, norm, onesided):
    out = np.fft.rfftn(x, axes=axes, norm=norm) if onesided else \
        np.fft.fftn(x, axes=axes, norm=norm)
    return out.astype(_COMPLEX_OF[x.dtype], copy=False)


def _c2r_fwd(xp, x, axes, norm, last):
    s = [x.shape[a] for a in axes[:-1]] + [last]
    return np.fft.irfftn(x, s=s, axes=axes, norm=norm).astype(_REAL_OF[x.dtype], copy=False)


def c2c(ns, x, axes, norm, forward):
    if ns.differentiable:
        return apply(FFT_C2C, (x,), {"axes": axes, "norm": norm, "forward": forward})
    return _c2c_fwd(np, x, axes, norm, forward)


def _c2c_vjp(ns, g, axes, norm, forward):
    return c2c(ns, g, axes, _DUAL[norm], not forward)


def _r2c_vjp(ns, g, axes, norm, onesided, full):
    # torch: zero-fill the missing half of the spectrum, transform back, keep the real part.
    if onesided and g.shape[axes[-1]] != full:
        g = _zero_pad(ns, g, axes[-1], full)
    out = c2c(ns, g, axes, _DUAL[norm], False)
    return out.real


def _c2r_vjp(ns, g, axes, norm, last):
    # torch: rfft of the gradient, with the bins the half spectrum stands for twice doubled.
    if ns.differentiable:
        gi = apply(FFT_R2C, (g,), {"axes": axes, "norm": _DUAL[norm], "onesided": True,
                                   "full": last})
    else:
        gi = _r2c_fwd(np, g, axes, _DUAL[norm], True)
    half = gi.shape[axes[-1]]
    double = last - half
    if double > 0:
        w = np.ones(half)
        w[1:1 + double] = 2.0
        shape = [1] * gi.ndim
        shape[axes[-1]] = half
        gi = gi * ns.const(w.reshape(shape).astype(_REAL_OF[np.dtype(ns.raw(gi).dtype)]))
    return gi


def _zero_pad(ns, g, axis, size):
    if ns.differentiable:
        from ..nn.functional import pad

        widths = [0, 0] * (g.ndim - 1 - axis) + [0, size - g.shape[axis]]
        return pad(g, tuple(widths))
    widths = [(0, 0)] * g.ndim
    widths[axis] = (0, size - g.shape[axis])
    return np.pad(g, widths)


FFT_C2C = defop("fft_c2c", _c2c_fwd, _c2c_vjp, kind="opaque", dtype_rule="same",
                node="FftC2CBackward0")
FFT_R2C = defop("fft_r2c", lambda xp, x, axes, norm, onesided, full: _r2c_fwd(
    xp, x, axes, norm, onesided), _r2c_vjp, kind="opaque", dtype_rule="same",
    node="FftR2CBackward0")
FFT_C2R = defop("fft_c2r", _c2r_fwd, _c2r_vjp, kind="opaque", dtype_rule="same",
                node="FftC2RBackward0")
for _op in (FFT_C2C, FFT_R2C, FFT_C2R):
    _dispatch._COMPLEX_OPS[_op] = _op  # adjoints written for complex values already


def apply_c2c(x: Tensor, axes, norm, forward):
    return apply(FFT_C2C, (x,), {"axes": tuple(axes), "norm": norm, "forward": forward})


def apply_r2c(x: Tensor, axes, norm, onesided):
    return apply(FFT_R2C, (x,), {"axes": tuple(axes), "norm": norm, "onesided": onesided,
                                 "full": x.shape[axes[-1]]})


def apply_c2r(x: Tensor, axes, norm, last):
    return apply(FFT_C2R, (x,), {"axes": tuple(axes), "norm": norm, "last": last})
