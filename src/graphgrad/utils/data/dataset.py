"""Datasets, as ``torch.utils.data``: map-style ``Dataset`` and stream-style ``IterableDataset``.

A map-style dataset answers ``dataset[i]`` and ``len(dataset)``; an iterable one is iterated.
``TensorDataset``, ``Subset``, ``ConcatDataset``, ``ChainDataset``, ``StackDataset`` combine
them; ``random_split`` cuts one into random non-overlapping subsets.
"""

from __future__ import annotations

import bisect
import math
import warnings

from ...ops.random import randperm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    >>> from graphgrad.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> [Squares()[i] for i in range(4)]
    [0, 1, 4, 9]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])

    # NOTE: no default __len__, as in torch: list(dataset) and friends probe len() and would take
    # a wrong path if it returned NotImplemented; a missing method raises the TypeError Python
    # users expect.


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own copy of the dataset; a dataset that
    should not yield duplicates shards itself with ``get_worker_info()``.

    >>> from graphgrad.utils.data import IterableDataset
    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(3))
    >>> list(Count())
    [0, 1, 2]
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are tuples of the tensors' rows: ``dataset[i] == (t[i] for t in tensors)``.

    >>> import graphgrad as torch
    >>> from graphgrad.utils.data import TensorDataset
    >>> ds = TensorDataset(torch.arange(3), torch.tensor([1.0, 2.0, 3.0]))
    >>> ds[1]
    (tensor(1), tensor(2.))
    """

    def __init__(self, *tensors) -> None:
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Zips datasets of equal length: samples are tuples (``*args``) or dicts (``**kwargs``)."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                                 "``kwargs``) like input/output, but both types are given.")
            datasets = args
        elif kwargs:
            datasets = list(kwargs.values())
        else:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """The concatenation of map-style datasets.

    >>> from graphgrad.utils.data import ConcatDataset
    >>> ds = ConcatDataset([range(2), range(10, 13)])
    >>> len(ds), ds[3], ds[-1]
    (5, 11, 12)
    """

    @staticmethod
    def cumsum(sequence):
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[dataset_idx - 1] if dataset_idx > 0 else 0
        return self.datasets[dataset_idx][idx - start]


class ChainDataset(IterableDataset):
    """The chaining of iterable datasets, one after the other."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    >>> from graphgrad.utils.data import Subset
    >>> s = Subset(range(10, 20), [3, 1])
    >>> len(s), s[0], s[1]
    (2, 13, 11)
    """

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # Batched fetch used by the DataLoader; delegates to the wrapped dataset's own batched
        # fetch when it has one.
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Splits ``dataset`` into random non-overlapping ``Subset``s of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)`` or fractions summing to 1 (floors are
    taken and the remainder is handed out round-robin, as torch does).

    >>> import graphgrad as torch
    >>> from graphgrad.utils.data import random_split
    >>> a, b = random_split(range(10), [0.3, 0.7], generator=torch.Generator().manual_seed(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (3, 7, True)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out
