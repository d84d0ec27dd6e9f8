"""No hangs: init_process_group's timeout bounds every collective (and the group's creation),
naming the collective and the rank that did not join; SIGTERM or SIGINT to the launcher ends
mpiexec and every rank within a few seconds, with a nonzero exit."""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from conftest import _MPI_ERROR, HERE, launch

import graphgrad.distributed as dist

needs_mpi = pytest.mark.skipif(_MPI_ERROR is not None, reason=_MPI_ERROR or "")


@needs_mpi
def test_hung_rank_makes_the_collective_time_out_naming_it():
    start = time.monotonic()
    r = launch(3, os.path.join(HERE, "_hang.py"), "collective", timeout=90)
    took = time.monotonic() - start
    assert r.returncode != 0
    # 1 s timeout, 1 s to ask the others, then the abort, plus start-up: never 60 s.
    assert took < 45, took
    assert ("all_reduce (collective #2 of the default process group) timed out after 1 "
            "seconds: rank 1 did not join it; ranks 0, 2 were waiting") in r.stderr, r.stderr
    assert "DistTimeoutError" in r.stderr


@needs_mpi
def test_rank_that_never_joins_makes_init_time_out():
    start = time.monotonic()
    r = launch(2, os.path.join(HERE, "_hang.py"), "init", timeout=90)
    assert r.returncode != 0
    assert time.monotonic() - start < 45
    assert "[rank 0] init_process_group timed out after 1 seconds" in r.stderr, r.stderr


def test_timeout_must_be_a_timedelta_as_torch():
    import torch.distributed as tdist

    for mod in (dist, tdist):
        with pytest.raises(TypeError, match="Expected timeout argument to be of type "
                                            "datetime.timedelta, got 5"):
            mod.init_process_group("gloo", timeout=5, rank=0, world_size=1,
                                   init_method="tcp://127.0.0.1:1")
    assert dist.default_pg_timeout == tdist.default_pg_timeout == timedelta(minutes=30)


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


@needs_mpi
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_to_the_launcher_ends_every_rank(sig, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "graphgrad.distributed.run", "-n", "2",
                             os.path.join(HERE, "_hang.py"), "spin", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = []
    try:
        deadline = time.monotonic() + 60
        while len(os.listdir(tmp_path)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)  # the pid files are written in one go, but let both finish
        pids = [int((tmp_path / f).read_text()) for f in os.listdir(tmp_path)]
        assert len(pids) == 2
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
        left = [p for p in pids if _alive(p)]
        assert proc.returncode == 128 + sig, (proc.returncode, err)
        assert not left
        assert took < 10, took  # torchrun: within 6 s; a generous bound on a loaded machine
        assert f"received {signal.Signals(sig).name}; stopped mpiexec" in err
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in pids:
            if _alive(p):
                os.kill(p, signal.SIGKILL)
