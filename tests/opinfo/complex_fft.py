"""OpInfos for complex numbers, torch.fft and stft/istft. The table compares real tensors, so
each entry is a real-to-real program through the complex op under test (``view_as_complex`` in,
``view_as_real`` or a real part out): values, gradients on real leaves, second derivatives and
finite differences then cover the complex rules too."""

import numpy as np

from .core import ErrorInput, OpInfo, SampleInput, make


def _c(m, x):
    return m.view_as_complex(x)


def _r(m, z):
    return m.view_as_real(z.resolve_conj())


def _pair(shape):
    def samples(dtype, rng):
        yield SampleInput(make(shape, dtype, rng), (make(shape, dtype, rng),))
        yield SampleInput(make((), dtype, rng), (make((), dtype, rng),), name="0d")
    return samples


def _cplx(*shapes):
    """Samples holding complex values as real (..., 2) arrays, kept away from 0."""
    def samples(dtype, rng):
        for shape in shapes:
            yield SampleInput(make(tuple(shape) + (2,), dtype, rng, 0.3, 2.0) *
                              np.where(rng.random(tuple(shape) + (2,)) < 0.5, -1, 1).astype(dtype),
                              name=f"{shape}")
    return samples


def _real(*shapes, **kw):
    def samples(dtype, rng):
        for shape in shapes:
            yield SampleInput(make(shape, dtype, rng), kwargs=dict(kw), name=f"{shape}")
    return samples


def _polar_samples(dtype, rng):
    yield SampleInput(make((4,), dtype, rng, 0.5, 2.0), (make((4,), dtype, rng),))


def _complex_errors():
    yield ErrorInput(SampleInput(np.ones(3, np.float32), (np.ones(3, np.float64),)),
                     RuntimeError)
    yield ErrorInput(SampleInput(np.ones(3, np.int64), (np.ones(3, np.int64),)), RuntimeError)


def _view_errors():
    yield ErrorInput(SampleInput(np.ones((3, 3))), RuntimeError, "last dim 3")


def _fft_errors():
    yield ErrorInput(SampleInput(np.ones(4), kwargs={"norm": "bad"}), RuntimeError, "norm")
    yield ErrorInput(SampleInput(np.ones(4), kwargs={"n": 0}), RuntimeError, "n=0")
    yield ErrorInput(SampleInput(np.ones(4), kwargs={"dim": 2}), IndexError, "dim")


def _rfft_errors():
    yield from _fft_errors()


def _stft_samples(dtype, rng):
    window = (np.hanning(8) + 0.2).astype(dtype)
    yield SampleInput(make((30,), dtype, rng), (window,), {"hop_length": 3}, name="1d")
    yield SampleInput(make((2, 21), dtype, rng), (window,),
                      {"center": False, "normalized": True}, name="batch")
    yield SampleInput(make((25,), dtype, rng), ((np.hanning(6) + 0.2).astype(dtype),),
                      {"win_length": 6, "hop_length": 2, "pad_mode": "constant"}, name="win")


def _istft_samples(dtype, rng):
    window = (np.hanning(8) + 0.2).astype(dtype)
    yield SampleInput(make((5, 9, 2), dtype, rng), (window,), {"hop_length": 2}, name="1d")
    yield SampleInput(make((2, 5, 6, 2), dtype, rng), (window,),
                      {"hop_length": 3, "normalized": True, "length": 20}, name="batch")
    yield SampleInput(make((5, 5, 2), dtype, rng), (window,),
                      {"hop_length": 4, "center": False}, name="nocenter")


def _stft(m):
    def fn(x, window, **kw):
        return _r(m, m.stft(x, 8, window=window, return_complex=True, **kw))
    return fn


def _istft(m):
    def fn(x, window, **kw):
        return m.istft(_c(m, x), 8, window=window, **kw)
    return fn


