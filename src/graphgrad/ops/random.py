"""Random sampling: Generator, manual_seed, rand/randn/randint/normal/randperm (+ _like).

Streams come from NumPy's PCG64, so a seed reproduces graphgrad's numbers exactly, though
they are not the numbers torch draws for the same seed.
"""

from __future__ import annotations

import json

import numpy as np

from .. import _dtype
from .._device import check_device
from .._tensor import Tensor, wrap
from . import _dispatch
from ._util import shape_arg
from .creation import _leaf, _np_dtype, _size

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator", "rand",
           "randn", "randint", "normal", "randperm", "rand_like", "randn_like", "randint_like",
           "get_rng_state", "set_rng_state", "bernoulli", "poisson", "binomial"]

_DEFAULT_SEED = 67280421310721  # torch's default seed, so initial_seed() reads the same


class Generator:
    """A source of random numbers; pass it as ``generator=`` to sampling functions."""

    def __init__(self, device="cpu"):
        check_device(device)
        self.device = device
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):  # torch unpacks the seed as a 64-bit integer
            raise ValueError("Overflow when unpacking long long")
        seed &= (1 << 64) - 1  # torch keeps the seed as uint64: manual_seed(-1) reads 2**64-1
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        raw = json.dumps({"seed": self._seed, "state": self._rng.bit_generator.state})
        return wrap(np.frombuffer(raw.encode(), dtype=np.uint8).copy(), False, None)

    def set_state(self, state: Tensor) -> Generator:
        payload = json.loads(bytes(state._data.astype(np.uint8)).decode())
        self._seed = payload["seed"]
        self._rng = np.random.Generator(np.random.PCG64())
        self._rng.bit_generator.state = payload["state"]
        return self


default_generator = Generator()
# torch seeds its default generator from the OS's entropy once per process, so an unseeded
# program draws different numbers on each run (Generator() objects keep the fixed seed).
default_generator.seed()


