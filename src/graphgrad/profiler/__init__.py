"""``torch.profiler``: ``profile`` times every op (named as torch's ``aten::`` ops), every
backward node and ``record_function`` range on the CPU; ``schedule`` picks the steps to
record; results read as torch's (``key_averages().table(...)``, ``events()``,
``export_chrome_trace``). See Note [Profiler hook] in ``_record.py`` for the cost when idle.
"""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings

from ._events import EventList, FunctionEvent, FunctionEventAvg
from ._record import Recorder, install, record_function, uninstall

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "record_function",
           "EventList", "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities():
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    return False


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Which action each step gets: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (the last one saves), ``repeat`` times (0:
    forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod = step % num_steps
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return (ProfilerAction.RECORD if mod < num_steps - 1
                else ProfilerAction.RECORD_AND_SAVE)
    return schedule_fn


def _default_schedule(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An ``on_trace_ready`` that writes each saved trace as Chrome JSON into ``dir_name``."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        if use_gzip:
            raise NotImplementedError("graphgrad's trace handler writes uncompressed JSON")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """Context manager (or ``start()``/``stop()``) profiling CPU work; ``step()`` marks a
    training step for ``schedule``.

    >>> import graphgrad as torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> with torch.profiler.profile() as prof:
    ...     (x * 2).sum().backward()
    >>> sorted({e.key for e in prof.key_averages()})[:3]
    ['MulBackward0', 'SumBackward0', 'aten::mul']
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        self.activities = set(activities) if activities else supported_activities()
        self.record_shapes = record_shapes
        self.schedule = schedule if schedule is not None else _default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._rec = None  # the recorder of the cycle being recorded
        self._step_range = None
        self._result = EventList()

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """Ends the current step; the schedule decides what the next one does."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    def _open_step(self):
        if self.record_steps and self._rec is not None:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}").__enter__()

    def _close_step(self):
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _transit(self, prev, cur):
        recording = prev in _RECORDING
        if recording and (cur not in _RECORDING or prev is ProfilerAction.RECORD_AND_SAVE):
            self._finish()
        if cur in _RECORDING and self._rec is None:
            self._rec = Recorder(self.record_shapes)
            install(self._rec)

    def _finish(self):
        """Ends a recorded cycle: its events become the result; ``on_trace_ready`` runs."""
        rec, self._rec = self._rec, None
        if rec is None:
            return
        uninstall(rec)
        self._result = rec.result()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results ----------------------------------------------------------------------------------
    def events(self):
        return self._result

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._result.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        return self._result.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        raise NotImplementedError("graphgrad's profiler records no stacks (with_stack)")

    @property
    def profiler(self):
        return self


# Makes torch.autograd.profiler (the older API over the same recorder) importable as an attribute.
from ..autograd import profiler as _autograd_profiler  # noqa: E402, F401
