"""Multi-rank runs through the launcher, shared by the distributed tests. The rank suite runs
once per world size (2 and 4 ranks, on a 2-core machine) and the tests read what it saved."""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# Rank scripts: run by the launcher, never imported by pytest (doctest collection would).
collect_ignore = ["_rank_suite.py", "_fault.py", "_hang.py"]

try:
    import mpi4py.MPI  # noqa: F401
    _MPI_ERROR = None
except (ImportError, RuntimeError) as e:  # RuntimeError: mpi4py without an MPI library
    _MPI_ERROR = f"mpi4py or an MPI library is missing ({e}); pip install '.[distributed]'"

needs_mpi = pytest.mark.skipif(_MPI_ERROR is not None, reason=_MPI_ERROR or "")


def launch(n, *program, timeout=120):
    """Runs ``python -m graphgrad.distributed.run -n N program...``; returns the result."""
    return subprocess.run([sys.executable, "-m", "graphgrad.distributed.run", "-n", str(n),
                           *program], capture_output=True, text=True, timeout=timeout)


class Results:
    def __init__(self, out, world):
        self.out = out
        self.world = world

    def __call__(self, name, rank=0):
        with np.load(os.path.join(self.out, f"{name}.r{rank}.npz")) as f:
            return {k: f[k] for k in f.files}

    def ranks(self, name, count=None):
        return [self(name, r) for r in range(count or self.world)]


@pytest.fixture(scope="session", params=[2, 4], ids=["2ranks", "4ranks"])
def suite(request, tmp_path_factory):
    if _MPI_ERROR is not None:
        pytest.skip(_MPI_ERROR)
    out = tmp_path_factory.mktemp(f"suite{request.param}")
    r = launch(request.param, os.path.join(HERE, "_rank_suite.py"), str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    return Results(str(out), request.param)


def split(d, prefix):
    """{name: array} of the entries of ``d`` under ``prefix/``."""
    return {k[len(prefix) + 1:]: v for k, v in d.items() if k.startswith(prefix + "/")}
