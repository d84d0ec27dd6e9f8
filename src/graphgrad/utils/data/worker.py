"""What runs inside a DataLoader worker process, and ``get_worker_info`` for datasets.

A worker receives ``(epoch, task index, sampler indices)`` on its own queue, fetches and collates
the batch from its copy of the dataset, and puts ``(epoch, task index, batch)`` on the shared
result queue. Errors travel back as ``ExceptionWrapper``s and are re-raised in the main process.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

# How often an idle worker checks the done event and that its parent is alive (seconds).
_STATUS_CHECK_INTERVAL = 0.2


class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and ``dataset`` (this worker's copy) of a worker."""

    _frozen = False

    def __init__(self, **kwargs) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self._frozen = True

    def __setattr__(self, key, val) -> None:
        if self._frozen:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self) -> str:
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


_worker_info = None


def get_worker_info():
    """This worker's ``WorkerInfo`` inside a DataLoader worker process; None in the main one.

    An ``IterableDataset`` calls it in ``__iter__`` to yield only its share of the stream.

    >>> from graphgrad.utils.data import get_worker_info
    >>> get_worker_info() is None
    True
    """
    return _worker_info


class _KeyErrorMessage(str):
    # KeyError repr()s its argument, which would print the traceback on one line.
    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, picklable, re-raised in the main process."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # An exception type whose constructor wants other arguments.
            raise RuntimeError(msg) from None
        raise exception


class _IterableDatasetStopIteration:
    """Sent by a worker whose iterable-dataset copy is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _ResumeIteration:
    """Tells a persistent worker that a new pass begins (recreate the dataset iterator)."""


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None

    def fetch(self, index):
        if self.auto_collation:
            if self.getitems is not None:
                data = self.getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.iterator))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.iterator)
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_worker(base_seed: int, worker_id: int) -> int:
    from ...ops.random import manual_seed

    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    # NumPy's legacy global stream too (user datasets often call np.random): a seed derived from
    # both numbers, so workers and passes differ.
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers) -> None:
    """The body of a worker process; returns on None, on ``done_event``, or if its parent dies.

    NOTE: the done event is needed besides the None sentinel: when the main process's iterator
    is garbage-collected in a cycle, its queues' feeder threads may be finalized before its
    ``__del__`` puts the sentinel, which then never arrives.
    """
    global _worker_info
    parent = os.getppid()
    from ... import _shared_memory

    # Batches go back by value: a shared segment per batch costs more than the copy here.
    _shared_memory.by_value[0] = True
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        while True:
            try:
                task = index_queue.get(timeout=_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set() or os.getppid() != parent:
                    break
                continue
            if task is None or done_event.is_set():
                break
            if isinstance(task, _ResumeIteration):
                if init_error is None:
                    try:
                        fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn,
                                                 drop_last)
                    except Exception:
                        init_error = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
                continue
            epoch, idx, index = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    data = _IterableDatasetStopIteration(worker_id)
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((epoch, idx, data))
            del data
    except KeyboardInterrupt:
        pass
    # The main process may have stopped reading: do not block exit on flushing the queue.
    data_queue.cancel_join_thread()
    data_queue.close()
