"""Source sites: the line of the user's code that made a graph node, ran backward() or changed a
tensor in place, for error messages that point at the user's program instead of graphgrad.

Capture is cheap (a walk of a few frames, no line-number lookup); the line is resolved only
when a message needs it. See Note [Sites] in docs/design.md.
"""

from __future__ import annotations

import linecache
import os
import sys

__all__ = ["Site", "capture", "capture_stack", "user_stacklevel", "set_capture_sites",
           "capture_sites",
           "is_capture_sites_enabled"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# The bundled examples (graphgrad/examples/) are user programs: messages point into them.
_EXAMPLES_DIR = _PACKAGE_DIR + "examples" + os.sep
_getframe = sys._getframe
# filename -> whether it belongs to graphgrad (frames there are skipped)
_internal: dict[str, bool] = {}


def _is_internal(filename: str) -> bool:
    flag = _internal.get(filename)
    if flag is None:
        flag = _internal[filename] = (filename.startswith(_PACKAGE_DIR)
                                      and not filename.startswith(_EXAMPLES_DIR))
    return flag


class _State:
    """``on``: graph nodes record the user's line; ``stack``: the user's whole call stack
    (anomaly mode). ``explicit`` remembers set_capture_sites, which anomaly mode must not undo."""

    __slots__ = ("on", "stack", "explicit")

    def __init__(self):
        self.on = self.stack = self.explicit = False

    def update(self, anomaly: bool):
        self.stack = anomaly
        self.on = anomaly or self.explicit


state = _State()


def set_capture_sites(mode: bool) -> None:
    """Record, for every graph node made from now on, the line of user code that made it.

    Off by default: the frame walk costs about 10% of a small op's eager time. Error messages
    about saved tensors and freed graphs, the memory report and graph drawings then name the
    line. Anomaly mode turns it on as well.
    """
    state.explicit = bool(mode)
    from .anomaly import is_anomaly_enabled

    state.update(is_anomaly_enabled())


def is_capture_sites_enabled() -> bool:
    return state.on


class capture_sites:
    """Context manager form of :func:`set_capture_sites`."""

    def __init__(self, mode: bool = True):
        self.mode = mode

    def __enter__(self):
        self.prev = state.explicit
        set_capture_sites(self.mode)
        return self

    def __exit__(self, *exc):
        set_capture_sites(self.prev)
        return False


class Site:
    """One line of user code, resolved lazily from a code object and an instruction offset;
    ``outer`` holds the calling lines (outermost first) when the whole stack was captured."""

    __slots__ = ("code", "lasti", "outer")

    def __init__(self, code, lasti, outer=()):
        self.code = code
        self.lasti = lasti
        self.outer = outer

    @property
    def filename(self) -> str:
        return self.code.co_filename

    @property
    def function(self) -> str:
        return self.code.co_name

    @property
    def lineno(self) -> int:
        for start, end, line in self.code.co_lines():
            if start <= self.lasti < end and line is not None:
                return line
        return self.code.co_firstlineno

    def source(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    def short(self) -> str:
        """``file.py:12 (in f): source text``."""
        src = self.source()
        where = f"{os.path.basename(self.filename)}:{self.lineno} (in {self.function})"
        return f"{where}: {src}" if src else where

    def __str__(self) -> str:
        text = f'  File "{self.filename}", line {self.lineno}, in {self.function}'
        src = self.source()
        return f"{text}\n    {src}" if src else text

    def __repr__(self) -> str:
        return f"Site({self.filename!r}, {self.lineno})"


    def traceback(self) -> str:
        """The captured lines as Python prints a traceback, outermost first."""
        return "\n".join(str(s) for s in (*self.outer, self))


def capture(depth: int = 2) -> Site | None:
    """The innermost frame outside graphgrad, starting ``depth`` frames above the caller; with
    anomaly mode on, the Site also holds the frames that called it."""
    try:
        f = _getframe(depth)
    except ValueError:
        return None
    internal = _internal
    while f is not None:  # _is_internal inlined: this runs on every backward()
        name = f.f_code.co_filename
        flag = internal.get(name)
        if flag is None:
            flag = _is_internal(name)
        if not flag:
            break
        f = f.f_back
    if f is None:
        return None
    if state.stack:
        return Site(f.f_code, f.f_lasti, tuple(capture_stack(f)))
    return Site(f.f_code, f.f_lasti)


def capture_stack(inner, limit: int = 12) -> list[Site]:
    """The user's frames (outside graphgrad) that called frame ``inner``, outermost first."""
    f = inner.f_back
    stack = []
    while f is not None and len(stack) < limit:
        if not _is_internal(f.f_code.co_filename):
            stack.append(Site(f.f_code, f.f_lasti))
        f = f.f_back
    stack.reverse()
    return stack


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` (called from the function that warns) that
    points at the user's line instead of graphgrad's."""
    f = _getframe(2)
    level = 2
    while f is not None and _is_internal(f.f_code.co_filename):
        f = f.f_back
        level += 1
    return level
