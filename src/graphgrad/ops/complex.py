"""Complex numbers: real/imag/view_as_real/view_as_complex (views), complex, polar, conj, angle,
and the complex forms of ops whose derivative is not holomorphic (abs).

Holomorphic ops (add, mul, exp, matmul, sum, ...) need no record here: the dispatcher
conjugates their real rules (See Note [Complex rules] in ops/_dispatch.py). The rules below are
torch's: for a real loss L the gradient of complex z is dL/dRe(z) + i dL/dIm(z).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor
from . import _dispatch
from ._dispatch import apply, unary
from ._namespace import DIFF, RAW
from ._opdef import OPS, defop

__all__ = ["real", "imag", "view_as_real", "view_as_complex", "complex", "polar", "conj",
           "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "angle"]

# NOTE: a complex gradient reaching a real input keeps its real part (torch's rule); the engine
# does that with astype, which NumPy accompanies with a ComplexWarning meant for accidental
# casts. graphgrad's casts are deliberate, so the warning is silenced for its own modules only.
warnings.filterwarnings("ignore", category=np.exceptions.ComplexWarning, module=r"graphgrad\.")


def _name(dt) -> str:
    return "ComplexFloat" if np.dtype(dt) == np.complex64 else "ComplexDouble"


# -- views: real, imag, view_as_real, view_as_complex -----------------------------------------
def _real_fwd(xp, z):
    return z.real


def _imag_fwd(xp, z):
    return z.imag


def _view_as_real_fwd(xp, z):
    # Any strides work (torch doubles them): the real part's view plus a (real, imag) axis.
    re = z.real
    return np.lib.stride_tricks.as_strided(re, z.shape + (2,), z.strides + (re.itemsize,))


def _view_as_complex_fwd(xp, x):
    cplx = np.complex64 if x.dtype == np.float32 else np.complex128
    out = x.view(cplx)
    return out.reshape(x.shape[:-1])


def _to_complex_grad(ns, g):
    """A real (..., 2) gradient read as complex values (the inverse of view_as_real)."""
    if ns.differentiable:
        return view_as_complex(g.contiguous())
    return _view_as_complex_fwd(np, np.ascontiguousarray(g))


def _to_real_grad(ns, g):
    if ns.differentiable:
        return view_as_real(g)
    return _view_as_real_fwd(np, np.ascontiguousarray(g))


REAL = defop("real", _real_fwd, lambda ns, g: g, kind="movement", dtype_rule="same",
             node="RealBackward0", view=True)
IMAG = defop("imag", _imag_fwd, lambda ns, g: g * 1j, kind="movement", dtype_rule="same",
             node="ImagBackward0", view=True)
VIEW_AS_REAL = defop("view_as_real", _view_as_real_fwd, _to_complex_grad, kind="movement",
                     dtype_rule="same", node="ViewAsRealBackward0", view=True)
VIEW_AS_COMPLEX = defop("view_as_complex", _view_as_complex_fwd, _to_real_grad,
                        kind="movement", dtype_rule="same", node="ViewAsComplexBackward0",
                        view=True)


def _need_complex(x, what):
    if not x._data.dtype.kind == "c":
        raise RuntimeError(f"{what} is not implemented for tensors with non-complex dtypes.")


def real(input):
    """The real part of a complex tensor (a view); a real tensor is returned as is."""
    if input._data.dtype.kind != "c":
        return input
    return unary(REAL, input)


def imag(input):
    """The imaginary part of a complex tensor (a view)."""
    _need_complex(input, "imag")
    return unary(IMAG, input)


def view_as_real(input):
    """A real (..., 2) view of a complex tensor: the last dim holds (real, imag)."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return unary(VIEW_AS_REAL, input)


def view_as_complex(input):
    """A complex view of a float32/float64 tensor whose last dim is 2 with stride 1."""
    a = input._data
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {input.dtype}")
    if a.ndim == 0 or a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if a.strides[-1] != a.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * a.itemsize) for s in a.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return unary(VIEW_AS_COMPLEX, input)


# -- complex(real, imag) and polar(abs, angle) ------------------------------------------------
def _complex_fwd(xp, re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape),
                   dtype=np.complex64 if re.dtype == np.float32 else np.complex128)
    out.real = re
    out.imag = im
    return out


