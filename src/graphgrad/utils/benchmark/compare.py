"""``Compare``: Measurements side by side, rows by sub_label and columns by description."""

from __future__ import annotations

from .common import Measurement, select_unit


class Compare:
    def __init__(self, results):
        self._results = [r for r in results if isinstance(r, Measurement)]
        self._trim = False
        self._colorize = False

    def extend_results(self, results):
        self._results.extend(r for r in results if isinstance(r, Measurement))

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize = True  # accepted; the table is plain text

    def highlight_warnings(self):
        pass

    def print(self):
        print(str(self))

    def __str__(self) -> str:
        blocks = []
        for label in dict.fromkeys(r.task_spec.label for r in self._results):
            group = [r for r in self._results if r.task_spec.label == label]
            cols = list(dict.fromkeys(r.task_spec.description or "" for r in group))
            rows = list(dict.fromkeys(r.task_spec.sub_label or r.task_spec.stmt for r in group))
            unit, scale = select_unit(min(r.median for r in group))
            cell = {(r.task_spec.sub_label or r.task_spec.stmt, r.task_spec.description or ""):
                    r.median / scale for r in group}
            width = max(len(x) for x in rows)
            lines = [f"[{'-' * 5} {label} {'-' * 6}]", " " * width + "  |  " + "  |  ".join(cols)]
            for row in rows:
                vals = [f"{cell[(row, c)]:.1f}" if (row, c) in cell else "" for c in cols]
                lines.append(row.rjust(width) + "  |  " + "  |  ".join(vals))
            lines.append(f"\nTimes are in {_ENGLISH[unit]} ({unit}).")
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"


_ENGLISH = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}
