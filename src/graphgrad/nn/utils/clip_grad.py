"""Gradient clipping: ``clip_grad_norm_`` (rescale all gradients to a total norm) and
``clip_grad_value_`` (clamp each element), as ``torch.nn.utils``.

Both work on the gradients' arrays in place under no_grad; the total norm is computed with
NumPy over all gradients at once.
"""

from __future__ import annotations

import types
import warnings

import numpy as np

from ..._tensor import Tensor, bump_version, wrap

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _not_captured(what):
    # These write gradients with NumPy, behind the dispatcher: graphgrad.compile could not
    # replay them, so a capture breaks the graph here (the step runs eagerly, with a warning).
    from ...ops import _dispatch

    if _dispatch._tracer is not None:
        _dispatch._tracer.unsupported(f"torch.nn.utils.{what}")


def _as_list(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _norm(a: np.ndarray, norm_type: float) -> np.ndarray:
    """The vector norm of order ``norm_type`` of all of ``a``'s elements, in ``a``'s dtype."""
    x = np.abs(a.astype(np.float64, copy=False)).ravel()
    if norm_type == np.inf:
        r = x.max(initial=0.0)
    elif norm_type == -np.inf:
        r = x.min(initial=np.inf)
    elif norm_type == 0:
        r = float(np.count_nonzero(x))
    elif norm_type == 1:
        r = x.sum()
    elif norm_type == 2:
        r = np.sqrt(np.dot(x, x))
    else:
        r = (x**norm_type).sum() ** (1.0 / norm_type)
    return np.asarray(r, dtype=a.dtype)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """The norm of the norms of ``tensors`` (as if they were concatenated into one vector)."""
    _not_captured("get_total_norm")
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return wrap(np.asarray(0.0, dtype=np.float32), False, None)
    norms = [_norm(t._data, norm_type) for t in tensors]
    dtype = np.result_type(*[n.dtype for n in norms])
    total = _norm(np.stack([n.astype(dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return wrap(total, False, None)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None:
    """Scales the gradients by ``min(1, max_norm / (total_norm + 1e-6))``."""
    _not_captured("clip_grads_with_norm_")
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    total = total_norm._data
    coef = np.minimum(np.asarray(float(max_norm), total.dtype) / (total + total.dtype.type(1e-6)),
                      total.dtype.type(1.0))
    for g in grads:
        np.multiply(g._data, coef.astype(g._data.dtype), out=g._data)
        bump_version(g)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None) -> Tensor:
    """Rescales the gradients of ``parameters`` so their total norm is at most ``max_norm``;
    returns the total norm before clipping.

    >>> import graphgrad as torch
    >>> w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    >>> w.grad = torch.tensor([3.0, 4.0])
    >>> torch.nn.utils.clip_grad_norm_([w], 1.0)
    tensor(5.)
    >>> w.grad
    tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_`` (warns with torch's FutureWarning)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamps every gradient element of ``parameters`` to ``[-clip_value, clip_value]``."""
    _not_captured("clip_grad_value_")
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        g = p.grad
        if g is not None:
            np.clip(g._data, -clip_value, clip_value, out=g._data)
            bump_version(g)
