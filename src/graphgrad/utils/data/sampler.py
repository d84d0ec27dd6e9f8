"""Samplers, as ``torch.utils.data``: iterables of dataset indices (or of index batches).

Random samplers draw from a ``graphgrad.Generator`` (a seeded one gives a reproducible order;
without one each pass draws a fresh seed from the default generator, as torch does). Draws with
replacement are made lazily, a chunk at a time (torch: 32 at a time), so ``num_samples`` may be
far larger than memory: nothing of size O(num_samples) is allocated up front.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..._dtype import float64
from ..._tensor import Tensor
from ...ops.creation import from_numpy
from ...ops.random import Generator, rand, randint, randperm

# Indices drawn per generator call when sampling with replacement (torch's RandomSampler: 32).
_CHUNK = 32

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Base class: subclasses define ``__iter__`` (indices) and, when known, ``__len__``."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self):
        raise NotImplementedError


def _pass_generator(generator):
    # NOTE: torch seeds a private generator per pass when none is given, so that two passes
    # differ but the default generator moves by one draw only.
    if generator is not None:
        return generator
    seed = randint(0, 2**62, ()).item()
    return Generator().manual_seed(seed)


class SequentialSampler(Sampler):
    """Indices ``0 .. len(data_source) - 1`` in order.

    >>> from graphgrad.utils.data import SequentialSampler
    >>> list(SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices, or ``num_samples`` draws with replacement.

    >>> import graphgrad as torch
    >>> from graphgrad.utils.data import RandomSampler
    >>> sorted(RandomSampler(range(5), generator=torch.Generator().manual_seed(1)))
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        # The dataset's size may change between passes.
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _pass_generator(self.generator)
        if self.replacement:
            # Lazily, as torch: a num_samples of 1e10 must not be drawn (or held) at once.
            full, rest = divmod(self.num_samples, _CHUNK)
            for _ in range(full):
                yield from randint(0, n, (_CHUNK,), generator=generator).tolist()
            if rest:
                yield from randint(0, n, (rest,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=generator).tolist()
        yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, without replacement.

    >>> import graphgrad as torch
    >>> from graphgrad.utils.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([7, 3, 5], generator=torch.Generator().manual_seed(0)))
    [3, 5, 7]
    """

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Indices ``0 .. len(weights) - 1`` drawn with probabilities proportional to ``weights``.

    >>> import graphgrad as torch
    >>> from graphgrad.utils.data import WeightedRandomSampler
    >>> g = torch.Generator().manual_seed(0)
    >>> set(WeightedRandomSampler([0.0, 1.0, 0.0], 5, generator=g))
    {1}
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = weights._data if isinstance(weights, Tensor) else weights
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = from_numpy(w)
        self._w = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        if not self.replacement:
            # At most len(weights) draws: bounded by the weights the user already holds.
            yield from _multinomial(self._w, self.num_samples, False, self.generator).tolist()
            return
        # NOTE: torch draws all num_samples at once here (torch.multinomial), which cannot
        # serve a num_samples larger than memory; drawing in chunks from one cdf gives the
        # same distribution and the same reproducibility under a seeded generator.
        cdf = _cdf(self._w)
        left = self.num_samples
        while left > 0:
            k = min(left, _WEIGHTED_CHUNK)
            u = rand(k, generator=self.generator, dtype=float64)._data
            yield from np.minimum(np.searchsorted(cdf, u, side="right"),
                                  cdf.size - 1).tolist()
            left -= k

    def __len__(self) -> int:
        return self.num_samples


# Uniforms drawn per chunk by WeightedRandomSampler with replacement: large enough that the
# per-call cost vanishes, small enough (32 KiB of float64) that no pass allocates much.
_WEIGHTED_CHUNK = 4096


def _check_weights(w):
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if w.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _cdf(w):
    """The normalised cumulative weights (checked as torch.multinomial checks them)."""
    _check_weights(w)
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    return cdf


def _multinomial(w, n, replacement, generator):
    """torch.multinomial on a 1-d weight vector, drawing uniforms from ``generator``."""
    if replacement:
        cdf = _cdf(w)
        u = rand(n, generator=generator, dtype=float64)._data
        return np.minimum(np.searchsorted(cdf, u, side="right"), w.size - 1)
    _check_weights(w)
    u = rand(w.size, generator=generator, dtype=float64)._data
    if n > w.size:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    # NOTE: sampling without replacement by exponential races (Efraimidis-Spirakis): the n
    # smallest -log(1-u)/w keys are a weighted sample without replacement. Zero weights get an
    # infinite (or NaN) key and come last, as torch returns them once the others are used up.
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = -np.log1p(-u) / w
    return np.argsort(keys, kind="stable")[:n]


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    >>> from graphgrad.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6]]
    >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=True))
    [[0, 1, 2], [3, 4, 5]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*[it] * self.batch_size):
                yield list(batch)
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
