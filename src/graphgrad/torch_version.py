"""``graphgrad.torch_version.TorchVersion``: a version string that compares as a version
(``TorchVersion("0.10.0") > "0.9"``), with strings or tuples, as torch's ``__version__``."""

from __future__ import annotations

import re

__all__ = ["TorchVersion"]

_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)[.-]?([a-z][a-z0-9.]*)?(?:\+([a-z0-9.]+))?$", re.I)


def _parts(v):
    """A comparable key of a version: release numbers, a pre-release marker (before the
    release), a local suffix (``+cpu``: after the plain release)."""
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v), (), ()
    m = _VERSION.match(str(v).strip())
    if m is None:
        raise ValueError(f"Invalid version: '{v}'")
    nums = tuple(int(x) for x in m.group(1).split("."))
    pre = ("0", m.group(2)) if m.group(2) else ("1",)
    local = (1, m.group(3)) if m.group(3) else (0,)
    return nums, pre, local


class TorchVersion(str):
    """A ``str`` whose comparisons follow version order."""

    def _cmp(self, other):
        (a, pa, la), (b, pb, lb) = _parts(self), _parts(other)
        if isinstance(other, (tuple, list)):  # a tuple compares the release numbers only
            a, pa, la, pb, lb = a[:len(b)], (), (), (), ()
        n = max(len(a), len(b))
        ka = (a + (0,) * (n - len(a)), pa, la)
        kb = (b + (0,) * (n - len(b)), pb, lb)
        return (ka > kb) - (ka < kb)

    def __lt__(self, other):
        return self._cmp(other) < 0

    def __le__(self, other):
        return self._cmp(other) <= 0

    def __gt__(self, other):
        return self._cmp(other) > 0

    def __ge__(self, other):
        return self._cmp(other) >= 0

    def __eq__(self, other):
        if isinstance(other, (str, tuple, list)):
            return self._cmp(other) == 0
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = str.__hash__