def manual_seed(seed: int) -> Generator:
    """Seeds the default generator, as ``torch.manual_seed``."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    default_generator.set_state(state)


def _rng(generator):
    return (generator or default_generator)._rng


def _float_dtype(dtype, kernel="normal_kernel_cpu"):
    d = _np_dtype(dtype) or _dtype.get_default_dtype().np
    if d.kind not in "fV":  # V: bfloat16
        from .reduce import _TORCH_SCALAR_NAMES

        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_TORCH_SCALAR_NAMES[d.name]}'")
    return d


def _sample(draw, size, dtype, requires_grad, device, kernel="normal_kernel_cpu"):
    check_device(device)
    shape = shape_arg(size)
    np_dtype = _float_dtype(dtype, kernel)
    # NumPy samples float32 natively; float16 is drawn as float32 and rounded.
    draw_dtype = np_dtype if np_dtype.itemsize > 2 else np.dtype(np.float32)  # also bfloat16
    try:
        data = draw(shape, draw_dtype).astype(np_dtype, copy=False)
    except MemoryError as err:  # torch: RuntimeError naming the bytes
        from ._alloc_error import alloc_error

        raise alloc_error(err, f"a tensor of size {list(shape)}") from None
    if _dispatch._tracer is not None:  # graphgrad.compile: fresh draws on every replay
        _dispatch._tracer.random(data, lambda: draw(shape, draw_dtype).astype(np_dtype,
                                                                            copy=False))
    return _leaf(data, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, **kwargs):
    """Uniform samples on ``[0, 1)``."""
    # The generator's stream is looked up at each draw: a compiled replay after manual_seed
    # must draw from the new one.
    return _sample(lambda s, d: _rng(generator).random(s, dtype=d), _size(size, kwargs), dtype,
                   requires_grad, device, "check_uniform_bounds")


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, **kwargs):
    """Standard normal samples."""
    return _sample(lambda s, d: _rng(generator).standard_normal(s, dtype=d), _size(size, kwargs),
                   dtype, requires_grad, device)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers uniform on ``[low, high)`` (int64 by default)."""
    check_device(device)
    if high is not None and not isinstance(high, (int, np.integer)) and size is None:
        low, high, size = 0, low, high  # randint(high, size)
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    np_dtype = _np_dtype(dtype) or np.dtype(np.int64)
    shape = shape_arg((size,))

    def draw():
        return _rng(generator).integers(low, high, size=shape, dtype=np.int64).astype(np_dtype)
    data = draw()
    if _dispatch._tracer is not None:  # graphgrad.compile: fresh draws on every replay
        _dispatch._tracer.random(data, draw, label="randint")
    return _leaf(data, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False):
    """Normal samples with the given mean and std (numbers or broadcastable tensors)."""
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    if np.any(np.asarray(s) < 0):
        raise RuntimeError(f"normal expects std >= 0.0, but found std {np.min(s)}")
    if size is None:
        size = np.broadcast_shapes(np.shape(m), np.shape(s))
    if dtype is None:
        like = mean if isinstance(mean, Tensor) else std if isinstance(std, Tensor) else None
        dtype = like.dtype if like is not None else None
    out = _sample(lambda sh, d: _rng(generator).standard_normal(sh, dtype=d), (tuple(size),),
                  dtype, False, device)
    if _dispatch._tracer is not None:  # graphgrad.compile: the affine part as recorded ops
        from ..autograd.grad_mode import no_grad

        with no_grad():
            res = out * std + mean
        out = res if res._data.dtype == out._data.dtype else res.to(out.dtype)
    else:
        out._data = (out._data * s + m).astype(out._data.dtype, copy=False)
    if requires_grad:
        out.requires_grad_(True)
    return out


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    check_device(device)
    np_dtype = _np_dtype(dtype) or np.int64

    def draw():
        return _rng(generator).permutation(n).astype(np_dtype)
    data = draw()
    if _dispatch._tracer is not None:  # graphgrad.compile: fresh draws on every replay
        _dispatch._tracer.random(data, draw, label="randperm")
    return _leaf(data, requires_grad)


def bernoulli(input, p=None, *, generator=None):
    dtype = input._data.dtype

    def draw(probs):
        return (_rng(generator).random(probs.shape) < probs).astype(dtype)
    if p is None:
        out = draw(input._data)
        if _dispatch._tracer is not None:  # graphgrad.compile: fresh draws on every replay
            _dispatch._tracer.random(out, draw, label="bernoulli", inputs=(input,))
    else:
        shape = input._data.shape
        out = draw(np.full(shape, p))
        if _dispatch._tracer is not None:
            _dispatch._tracer.random(out, lambda: draw(np.full(shape, p)), label="bernoulli")
    return wrap(out, False, None)


def _count_sampler(name, draw, *inputs):
    """A sampler of counts from rate/probability tensors: not differentiable (as torch's
    poisson and binomial), a fresh draw on every compiled replay."""
    dtype = inputs[0]._data.dtype
    arrays = [t._data for t in inputs]
    out = draw(*arrays).astype(dtype)
    if _dispatch._tracer is not None:
        _dispatch._tracer.random(out, lambda *a: draw(*a).astype(dtype), label=name,
                                 inputs=inputs)
    return wrap(out, False, None)


def poisson(input, generator=None):
    """Counts drawn from Poisson(rate) for each element of ``input``."""
    return _count_sampler("poisson", lambda rate: _rng(generator).poisson(rate), input)


def binomial(count, prob, generator=None):
    """Successes in ``count`` trials of probability ``prob``, elementwise."""
    def draw(n, p):
        n, p = np.broadcast_arrays(n, p)
        return _rng(generator).binomial(n.astype(np.int64), p)
    return _count_sampler("binomial", draw, count, prob)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return rand(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return randn(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype,
                   requires_grad=requires_grad)
