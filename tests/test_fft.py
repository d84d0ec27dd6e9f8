"""torch.fft and stft/istft against torch: output dtypes, every norm, sizes and dims, gradients
on complex leaves (the op table covers real leaves), frequencies, shifts and errors."""

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg

RNG = np.random.default_rng(3)
X = RNG.normal(size=(3, 8))
Z = RNG.normal(size=(3, 8)) + 1j * RNG.normal(size=(3, 8))
NORMS = [None, "backward", "ortho", "forward"]

CALLS = [
    ("fft", {}), ("fft", {"n": 5}), ("fft", {"n": 11, "dim": 0}), ("ifft", {}),
    ("ifft", {"n": 6}), ("rfft", {}), ("rfft", {"n": 5}), ("irfft", {}), ("irfft", {"n": 7}),
    ("irfft", {"n": 16, "dim": 0}), ("fft2", {}), ("ifft2", {"s": (4, 4)}), ("rfft2", {}),
    ("irfft2", {}), ("irfft2", {"s": (3, 9)}), ("fftn", {}), ("fftn", {"dim": 0}),
    ("ifftn", {"s": (2, 10)}), ("rfftn", {"s": (4, 6)}), ("irfftn", {}), ("hfft", {}),
    ("hfft", {"n": 9}), ("ihfft", {}), ("ihfft", {"n": 5}),
]
REAL_ONLY = {"rfft", "rfft2", "rfftn", "ihfft"}


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


@pytest.mark.parametrize("name,kw", CALLS)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
def test_values_and_dtypes(name, kw, norm, dtype):
    if dtype.startswith("complex"):
        data = Z  # an error for the real-only transforms, compared with torch's below
    else:
        data = np.round(X * 3) if dtype == "int64" else X
    ref_in = torch.tensor(data).to(getattr(torch, dtype))
    our_in = gg.tensor(data).to(getattr(gg, dtype))
    try:
        ref = getattr(torch.fft, name)(ref_in, norm=norm, **kw)
    except RuntimeError as err:
        with pytest.raises(RuntimeError) as ours:
            getattr(gg.fft, name)(our_in, norm=norm, **kw)
        assert str(ours.value) == str(err)
        return
    got = getattr(gg.fft, name)(our_in, norm=norm, **kw)
    assert str(got.dtype) == str(ref.dtype)
    assert tuple(got.shape) == tuple(ref.shape)
    tol = 1e-4 if ref.dtype in (torch.float32, torch.complex64) else 1e-10
    np.testing.assert_allclose(_np(got), _np(ref), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,kw", [c for c in CALLS if c[0] not in REAL_ONLY])
@pytest.mark.parametrize("norm", NORMS[1:])
def test_gradients_on_complex_leaves(name, kw, norm):
    grads = []
    for m in (torch, gg):
        z = m.tensor(Z, requires_grad=True)
        out = getattr(m.fft, name)(z * (1 + 0.5j), norm=norm, **kw)
        w = m.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        loss = (out.abs() * w).sum() if out.is_complex() else (out * w).sum()
        (g,) = m.autograd.grad(loss, (z,), create_graph=True)
        # a linear transform under a linear loss has a constant gradient (no second order)
        h = m.autograd.grad((g.abs() ** 2).sum(), (z,))[0] if g.requires_grad else None
        grads.append((_np(g), None if h is None else _np(h)))
    for a, b in zip(*grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-9)


def test_grad_fn_names():
    x = gg.tensor(X, requires_grad=True)
    z = gg.tensor(Z, requires_grad=True)
    assert type(gg.fft.fft(x).grad_fn).__name__ == "FftR2CBackward0"
    assert type(gg.fft.rfft(x).grad_fn).__name__ == "FftR2CBackward0"
    assert type(gg.fft.fft(z).grad_fn).__name__ == "FftC2CBackward0"
    assert type(gg.fft.irfft(z).grad_fn).__name__ == "FftC2RBackward0"
    assert type(gg.fft.fft(x, n=10).grad_fn.next_functions[0][0]).__name__ == \
        "ConstantPadNdBackward0"


@pytest.mark.parametrize("n", [1, 4, 5, 10])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies(n, d):
    for name in ("fftfreq", "rfftfreq"):
        for dt in (None, "float64"):
            kw = {} if dt is None else {"dtype": getattr(torch, dt)}
            ref = getattr(torch.fft, name)(n, d, **kw)
            kw = {} if dt is None else {"dtype": getattr(gg, dt)}
            got = getattr(gg.fft, name)(n, d, **kw)
            assert str(got.dtype) == str(ref.dtype)
            np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_shifts(dim):
    data = np.arange(15.0).reshape(3, 5)
    for name in ("fftshift", "ifftshift"):
        ref = getattr(torch.fft, name)(torch.tensor(data), dim=dim)
        got = getattr(gg.fft, name)(gg.tensor(data), dim=dim)
        np.testing.assert_array_equal(got.numpy(), ref.numpy())


@pytest.mark.parametrize("call", [
    lambda m: m.fft.fft(m.ones(4), norm="foo"),
    lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64)),
    lambda m: m.fft.fft(m.ones(4), n=0),
    lambda m: m.fft.fft(m.ones(4), dim=3),
    lambda m: m.fft.fftn(m.ones(2, 3), s=(2,), dim=(0, 1)),
    lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64)),
    lambda m: m.fft.fft(m.ones(4, dtype=m.float16)),
])
def test_fft_errors(call):
    with pytest.raises(Exception) as ref:
        call(torch)
    with pytest.raises(type(ref.value)) as ours:
        call(gg)
    if not isinstance(ref.value, IndexError):
        assert str(ours.value) == str(ref.value)


