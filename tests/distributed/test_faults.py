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
