"""graphgrad.optim.lr_scheduler.CyclicLR against torch's: learning rates and the momentum
(or Adam's beta1) it cycles, per step, for each mode; state_dict; errors.
"""

import copy
import warnings

import pytest
import torch

import graphgrad as gg

STEPS = 30


class Halving:
    """A callable object: its ``__dict__`` travels in the state_dict, as torch does."""

    def __init__(self):
        self.base = 0.5

    def __call__(self, x):
        return self.base ** x


CASES = {
    "triangular": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4},
    "triangular-asymmetric": {"base_lr": [0.01, 0.02], "max_lr": [0.1, 0.3],
                              "step_size_up": 3, "step_size_down": 7},
    "triangular2": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "mode": "triangular2"},
    "exp_range": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 5, "mode": "exp_range",
                  "gamma": 0.9, "base_momentum": [0.7, 0.75], "max_momentum": 0.95},
    "custom-cycle": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2,
                     "scale_fn": lambda x: 1 / x},
    "custom-iterations": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2,
                          "scale_fn": lambda x: 0.97 ** x, "scale_mode": "iterations"},
    "no-momentum": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4,
                    "cycle_momentum": False},
}


def make_optimizer(m, kind):
    groups = [{"params": [m.zeros(3, requires_grad=True)]},
              {"params": [m.zeros(2, requires_grad=True)], "lr": 0.5}]
    if kind == "adam":
        return m.optim.Adam(groups, lr=0.1)
    return m.optim.SGD(groups, lr=0.1, momentum=0.9)


def history(m, kwargs, kind):
    opt = make_optimizer(m, kind)
    sched = m.optim.lr_scheduler.CyclicLR(opt, **kwargs)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(STEPS):
            key = "betas" if kind == "adam" else "momentum"
            out.append((sched.get_last_lr(), [g[key] for g in opt.param_groups]))
            opt.step()
            sched.step()
    return out, sched, opt


# cycle_momentum=False leaves momentum alone, so it runs with SGD only.
RUNS = [(c, k) for c in CASES for k in ("sgd", "adam") if c != "no-momentum" or k == "sgd"]


@pytest.mark.parametrize("case,kind", RUNS, ids=[f"{c}-{k}" for c, k in RUNS])
def test_matches_torch(case, kind):
    got, g_sched, g_opt = history(gg, CASES[case], kind)
    want, t_sched, t_opt = history(torch, CASES[case], kind)
    for (g_lrs, g_mom), (w_lrs, w_mom) in zip(got, want):
        assert g_lrs == pytest.approx(w_lrs, rel=1e-12)
        for a, b in zip(g_mom, w_mom):  # momentum, or the betas tuple
            assert a == pytest.approx(b, rel=1e-12)
    assert sorted(g_sched.state_dict()) == sorted(t_sched.state_dict())
    assert g_sched.base_lrs == pytest.approx(t_sched.base_lrs)
    for g_group, t_group in zip(g_opt.param_groups, t_opt.param_groups):
        assert sorted(g_group) == sorted(t_group)


def test_state_dict_round_trip_keeps_callable_object_state():
    out = []
    for m in (torch, gg):
        opt = make_optimizer(m, "sgd")
        fn = Halving()
        sched = m.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=fn)
        for _ in range(5):
            opt.step()
            sched.step()
        fn.base = 0.25
        saved = copy.deepcopy(sched.state_dict())
        assert saved["_scale_fn_custom"] == {"base": 0.25}
        assert "_scale_fn_ref" not in saved
        fresh_fn = Halving()
        fresh = m.optim.lr_scheduler.CyclicLR(make_optimizer(m, "sgd"), 0.01, 0.1,
                                              step_size_up=2, scale_fn=fresh_fn)
        fresh.load_state_dict(saved)
        assert fresh_fn.base == 0.25 and fresh.last_epoch == 5
        plain = m.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, scale_fn=lambda x: 1.0)
        assert plain.state_dict()["_scale_fn_custom"] is None
        out.append(fresh.get_last_lr())
    assert out[1] == pytest.approx(out[0])


def errors(m, fn):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - the outcome compared with torch's
        return type(e), str(e)
    return None


ERRORS = {
    "mode": lambda m: m.optim.lr_scheduler.CyclicLR(make_optimizer(m, "sgd"), 0.1, 1.0,
                                                    mode="sine"),
    "no-momentum-optimizer": lambda m: m.optim.lr_scheduler.CyclicLR(
        m.optim.Adagrad([m.zeros(2, requires_grad=True)]), 0.1, 1.0),
    "lengths": lambda m: m.optim.lr_scheduler.CyclicLR(make_optimizer(m, "sgd"),
                                                       [0.1, 0.2, 0.3], 1.0),
    "not-an-optimizer": lambda m: m.optim.lr_scheduler.CyclicLR(object(), 0.1, 1.0),
}


@pytest.mark.parametrize("prog", list(ERRORS))
def test_errors_match_torch(prog):
    want = errors(torch, ERRORS[prog])
    assert want is not None
    assert errors(gg, ERRORS[prog]) == want


def test_exported_like_torch():
    assert "CyclicLR" in gg.optim.lr_scheduler.__all__
    assert "CyclicLR" in torch.optim.lr_scheduler.__all__
