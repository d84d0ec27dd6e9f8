"""A compiled training step with BatchNorm keeps the running statistics moving as eager does
(the update graph-breaks to eager rather than replaying capture-time statistics)."""

import warnings

import numpy as np

import graphgrad as torch
from graphgrad import nn


def _train(compiled):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    run = torch.compile(step) if compiled else step
    rng = np.random.default_rng(0)
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(4):
            x = torch.tensor(rng.standard_normal((8, 4)).astype(np.float32))
            y = torch.tensor(rng.standard_normal((8, 1)).astype(np.float32))
            losses.append(run(x, y).item())
    bn = model[1]
    return losses, bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()


def test_running_stats_follow_eager():
    eager, compiled = _train(False), _train(True)
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-5)
    np.testing.assert_allclose(compiled[1], eager[1], rtol=1e-5)
    np.testing.assert_allclose(compiled[2], eager[2], rtol=1e-5)
    assert not np.allclose(eager[1], 0)  # the statistics did move
