"""graphgrad.utils.data against torch.utils.data: datasets, samplers, collation, DataLoader.

Every deterministic path (no shuffle) runs the same program on both libraries and compares the
batches' values and types; seeded shuffles are checked for reproducibility and for being
permutations (graphgrad's random streams differ from torch's by design).
"""

from __future__ import annotations

import collections
import math
import warnings

import numpy as np
import pytest
import torch

import graphgrad
from graphgrad.utils import data as gdata

Point = collections.namedtuple("Point", ["x", "y"])


def norm(obj):
    """A library-neutral description of a batch: types, dtypes, shapes and values."""
    if isinstance(obj, (torch.Tensor, graphgrad.Tensor)):
        return ("tensor", str(obj.dtype), tuple(obj.shape), obj.tolist())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, [norm(x) for x in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [norm(x) for x in obj])
    if isinstance(obj, dict):
        return (type(obj).__name__, [(k, norm(v)) for k, v in obj.items()])
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), obj.tolist())
    return (type(obj).__name__, obj)


def both(prog):
    """Runs prog(m) with m = torch and m = graphgrad; returns the two normalized results."""
    return norm(prog(torch)), norm(prog(graphgrad))


def same(prog):
    t, g = both(prog)
    assert g == t


def same_error(prog, exc):
    with pytest.raises(exc) as te:
        prog(torch)
    with pytest.raises(exc) as ge:
        prog(graphgrad)
    assert str(ge.value) == str(te.value)


# -- datasets defined once, usable with either library ------------------------------------------
class Nested:
    """A map-style dataset of nested samples (dict, tuple, list, namedtuple, str, numbers)."""

    def __init__(self, m, n=7):
        self.m, self.n = m, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        m = self.m
        return {
            "x": m.arange(3) + i,
            "f": m.tensor([0.5 * i, -1.0]),
            "np": np.full((2,), i, dtype=np.float32),
            "npi": np.int32(i),
            "int": i,
            "float": i / 4,
            "bool": i % 2 == 0,
            "s": f"s{i}",
            "pair": (i, [i * 2, m.tensor(i)]),
            "pt": Point(i, np.float64(i) / 3),
        }


class Stream:
    """An IterableDataset over range(n); shards by worker when `shard` is set."""

    def __init__(self, m, n, shard):
        self.m, self.n, self.shard = m, n, shard

    def __iter__(self):
        info = self.m.utils.data.get_worker_info()
        if self.shard and info is not None:
            return iter(range(info.id, self.n, info.num_workers))
        return iter(range(self.n))

    def __len__(self):
        return self.n


def stream(m, n, shard=False):
    cls = type("S", (Stream, m.utils.data.IterableDataset), {})
    return cls(m, n, shard)


def tensor_ds(m, n=10):
    return m.utils.data.TensorDataset(m.arange(n), m.arange(n * 2).reshape(n, 2) * 0.5)


def batches(loader):
    return [b for b in loader]


# -- collate ------------------------------------------------------------------------------------
def test_default_collate_nested_matches_torch():
    same(lambda m: m.utils.data.default_collate([Nested(m)[i] for i in range(3)]))


@pytest.mark.parametrize("batch", [
    [1, 2.5], [2.5, 1], [True, False], [np.int32(1), np.float32(2)], [np.float16(1.5)],
    [np.array([1, 2], dtype=np.int16), np.array([3, 4], dtype=np.int16)], ["a", "b"], [b"x"],
    [(1, 2), (3, 4)], [[1.0, 2], [3.0, 4]], [{"a": [1, 2]}, {"a": [3, 4]}],
    [collections.OrderedDict(b=1, a=2)] * 2,
    # a field of strings comes back as a tuple from a tuple, list or namedtuple sample
    [("a", 1), ("b", 2)], [["a", [1]], ["b", [2]]], [Point("a", 1), Point("b", 2)],
])
def test_default_collate_leaves_match_torch(batch):
    same(lambda m: m.utils.data.default_collate(batch))


def test_default_collate_tensors_match_torch():
    same(lambda m: m.utils.data.default_collate([m.ones(2, 3), m.zeros(2, 3)]))
    same(lambda m: m.utils.data.default_collate([m.tensor(1.5), m.tensor(2.0)]))


def test_default_convert_matches_torch():
    sample = {"a": np.arange(3), "b": (np.float32(1), 2), "c": "s", "d": [np.ones(2)]}
    same(lambda m: m.utils.data.default_convert(sample))


