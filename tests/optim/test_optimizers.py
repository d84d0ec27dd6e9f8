"""graphgrad.optim against torch.optim: the same parameters and gradients, step by step.

Every case runs 20 steps on parameters of several shapes (0-d included) with per-step gradients
drawn from a seeded NumPy generator; some gradients are None at some steps, so the skipping of
parameters without gradients is compared too. Parameters are compared after every step.
"""

import copy

import numpy as np
import pytest
import torch
import torch.optim.optimizer as torch_optimizer

import graphgrad as gg
import graphgrad.optim.optimizer as gg_optimizer
from graphgrad import _step

SHAPES = [(3, 4), (5,), (), (2, 1, 3)]
STEPS = 20
RTOL, ATOL = 1e-5, 1e-6

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.2, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "maximize": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.99)}),  # lerp weight >= 0.5: torch's other branch
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "maximize": True, "betas": (0.5, 0.9)}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.001, "momentum": 0.5, "centered": True, "maximize": True, "eps": 1e-6}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1,
                 "initial_accumulator_value": 0.1}),
    ("Adagrad", {"lr": 0.1, "maximize": True, "eps": 1e-6}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]


def initial_values(dtype=np.float32):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def gradients(dtype=np.float32):
    """Per step, one gradient per parameter; None where (step + index) % 7 == 3."""
    rng = np.random.default_rng(1)
    return [[None if (t + i) % 7 == 3 else rng.standard_normal(s).astype(dtype)
             for i, s in enumerate(SHAPES)] for t in range(STEPS)]


def make_params(m, values):
    return [m.tensor(v.copy(), requires_grad=True) for v in values]


def snapshot(params):
    return [np.array(p.detach().numpy(), copy=True) for p in params]


def set_grads(m, params, grads):
    for p, g in zip(params, grads):
        p.grad = None if g is None else m.tensor(g.copy())


def run(m, name, kwargs, grads, groups=None, steps=STEPS, dtype=np.float32):
    """Steps an optimizer over ``grads``; returns the parameters after every step."""
    params = make_params(m, initial_values(dtype))
    spec = params if groups is None else groups(params)
    opt = getattr(m.optim, name)(spec, **kwargs)
    history = []
    for t in range(steps):
        set_grads(m, params, grads[t])
        opt.step()
        history.append(snapshot(params))
    return history


def assert_histories_close(got, want):
    for t, (g_step, w_step) in enumerate(zip(got, want)):
        for i, (g, w) in enumerate(zip(g_step, w_step)):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL,
                                       err_msg=f"step {t + 1}, parameter {i}")


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_matches_torch(name, kwargs):
    grads = gradients()
    assert_histories_close(run(gg, name, kwargs, grads), run(torch, name, kwargs, grads))


@pytest.mark.parametrize("name,kwargs", [CASES[2], CASES[6], CASES[16], CASES[19]],
                         ids=["SGD", "Adam", "RMSprop", "Adagrad"])
def test_matches_torch_float64(name, kwargs):
    grads = gradients(np.float64)
    got = run(gg, name, kwargs, grads, dtype=np.float64)
    want = run(torch, name, kwargs, grads, dtype=np.float64)
    for g_step, w_step in zip(got, want):
        for g, w in zip(g_step, w_step):
            assert g.dtype == np.float64
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def two_groups(params):
    return [{"params": params[:2], "lr": 0.02},
            {"params": params[2:], "lr": 0.005, "weight_decay": 0.1}]


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01}), ("AdamW", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True}), ("Adagrad", {"lr": 0.1})])
def test_param_groups_match_torch(name, kwargs):
    grads = gradients()
    got = run(gg, name, kwargs, grads, groups=two_groups)
    want = run(torch, name, kwargs, grads, groups=two_groups)
    assert_histories_close(got, want)


