"""Compiler logs, as torch's ``TORCH_LOGS``: ``GRAPHGRAD_LOGS=recompiles`` (comma-separated;
also ``graph_breaks``) prints each recapture with the guard that failed, through the logging
module's ``graphgrad._dynamo`` logger (records are emitted at DEBUG level whatever the
variable says, so a handler of your own can collect them). ``set_logs(recompiles=True)`` does
the same from code, as ``torch._logging.set_logs``.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["set_logs", "logger", "recompile", "graph_break"]

logger = logging.getLogger("graphgrad._dynamo")
_on: set = set()
_handler = None
ARTIFACTS = ("recompiles", "graph_breaks")


def set_logs(*, recompiles: bool | None = None, graph_breaks: bool | None = None) -> None:
    global _handler
    for name, flag in (("recompiles", recompiles), ("graph_breaks", graph_breaks)):
        if flag is True:
            _on.add(name)
        elif flag is False:
            _on.discard(name)
    if _on and _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("[graphgrad.compile %(levelname)s] %(message)s"))
        logger.addHandler(_handler)
    if _on:
        logger.setLevel(logging.DEBUG)


def _from_env():
    spec = os.environ.get("GRAPHGRAD_LOGS", "")
    names = {s.strip().lstrip("+") for s in spec.split(",") if s.strip()}
    unknown = names - set(ARTIFACTS)
    if unknown:
        import warnings

        warnings.warn(f"GRAPHGRAD_LOGS: unknown artifact(s) {sorted(unknown)}; known: "
                      f"{', '.join(ARTIFACTS)}", RuntimeWarning, stacklevel=2)
    set_logs(**{n: True for n in names & set(ARTIFACTS)})


def _where(fn):
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    return f"{name} in {code.co_filename}:{code.co_firstlineno}" if code else name


def recompile(cf, reason) -> None:
    if "recompiles" in _on or logger.isEnabledFor(logging.DEBUG):
        logger.log(logging.INFO if "recompiles" in _on else logging.DEBUG,
                   "Recompiling function %s\n    triggered by the following guard "
                   "failure(s):\n    - %s", _where(cf.fn), reason)


def graph_break(cf, err) -> None:
    if "graph_breaks" in _on or logger.isEnabledFor(logging.DEBUG):
        logger.log(logging.INFO if "graph_breaks" in _on else logging.DEBUG,
                   "Graph break in %s: %s", _where(cf.fn), err)


_from_env()
