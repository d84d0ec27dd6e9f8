"""A WGAN-GP training program compared with torch: the gradient penalty differentiates a
gradient (create_graph=True), then loss.backward() goes through that double-backward graph into
the critic's parameters; three SGD steps follow. Also derivatives up to the third order.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

RTOL, ATOL = 1e-10, 1e-12
LR = 0.05
N_IN, N_HIDDEN, BATCH = 4, 8, 6

_rng = np.random.default_rng(42)
PARAMS = {
    "w1": _rng.standard_normal((N_IN, N_HIDDEN)) * 0.5,
    "b1": _rng.standard_normal(N_HIDDEN) * 0.1,
    "w2": _rng.standard_normal((N_HIDDEN, 1)) * 0.5,
    "b2": _rng.standard_normal(1) * 0.1,
}
REAL = _rng.standard_normal((BATCH, N_IN)) + 1.0
FAKE = _rng.standard_normal((BATCH, N_IN))
EPS = _rng.uniform(size=(BATCH, 1))

ACTIVATIONS = {
    "tanh": lambda m, z: m.tanh(z),
    "relu": lambda m, z: m.relu(z),
    "leaky_relu": lambda m, z: m.where(z > 0, z, 0.2 * z),
    "sigmoid": lambda m, z: m.sigmoid(z),
}


def f64(m, a, requires_grad=False):
    return m.tensor(a, dtype=m.float64, requires_grad=requires_grad)


def make_params(m):
    return {k: f64(m, v, requires_grad=True) for k, v in PARAMS.items()}


def critic(m, p, x, act):
    hidden = ACTIVATIONS[act](m, m.matmul(x, p["w1"]) + p["b1"])
    return m.matmul(hidden, p["w2"]) + p["b2"]


def wgan_gp_loss(m, p, act):
    real, fake, eps = f64(m, REAL), f64(m, FAKE), f64(m, EPS)
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    (grads,) = m.autograd.grad(critic(m, p, x_hat, act).sum(), x_hat, create_graph=True)
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(m, p, real, act).mean() - critic(m, p, fake, act).mean() + 10 * penalty
    return loss, penalty, grads


def assert_close(expected, actual, what):
    h.assert_same(expected, actual, RTOL, ATOL, what)


@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_penalty_gradients_reach_every_parameter(act):
    results = {}
    for m in h.MODULES:
        p = make_params(m)
        loss, penalty, grads = wgan_gp_loss(m, p, act)
        loss.backward()
        results[m.__name__] = (loss, penalty, grads, grads.requires_grad,
                               {k: t.grad for k, t in p.items()})
    expected, actual = results["torch"], results["graphgrad"]
    assert expected[3] is True
    assert_close(expected, actual, f"{act}: (loss, penalty, grads, ..., parameter grads)")


@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_three_sgd_steps(act):
    history = {}
    for m in h.MODULES:
        p = make_params(m)
        steps = []
        for _ in range(3):
            for t in p.values():
                t.grad = None
            loss, _, _ = wgan_gp_loss(m, p, act)
            loss.backward()
            with m.no_grad():
                for t in p.values():
                    t -= LR * t.grad
            steps.append((loss.detach(), {k: t.detach().clone() for k, t in p.items()},
                          all(t.is_leaf and t.requires_grad for t in p.values())))
        history[m.__name__] = steps
    assert_close(history["torch"], history["graphgrad"], f"{act}: (loss, params) per step")
    # The steps moved the parameters (so the comparison above is not of untouched values).
    moved = history["torch"][-1][1]["w1"].numpy()
    assert not np.allclose(moved, PARAMS["w1"])


def test_zeroing_grads_in_place_between_steps():
    history = {}
    for m in h.MODULES:
        p = make_params(m)
        steps = []
        for _ in range(3):
            loss, _, _ = wgan_gp_loss(m, p, "tanh")
            loss.backward()
            with m.no_grad():
                for t in p.values():
                    t -= LR * t.grad
                    t.grad.zero_()
            steps.append({k: t.detach().clone() for k, t in p.items()})
        history[m.__name__] = steps
    assert_close(history["torch"], history["graphgrad"], "params per step")


def _third_order_elementwise(m, x):
    return (x.sin() * x ** 3 + (0.5 * x).exp()).sum()


def _third_order_critic(m, x):
    return critic(m, make_params(m), x, "tanh").sum()


@pytest.mark.parametrize("func", [_third_order_elementwise, _third_order_critic],
                         ids=["elementwise", "critic"])
def test_third_derivative(func):
    def prog(m):
        x = f64(m, REAL[:2], requires_grad=True)
        (g1,) = m.autograd.grad(func(m, x), x, create_graph=True)
        (g2,) = m.autograd.grad((g1 * g1).sum(), x, create_graph=True)
        (g3,) = m.autograd.grad(g2.sum(), x, create_graph=True)
        return g1, g2, g3, [g.requires_grad for g in (g1, g2, g3)]

    expected, actual = h.same(prog, RTOL, ATOL)
    assert not isinstance(expected, h.Raised), expected


def test_third_derivative_into_parameters():
    """backward() of a second derivative w.r.t. the input: a third-order graph reaching the
    parameters."""
    results = {}
    for m in h.MODULES:
        p = make_params(m)
        x = f64(m, FAKE, requires_grad=True)
        (g1,) = m.autograd.grad(critic(m, p, x, "tanh").sum(), x, create_graph=True)
        (g2,) = m.autograd.grad((g1 ** 2).sum(), x, create_graph=True)
        g2.pow(2).sum().backward()
        results[m.__name__] = (g1, g2, x.grad, {k: t.grad for k, t in p.items()})
    assert_close(results["torch"], results["graphgrad"], "(g1, g2, x.grad, parameter grads)")


def test_hessian_of_the_critic_through_functional():
    """The same third-order chain through autograd.functional: the gradient of the critic's
    Hessian trace w.r.t. its first-layer weights."""
    results = {}
    for m in h.MODULES:
        p = make_params(m)
        x = f64(m, REAL[0])
        hess = m.autograd.functional.hessian(
            lambda a: critic(m, p, a.reshape(1, N_IN), "tanh").sum(), x, create_graph=True)
        trace = sum(hess[i, i] for i in range(N_IN))
        results[m.__name__] = (hess, m.autograd.grad(trace, p["w1"]))
    assert_close(results["torch"], results["graphgrad"], "(hessian, d trace / d w1)")
