"""Training parity: the same model trained in torch and in graphgrad follows the same path.

An MLP, a CNN and an LSTM with a Linear head start from torch's state dict copied into
graphgrad, see the same NumPy-made batches and take 20 steps of SGD with momentum or Adam. The
loss must agree to 1e-4 relative at every step (float32) and the final parameters must be close.
"""

import numpy as np
import pytest
import torch

import graphgrad

STEPS = 20
BATCH = 16
CLASSES = 5


def make_mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 24), nn.ReLU(),
                         nn.Linear(24, CLASSES))


def make_cnn(m):
    nn = m.nn
    # 2x8x8 -> conv pad 1 -> 4x8x8 -> conv -> 6x6x6 -> pool -> 6x3x3
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 6, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(6 * 3 * 3, CLASSES))


def make_lstm(m):
    class LSTMClassifier(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = m.nn.LSTM(6, 12, num_layers=2, batch_first=True)
            self.head = m.nn.Linear(12, CLASSES)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[:, -1])

    return LSTMClassifier()


MODELS = {"mlp": (make_mlp, (BATCH, 20), ("Linear",)),
          "cnn": (make_cnn, (BATCH, 2, 8, 8), ("Conv2d", "MaxPool2d", "Linear")),
          "lstm": (make_lstm, (BATCH, 7, 6), ("LSTM", "Linear"))}
OPTIMIZERS = {"sgd_momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}),
              "adam": ("Adam", {"lr": 3e-2})}


def _missing(layers):
    names = [f"nn.{n}" for n in layers if not hasattr(graphgrad.nn, n)]
    if not hasattr(graphgrad.nn.functional, "cross_entropy"):
        names.append("nn.functional.cross_entropy")
    return names


def _batches(x_shape):
    # Four batches, cycled, with labels from a fixed random linear teacher: the model can fit
    # them within 20 steps, and agreement on a falling loss says more than agreement on noise.
    rng = np.random.default_rng(1)
    teacher = rng.standard_normal((int(np.prod(x_shape[1:])), CLASSES))
    batches = []
    for _ in range(4):
        x = rng.standard_normal(x_shape).astype(np.float32)
        batches.append((x, (x.reshape(BATCH, -1) @ teacher).argmax(1).astype(np.int64)))
    return [batches[i % 4] for i in range(STEPS)]


def _train(m, model, optimizer, batches):
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = m.nn.functional.cross_entropy(model(m.from_numpy(x)), m.from_numpy(y))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return np.array(losses)


@pytest.mark.parametrize("opt", OPTIMIZERS)
@pytest.mark.parametrize("model_name", MODELS)
def test_training_parity(model_name, opt):
    make, x_shape, layers = MODELS[model_name]
    missing = _missing(layers)
    if missing:
        pytest.skip(f"graphgrad lacks {', '.join(missing)}")
    torch.manual_seed(0)
    t_model = make(torch)
    g_model = make(graphgrad)
    g_model.load_state_dict({k: graphgrad.tensor(v.detach().numpy())
                             for k, v in t_model.state_dict().items()})

    batches = _batches(x_shape)
    cls, kwargs = OPTIMIZERS[opt]
    t_losses = _train(torch, t_model, getattr(torch.optim, cls)(t_model.parameters(), **kwargs),
                      batches)
    g_losses = _train(graphgrad, g_model,
                      getattr(graphgrad.optim, cls)(g_model.parameters(), **kwargs), batches)

    # The loss must actually move, or agreement would prove little.
    # The loss must fall (the same four batches come round again), or agreement proves little.
    assert t_losses[-4:].mean() < t_losses[:4].mean(), t_losses
    np.testing.assert_allclose(g_losses, t_losses, rtol=1e-4, atol=0)
    t_state = t_model.state_dict()
    g_state = g_model.state_dict()
    assert list(g_state) == list(t_state)
    for name, value in t_state.items():
        np.testing.assert_allclose(g_state[name].numpy(), value.numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=name)
