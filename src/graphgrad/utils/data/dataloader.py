"""DataLoader, as ``torch.utils.data.DataLoader``: batches from a dataset, optionally in workers.

The loader turns a sampler's indices into batches (``batch_size``/``drop_last`` or a
``batch_sampler``) and collates them. With ``num_workers > 0`` batches are fetched by worker
processes (``multiprocessing``; each gets the dataset) and handed out in sampler order.
"""

from __future__ import annotations

import itertools
import math
import queue
import time

from ...diagnostics.retention import detector as _retention
from ...ops.random import randint
from . import worker as _worker
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]

# How long the main process waits on the result queue before checking that workers live.
_STATUS_CHECK_INTERVAL = 1.0


class _InfiniteConstantSampler(Sampler):
    """Yields None forever: an IterableDataset's 'indices', so batching logic is shared."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterates over ``dataset`` in batches.

    Accepts torch's arguments: ``batch_size=1``, ``shuffle``, ``sampler``, ``batch_sampler``,
    ``num_workers``, ``collate_fn``, ``pin_memory`` (accepted, no effect on CPU), ``drop_last``,
    ``timeout``, ``worker_init_fn``, ``multiprocessing_context``, ``generator``,
    ``prefetch_factor``, ``persistent_workers``.

    >>> import graphgrad as torch
    >>> from graphgrad.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torch.arange(5), torch.arange(5) * 10)
    >>> for x, y in DataLoader(ds, batch_size=2):
    ...     print(x, y)
    tensor([0, 1]) tensor([ 0, 10])
    tensor([2, 3]) tensor([20, 30])
    tensor([4]) tensor([40])
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        # NOTE: pinned memory is a CUDA notion; on CPU it is accepted and has no effect.
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)

        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = _mp_context(multiprocessing_context, num_workers)
        self._iterator = None
        self._initialized = True

    def __setattr__(self, attr, val) -> None:
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _shared_seed(self) -> int:
        # One draw per pass from the loader's generator (as torch): worker seeds derive from it.
        return randint(0, 2**62, (), generator=self.generator).item()

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else math.ceil(length / self.batch_size))
            return length
        return len(self._index_sampler)


def _mp_context(ctx, num_workers):
    if ctx is None:
        return None
    import multiprocessing
    import multiprocessing.context

    if num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")
    if isinstance(ctx, str):
        methods = multiprocessing.get_all_start_methods()
        if ctx not in methods:
            raise ValueError("multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got multiprocessing_context={ctx!r}")
        ctx = multiprocessing.get_context(ctx)
    if not isinstance(ctx, multiprocessing.context.BaseContext):
        raise TypeError("multiprocessing_context option should be a valid context object or a "
                        f"string specifying the start method, but got "
                        f"multiprocessing_context={ctx}")
    return ctx


class _BaseDataLoaderIter:
    def __init__(self, loader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._base_seed = loader._shared_seed()
        self._sampler_iter = None

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)

    def _next_index(self):
        return next(self._sampler_iter)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._fetcher = _worker.create_fetcher(self._iterable, self._dataset,
                                               self._auto_collation, self._collate_fn,
                                               self._drop_last)

    def __next__(self):
        _retention.on_batch()  # a step boundary for loops without an optimizer
        index = self._next_index()  # StopIteration ends the pass
        return self._fetcher.fetch(index)  # so does an exhausted IterableDataset


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Worker processes fetch batches; results are buffered and handed out in task order.

    Every pass has an epoch number: a persistent worker may still deliver batches of an
    abandoned pass, and those are recognised by their epoch and dropped.
    """

    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        # Imported here: most programs never start workers, and the import costs ~20 ms.
        import multiprocessing

        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            # Workers never put on their index queue, so exiting needs no flush of it.
            index_queue.cancel_join_thread()
            w = ctx.Process(target=_worker.worker_loop,
                            args=(self._iterable, self._dataset, index_queue,
                                  self._result_queue, self._done_event, self._auto_collation,
                                  self._collate_fn,
                                  self._drop_last, self._base_seed, loader.worker_init_fn, i,
                                  self._num_workers),
                            daemon=True)
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._epoch = 0
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}  # task index -> [worker id] or [worker id, batch]
        self._tasks_outstanding = 0
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            self._epoch += 1
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._active[wid]:
                break
        else:
            return  # every worker's stream has ended
        self._index_queues[wid].put((self._epoch, self._send_idx, index))
        self._task_info[self._send_idx] = [wid]
        self._tasks_outstanding += 1
        self._send_idx += 1

    def __next__(self):
        _retention.on_batch()  # a step boundary for loops without an optimizer
        while True:
            # Skip tasks given to workers whose iterable stream has since ended.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._active[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._active[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx].append(data)
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _get_data(self):
        start = time.monotonic()
        while True:
            wait = _STATUS_CHECK_INTERVAL
            if self._timeout > 0:
                wait = min(wait, max(self._timeout - (time.monotonic() - start), 0.0))
            try:
                epoch, idx, data = self._result_queue.get(timeout=wait)
            except queue.Empty:
                if self._timeout > 0 and time.monotonic() - start >= self._timeout:
                    # A worker that kept us waiting this long is hung: do not wait more for it
                    # to exit (torch raises after about t, not t plus a join per worker).
                    self._shutdown_workers(grace=0.0)
                    raise RuntimeError(
                        f"DataLoader timed out after {self._timeout} seconds") from None
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown_workers(grace=0.0)
                    pids = ", ".join(str(p) for p in dead)
                    raise RuntimeError(
                        f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
                continue
            if epoch == self._epoch:
                return idx, data

    def _shutdown_workers(self, grace: float = _STATUS_CHECK_INTERVAL * 5) -> None:
        """Asks the workers to exit and waits at most ``grace`` seconds in all (not per
        worker) before terminating those still running."""
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for q in self._index_queues:
            q.put(None)
        deadline = time.monotonic() + grace
        for w in self._workers:
            w.join(timeout=max(deadline - time.monotonic(), 0.0))
        for w in self._workers:
            if w.is_alive():
                w.terminate()
        for w in self._workers:
            w.join(timeout=_STATUS_CHECK_INTERVAL * 5)
            if w.is_alive():  # ignored SIGTERM (a handler, or stuck in a C call)
                w.kill()
                w.join()
        for q in (*self._index_queues, self._result_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:
            pass  # interpreter shutdown: modules may already be gone