def op_db():
    ops = [
        OpInfo("complex", lambda m: lambda a, b: _r(m, m.complex(a, b) * m.complex(b, a)),
               _pair((3, 2)), errors=_complex_errors),
        OpInfo("polar", lambda m: lambda a, b: _r(m, m.polar(a, b)), _polar_samples),
        OpInfo("view_as_complex", lambda m: lambda x: _c(m, x).abs(), _cplx((3,), (2, 2), ()),
               errors=_view_errors),
        OpInfo("real_imag", lambda m: lambda x: (_c(m, x) ** 2).real * (_c(m, x) ** 3).imag,
               _cplx((4,), ())),
        OpInfo("conj", lambda m: lambda x: _r(m, _c(m, x).conj() * _c(m, x).exp()),
               _cplx((3,))),
        OpInfo("conj_physical",
               lambda m: lambda x: _r(m, m.conj_physical(_c(m, x)) / (_c(m, x) + 3)),
               _cplx((3,))),
        OpInfo("angle", lambda m: lambda x: _c(m, x).angle() * (_c(m, x) * 2j).angle(),
               _cplx((5,), ())),
        OpInfo("complex_holomorphic",
               lambda m: lambda x: _r(m, (_c(m, x).sin() + _c(m, x).log() * _c(m, x).sqrt()
                                         - 1 / _c(m, x)).sum(0)),
               _cplx((3, 2))),
        OpInfo("complex_matmul",
               lambda m: lambda x: _r(m, _c(m, x) @ _c(m, x).mT.exp()).mean(-1),
               _cplx((2, 3))),
        OpInfo("fft.fft", lambda m: lambda x, **kw: _r(m, m.fft.fft(x, **kw)),
               _real((6,), (2, 5), n=7, norm="ortho"), errors=_fft_errors),
        OpInfo("fft.fft_complex", lambda m: lambda x, **kw: _r(m, m.fft.fft(_c(m, x), **kw)),
               _cplx((6,), (2, 5))),
        OpInfo("fft.ifft", lambda m: lambda x: _r(m, m.fft.ifft(_c(m, x), n=4, dim=0,
                                                                norm="forward")),
               _cplx((6,), (3, 2))),
        OpInfo("fft.rfft", lambda m: lambda x, **kw: _r(m, m.fft.rfft(x, **kw)),
               _real((8,), (2, 7), (5,)), errors=_rfft_errors),
        OpInfo("fft.irfft", lambda m: lambda x, **kw: m.fft.irfft(_c(m, x), **kw),
               _cplx((5,), (2, 4))),
        OpInfo("fft.irfft_n", lambda m: lambda x: m.fft.irfft(_c(m, x), n=9, norm="ortho"),
               _cplx((5,), (2, 4))),
        OpInfo("fft.fft2", lambda m: lambda x: _r(m, m.fft.fft2(_c(m, x))), _cplx((3, 4))),
        OpInfo("fft.ifft2", lambda m: lambda x: _r(m, m.fft.ifft2(_c(m, x), s=(2, 5))),
               _cplx((3, 4))),
        OpInfo("fft.fftn", lambda m: lambda x: _r(m, m.fft.fftn(x, norm="forward")),
               _real((2, 3, 4))),
        OpInfo("fft.ifftn", lambda m: lambda x: _r(m, m.fft.ifftn(_c(m, x), dim=(0, 2))),
               _cplx((2, 3, 2))),
        OpInfo("fft.rfft2", lambda m: lambda x: _r(m, m.fft.rfft2(x)), _real((3, 6), (4, 5))),
        OpInfo("fft.irfft2", lambda m: lambda x: m.fft.irfft2(_c(m, x)), _cplx((3, 4))),
        OpInfo("fft.rfftn", lambda m: lambda x: _r(m, m.fft.rfftn(x, s=(2, 6))),
               _real((3, 5))),
        OpInfo("fft.irfftn", lambda m: lambda x: m.fft.irfftn(_c(m, x), s=(3, 7)),
               _cplx((2, 4))),
        OpInfo("fft.hfft", lambda m: lambda x: m.fft.hfft(_c(m, x), n=7), _cplx((4,), (2, 5))),
        OpInfo("fft.ihfft", lambda m: lambda x: _r(m, m.fft.ihfft(x, norm="ortho")),
               _real((6,), (2, 7))),
        OpInfo("fft.fftshift", lambda m: lambda x: m.fft.fftshift(x) + m.fft.ifftshift(x, 0),
               _real((5,), (3, 4))),
        OpInfo("stft", _stft, _stft_samples),
        OpInfo("istft", _istft, _istft_samples),
    ]
    return ops
