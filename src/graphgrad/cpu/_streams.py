"""torch.cpu's ``Stream``, ``Event``, ``stream`` and ``current_stream``: placeholders for
device-agnostic code, as torch's CPU ones (work is done when a call returns, so there is
nothing to order or wait for)."""

from __future__ import annotations

__all__ = ["Stream", "Event", "StreamContext", "stream", "current_stream"]


class Stream:
    """A CPU stream: recording and waiting do nothing."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def record_event(self, event=None):
        return None

    def wait_event(self, event) -> None:
        return None

    def wait_stream(self, stream) -> None:
        return None


class Event:
    """A CPU event: always complete."""

    def query(self) -> bool:
        return True

    def record(self, stream=None) -> None:
        return None

    def synchronize(self) -> None:
        return None

    def wait(self, stream=None) -> None:
        return None


_default = Stream()
_current = _default


def current_stream(device=None) -> Stream:
    return _current


class StreamContext:
    """Makes ``stream`` current inside the block (None leaves the current one)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        global _current
        self.prev = _current
        if self.stream is not None:
            _current = self.stream

    def __exit__(self, *exc):
        global _current
        _current = self.prev


def stream(stream) -> StreamContext:
    return StreamContext(stream)
