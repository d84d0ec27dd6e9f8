"""Profiler results as torch's ``profiler_util`` gives them: ``FunctionEvent`` (one timed
range), ``FunctionEventAvg`` (events grouped by name), and ``EventList`` with
``key_averages()``, ``table()`` in torch's layout, and ``export_chrome_trace()``.
Times are microseconds, as in torch.
"""

from __future__ import annotations

import json
import os
import tempfile

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "Interval"]


class Interval:
    """``time_range`` of an event: start and end in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class _Stats:
    """Fields torch's table and sort keys read that a CPU-only profile leaves at zero."""

    device_type = "CPU"
    use_device = None
    is_async = False
    is_remote = False
    is_legacy = False
    node_id = -1
    overload_name = ""
    flops = 0
    self_device_time_total = device_time_total = device_time = 0
    self_cuda_time_total = cuda_time_total = cuda_time = 0
    self_device_memory_usage = device_memory_usage = 0
    cpu_memory_usage = self_cpu_memory_usage = 0

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)


class FunctionEvent(_Stats):
    """One op, backward node or ``record_function`` range."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None,  # noqa: A002
                 is_user_annotation=False, sequence_nr=-1, category="cpu_op"):
        self.id = id
        self.name = self.key = self.trace_name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.is_user_annotation = is_user_annotation
        self.sequence_nr = sequence_nr
        self.category = category
        self.cpu_children = []
        self.cpu_parent = None
        self.stack = []
        self.kernels = []
        self.count = 1

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_Stats):
    """Events of one name (and input shapes, when grouped so) added together."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0
        self.self_cpu_time_total = 0
        self.input_shapes = None
        self.is_user_annotation = False
        self.cpu_parent = None
        self.cpu_children = None
        self.stack = []

    def add(self, other):
        if self.count == 0:
            self.key = self.key or other.key
            self.input_shapes = other.input_shapes
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events with torch's summaries."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One FunctionEventAvg per name (and per input shapes with
        ``group_by_input_shape``), in order of first appearance."""
        groups = {}
        for e in self:
            # torch sums the ProfilerStep#<n> ranges under one name
            name = "ProfilerStep*" if e.key.startswith("ProfilerStep#") else e.key
            key = (name, str(e.input_shapes)) if group_by_input_shape else name
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg()
                avg.key = name
            avg.add(e)
        return EventList(groups.values())

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The summary torch prints: Name, Self CPU %, Self CPU, CPU total %, CPU total,
        CPU time avg, # of Calls (and Input Shapes when recorded)."""
        return _build_table(self, sort_by, header, row_limit, max_name_column_width,
                            max_shapes_column_width, top_level_events_only, time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Writes the events as Chrome trace JSON (``chrome://tracing``, Perfetto), through a
        temporary file renamed into place, so a reader never sees half a file."""
        pid = os.getpid()
        events = [{"ph": "X", "cat": getattr(e, "category", "cpu_op"), "name": e.trace_name,
                   "pid": pid, "tid": e.thread, "ts": e.time_range.start,
                   "dur": e.time_range.elapsed_us(),
                   "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                  for e in self if isinstance(e, FunctionEvent)]
        text = json.dumps({"schemaVersion": 1, "traceEvents": events,
                           "displayTimeUnit": "ms"})
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".trace-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _in_unit(time_us, default, unit):
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return default


def _build_table(events, sort_by, header, row_limit, max_name_width, max_shapes_width,
                 top_level_only, time_unit):
    """torch.autograd.profiler_util._build_table for CPU events."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    widths = [name_width] + [12] * 6
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        row = [name, _format_share(e.self_cpu_time_total, total),
               _in_unit(e.self_cpu_time_total, e.self_cpu_time_total_str, time_unit),
               _format_share(e.cpu_time_total, total),
               _in_unit(e.cpu_time_total, e.cpu_time_total_str, time_unit),
               _in_unit(e.cpu_time, e.cpu_time_str, time_unit), e.count]
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        out.append(row_format.format(*row))
    out += [sep, f"Self CPU time total: {_in_unit(total, _format_time(total), time_unit)}"]
    return "".join(line + "\n" for line in out)
