"""A rank that raises, dies or exits makes the job stop within a bounded time with an error
that names it; the ranks blocked in collectives stop with a PeerFailureError naming it."""

import os
import time

import pytest
from conftest import _MPI_ERROR, HERE, launch

pytestmark = pytest.mark.skipif(_MPI_ERROR is not None, reason=_MPI_ERROR or "")


def _run(mode, n=3):
    start = time.monotonic()
    r = launch(n, os.path.join(HERE, "_fault.py"), mode, timeout=60)
    return r, time.monotonic() - start


def test_rank_raises():
    r, took = _run("raise")
    assert r.returncode != 0
    assert took < 30
    assert "[rank 1] ValueError: boom on purpose" in r.stderr  # its traceback
    assert "[rank 0] stopped: rank 1 failed: ValueError: boom on purpose" in r.stderr
    assert "graphgrad.distributed.run: rank 1 failed: ValueError: boom on purpose" in r.stderr


def test_rank_dies():
    r, took = _run("die")
    assert r.returncode != 0
    assert took < 30
    assert "graphgrad.distributed.run: rank 1 (pid" in r.stderr
    # MPICH's exit code when its report names rank 1; "died first" when it named another
    assert "died (killed by signal 9)" in r.stderr or "died first" in r.stderr


def test_rank_exits_early():
    r, took = _run("exit", n=2)
    assert r.returncode != 0
    assert took < 30
    assert "graphgrad.distributed.run: rank 1 failed: exited with code 3" in r.stderr
    assert "[rank 0] stopped: rank 1 failed: exited with code 3" in r.stderr


def test_reports_lost_by_mpiexec_are_echoed(tmp_path):
    # mpiexec can kill a rank between its write to stderr and the forwarding of that write;
    # the launcher then prints the report from the rank's error file, once.
    import json

    from graphgrad.distributed.run import _error_records, _unforwarded

    report = ["[rank 0] stopped: rank 1 failed: ValueError: boom"]
    (tmp_path / "error.0.json").write_text(json.dumps(
        {"rank": 0, "error": "x", "peer": True, "time": 0.0, "report": report}))
    errors = _error_records(str(tmp_path))
    assert _unforwarded(errors, ["[rank 1] failed: ValueError: boom\n"]) == report
    assert _unforwarded(errors, [report[0] + "\n"]) == []
