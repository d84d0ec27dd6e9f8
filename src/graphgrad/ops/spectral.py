"""torch.stft and torch.istft, composed from differentiable ops: padding, framing (``unfold``),
windowing, the FFT primitives of graphgrad.fft, and an overlap-add primitive (``col2im`` in
torch) whose adjoint is the framing itself.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor
from ._dispatch import unary
from ._opdef import defop
from .structure import pad as _pad

__all__ = ["stft", "istft"]


# -- overlap-add -------------------------------------------------------------------------------
def _overlap_add_fwd(xp, frames, hop):
    """Sums frames (..., n_frames, n_fft) placed every ``hop`` samples: (..., length)."""
    *lead, count, n_fft = frames.shape
    r = -(-n_fft // hop)  # frame pieces of one hop each
    out = np.zeros((*lead, (count + r) * hop), dtype=frames.dtype)
    blocks = out.reshape(*lead, count + r, hop)
    for j in range(r):
        w = min(hop, n_fft - j * hop)
        blocks[..., j:j + count, :w] += frames[..., j * hop:j * hop + w]
    return out[..., :n_fft + hop * (count - 1)]


def _overlap_add_rule(ns, g, hop, n_fft):
    # The adjoint of placing frames is reading them back: the framing of the gradient.
    if ns.differentiable:
        return g.unfold(-1, n_fft, hop)
    return np.lib.stride_tricks.sliding_window_view(g, n_fft, axis=-1)[..., ::hop, :]


OVERLAP_ADD = defop("overlap_add", lambda xp, f, hop, n_fft: _overlap_add_fwd(xp, f, hop),
                    _overlap_add_rule, kind="opaque", dtype_rule="same", node="Col2ImBackward0")


def _overlap_add(frames: Tensor, hop: int) -> Tensor:
    return unary(OVERLAP_ADD, frames, {"hop": hop, "n_fft": frames.shape[-1]})


# -- argument checks -----------------------------------------------------------------------
def _window_padded(window, win_length, n_fft, like, name):
    """The window as an n_fft-long tensor, centred (torch pads a shorter one on both sides)."""
    if window is None:
        if win_length == n_fft:
            return None
        from .creation import ones

        window = ones(win_length, dtype=like.dtype.to_real())
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _pad(window, (left, n_fft - win_length - left))
    return window


def _lengths(name, n_fft, hop_length, win_length, length_in):
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not 0 < n_fft <= length_in and name == "stft":
        raise RuntimeError(f"{name}: expected 0 < n_fft < {length_in + 1}, but got "
                           f"n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{name}: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    return hop_length, win_length


# -- stft / istft -------------------------------------------------------------------------------
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform: (n_fft // 2 + 1 or n_fft, n_frames) per signal.

    >>> import graphgrad as torch
    >>> torch.stft(torch.ones(8), 4, window=torch.hann_window(4), return_complex=True).shape
    torch.Size([3, 9])
    """
    from ..fft import fft, rfft

    complex_in = input._data.dtype.kind == "c"
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.", UserWarning, stacklevel=2)
    if input.ndim not in (1, 2):
        raise RuntimeError("stft: expected a 1D or 2D tensor")
    x = input
    if center:
        half = n_fft // 2
        x = _pad(x.reshape((1,) * (3 - x.ndim) + tuple(x.shape)), (half, half), pad_mode)
        x = x.reshape(x.shape[3 - input.ndim:])
    hop_length, win_length = _lengths("stft", n_fft, hop_length, win_length, x.shape[-1])
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is "
                      "known to cause spectral leakage. Other windows such as torch.hann_window "
                      "or torch.hamming_window are recommended to reduce spectral leakage.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    window = _window_padded(window, win_length, n_fft, x, "stft")
    frames = x.unfold(-1, n_fft, hop_length)  # (..., n_frames, n_fft)
    if window is not None:
        frames = frames * window
    norm = "ortho" if normalized else "backward"
    if onesided is None:
        onesided = not complex_in and (window is None or window._data.dtype.kind != "c")
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    out = rfft(frames, norm=norm) if onesided else fft(frames, norm=norm)
    out = out.transpose(-1, -2)
    if not return_complex:
        from .complex import view_as_real

        return view_as_real(out)
    return out


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse of ``stft`` by windowed overlap-add, divided by the summed squared window."""
    from ..fft import ifft, irfft

    if not isinstance(input, Tensor) or input._data.dtype.kind != "c":
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"values, but got {input.ndim}")
    hop_length, win_length = _lengths("istft", n_fft, hop_length, win_length, n_fft)
    batched = input.ndim == 3
    x = input if batched else input.unsqueeze(0)
    fft_size, n_frames = x.shape[-2], x.shape[-1]
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided and fft_size != n_fft // 2 + 1:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not onesided and fft_size != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got "
                           f"{fft_size}")
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = x.transpose(-1, -2)  # (B, n_frames, fft_size)
    frames = irfft(spec, n=n_fft, norm=norm) if onesided else ifft(spec, norm=norm)
    if not return_complex and frames._data.dtype.kind == "c":
        frames = frames.real
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    w = _window_padded(window, win_length, n_fft, frames, "istft")
    if w is None:
        from .creation import ones

        w = ones(n_fft, dtype=frames.dtype.to_real())
    frames = frames * w
    y = _overlap_add(frames, hop_length)
    # The envelope depends on the window too, and torch differentiates through it.
    envelope = _overlap_add((w * w).expand(1, n_frames, n_fft), hop_length)
    expected = n_fft + hop_length * (n_frames - 1)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (
        expected - n_fft // 2 if center else expected)
    stop = min(end, expected)
    y = y[..., start:stop]
    envelope = envelope[..., start:stop]
    if envelope.numel() and np.abs(envelope._data).min() < 1e-11:
        raise RuntimeError("istft: window overlap add min: 1 (the squared window sums to zero "
                           "somewhere; use a window that satisfies the NOLA constraint)")
    y = y / envelope
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        y = _pad(y, (0, end - expected))
    return y if batched else y.squeeze(0)
