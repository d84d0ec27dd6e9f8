"""``torch.utils.benchmark``: Timer, Measurement and Compare, as tutorials use them to time
eager code (per-sample gradients, vmap ensembles). Wall-clock timing with ``timeit``;
callgrind collection is not available."""

from .common import Measurement, TaskSpec, select_unit, trim_sigfig
from .compare import Compare
from .timer import Language, Timer

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit",
           "trim_sigfig"]