STFT_KW = [
    {}, {"hop_length": 3}, {"win_length": 6, "hop_length": 2}, {"center": False},
    {"normalized": True}, {"onesided": False}, {"pad_mode": "constant"},
    {"pad_mode": "circular", "hop_length": 5},
]


@pytest.mark.parametrize("kw", STFT_KW)
@pytest.mark.parametrize("shape", [(40,), (2, 33)])
def test_stft_istft_against_torch(kw, shape):
    x = RNG.normal(size=shape)
    results = []
    for m in (torch, gg):
        xt = m.tensor(x, requires_grad=True)
        win_len = kw.get("win_length", 8)
        window = m.tensor(np.hanning(win_len) + 0.2, requires_grad=True)
        spec = m.stft(xt, 8, window=window, return_complex=True, **kw)
        ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
        back = m.istft(spec, 8, window=window, length=shape[-1], **ikw)
        loss = (spec.abs() ** 2).sum() + (back * m.tensor(np.linspace(0, 1, shape[-1]))).sum()
        grads = m.autograd.grad(loss, (xt, window))
        results.append([_np(spec), _np(back)] + [_np(g) for g in grads])
    for a, b in zip(*results):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-8)


def test_stft_float32_and_return_complex_false():
    x = RNG.normal(size=30).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.stft(torch.tensor(x), 8, window=torch.hann_window(8),
                         return_complex=False)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        got = gg.stft(gg.tensor(x), 8, window=gg.hann_window(8), return_complex=False)
    assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda m: m.stft(m.ones(20), 8),
    lambda m: m.stft(m.ones(20), 8, hop_length=0, return_complex=True),
    lambda m: m.stft(m.ones(20), 8, window=m.ones(5), return_complex=True),
    lambda m: m.stft(m.ones(20), 8, win_length=10, return_complex=True),
    lambda m: m.stft(m.ones(2, 3, 20), 8, return_complex=True),
    lambda m: m.stft(m.ones(20), 8, pad_mode="foo", return_complex=True),
    lambda m: m.istft(m.ones(5, 11), 8),
    lambda m: m.istft(m.ones(5, 11, dtype=m.complex64), 8, window=m.zeros(8)),
])
def test_stft_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as ref:
            call(torch)
        with pytest.raises(type(ref.value)):
            call(gg)
