"""``Timer``: runs a statement many times with ``timeit`` and returns a Measurement."""

from __future__ import annotations

import enum
import timeit

from .common import Measurement, TaskSpec


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """torch.utils.benchmark.Timer for Python statements (``language="cpp"`` is refused)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timeit.default_timer,
                 globals=None, label=None, sub_label=None, description=None, env=None,
                 num_threads=1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("graphgrad's benchmark.Timer times Python statements only")
        if not isinstance(stmt, str) or not isinstance(setup, str):
            raise ValueError("Timer: stmt and setup must be strings")
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer,
                                   globals=dict(globals or {}))

    def _measure(self, number: int) -> float:
        return self._timer.timeit(number)

    def timeit(self, number: int = 1000000) -> Measurement:
        self._measure(max(1, number // 100))  # warm up, as torch does
        return Measurement(number, [self._measure(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self) -> int:
        number = 1
        while True:
            if self._measure(number) >= 1e-3 or number >= 10**7:
                return number
            number *= 10

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        number = self._block_size()
        times, total = [], 0.0
        while total < min_run_time or not times:
            t = self._measure(number)
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0, callback=None) -> Measurement:
        number = self._block_size()
        times, total = [], 0.0
        while True:
            t = self._measure(number)
            times.append(t)
            total += t
            m = Measurement(number, times, self._task_spec)
            if (total >= min_run_time and len(times) > 3 and m.meets_confidence(threshold)) \
                    or total >= max_run_time:
                return m

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("graphgrad's benchmark.Timer has no callgrind collection "
                                  "(run valgrind on the process instead)")
