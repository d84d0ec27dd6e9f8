"""``torch.fft``: discrete Fourier transforms with torch's sizes, dims, norms, output dtypes
(float32 -> complex64) and gradients (the primitives are in ``_ops``), plus the frequency and
shift helpers.

>>> import graphgrad as torch
>>> torch.fft.rfft(torch.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._device import check_device
from .._tensor import Tensor
from ..ops._util import wrap_dim
from ._ops import apply_c2c, apply_c2r, apply_r2c

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_TORCH_NAMES = {"float16": "Half", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _floating(x: Tensor, name, real_only=False) -> Tensor:
    """Integers and bools go to the default float dtype; float16 is refused as torch's CPU does."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    kind = x._data.dtype.kind
    if kind in "iub":
        return x.to(_dtype.get_default_dtype())
    if x._data.dtype == np.float16:
        raise RuntimeError("Unsupported dtype Half")
    if real_only and kind == "c":
        real = "real-valued" if name == "rfftn" else "real"
        raise RuntimeError(f"{name} expects a {real} input tensor, but got "
                           f"{_TORCH_NAMES[x._data.dtype.name]}")
    return x


def _to_complex(x: Tensor) -> Tensor:
    return x if x._data.dtype.kind == "c" else x.to(x.dtype.to_complex())


def _resize(x: Tensor, axis: int, n: int) -> Tensor:
    """Trims or zero-pads ``x`` along ``axis`` to ``n`` (torch's narrow / constant_pad_nd)."""
    size = x.shape[axis]
    if n == size:
        return x
    if n < size:
        return x.narrow(axis, 0, n)
    from ..nn.functional import pad

    return pad(x, (0, 0) * (x.ndim - 1 - axis) + (0, n - size))


def _dims_and_sizes(x: Tensor, s, dim, default_all=True):
    """torch's rules for fftn's ``s`` and ``dim``: dims, and the size wanted along each."""
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [wrap_dim(d, x.ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim)) if default_all else []
    sizes = [x.shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, sizes


def _c2c_n(x, s, dim, norm, forward, name):
    x = _floating(x, name)
    dims, sizes = _dims_and_sizes(x, s, dim)
    for d, n in zip(dims, sizes):
        x = _resize(x, d, n)
    if not dims:
        return _to_complex(x)
    norm = _norm(norm)
    if forward and x._data.dtype.kind != "c":  # torch: a two-sided r2c for a real input
        return apply_r2c(x, dims, norm, False)
    return apply_c2c(_to_complex(x), dims, norm, forward)


def _r2c_n(x, s, dim, norm, name):
    x = _floating(x, name, real_only=True)
    dims, sizes = _dims_and_sizes(x, s, dim)
    for d, n in zip(dims, sizes):
        x = _resize(x, d, n)
    return apply_r2c(x, dims, _norm(norm), True)


def _c2r_n(x, s, dim, norm, name):
    x = _to_complex(_floating(x, name))
    dims, sizes = _dims_and_sizes(x, s, dim)
    if s is None or s[-1] == -1:
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
    last = sizes[-1]
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    for d, n in zip(dims[:-1], sizes[:-1]):
        x = _resize(x, d, n)
    x = _resize(x, dims[-1], last // 2 + 1)
    return apply_c2r(x, dims, _norm(norm), last)


def _one(n, dim):
    return None if n is None else (n,), dim


def fft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor:
    """The 1-d discrete Fourier transform along ``dim`` (``n`` trims or zero-pads first)."""
    s, d = _one(n, dim)
    return _c2c_n(input, s, d, norm, True, "fft")


def ifft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor:
    s, d = _one(n, dim)
    return _c2c_n(input, s, d, norm, False, "ifft")


def rfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor:
    """The non-negative-frequency half (``n // 2 + 1`` bins) of a real signal's transform."""
    s, d = _one(n, dim)
    return _r2c_n(input, s, d, norm, "rfft")


def irfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor:
    """The real signal (length ``n``, default ``2 * (m - 1)``) of a half spectrum."""
    s, d = _one(n, dim)
    return _c2r_n(input, s, d, norm, "irfft")


def fftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor:
    return _c2c_n(input, s, dim, norm, True, "fftn")


def ifftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor:
    return _c2c_n(input, s, dim, norm, False, "ifftn")


def rfftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor:
    return _r2c_n(input, s, dim, norm, "rfftn")


def irfftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor:
    return _c2r_n(input, s, dim, norm, "irfftn")


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor:
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor:
    return ifftn(input, s, dim, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor:
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor:
    return irfftn(input, s, dim, norm)


def hfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor:
    """The real transform of a Hermitian-symmetric signal given by its first half:
    ``irfft(conj(input))`` with the forward transform's scaling."""
    x = _to_complex(_floating(input, "hfft"))
    return irfft(x.conj(), n, dim, _DUAL[_norm(norm)])


def ihfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor:
    """The inverse of ``hfft``: ``conj(rfft(input))`` with the inverse's scaling."""
    x = _floating(input, "ihfft", real_only=True)
    return rfft(x, n, dim, _DUAL[_norm(norm)]).conj()


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad=False) -> Tensor:
    """Sample frequencies ``[0, 1, ..., -2, -1] / (d * n)`` of an n-point transform."""
    return _freq(np.fft.fftfreq, n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False) -> Tensor:
    return _freq(np.fft.rfftfreq, n, d, dtype, device, requires_grad)


def _freq(fn, n, d, dtype, device, requires_grad):
    from ..ops.creation import _leaf

    check_device(device)
    dt = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    return _leaf(fn(n, d).astype(dt.np), requires_grad)


def _shift_dims(x, dim):
    if dim is None:
        return list(range(x.ndim))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input, dim=None) -> Tensor:
    """Moves the zero-frequency bin to the centre (a roll by ``size // 2`` along ``dim``)."""
    dims = _shift_dims(input, dim)
    return input.roll([input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None) -> Tensor:
    dims = _shift_dims(input, dim)
    return input.roll([(input.shape[d] + 1) // 2 for d in dims], dims)