def _complex_vjp(ns, g):
    return _part(ns, g, "real"), _part(ns, g, "imag")


def _polar_fwd(xp, r, theta):
    out = _complex_fwd(xp, r * np.cos(theta), r * np.sin(theta))
    return out.astype(np.complex64 if r.dtype == np.float32 else np.complex128, copy=False)


def _polar_vjp(ns, g, r, theta):
    # dw/dtheta = i w gives Re(conj(g) i w); for abs torch uses Re(conj(g) sgn(w)), that is
    # e^{i theta} times sign(r): a negative abs gets the gradient of |abs|, and 0 gets 0.
    c, s = ns.cos(theta), ns.sin(theta)
    gr, gi = _part(ns, g, "real"), _part(ns, g, "imag")
    return (gr * c + gi * s) * ns.sign(r), (gi * c - gr * s) * r


def _part(ns, g, which):
    if ns.differentiable:
        return real(g) if which == "real" else imag(g)
    return g.real if which == "real" else g.imag


COMPLEX = defop("complex", _complex_fwd, _complex_vjp, kind="elementwise", dtype_rule="same",
                node="ComplexBackward0")
POLAR = defop("polar", _polar_fwd, _polar_vjp, kind="elementwise", dtype_rule="same",
              save=(0, 1), node="PolarBackward0")


def _real_pair(name, a, b):
    for t in (a, b):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument 'real' must be Tensor, not {type(t).__name__}")
    da, db = a._data.dtype, b._data.dtype
    if da.kind != "f" or db.kind != "f":
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_SCALAR_NAMES.get(da.name, da.name)} and "
                           f"{_SCALAR_NAMES.get(db.name, db.name)}")
    if da != db:
        raise RuntimeError(f"Expected object of scalar type {_SCALAR_NAMES[da.name]} but got "
                           f"scalar type {_SCALAR_NAMES[db.name]} for second argument")


_SCALAR_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool"}


def complex(real, imag, *, out=None):  # noqa: A001 - torch.complex
    """``real + i imag`` from two float tensors of one dtype."""
    _real_pair("complex", real, imag)
    return apply(COMPLEX, (real, imag))


def polar(abs, angle, *, out=None):  # noqa: A002 - torch's argument names
    """``abs * (cos(angle) + i sin(angle))``."""
    _real_pair("polar", abs, angle)
    return apply(POLAR, (abs, angle))


# -- conj, angle, abs ---------------------------------------------------------------------------
CONJ = defop("conj", lambda xp, z: np.conj(z), lambda ns, g: ns.conj(g), kind="elementwise",
             dtype_rule="same", node="ConjBackward0")
CONJ_PHYSICAL = defop("conj_physical", lambda xp, z: np.conj(z), lambda ns, g: ns.conj(g),
                      kind="elementwise", dtype_rule="same", node="ConjPhysicalBackward0")


def conj(input):
    """The complex conjugate. NOTE: torch returns a lazy view with the conjugate bit set;
    graphgrad has no such bit, so this is a copy (``is_conj()`` is always False). A real
    tensor is returned as is, as in torch."""
    if input._data.dtype.kind != "c":
        return input
    return unary(CONJ, input)


def conj_physical(input):
    if input._data.dtype.kind != "c":
        return input
    return unary(CONJ_PHYSICAL, input)


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def is_conj(input) -> bool:
    return False


def _angle_fwd(xp, z):
    out = np.angle(z)
    if z.dtype.kind != "c":
        out = np.where(np.isnan(z), z, out)  # torch: pi for negative reals, 0 else, nan kept
    return out.astype(z.real.dtype, copy=False)


def _angle_vjp(ns, g, z):
    raw = ns.raw(z)
    if raw.dtype.kind != "c":
        return ns.zeros_like(z)
    # torch: g * z / |z|^2 * i, and 0 where z == 0.
    zero = ns.const(raw == 0)
    return ns.where(zero, 0, g * z / ns.where(zero, 1, z * ns.conj(z)) * 1j)


ANGLE = defop("angle", _angle_fwd, _angle_vjp, kind="elementwise", dtype_rule="float",
              save=(0,), node="AngleBackward0")


def angle(input):
    """The argument of each element (``atan2(imag, real)``); 0 or pi for real tensors."""
    return unary(ANGLE, input)


