"""``torch.autograd.profiler``: the older profiler API (``profile`` with ``enabled``,
``function_events`` and ``table()``) over the same recorder as ``graphgrad.profiler``."""

from __future__ import annotations

from ..profiler._events import EventList, FunctionEvent, FunctionEventAvg
from ..profiler._record import Recorder, install, record_function, uninstall

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile:
    """Context manager recording ops, backward nodes and ``record_function`` ranges.

    >>> import graphgrad as torch
    >>> x = torch.ones(2)
    >>> with torch.autograd.profiler.profile() as prof:
    ...     y = x + 1
    >>> [e.name for e in prof.function_events]
    ['aten::add']
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.function_events = None
        self._rec = None
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return None  # as torch
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._rec = Recorder(self.record_shapes)
        install(self._rec)
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        uninstall(self._rec)
        self.function_events = self._rec.result()
        self._rec = None
        return False

    def _events(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        return self._events().table(sort_by, row_limit, max_src_column_width,
                                    max_name_column_width, max_shapes_column_width, header,
                                    top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        return self._events().export_chrome_trace(path)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def __str__(self):
        return self.table()
