"""Finite-difference checks of analytical gradients, as ``torch.autograd.gradcheck``.

For each differentiable input, the numerical Jacobian (central differences) is compared with
the analytical one, built row by row from backward passes. ``fast_mode=True`` compares one
random directional derivative per input instead (one backward, two forwards), in the style
of HIPS/autograd's checker.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from . import forward_ad as fw
from .engine import grad as _grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""


def _as_tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _outputs(func, inputs):
    out = func(*inputs)
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and o._data.dtype.kind == "f"]


def _numerical_jacobian(func, inputs, i, eps):
    x = inputs[i]
    flat = x._data.reshape(-1)
    if not np.shares_memory(flat, x._data):  # non-contiguous input: perturb a contiguous copy
        x._data = np.ascontiguousarray(x._data)
        flat = x._data.reshape(-1)
    cols = []
    for k in range(flat.size):
        orig = flat[k]
        flat[k] = orig + eps
        plus = [o._data.astype(np.float64).ravel() for o in _outputs(func, inputs)]
        flat[k] = orig - eps
        minus = [o._data.astype(np.float64).ravel() for o in _outputs(func, inputs)]
        flat[k] = orig
        cols.append(np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
                    if plus else np.zeros(0))
    if not cols:  # a size-0 input: no columns, but as many rows as the analytical Jacobian
        return np.zeros((sum(o._data.size for o in _outputs(func, inputs)), 0))
    return np.stack(cols, axis=1)


def _analytical_jacobian(func, inputs, i):
    outs = _outputs(func, inputs)
    rows = []
    for o in outs:
        if not o._rg:  # an output with no graph (e.g. a constant first gradient): zero rows
            rows.extend(np.zeros(inputs[i]._data.size) for _ in range(o._data.size))
            continue
        for k in range(o._data.size):
            seed = np.zeros(o._data.shape, o._data.dtype)
            seed.reshape(-1)[k] = 1
            g = _grad(o, inputs[i], grad_outputs=wrap(seed, False, None), retain_graph=True,
                      allow_unused=True)[0]
            rows.append(np.zeros(inputs[i]._data.size) if g is None
                        else g._data.astype(np.float64).ravel())
    return np.stack(rows) if rows else np.zeros((0, inputs[i]._data.size))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None) -> bool:
    """Checks ``func``'s gradients w.r.t. inputs that require grad against finite differences.

    >>> import graphgrad as torch
    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    func, inputs = _realified(func, inputs)
    checked = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in checked:
        if inputs[i]._data.dtype != np.float64:
            import warnings

            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of "
                          "double precision floating point.", UserWarning, stacklevel=2)
    rng = np.random.default_rng(0)
    for i in checked:
        if fast_mode:
            ok, detail = _directional_check(func, inputs, i, eps, atol, rtol, rng)
        elif check_backward_ad:
            num = _numerical_jacobian(func, inputs, i, eps)
            ana = _analytical_jacobian(func, inputs, i)
            ok = num.shape == ana.shape and np.allclose(ana, num, rtol=rtol, atol=atol)
            detail = f"numerical:\n{num}\nanalytical:\n{ana}"
        else:
            ok, detail = True, ""
        if ok and check_forward_ad:
            num = _numerical_jacobian(func, inputs, i, eps)
            ana = _forward_jacobian(func, inputs, i)
            ok = num.shape == ana.shape and np.allclose(ana, num, rtol=rtol, atol=atol)
            detail = f"(forward AD) numerical:\n{num}\nanalytical:\n{ana}"
        if not ok:
            if raise_exception:
                raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input {i},"
                                     f"\n{detail}\n")
            return False
    return True


