"""Training with ``compile(model)`` in PyTorch's idiom (loss, backward and the optimizer step
outside the compiled region): 50 steps of small MLP, CNN, LSTM and transformer models give
eager's losses and parameters within float32 rounding, and every model really compiles."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.nn as nn
import graphgrad.nn.functional as F


class _LSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class _Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 16)
        self.layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0,
                                                batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.layer(self.inp(x)).mean(1))


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Sigmoid(),
                         nn.Linear(16, 3))


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 3, padding=1), nn.Tanh(), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 3))


MODELS = {"mlp": (_mlp, (8, 6)), "cnn": (_cnn, (8, 1, 8, 8)), "lstm": (_LSTM, (8, 5, 4)),
          "transformer": (_Transformer, (8, 5, 4))}


def _train(make, shape, compiled, steps=50):
    gg.manual_seed(0)
    model = make()
    opt = gg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    run = gg.compile(model) if compiled else model
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        x = gg.tensor(rng.standard_normal(shape).astype(np.float32))
        y = gg.tensor(rng.integers(0, 3, shape[0]))
        opt.zero_grad()
        loss = F.cross_entropy(run(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses), [p.detach().numpy().copy() for p in model.parameters()], run


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_model_trains_as_eager(name):
    make, shape = MODELS[name]
    want_loss, want_params, _ = _train(make, shape, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a graph break would make this an eager-vs-eager test
        got_loss, got_params, run = _train(make, shape, True)
    variants = run._compiled.variants
    assert len(variants) == 1 and variants[0].region is not None, variants[0].reason
    np.testing.assert_allclose(got_loss, want_loss, rtol=2e-4, atol=1e-5)
    for a, b in zip(got_params, want_params):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-5)
