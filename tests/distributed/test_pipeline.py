"""The pipeline over 2 ranks (and 3 of 4) trains to the same parameters as the unsplit model on
the full batch, with the GPipe and 1F1B schedules; splitting rules."""

import _models
import numpy as np
import pytest
import torch
from conftest import split

import graphgrad as gg
from graphgrad.distributed.pipeline import split_sequential


def _reference(m, init):
    model = _models.pipe_model(m)
    _models.load(m, model, init)
    opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = _models.data("mlp", seed=1)
    traj, losses = [], []
    for _ in range(_models.STEPS):
        opt.zero_grad()
        loss = m.nn.CrossEntropyLoss()(model(m.tensor(x)), m.tensor(y))
        loss.backward()
        opt.step()
        losses.append(float(loss))
        traj.append({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
    return traj, losses


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_pipeline_equals_unsplit(suite, schedule):
    stages = 2 if suite.world == 2 else 3
    runs = suite.ranks(f"pipe{stages}_{schedule}", stages)
    init = split(runs[0], "init")
    for m in (gg, torch):
        traj, losses = _reference(m, init)
        np.testing.assert_allclose(runs[-1]["losses"], losses, rtol=1e-5)
        seen = set()
        for run in runs:
            for step in range(_models.STEPS):
                for k, v in split(run, str(step)).items():
                    np.testing.assert_allclose(v, traj[step][k], rtol=1e-5, atol=2e-6,
                                               err_msg=f"{m.__name__} step {step} {k}")
                    seen.add(k)
        assert seen == set(init)  # every parameter lives on exactly one stage


def test_split_sequential():
    model = _models.pipe_model(gg)
    parts = split_sequential(model, 3)
    assert [len(p) for p in parts] == [3, 2, 2]
    parts = split_sequential(model, 2, balance=[1, 6])
    assert [len(p) for p in parts] == [1, 6]
    with pytest.raises(ValueError, match="balance"):
        split_sequential(model, 2, balance=[1, 1])
    with pytest.raises(ValueError, match="non-empty"):
        split_sequential(gg.nn.Sequential(gg.nn.ReLU()), 2)
