"""DDP's graph fingerprint on 2 ranks: a rank-dependent branch and a parameter unused on one
rank raise the same RuntimeError on every rank (naming the first diverging op, each rank's
line and the parameters), instead of hanging; ops that differ while the parameters agree train
normally; a parameter unused everywhere gets torch's error with why_no_grad's cut."""

import os

import numpy as np
import pytest
import torch
from conftest import _MPI_ERROR, HERE, launch

WORLD = 2


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if _MPI_ERROR is not None:
        pytest.skip(_MPI_ERROR)
    out = tmp_path_factory.mktemp("fingerprint")
    # The launch timeout is the hang check: a hang would fail here.
    r = launch(WORLD, os.path.join(HERE, "_fingerprint_rank.py"), str(out), timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr

    def load(name):
        out_ = []
        for rank in range(WORLD):
            with np.load(os.path.join(out, f"{name}.r{rank}.npz")) as f:
                out_.append({k: f[k] for k in f.files})
        return out_
    return load


def _averaged_grad():
    """torch's gradient of sum(linear(x_r)) w.r.t. the weight, averaged over the ranks."""
    grads = []
    for rank in range(WORLD):
        lin = torch.nn.Linear(3, 2)
        lin(torch.full((2, 3), float(rank + 1))).sum().backward()
        grads.append(lin.weight.grad.numpy())
    return np.mean(grads, axis=0)


def test_rank_dependent_branch_raises_on_every_rank(runs):
    ranks = runs("branch")
    msgs = [str(r["error"]) for r in ranks]
    assert msgs[0] and msgs[0] == msgs[1]
    m = msgs[0]
    assert "built different graphs" in m
    rank0 = next(line for line in m.splitlines() if line.startswith("  rank 0:"))
    rank1 = next(line for line in m.splitlines() if line.startswith("  rank 1:"))
    assert "a.bias" in rank0 and "BRANCH-A" in rank0 and "_fingerprint_rank.py:" in rank0
    assert "b.bias" in rank1 and "BRANCH-B" in rank1
    assert "rank 0 does not use: b.bias, b.weight" in m
    assert "rank 1 does not use: a.bias, a.weight" in m
    # The group stays usable: the next step averages as usual.
    for r in ranks:
        assert str(r["after"]) == ""
        np.testing.assert_allclose(r["grad"], _averaged_grad(), rtol=1e-6)


def test_parameter_unused_on_one_rank(runs):
    msgs = [str(r["error"]) for r in runs("skip")]
    assert msgs[0] and msgs[0] == msgs[1]
    assert "rank 1 does not use: b.bias, b.weight" in msgs[0]
    assert "rank 0 does not use" not in msgs[0]
    # A later step: lines are not captured, and the message says how to get them.
    assert "set_capture_sites(True)" in msgs[0]


def test_different_ops_same_parameters_allowed(runs):
    for r in runs("activation"):
        assert str(r["error"]) == ""
        np.testing.assert_allclose(r["grad"], _averaged_grad(), rtol=1e-6)


def test_unused_everywhere_names_the_cut(runs):
    for rank, r in enumerate(runs("unused_everywhere")):
        m = str(r["error"])
        assert m.startswith("Expected to have finished reduction in the prior iteration")
        assert f"Parameters which did not receive grad for rank {rank}: b.weight, b.bias" in m
        assert "b.weight got no gradient: module b (Linear) was not called" in m


def test_find_unused_parameters_marked_twice_names_the_parameter(runs):
    for r in runs("marked_twice"):
        m = str(r["error"])
        assert m.startswith("Expected to mark a variable ready only once")
        assert "Parameter at index 2 with name b.weight has been marked as ready twice" in m

