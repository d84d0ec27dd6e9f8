"""Log-mel spectrograms in NumPy: a framed STFT, a Slaney mel filterbank, and a log.

The conventions are librosa's and ``torch.stft``'s (centred frames, zero padding, a periodic
Hann window of ``win_length`` centred in ``n_fft``, Slaney mel scale and area normalisation), so
the features can be checked against either; tests/examples/test_speech_commands.py does.
"""

from __future__ import annotations

import functools

import numpy as np

SAMPLE_RATE = 16000
N_FFT = 512
WIN_LENGTH = 480      # 30 ms
HOP_LENGTH = 320      # 20 ms: 51 frames a second, half the convolution work of 10 ms
N_MELS = 40
FMIN = 20.0
LOG_OFFSET = 1e-6


def hann_window(win_length: int, n_fft: int) -> np.ndarray:
    """A periodic Hann window (as ``torch.hann_window``) zero-padded to ``n_fft``, centred."""
    n = np.arange(win_length)
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * n / win_length)
    left = (n_fft - win_length) // 2
    return np.pad(window, (left, n_fft - win_length - left))


def power_spectrogram(wave: np.ndarray, n_fft: int = N_FFT, win_length: int = WIN_LENGTH,
                      hop_length: int = HOP_LENGTH) -> np.ndarray:
    """|STFT|^2 of ``wave`` (..., samples) as (..., n_fft // 2 + 1, frames), frames centred.

    Each frame ``t`` covers samples ``t * hop_length - n_fft // 2`` onwards, zero outside the
    signal (``torch.stft(center=True, pad_mode="constant")``, librosa 0.11's default).
    """
    wave = np.asarray(wave, dtype=np.float32)
    pad = [(0, 0)] * (wave.ndim - 1) + [(n_fft // 2, n_fft // 2)]
    padded = np.pad(wave, pad)
    n_frames = 1 + (padded.shape[-1] - n_fft) // hop_length
    frames = np.lib.stride_tricks.sliding_window_view(padded, n_fft, axis=-1)
    frames = frames[..., : (n_frames - 1) * hop_length + 1 : hop_length, :]
    spectrum = np.fft.rfft(frames * hann_window(win_length, n_fft).astype(np.float32), axis=-1)
    power = spectrum.real ** 2 + spectrum.imag ** 2
    return np.swapaxes(power, -1, -2).astype(np.float32)


def hz_to_mel(hz):
    """Slaney's mel scale: linear below 1 kHz, logarithmic above (librosa's ``htk=False``)."""
    hz = np.asarray(hz, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    mel = hz / f_sp
    log_part = min_log_hz / f_sp + np.log(np.maximum(hz, min_log_hz) / min_log_hz) / logstep
    return np.where(hz >= min_log_hz, log_part, mel)


def mel_to_hz(mel):
    mel = np.asarray(mel, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    log_part = min_log_hz * np.exp(logstep * (np.maximum(mel, min_log_mel) - min_log_mel))
    return np.where(mel >= min_log_mel, log_part, f_sp * mel)


@functools.lru_cache(maxsize=8)
def mel_filterbank(sample_rate: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS,
                   fmin: float = FMIN, fmax: float | None = None) -> np.ndarray:
    """Triangular filters (n_mels, n_fft // 2 + 1), each scaled to unit area ("slaney" norm)."""
    fmax = sample_rate / 2 if fmax is None else fmax
    fft_hz = np.linspace(0, sample_rate / 2, n_fft // 2 + 1)
    mel_hz = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    widths = np.diff(mel_hz)
    ramps = mel_hz[:, None] - fft_hz[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_hz[2:] - mel_hz[:-2]))[:, None]
    weights = weights.astype(np.float32)
    weights.flags.writeable = False
    return weights


def log_mel_spectrogram(wave: np.ndarray, sample_rate: int = SAMPLE_RATE, n_fft: int = N_FFT,
                        win_length: int = WIN_LENGTH, hop_length: int = HOP_LENGTH,
                        n_mels: int = N_MELS, fmin: float = FMIN,
                        fmax: float | None = None) -> np.ndarray:
    """log(mel power + 1e-6) of ``wave`` (..., samples) as float32 (..., n_mels, frames).

    >>> wave = np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)
    >>> log_mel_spectrogram(wave).shape
    (40, 51)
    """
    power = power_spectrogram(wave, n_fft, win_length, hop_length)
    mel = mel_filterbank(sample_rate, n_fft, n_mels, fmin, fmax) @ power
    return np.log(mel + LOG_OFFSET).astype(np.float32)


def batch_log_mel(waves: np.ndarray, chunk: int = 256) -> np.ndarray:
    """``log_mel_spectrogram`` over (N, samples) in chunks, to bound the STFT's memory."""
    out = [log_mel_spectrogram(waves[i:i + chunk]) for i in range(0, len(waves), chunk)]
    return np.concatenate(out) if out else np.zeros((0, N_MELS, 0), np.float32)