@pytest.mark.parametrize("batch, exc", [
    (lambda m: [m.ones(2), m.ones(3)], RuntimeError),
    (lambda m: [np.ones(2), np.ones(3)], RuntimeError),
    (lambda m: [[1, 2], [3]], RuntimeError),
    (lambda m: [None, None], TypeError),
    (lambda m: [object()], TypeError),
    (lambda m: [np.array(["a"])], TypeError),
])
def test_default_collate_errors_match_torch(batch, exc):
    with pytest.raises(exc) as te:
        torch.utils.data.default_collate(batch(torch))
    with pytest.raises(exc) as ge:
        graphgrad.utils.data.default_collate(batch(graphgrad))
    msg = str(te.value)
    if "object" in msg:  # the type's repr names the object's module only
        msg = msg.split("found")[0]
    assert str(ge.value).startswith(msg)


# -- DataLoader without shuffle: identical batches ----------------------------------------------
@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (10, True),
                                                   (4, True), (20, False)])
def test_tensor_dataset_batches_match_torch(batch_size, drop_last):
    def prog(m):
        dl = m.utils.data.DataLoader(tensor_ds(m), batch_size=batch_size, drop_last=drop_last)
        return [len(dl), batches(dl)]
    same(prog)


def test_nested_dataset_batches_match_torch():
    same(lambda m: batches(m.utils.data.DataLoader(Nested(m), batch_size=3)))


def test_no_auto_batching_matches_torch():
    same(lambda m: batches(m.utils.data.DataLoader(Nested(m, 3), batch_size=None)))


def test_custom_collate_sampler_and_batch_sampler_match_torch():
    def prog(m):
        d = m.utils.data
        ds = tensor_ds(m)
        a = batches(d.DataLoader(ds, batch_size=4, collate_fn=lambda b: [x[0] for x in b]))
        b = batches(d.DataLoader(ds, batch_size=3, sampler=[9, 1, 4, 4, 0]))
        bs = d.BatchSampler(d.SequentialSampler(range(7)), 3, False)
        c = batches(d.DataLoader(ds, batch_sampler=bs))
        e = batches(d.DataLoader(ds, batch_sampler=[[3, 1], [0]]))
        return [a, b, c, e, len(d.DataLoader(ds, batch_sampler=bs))]
    same(prog)


def test_iterable_dataset_matches_torch():
    def prog(m):
        dl = m.utils.data.DataLoader(stream(m, 7), batch_size=3)
        dl2 = m.utils.data.DataLoader(stream(m, 7), batch_size=3, drop_last=True)
        dl3 = m.utils.data.DataLoader(stream(m, 3), batch_size=None)
        return [len(dl), batches(dl), len(dl2), batches(dl2), batches(dl3)]
    same(prog)


def test_datasets_match_torch():
    def prog(m):
        d = m.utils.data
        cat = d.ConcatDataset([range(3), range(10, 14)])
        sub = d.Subset(range(20), [5, 2, 9])
        stk = d.StackDataset(a=range(3), b=range(3, 6))
        chain = d.ChainDataset([stream(m, 2), stream(m, 3)])
        added = d.Subset(range(5), [1]) + d.Subset(range(5), [3])
        return [len(cat), [cat[i] for i in range(-7, 7)], len(sub), list(sub), stk[1],
                list(chain), len(chain), list(added), tensor_ds(m)[3]]
    same(prog)


def test_dataset_errors_match_torch():
    same_error(lambda m: m.utils.data.ConcatDataset([]), AssertionError)
    same_error(lambda m: m.utils.data.ConcatDataset([range(2)])[-3], ValueError)
    same_error(lambda m: m.utils.data.ConcatDataset([stream(m, 2)]), AssertionError)
    same_error(lambda m: m.utils.data.TensorDataset(m.ones(2), m.ones(3)), AssertionError)
    same_error(lambda m: m.utils.data.StackDataset(range(2), range(3)), ValueError)
    same_error(lambda m: m.utils.data.Dataset()[0], NotImplementedError)


# -- samplers -----------------------------------------------------------------------------------
def test_sequential_and_batch_samplers_match_torch():
    def prog(m):
        d = m.utils.data
        seq = d.SequentialSampler(range(7))
        return [list(seq), len(seq), list(d.BatchSampler(seq, 3, False)),
                list(d.BatchSampler(seq, 3, True)), len(d.BatchSampler(seq, 3, False)),
                len(d.BatchSampler(seq, 3, True)), list(d.BatchSampler(range(4), 2, False))]
    same(prog)