def _forward_jacobian(func, inputs, i):
    """Column k: the outputs' tangents (forward AD) for the k-th unit tangent of input i."""
    x = inputs[i]
    cols = []
    for k in range(x._data.size):
        seed = np.zeros(x._data.shape, x._data.dtype)
        seed.reshape(-1)[k] = 1
        with fw.dual_level():
            args = list(inputs)
            args[i] = fw.make_dual(x.detach(), wrap(seed, False, None))
            outs = _outputs(func, args)
            col = []
            for o in outs:
                t = fw.unpack_dual(o).tangent
                col.append(np.zeros(o._data.size) if t is None
                           else t._data.astype(np.float64).ravel())
        cols.append(np.concatenate(col) if col else np.zeros(0))
    if not cols:
        return np.zeros((sum(o._data.size for o in _outputs(func, inputs)), 0))
    return np.stack(cols, axis=1)


def _realified(func, inputs):
    """Complex inputs and outputs checked as their real (..., 2) views, as torch's gradcheck
    treats a complex number as two reals: finite differences of the real and imaginary parts
    then test torch's convention (grad = dL/dRe + i dL/dIm) through view_as_real's rules."""
    cplx = [isinstance(x, Tensor) and x._data.dtype.kind == "c" for x in inputs]
    outs = func(*inputs)
    if not any(cplx) and not any(isinstance(o, Tensor) and o._data.dtype.kind == "c"
                                 for o in _as_tuple(outs)):
        return func, inputs
    from ..ops.complex import view_as_complex, view_as_real

    real_inputs = tuple(
        wrap(np.ascontiguousarray(view_as_real(x.detach())._data), x._rg, None) if c else x
        for x, c in zip(inputs, cplx))

    def realified(*xs):
        args = [view_as_complex(x) if c else x for x, c in zip(xs, cplx)]
        return tuple(view_as_real(o) if isinstance(o, Tensor) and o._data.dtype.kind == "c"
                     else o for o in _as_tuple(func(*args)))

    return realified, real_inputs


def _directional_check(func, inputs, i, eps, atol, rtol, rng):
    x = inputs[i]
    if not x._data.flags.c_contiguous:
        x._data = np.ascontiguousarray(x._data)
    direction = rng.standard_normal(x._data.shape)
    outs = _outputs(func, inputs)
    weights = [rng.standard_normal(o._data.shape) for o in outs]
    base = x._data.copy()
    # copies: an output may alias the perturbed input (an identity's gradient is the input)
    x._data[...] = base + eps * direction
    plus = [o._data.copy() for o in _outputs(func, inputs)]
    x._data[...] = base - eps * direction
    minus = [o._data.copy() for o in _outputs(func, inputs)]
    x._data[...] = base
    numerical = sum(float(np.sum(w * (p - m) / (2 * eps)))
                    for w, p, m in zip(weights, plus, minus))
    analytical = 0.0
    for o, w in zip(outs, weights):
        if not o._rg:
            continue
        g = _grad(o, x, grad_outputs=wrap(w.astype(o._data.dtype), False, None),
                  retain_graph=True, allow_unused=True)[0]
        if g is not None:
            analytical += float(np.sum(g._data * direction))
    ok = abs(analytical - numerical) <= atol + rtol * abs(numerical)
    return ok, f"directional derivative: numerical {numerical}, analytical {analytical}"


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False) -> bool:
    """Checks second derivatives: gradcheck of the function that maps (inputs, grad_outputs)
    to the first gradients, taken with ``create_graph=True``. Random ``grad_outputs`` (fixed
    seed) are drawn when none are given, as torch does.

    >>> import graphgrad as torch
    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    n = len(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(1)
        grad_outputs = tuple(
            wrap(rng.standard_normal(o._data.shape).astype(o._data.dtype), True, None)
            for o in _outputs(func, inputs) if o._rg)
    grad_outputs = _as_tuple(grad_outputs)

    def first_grads(*args):
        xs = args[:n]
        outs = [o for o in _outputs(func, xs) if o._rg]
        wrt = [x for x in xs if isinstance(x, Tensor) and x._rg]
        grads = _grad(outs, wrt, grad_outputs=args[n:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode)
