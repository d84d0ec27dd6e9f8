"""``graphgrad.compile(dynamic=True)``: after captures at two batch sizes, every other batch size
replays a graph instantiated from their diff without running the Python function again, and
gives torch's results; other changes still re-capture (guards), and graphs that cannot be
generalized fall back to one capture per size."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg


def _mlp(m, runs, loss):
    m.manual_seed(0)
    model = m.nn.Sequential(m.nn.Linear(6, 8), m.nn.ReLU(), m.nn.Linear(8, 3))
    opt = m.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        out = model(x)
        if loss == "mse":
            value = ((out - y) ** 2).mean()
        else:
            value = m.nn.functional.cross_entropy(out, y)
        value.backward()
        opt.step()
        return value
    return model, step


def _python_runs(c):
    """The first input's shape of each call that ran the Python function (a capture; the
    variants instantiated from the template did not run it). Counting with a list.append in
    the function would be a side effect, which now makes the call a graph break."""
    return [tuple(v.cap.graph.inputs[0].shape) for v in c.variants if not v.dynamic]


def _batches(c):
    return [s[0] for s in _python_runs(c)]


def _batch(rng, b, loss):
    x = rng.standard_normal((b, 6))
    y = rng.standard_normal((b, 3)) if loss == "mse" else rng.integers(0, 3, b)
    return x, y


@pytest.mark.parametrize("loss", ["mse", "cross_entropy"])
@pytest.mark.parametrize("options", [{"core_only": True}, None], ids=["core", "fused"])
def test_varying_batch_without_recapture_matches_torch(loss, options):
    runs: list = []
    model, step = _mlp(gg, runs, loss)
    model.double()
    tmodel, tstep = _mlp(torch, [], loss)
    tmodel.double()
    for p, q in zip(model.parameters(), tmodel.parameters()):
        with torch.no_grad():
            q.copy_(torch.tensor(p.detach().numpy()))
    c = gg.compile(step, dynamic=True, options=options)
    rng = np.random.default_rng(1)
    sizes = (8, 16, 24, 5, 16, 33, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for b in sizes:
            x, y = _batch(rng, b, loss)
            got = c(gg.tensor(x), gg.tensor(y)).item()
            want = tstep(torch.tensor(x), torch.tensor(y)).item()
            assert got == pytest.approx(want, rel=1e-12, abs=1e-14)
    assert _batches(c) == [8, 16]  # captured twice; every later size came from the template
    assert c.template is not None and c.not_dynamic is None
    for p, q in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)


def test_other_changes_still_recapture():
    f = gg.compile(lambda x: (x * 2.0).sum(1), dynamic=True)
    for shape in ((4, 3), (6, 3), (9, 3), (9, 5)):
        a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        np.testing.assert_allclose(f(gg.tensor(a)).numpy(), (a * 2).sum(1))
    assert _python_runs(f) == [(4, 3), (6, 3), (9, 5)]  # the feature size is guarded
    assert f.recaptures and "shape" in f.recaptures[-1]


def test_batch_shaped_random_falls_back_to_a_capture_per_size():
    def step(x):
        return x * gg.rand(x.shape[0], 1, dtype=x.dtype)

    c = gg.compile(step, dynamic=True)
    for b in (4, 6, 7):
        gg.manual_seed(b)
        got = c(gg.ones(b, 2)).numpy()
        gg.manual_seed(b)
        np.testing.assert_array_equal(got, gg.rand(b, 1).numpy() * np.ones((b, 2), np.float32))
    assert _batches(c) == [4, 6, 7]
    assert c.template is None and "random" in c.not_dynamic