@pytest.mark.parametrize("make", [
    lambda m: m.utils.data.RandomSampler(range(3), replacement=1),
    lambda m: m.utils.data.RandomSampler(range(3), num_samples=0),
    lambda m: m.utils.data.RandomSampler([], replacement=False),
    lambda m: m.utils.data.BatchSampler(range(3), 0, False),
    lambda m: m.utils.data.BatchSampler(range(3), True, False),
    lambda m: m.utils.data.BatchSampler(range(3), 2, 1),
    lambda m: m.utils.data.WeightedRandomSampler([1.0], 0),
    lambda m: m.utils.data.WeightedRandomSampler([1.0], 2, replacement=0),
    lambda m: m.utils.data.WeightedRandomSampler([[1.0]], 2),
])
def test_sampler_errors_match_torch(make):
    with pytest.raises((ValueError, TypeError)) as te:
        make(torch)
    with pytest.raises(te.type) as ge:
        make(graphgrad)
    assert str(ge.value) == str(te.value)


def gen(seed):
    return graphgrad.Generator().manual_seed(seed)


def test_random_sampler_seeded_permutation():
    s = graphgrad.utils.data.RandomSampler(range(50), generator=gen(3))
    a = list(s)
    assert sorted(a) == list(range(50)) and a != list(range(50))
    assert list(graphgrad.utils.data.RandomSampler(range(50), generator=gen(3))) == a
    assert list(graphgrad.utils.data.RandomSampler(range(50), generator=gen(4))) != a
    assert all(isinstance(i, int) for i in a)


def test_random_sampler_num_samples_and_replacement():
    d = graphgrad.utils.data
    s = d.RandomSampler(range(4), num_samples=10, generator=gen(0))
    a = list(s)
    assert len(s) == 10 and len(a) == 10
    # Without replacement: whole permutations, then a partial one (as torch).
    assert sorted(a[:4]) == sorted(a[4:8]) == [0, 1, 2, 3] and len(set(a[8:])) == 2
    r = list(d.RandomSampler(range(3), replacement=True, num_samples=200, generator=gen(1)))
    assert len(r) == 200 and set(r) == {0, 1, 2}
    assert r == list(d.RandomSampler(range(3), replacement=True, num_samples=200,
                                     generator=gen(1)))
    unseeded = d.RandomSampler(range(30))
    assert list(unseeded) != list(unseeded)  # a fresh seed each pass (1/30! to collide)


def test_subset_random_sampler():
    s = graphgrad.utils.data.SubsetRandomSampler([10, 20, 30, 40, 50], generator=gen(5))
    a = list(s)
    assert sorted(a) == [10, 20, 30, 40, 50] and len(s) == 5
    assert a == list(graphgrad.utils.data.SubsetRandomSampler([10, 20, 30, 40, 50],
                                                               generator=gen(5)))


def test_weighted_random_sampler():
    d = graphgrad.utils.data
    w = [0.0, 1.0, 3.0, 0.0]
    a = list(d.WeightedRandomSampler(w, 4000, generator=gen(0)))
    assert set(a) == {1, 2}
    # Frequencies follow the weights (1:3): binomial sd is about 27 here.
    assert abs(a.count(2) - 3000) < 150
    assert a == list(d.WeightedRandomSampler(graphgrad.tensor(w), 4000, generator=gen(0)))
    b = list(d.WeightedRandomSampler([1.0, 2.0, 0.0, 4.0], 3, replacement=False,
                                     generator=gen(2)))
    assert sorted(b) == [0, 1, 3]
    s = d.WeightedRandomSampler([1, 2], 5)
    assert s.weights.dtype == graphgrad.float64 and len(s) == 5
    # Zero-weight indices come last once the others are drawn, as in torch.
    same(lambda m: list(m.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0], 3, replacement=False)
                        )[0])
    for w, n, r in (([1.0, 0.0], 3, False), ([1.0, -1.0], 1, True), ([0.0, 0.0], 1, True),
                    ([float("nan")], 1, True)):
        same_error(lambda m: list(m.utils.data.WeightedRandomSampler(w, n, replacement=r)),
                   RuntimeError)


