"""DistributedDataParallel on 2 and 4 ranks equals one process on the full batch after every
step (graphgrad and torch as references), for an MLP and a CNN with SGD and Adam; no_sync,
unused parameters, and a checkpoint written by rank 0 and resumed on every rank."""

import _models
import numpy as np
import pytest
import torch
from conftest import split

import graphgrad as gg


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_ddp_equals_full_batch(suite, kind, opt_name):
    runs = suite.ranks(f"ddp_{kind}_{opt_name}")
    init = split(runs[0], "init")
    # Every rank started from its own random init; DDP broadcast rank 0's.
    assert any(not np.array_equal(split(runs[1], "before")[k], v) for k, v in init.items())
    for run in runs:
        for k, v in split(run, "init").items():
            np.testing.assert_array_equal(v, init[k])
    assert int(runs[0]["n_buckets"]) > 1
    refs = {m.__name__: _models.reference(m, kind, opt_name, init) for m in (gg, torch)}
    for step in range(_models.STEPS):
        for rank, run in enumerate(runs):
            got = split(run, str(step))
            for name, ref in refs.items():
                for k, want in ref[step].items():
                    np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=2e-6,
                                               err_msg=f"{name} step {step} rank {rank} {k}")


def _grads(m, init, rows):
    model = _models.mlp(m)
    _models.load(m, model, init)
    x, y = _models.data("mlp")
    out = {}
    for i, part in enumerate(rows):
        model.zero_grad()
        m.nn.CrossEntropyLoss()(model(m.tensor(x[part])), m.tensor(y[part])).backward()
        out[i] = {k: p.grad.numpy().copy() for k, p in model.named_parameters()}
    return out


def test_no_sync_accumulates_locally_then_averages(suite):
    runs = suite.ranks("no_sync")
    init = split(runs[0], "init")
    n = _models.BATCH // suite.world
    half = n // 2
    firsts = [slice(r * n, r * n + half) for r in range(suite.world)]
    seconds = [slice(r * n + half, (r + 1) * n) for r in range(suite.world)]
    w = suite.world
    g = _grads(torch, init, firsts + seconds)
    for r, run in enumerate(runs):
        for k, v in split(run, "local").items():
            np.testing.assert_allclose(v, g[r][k], rtol=1e-5, atol=1e-6)
        for k, v in split(run, "synced").items():
            want = np.mean([g[q][k] + g[w + q][k] for q in range(w)],
                           axis=0)
            np.testing.assert_allclose(v, want, rtol=1e-5, atol=1e-6)


def test_find_unused_parameters(suite):
    runs = suite.ranks("unused")
    init = split(runs[0], "init")
    w = suite.world
    trunk_w = init["trunk.weight"]
    for run in runs:
        grads = split(run, "grad")
        # head_a is used on ranks 0..w-2 with inputs full(r + 1): its weight gradient is
        # sum_rows(h) averaged over all w ranks (unused ranks contribute zeros).
        hs = [np.full((2, 3), r + 1.0) @ trunk_w.T + init["trunk.bias"] for r in range(w)]
        want_a = sum(np.ones((2, 2)).T @ hs[r] for r in range(w - 1)) / w
        want_b = np.ones((2, 2)).T @ hs[w - 1] / w
        np.testing.assert_allclose(grads["head_a.weight"], want_a, rtol=1e-5)
        np.testing.assert_allclose(grads["head_b.weight"], want_b, rtol=1e-5)
        assert bool(run["b_none"])
        msg = str(run["error"])
        assert "Expected to have finished reduction in the prior iteration" in msg
        assert "find_unused_parameters=True" in msg and "head_b.weight" in msg


def test_checkpoint_rank0_writes_resume_is_exact(suite):
    for run in suite.ranks("checkpoint"):
        assert list(run["files"]) == ["ckpt.pt"]
        straight, resumed = split(run, "straight"), split(run, "resumed")
        for k, v in straight.items():
            np.testing.assert_array_equal(resumed[k], v)


def test_ddp_world_of_one_without_launcher():
    gg.distributed.init_process_group("mpi")
    try:
        gg.manual_seed(0)
        model = _models.mlp(gg)
        init = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        net = gg.nn.parallel.DistributedDataParallel(model)
        opt = _models.optimizer(gg, "adam", net.parameters())
        x, y = _models.data("mlp")
        for _ in range(_models.STEPS):
            opt.zero_grad()
            gg.nn.CrossEntropyLoss()(net(gg.tensor(x)), gg.tensor(y)).backward()
            opt.step()
        want = _models.reference(torch, "mlp", "adam", init)[-1]
        for k, v in model.state_dict().items():
            np.testing.assert_allclose(v.numpy(), want[k], rtol=1e-5, atol=2e-6)
    finally:
        gg.distributed.destroy_process_group()
