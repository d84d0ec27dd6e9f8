"""DistributedSampler against torch's on the same settings. Shuffled orders come from each
library's own randperm, so torch's sampler is also run with randperm drawing graphgrad's
permutation for the same seed: then every index must agree."""

import itertools

import pytest
import torch
import torch.utils.data as tdata

import graphgrad as gg
from graphgrad.utils.data import DistributedSampler

SETTINGS = list(itertools.product([1, 5, 7, 8, 13], [1, 2, 3, 4], [False, True]))


@pytest.mark.parametrize("n,replicas,drop_last", SETTINGS)
def test_unshuffled_equals_torch(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = tdata.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                          drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("n,replicas,drop_last", SETTINGS)
def test_shuffled_equals_torch_given_the_same_permutation(monkeypatch, n, replicas, drop_last):
    def randperm(k, generator=None):
        g = gg.Generator().manual_seed(generator.initial_seed())
        return torch.tensor(gg.randperm(k, generator=g).tolist())

    monkeypatch.setattr(torch, "randperm", randperm)
    for epoch in (0, 3):
        shards = []
        for rank in range(replicas):
            ours = DistributedSampler(range(n), replicas, rank, seed=7, drop_last=drop_last)
            theirs = tdata.DistributedSampler(range(n), replicas, rank, seed=7,
                                              drop_last=drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)
            shards.append(list(ours))
        if not drop_last:
            assert set(itertools.chain(*shards)) == set(range(n))


def test_epochs_differ_and_ranks_disjoint():
    a = DistributedSampler(range(100), 2, 0)
    b = DistributedSampler(range(100), 2, 1)
    first = list(a)
    assert not set(first) & set(b)
    a.set_epoch(1)
    assert list(a) != first and sorted(list(a) + list(b.__iter__())) != []


def test_invalid_rank():
    with pytest.raises(ValueError, match="Invalid rank 2"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank 2"):
        tdata.DistributedSampler(range(4), num_replicas=2, rank=2)