# -- random_split -------------------------------------------------------------------------------
@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.34, 0.33, 0.33],
                                     [1.0], [10]])
def test_random_split_lengths_match_torch(lengths):
    t = torch.utils.data.random_split(range(10), lengths, generator=torch.Generator())
    g = graphgrad.utils.data.random_split(range(10), lengths, generator=gen(0))
    assert [len(s) for s in g] == [len(s) for s in t]
    items = [x for s in g for x in s]
    assert sorted(items) == list(range(10))
    again = graphgrad.utils.data.random_split(range(10), lengths, generator=gen(0))
    assert [list(s) for s in again] == [list(s) for s in g]


def test_random_split_errors_and_warnings_match_torch():
    same_error(lambda m: m.utils.data.random_split(range(10), [3, 3]), ValueError)
    same_error(lambda m: m.utils.data.random_split(range(10), [1.5, -0.5]), ValueError)
    for m in (torch, graphgrad):
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
            m.utils.data.random_split(range(1), [0.6, 0.4])


# -- shuffle ------------------------------------------------------------------------------------
def test_seeded_shuffle_is_reproducible_permutation():
    ds = tensor_ds(graphgrad, 20)

    def epoch(loader):
        return [b[0].tolist() for b in loader]

    a = epoch(graphgrad.utils.data.DataLoader(ds, batch_size=4, shuffle=True, generator=gen(7)))
    flat = [i for b in a for i in b]
    assert sorted(flat) == list(range(20)) and flat != list(range(20))
    assert [len(b) for b in a] == [4] * 5
    assert epoch(graphgrad.utils.data.DataLoader(ds, batch_size=4, shuffle=True,
                                                 generator=gen(7))) == a
    assert epoch(graphgrad.utils.data.DataLoader(ds, batch_size=4, shuffle=True,
                                                 generator=gen(8))) != a
    # One loader: the next epoch continues the generator's stream, so it differs.
    dl = graphgrad.utils.data.DataLoader(ds, batch_size=4, shuffle=True, generator=gen(7))
    assert epoch(dl) == a and epoch(dl) != a
    # Without a generator the default one drives it: manual_seed reproduces it.
    graphgrad.manual_seed(11)
    b = epoch(graphgrad.utils.data.DataLoader(ds, batch_size=4, shuffle=True))
    graphgrad.manual_seed(11)
    assert epoch(graphgrad.utils.data.DataLoader(ds, batch_size=4, shuffle=True)) == b


# -- DataLoader arguments -----------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"timeout": -1},
    {"persistent_workers": True},
    {"prefetch_factor": 2},
    {"multiprocessing_context": "fork"},
    {"num_workers": 1, "multiprocessing_context": "nope"},
])
def test_dataloader_argument_errors_match_torch(kwargs):
    same_error(lambda m: m.utils.data.DataLoader(range(3), **kwargs), ValueError)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]},
                                    {"batch_sampler": [[0]]}])
def test_iterable_dataset_argument_errors_match_torch(kwargs):
    with pytest.raises(ValueError) as te:
        torch.utils.data.DataLoader(stream(torch, 3), **kwargs)
    with pytest.raises(ValueError) as ge:
        graphgrad.utils.data.DataLoader(stream(graphgrad, 3), **kwargs)
    # The message names the argument's value, whose repr differs between libraries.
    assert str(ge.value).split(", but got")[0] == str(te.value).split(", but got")[0]


@pytest.mark.filterwarnings("ignore:'pin_memory' argument:UserWarning")  # torch: no GPU here
def test_dataloader_attributes_and_frozen_fields_match_torch():
    def prog(m):
        dl = m.utils.data.DataLoader(range(5), batch_size=2, pin_memory=True)
        out = [dl.batch_size, dl.drop_last, dl.num_workers, dl.pin_memory,
               type(dl.sampler).__name__, type(dl.batch_sampler).__name__, batches(dl)]
        with pytest.raises(ValueError) as e:
            dl.batch_size = 3
        return [*out, str(e.value)]
    same(prog)


def test_import_paths():
    import graphgrad as torch_like
    from graphgrad.utils.data import DataLoader

    assert torch_like.utils.data.DataLoader is DataLoader
    assert gdata.get_worker_info() is None


# -- worker processes ---------------------------------------------------------------------------
def seen_by_worker(_):
    info = graphgrad.utils.data.get_worker_info()
    return [info.id, info.num_workers, info.seed, graphgrad.rand(1).item()]


