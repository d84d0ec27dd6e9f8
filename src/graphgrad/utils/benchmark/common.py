"""What one timing produced (torch.utils.benchmark.utils.common): the task and its times."""

from __future__ import annotations

import dataclasses
import math
import statistics

_UNITS = ((1e-9, "ns"), (1e-6, "us"), (1e-3, "ms"), (1.0, "s"))


def select_unit(t: float) -> tuple[str, float]:
    """The unit torch prints ``t`` seconds in, and its scale in seconds."""
    scale, unit = _UNITS[0]
    for s, u in _UNITS:
        if t >= s:
            scale, unit = s, u
    return unit, scale


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures."""
    if x == 0 or not math.isfinite(x):
        return x
    digits = n - int(math.floor(math.log10(abs(x)))) - 1
    return round(x, digits)


@dataclasses.dataclass
class TaskSpec:
    stmt: str
    setup: str = "pass"
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt: {self.stmt}" if "\n" not in self.stmt else "stmt: (multiline)"


class Measurement:
    """Times of ``number_per_run`` executions of a statement, one entry per run."""

    def __init__(self, number_per_run: int, raw_times: list[float], task_spec: TaskSpec,
                 metadata: dict | None = None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name):
        spec = self.__dict__.get("task_spec")
        if spec is not None and name in ("stmt", "setup", "label", "sub_label", "description",
                                         "env", "num_threads", "title"):
            return getattr(spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def iqr(self) -> float:
        t = sorted(self.times)
        if len(t) < 2:
            return 0.0
        q = statistics.quantiles(t, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def has_warnings(self) -> bool:
        return len(self.times) > 1 and self.iqr / self.median > 0.1

    def meets_confidence(self, threshold: float = 0.1) -> bool:
        return self.iqr / self.median < threshold

    @property
    def significant_figures(self) -> int:
        return 4 if len(self.times) < 2 else max(1, min(4, int(-math.log10(
            max(self.iqr / self.median, 1e-4)))))

    def __repr__(self) -> str:
        unit, scale = select_unit(self.median)
        lines = [f"<torch.utils.benchmark.utils.common.Measurement object at {id(self):#x}>",
                 self.task_spec.title]
        if self.task_spec.description:
            lines.append(self.task_spec.description)
        if self.task_spec.setup not in ("pass", ""):
            lines.append(f"setup: {self.task_spec.setup}")
        n = len(self.times)
        threads = f"{self.task_spec.num_threads} thread" + (
            "s" if self.task_spec.num_threads > 1 else "")
        if n == 1:
            lines += [f"  {self.median / scale:.2f} {unit}",
                      f"  1 measurement, {self.number_per_run} runs , {threads}"]
        else:
            q = statistics.quantiles(sorted(self.times), n=4, method="inclusive")
            lines += [f"  Median: {self.median / scale:.2f} {unit}",
                      f"  IQR:    {self.iqr / scale:.2f} {unit} ({q[0] / scale:.2f} to "
                      f"{q[2] / scale:.2f})",
                      f"  {n} measurements, {self.number_per_run} runs per measurement, "
                      f"{threads}"]
        return "\n".join(lines)

    __str__ = __repr__

    @staticmethod
    def merge(measurements) -> list[Measurement]:
        """Measurements of the same task folded into one, as torch's ``merge``."""
        groups: dict = {}
        for m in measurements:
            key = (m.task_spec, m.number_per_run)
            groups.setdefault(key, []).append(m)
        return [Measurement(n, [t for m in ms for t in m.raw_times], spec)
                for (spec, n), ms in groups.items()]
