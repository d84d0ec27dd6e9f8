"""Fixtures for the op suite: the module under test, and a recorder of OpDef applications.

The tests dir goes on sys.path so that ``import opinfo`` works; src is appended as a fallback
for runs without PYTHONPATH. OPINFO_SUBJECT=torch runs torch against itself, to validate the
table against the oracle when adding OpInfos.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parents[1]
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))
_SRC = _TESTS.parent / "src"
if str(_SRC) not in sys.path:
    sys.path.append(str(_SRC))


@pytest.fixture(scope="session")
def gg():
    """The module under test: graphgrad (an import error fails every test that uses it)."""
    return importlib.import_module(os.environ.get("OPINFO_SUBJECT", "graphgrad"))


class OpRecorder:
    """Wraps every OpDef's ``forward`` and ``vjp`` to record which ones ran."""

    def __init__(self, table):
        self.table = table
        self.forward_hits: set[str] = set()
        self.vjp_hits: set[str] = set()
        self._saved = {}

    def _wrap(self, key, fn, hits):
        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            hits.add(key)
            return fn(*args, **kwargs)

        return recorded

    def install(self):
        for key, op in self.table.items():
            self._saved[key] = (op.forward, op.vjp)
            if op.forward is not None:  # graph-only records (CopySlices) have no forward
                op.forward = self._wrap(key, op.forward, self.forward_hits)
            if op.vjp is not None:
                op.vjp = self._wrap(key, op.vjp, self.vjp_hits)

    def restore(self):
        for key, (forward, vjp) in self._saved.items():
            self.table[key].forward = forward
            self.table[key].vjp = vjp
        self._saved.clear()


@pytest.fixture(scope="session")
def op_recorder(gg):
    """An OpRecorder installed on ``graphgrad.ops.OPS`` for the session (fails if it is missing)."""
    ops_module = getattr(gg, "ops", None)
    table = getattr(ops_module, "OPS", None)
    assert isinstance(table, dict), f"{gg.__name__}.ops.OPS is missing: no op table to cover"
    recorder = OpRecorder(table)
    recorder.install()
    yield recorder
    recorder.restore()