def _abs_complex_vjp(ns, g, z):
    # torch: g * sgn(z), sgn(z) = z / |z| and 0 at 0 (g is real here).
    zero = ns.const(ns.raw(z) == 0)
    return ns.where(zero, 0, g * z / ns.where(zero, 1, ns.abs(z)))


# -- registering with the dispatcher and the rules namespaces -------------------------------
for _op in (REAL, IMAG, VIEW_AS_REAL, VIEW_AS_COMPLEX, COMPLEX, POLAR, CONJ, CONJ_PHYSICAL,
            ANGLE):
    _dispatch._COMPLEX_OPS[_op] = _op


def _native_twin(op, vjp):
    import copy

    twin = copy.copy(op)
    twin.vjp = vjp
    _dispatch._COMPLEX_OPS[op] = twin


def _sgn_complex_vjp(ns, g, z):
    # torch's sgn_backward: (g - sgn * Re(g * conj(sgn))) / |z|, and 0 at 0.
    zero = ns.const(ns.raw(z) == 0)
    mag = ns.where(zero, 1, ns.abs(z))
    sgn = z / mag
    return ns.where(zero, 0, (g - sgn * _part(ns, g * ns.conj(sgn), "real")) / mag)


_native_twin(OPS["abs"], _abs_complex_vjp)
_native_twin(OPS["sgn"], _sgn_complex_vjp)
_dispatch._COMPLEX_OPS[OPS["sgn"]].save = (0,)  # the real rule saves nothing
_dispatch._COMPLEX_OPS[OPS["sgn"]].frees = True
RAW.conj = staticmethod(np.conj)
DIFF.conj = staticmethod(conj_physical)


# -- forwards written for real values ---------------------------------------------------------
def _complex_forward(op_name, fn):
    """Routes complex inputs of a real-only forward to ``fn`` (the rule stays holomorphic)."""
    op = OPS[op_name]
    forward = op.forward

    def routed(xp, x, **kw):
        return fn(x) if x.dtype.kind == "c" else forward(xp, x, **kw)

    op.forward = routed


_complex_forward("sigmoid", lambda z: 1 / (1 + np.exp(-z)))


# -- ops torch refuses on complex values ------------------------------------------------------
def _refuse(op_name, make_error):
    op = OPS[op_name]
    forward = op.forward

    def checked(xp, *args, **kw):
        for a in args:
            if type(a) is np.ndarray and a.dtype.kind == "c":
                raise make_error(a.dtype)
        return forward(xp, *args, **kw)

    op.forward = checked


for _name_ in ("lt", "le", "gt", "ge"):
    _refuse(_name_, lambda dt, n=_name_: NotImplementedError(
        f"\"{n}_cpu\" not implemented for '{_name(dt)}'"))
for _name_ in ("max", "min"):
    _refuse(_name_, lambda dt, n=_name_: NotImplementedError(
        f"\"{n}_all\" not implemented for '{_name(dt)}'"))
for _name_ in ("maximum", "minimum"):
    _refuse(_name_, lambda dt, n=_name_: RuntimeError(
        f"{n} not implemented for complex tensors."))
for _name_ in ("clamp", "relu"):
    _refuse(_name_, lambda dt: NotImplementedError("clamp is not supported for complex types"))
for _name_ in ("floor", "ceil", "trunc"):
    _refuse(_name_, lambda dt, n=_name_: NotImplementedError(
        f"{n} is not supported for complex inputs"))
_refuse("logit", lambda dt: NotImplementedError(
    f"\"logit_cpu\" not implemented for '{_name(dt)}'"))
_refuse("round", lambda dt: NotImplementedError(
    f"\"round_vml_cpu\" not implemented for '{_name(dt)}'"))
_refuse("sign", lambda dt: NotImplementedError(
    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
    "torch.sgn instead."))


# -- Tensor methods and properties --------------------------------------------------------------
def _set_part(part):
    def setter(self, value):
        view = real(self) if part == "real" else imag(self)
        view.copy_(value)
    return setter


Tensor.real = property(real, _set_part("real"))
Tensor.imag = property(imag, _set_part("imag"))
Tensor.conj = conj
Tensor.conj_physical = conj_physical
Tensor.resolve_conj = resolve_conj
Tensor.resolve_neg = resolve_neg
Tensor.is_conj = is_conj
Tensor.angle = angle