def resumed(m, name, kwargs, grads):
    """10 steps, state_dict, a fresh optimizer loads it, 10 more steps."""
    params = make_params(m, initial_values())
    opt = getattr(m.optim, name)(two_groups(params), **kwargs)
    history = []
    for t in range(STEPS):
        if t == STEPS // 2:
            saved = opt.state_dict()
            opt = getattr(m.optim, name)(two_groups(params), **kwargs)
            opt.load_state_dict(saved)
        set_grads(m, params, grads[t])
        opt.step()
        history.append(snapshot(params))
    return history


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_state_dict_round_trip(name, kwargs):
    grads = gradients()
    got = resumed(gg, name, kwargs, grads)
    assert_histories_close(got, run(gg, name, kwargs, grads, groups=two_groups))
    assert_histories_close(got, resumed(torch, name, kwargs, grads))


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_state_dict_layout_matches_torch(name, kwargs):
    grads = gradients()
    sds = []
    for m in (torch, gg):
        params = make_params(m, initial_values())
        opt = getattr(m.optim, name)(two_groups(params), **kwargs)
        for t in range(5):
            set_grads(m, params, grads[t])
            opt.step()
        sds.append(opt.state_dict())
    want, got = sds
    assert list(got) == ["state", "param_groups"]
    assert got["param_groups"] == want["param_groups"]
    assert list(got["state"]) == list(want["state"])
    for index, w_state in want["state"].items():
        g_state = got["state"][index]
        assert list(g_state) == list(w_state)
        for key, w in w_state.items():
            g = g_state[key]
            assert isinstance(g, gg.Tensor) and str(g.dtype) == str(w.dtype)
            assert tuple(g.shape) == tuple(w.shape)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=RTOL, atol=ATOL)


def test_load_state_dict_casts_state_but_not_step():
    for m in (torch, gg):
        w = m.zeros(3, requires_grad=True)
        opt = m.optim.Adam([w])
        w.grad = m.ones(3)
        opt.step()
        sd = opt.state_dict()
        sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].double()
        fresh = m.optim.Adam([w])
        fresh.load_state_dict(sd)
        assert str(fresh.state[w]["exp_avg"].dtype) == "torch.float32"
        assert str(fresh.state[w]["step"].dtype) == "torch.float32"
        assert fresh.state[w]["step"].item() == 1.0


def errors(m, fn):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - the outcome compared with torch's
        return type(e), str(e)
    return None


ERROR_PROGRAMS = {
    "empty": lambda m: m.optim.SGD([], lr=0.1),
    "tensor": lambda m: m.optim.SGD(m.zeros(2, requires_grad=True), lr=0.1),
    "not-a-tensor": lambda m: m.optim.SGD([1.0], lr=0.1),
    "set": lambda m: m.optim.SGD([{"params": {m.zeros(2, requires_grad=True)}}], lr=0.1),
    "non-leaf": lambda m: m.optim.SGD([m.zeros(2, requires_grad=True) * 2], lr=0.1),
    "duplicate-across-groups": lambda m: (lambda w: m.optim.SGD(
        [{"params": [w]}, {"params": [w]}], lr=0.1))(m.zeros(2, requires_grad=True)),
    "bad-lr": lambda m: m.optim.Adam([m.zeros(2, requires_grad=True)], lr=-1.0),
    "bad-beta": lambda m: m.optim.AdamW([m.zeros(2, requires_grad=True)], betas=(1.0, 0.9)),
    "nesterov": lambda m: m.optim.SGD([m.zeros(2, requires_grad=True)], lr=0.1, nesterov=True),
    "rmsprop-alpha": lambda m: m.optim.RMSprop([m.zeros(2, requires_grad=True)], alpha=-1),
    "adagrad-decay": lambda m: m.optim.Adagrad([m.zeros(2, requires_grad=True)], lr_decay=-1),
    "group-not-dict": lambda m: m.optim.SGD([m.zeros(2, requires_grad=True)],
                                            lr=0.1).add_param_group([1]),
    "load-group-count": lambda m: m.optim.SGD(
        [m.zeros(2, requires_grad=True)], lr=0.1).load_state_dict(
        {"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]}),
    "load-group-size": lambda m: m.optim.SGD(
        [m.zeros(2, requires_grad=True)], lr=0.1).load_state_dict(
        {"state": {}, "param_groups": [{"params": [0, 1]}]}),
}


@pytest.mark.parametrize("prog", list(ERROR_PROGRAMS), ids=list(ERROR_PROGRAMS))
def test_errors_match_torch(prog):
    want = errors(torch, ERROR_PROGRAMS[prog])
    assert want is not None
    assert errors(gg, ERROR_PROGRAMS[prog]) == want


def test_required_lr_and_duplicate_warning():
    w = gg.zeros(2, requires_grad=True)

    class Custom(gg.optim.Optimizer):
        def __init__(self, params, lr=gg_optimizer.required):
            super().__init__(params, {"lr": lr})

    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Custom([w])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        gg.optim.SGD([w, w], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        torch.optim.SGD([torch.zeros(2, requires_grad=True)] * 2, lr=0.1)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    """After zero_grad, SGD with momentum keeps moving on zero grads but skips None grads."""
    results = []
    for m in (torch, gg):
        params = make_params(m, initial_values())
        opt = m.optim.SGD(params, lr=0.1, momentum=0.9)
        set_grads(m, params, gradients()[0])
        opt.step()
        opt.zero_grad(set_to_none=set_to_none)
        grads = [p.grad for p in params]
        if set_to_none:
            assert all(g is None for g in grads)
        else:
            assert all(g is None or (not g.requires_grad and not g.numpy().any())
                       for g in grads)
        opt.step()
        results.append(snapshot(params))
    assert_histories_close([results[1]], [results[0]])


def test_zero_grad_keeps_the_grad_tensor():
    w = gg.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    g = w.grad
    gg.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)
    assert w.grad is g and w.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                         ("Adam", {"lr": 0.05}), ("RMSprop", {"lr": 0.01}),
                                         ("Adagrad", {"lr": 0.1})])
