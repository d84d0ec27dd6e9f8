"""Models, data and training steps shared by the rank scripts and the tests' references; every
function takes the module namespace ``m`` (graphgrad or torch), so one definition serves both."""

import numpy as np

BATCH = 8
STEPS = 3


def mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 4))


def cnn(m):
    nn = m.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3),
                         nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 4))


MODELS = {"mlp": mlp, "cnn": cnn}


def data(kind, seed=0):
    """A full batch (inputs, class targets) as NumPy arrays."""
    rng = np.random.default_rng(seed)
    shape = (BATCH, 10) if kind == "mlp" else (BATCH, 1, 6, 6)
    return rng.standard_normal(shape).astype(np.float32), rng.integers(0, 4, BATCH)


def optimizer(m, name, params):
    if name == "sgd":
        return m.optim.SGD(params, lr=0.1, momentum=0.9)
    return m.optim.Adam(params, lr=0.01)


def load(m, model, state):
    """Loads a {name: ndarray} state into ``model``."""
    model.load_state_dict({k: m.tensor(v) for k, v in state.items()})


def reference(m, kind, opt_name, init, steps=STEPS, seed=0):
    """One process on the full batch: the parameters after each step, as ndarrays."""
    model = MODELS[kind](m)
    load(m, model, init)
    opt = optimizer(m, opt_name, model.parameters())
    x, y = data(kind, seed)
    x, y = m.tensor(x), m.tensor(y)
    loss_fn = m.nn.CrossEntropyLoss()
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        out.append({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
    return out


def pipe_model(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 12), nn.Tanh(), nn.Linear(12, 4))