class Faulty(gdata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 4:
            raise ValueError(f"bad sample {i}")
        return i


def test_workers_give_same_batches_as_main_process():
    ds = tensor_ds(graphgrad, 23)
    d = graphgrad.utils.data
    for kw in ({"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
               {"batch_size": 3, "shuffle": True}):
        seeded = {"generator": gen(1)} if kw.get("shuffle") else {}
        ref = norm(batches(d.DataLoader(ds, num_workers=0, **kw, **seeded)))
        seeded = {"generator": gen(1)} if kw.get("shuffle") else {}
        assert norm(batches(d.DataLoader(ds, num_workers=2, **kw, **seeded))) == ref


def test_iterable_dataset_with_workers_matches_torch():
    # Unsharded: each worker yields the whole stream (duplicates), as torch documents.
    def prog(m, shard):
        dl = m.utils.data.DataLoader(stream(m, 7, shard), batch_size=2, num_workers=2)
        return batches(dl)
    for shard in (False, True):
        assert norm(prog(graphgrad, shard)) == norm(prog(torch, shard))


def test_worker_info_seeds_and_init_fn():
    d = graphgrad.utils.data
    dl = d.DataLoader(range(4), batch_size=1, num_workers=2, collate_fn=seen_by_worker)
    out = batches(dl)
    assert [o[0] for o in out] == [0, 1, 0, 1]  # round-robin over workers, results in order
    assert all(o[1] == 2 for o in out)
    assert out[1][2] == out[0][2] + 1  # seed = base_seed + worker id, as torch
    assert out[0][3] != out[1][3]  # workers' random streams differ
    # The marker set by worker_init_fn reached the dataset copy in the worker.
    assert batches(d.DataLoader(_Marked(), batch_size=2, num_workers=1,
                                worker_init_fn=_init_fn)) == [["init", "init"]]


def _init_fn(worker_id):
    info = graphgrad.utils.data.get_worker_info()
    assert info.id == worker_id
    info.dataset.marker = "init"


class _Marked(gdata.Dataset):
    marker = "main"

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.marker


def test_worker_exception_is_reraised_with_its_type():
    dl = graphgrad.utils.data.DataLoader(Faulty(), batch_size=2, num_workers=2)
    it = iter(dl)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(ValueError, match=r"Caught ValueError in DataLoader worker process 0"
                                         r"(.|\n)*bad sample 4"):
        next(it)


def test_persistent_workers_reuse_and_reset():
    d = graphgrad.utils.data
    ds = tensor_ds(graphgrad, 11)
    ref = norm(batches(d.DataLoader(ds, batch_size=3)))
    dl = d.DataLoader(ds, batch_size=3, num_workers=2, persistent_workers=True)
    first = iter(dl)
    next(first)  # abandon the pass early: the next pass must still start at batch 0
    assert norm(batches(dl)) == ref
    assert norm(batches(dl)) == ref
    assert iter(dl) is first
    dl._iterator._shutdown_workers()
    sdl = d.DataLoader(stream(graphgrad, 5, True), batch_size=2, num_workers=2,
                       persistent_workers=True)
    assert norm(batches(sdl)) == norm(batches(sdl)) == norm(
        batches(torch.utils.data.DataLoader(stream(torch, 5, True), batch_size=2,
                                            num_workers=2)))
    sdl._iterator._shutdown_workers()


def test_iterator_len_and_early_break_shut_workers_down():
    dl = graphgrad.utils.data.DataLoader(range(10), batch_size=3, num_workers=2)
    it = iter(dl)
    assert len(it) == 4
    next(it)
    workers = list(it._workers)
    it._shutdown_workers()
    assert not any(w.is_alive() for w in workers)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isclose(sum(b.sum().item() for b in dl), 45)


class _Slow(gdata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        import time

        time.sleep(0.6)
        return i


class _Dies(gdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        import os

        if i == 0:
            os._exit(3)  # a worker killed mid-batch (as by the OOM killer)
        return i


def test_timeout_and_dead_worker_raise_torch_errors():
    slow = graphgrad.utils.data.DataLoader(_Slow(), num_workers=1, timeout=0.1)
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.1 seconds"):
        next(iter(slow))
    dies = graphgrad.utils.data.DataLoader(_Dies(), batch_size=2, num_workers=1)
    it = iter(dies)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           "unexpectedly"):
        next(it)
