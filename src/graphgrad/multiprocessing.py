"""``torch.multiprocessing``: Python's ``multiprocessing`` under torch's name, with tensors
that cross processes in shared memory (graphgrad/_shared_memory.py): a tensor sent to another
process (spawn arguments, ``Queue.put``) moves to shared memory and the receiver maps the same
bytes, so in-place updates on either side are seen by both (Hogwild training). Forked
children see tensors shared before the fork. As with torch's ``file_descriptor`` strategy, a
sender must stay alive until the receiver has taken the tensor off the queue.

Both of torch's strategies are accepted; both pass descriptors of anonymous memory files
(graphgrad needs no /dev/shm names, so there is nothing for ``file_system`` to clean up).
"""

from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403 - torch.multiprocessing re-exports the module

__all__ = [*_mp.__all__, "set_sharing_strategy", "get_sharing_strategy",
           "get_all_sharing_strategies", "spawn", "start_processes", "ProcessContext",
           "ProcessRaisedException", "ProcessExitedException"]

from ._shared_memory import register_reducers as _register_reducers

_strategy = ["file_descriptor"]  # torch's default on Linux
_register_reducers()


def get_all_sharing_strategies():
    """The strategies torch offers on Linux."""
    return {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Accepted for torch compatibility: both strategies share the same way (see above)."""
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy


def get_sharing_strategy():
    return _strategy[0]


class ProcessRaisedException(Exception):
    """A spawned process raised; ``error_index`` is its rank."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.error_index = error_index
        self.pid = error_pid


class ProcessExitedException(ProcessRaisedException):
    """A spawned process exited with a non-zero code."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name


class ProcessContext:
    """The processes ``start_processes`` launched; ``join`` waits for them."""

    def __init__(self, processes):
        self.processes = processes

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Waits for every process; raises when one failed; True once all have ended."""
        for i, p in enumerate(self.processes):
            p.join(timeout)
            if p.exitcode is None:
                return False
            if p.exitcode != 0:
                for q in self.processes:
                    if q.is_alive():
                        q.terminate()
                raise ProcessExitedException(
                    f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                    p.exitcode)
        return True


def _wrap(fn, i, args):
    fn(i, *args)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs ``fn(i, *args)`` in ``nprocs`` processes made by ``start_method``."""
    ctx = _mp.get_context(start_method)
    procs = []
    for i in range(nprocs):
        p = ctx.Process(target=_wrap, args=(fn, i, args), daemon=daemon)
        p.start()
        procs.append(p)
    context = ProcessContext(procs)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``torch.multiprocessing.spawn``: ``fn(rank, *args)`` in ``nprocs`` spawned processes."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