def test_closure(name, kwargs):
    """step(closure) evaluates the closure with grad enabled and returns its loss."""
    out = []
    for m in (torch, gg):
        params = make_params(m, initial_values())
        targets = [m.ones(p.shape) * 0.5 for p in params]
        opt = getattr(m.optim, name)(params, **kwargs)
        losses, modes = [], []

        def closure():
            opt.zero_grad()
            modes.append(m.is_grad_enabled())
            loss = sum(((p - t) * (p - t)).sum() for p, t in zip(params, targets))
            loss.backward()
            return loss

        with m.no_grad():
            for _ in range(10):
                losses.append(opt.step(closure).item())
        assert all(modes)
        out.append((losses, snapshot(params)))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=RTOL)
    assert_histories_close([out[1][1]], [out[0][1]])


def test_step_runs_under_no_grad_and_bumps_versions():
    w = gg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    view = w.detach()[1:]
    y = (w * w).sum()
    w.grad = gg.ones(3)
    before = w._version
    gg.optim.SGD([w], lr=0.5).step()
    assert w._version > before
    assert view.tolist() == [1.5, 2.5]  # the view shares the updated storage
    assert w.requires_grad and w.grad_fn is None
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_torch_also_bumps_versions():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (w * w).sum()
    w.grad = torch.ones(3)
    torch.optim.SGD([w], lr=0.5).step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_step_advances_the_global_counter(name):
    w = gg.zeros(2, requires_grad=True)
    opt = getattr(gg.optim, name)([w], lr=0.1)
    start = _step.current_step()
    opt.step()  # no grad: nothing moves, but a step was taken
    w.grad = gg.ones(2)
    opt.step()
    assert _step.current_step() == start + 2


def test_subclass_calling_super_counts_once():
    class Wrapped(gg.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    w = gg.zeros(2, requires_grad=True)
    calls = []
    opt = Wrapped([w], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    start = _step.current_step()
    opt.step()
    assert _step.current_step() == start + 1 and calls == ["pre"]


def test_step_hooks_match_torch():
    logs = []
    for m in (torch, gg):
        log = []
        w = m.zeros(2, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.1)

        def hook(tag):
            return lambda o, a, k: log.append((tag, o is opt, a[0] is opt, a[1:], k))

        h1 = opt.register_step_pre_hook(hook("pre"))
        opt.register_step_post_hook(hook("post"))
        mod = torch_optimizer if m is torch else gg_optimizer
        h2 = mod.register_optimizer_step_pre_hook(hook("global"))
        opt.step()
        h1.remove()
        h2.remove()
        opt.step(closure=None)
        logs.append(log)
    assert logs[1] == logs[0]


def test_repr_and_state_dict_hooks():
    w = gg.zeros(2, requires_grad=True)
    t = torch.zeros(2, requires_grad=True)
    assert repr(gg.optim.Adam([w], lr=0.1)) == repr(torch.optim.Adam([t], lr=0.1))
    opt = gg.optim.SGD([w], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1


def test_named_params_and_add_param_group():
    a, b = gg.zeros(2, requires_grad=True), gg.zeros(3, requires_grad=True)
    ta, tb = torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)
    opt = gg.optim.SGD([("a", a)], lr=0.1)
    topt = torch.optim.SGD([("a", ta)], lr=0.1)
    opt.add_param_group({"params": [("b", b)], "lr": 0.01})
    topt.add_param_group({"params": [("b", tb)], "lr": 0.01})
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [gg.zeros(1, requires_grad=True)]})


def test_deepcopied_state_dict_is_independent():
    w = gg.zeros(2, requires_grad=True)
    opt = gg.optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = gg.ones(2)
    opt.step()
    saved = copy.deepcopy(opt.state_dict())
    opt.step()
    assert saved["state"][0]["momentum_buffer"].tolist() == [1.0, 1.0]
