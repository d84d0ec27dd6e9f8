"""Samplers draw lazily (nothing of size num_samples is allocated up front), with the
distribution torch's draw, and a DataLoader timeout raises after about the timeout."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest
import torch

import graphgrad
from graphgrad.utils import data as gdata

HUGE = int(1e10)  # torch draws these lazily; drawing them at once would need 74.5 GiB


def gen(seed):
    return graphgrad.Generator().manual_seed(seed)


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("make", [
    lambda m, g: m.utils.data.RandomSampler(range(10), replacement=True, num_samples=HUGE,
                                            generator=g),
    lambda m, g: m.utils.data.WeightedRandomSampler([1.0, 2.0, 3.0], HUGE, generator=g),
], ids=["random", "weighted"])
def test_huge_num_samples_first_batches_are_small_and_fast(make):
    ds = gdata.TensorDataset(graphgrad.arange(10))
    sampler = make(graphgrad, gen(0))
    loader = gdata.DataLoader(ds, batch_size=8, sampler=sampler)
    tsampler = make(torch, torch.Generator().manual_seed(0))
    # Same lengths as torch's, for the sampler and the batches over it.
    assert len(sampler) == len(tsampler) == HUGE
    assert len(loader) == len(torch.utils.data.DataLoader(range(10), batch_size=8,
                                                          sampler=tsampler))
    assert len(gdata.BatchSampler(sampler, 7, True)) == len(
        torch.utils.data.BatchSampler(tsampler, 7, True))

    def first_batches():
        it = iter(loader)
        for _ in range(5):
            (x,) = next(it)
            assert x.shape == (8,)
    t0 = time.perf_counter()
    peak = _peak_bytes(first_batches)
    # Correctness bounds, not speed targets: drawing up front takes minutes or MemoryError.
    assert peak < 4 * 2**20, peak
    assert time.perf_counter() - t0 < 30


def _freq(sampler, k, n):
    it = iter(sampler)
    draws = np.array([next(it) for _ in range(k)])
    return np.bincount(draws, minlength=n) / k


def test_lazy_draws_have_torchs_distribution_and_are_reproducible():
    k = 12000
    w = [1.0, 0.0, 3.0, 4.0]
    p = np.array(w) / sum(w)
    g = _freq(gdata.WeightedRandomSampler(w, HUGE, generator=gen(1)), k, 4)
    # torch's WeightedRandomSampler draws all num_samples at once, so its oracle gets k.
    t = _freq(torch.utils.data.WeightedRandomSampler(w, k,
                                                     generator=torch.Generator().manual_seed(1)),
              k, 4)
    sigma = np.sqrt(p * (1 - p) / k)
    assert g[1] == t[1] == 0  # a zero weight is never drawn
    assert np.all(np.abs(g - p) < 5 * sigma + 1e-12), (g, p)
    assert np.all(np.abs(t - p) < 5 * sigma + 1e-12)  # the oracle agrees with the bound
    u = _freq(gdata.RandomSampler(range(5), replacement=True, num_samples=HUGE,
                                  generator=gen(2)), k, 5)
    assert np.all(np.abs(u - 0.2) < 5 * np.sqrt(0.16 / k))
    # Chunked draws stay reproducible under a seeded generator, across chunk boundaries.
    a = list(gdata.RandomSampler(range(7), replacement=True, num_samples=100, generator=gen(3)))
    b = list(gdata.RandomSampler(range(7), replacement=True, num_samples=100, generator=gen(3)))
    assert a == b and len(a) == 100 and set(a) <= set(range(7))
    a = list(gdata.WeightedRandomSampler(w, 5000, generator=gen(4)))
    assert a == list(gdata.WeightedRandomSampler(w, 5000, generator=gen(4))) and len(a) == 5000


def test_without_replacement_draws_a_permutation_per_epoch():
    s = list(gdata.RandomSampler(range(6), num_samples=15, generator=gen(5)))
    t = list(torch.utils.data.RandomSampler(range(6), num_samples=15,
                                            generator=torch.Generator().manual_seed(5)))
    for seq in (s, t):  # as torch: two full permutations, then part of a third
        assert sorted(seq[:6]) == sorted(seq[6:12]) == list(range(6))
        assert len(seq) == 15 and len(set(seq[12:])) == 3


class _Hangs(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        time.sleep(60)  # a hung read (a dead network share)
        return i


def test_timeout_raises_after_about_t_with_several_hung_workers():
    loader = gdata.DataLoader(_Hangs(), num_workers=2, timeout=1)
    it = iter(loader)
    workers = list(it._workers)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 1 seconds$"):
        next(it)
    # Before: 1 s plus a 5 s join per hung worker (11 s). A generous correctness bound.
    assert time.monotonic() - t0 < 4.5
    for w in workers:
        w.join(5)
        assert not w.is_alive()
