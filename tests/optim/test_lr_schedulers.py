"""graphgrad.optim.lr_scheduler against torch.optim.lr_scheduler.

Each scheduler is stepped 30 times on an optimizer with two param groups; the learning rates
(and the momentum or beta1 that OneCycleLR cycles) are compared with torch's after every step.
"""

import warnings

import pytest
import torch

import graphgrad as gg

STEPS = 30


def S(m):
    return m.optim.lr_scheduler


SCHEDULERS = {
    "StepLR": lambda m, o: S(m).StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda m, o: S(m).MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.3),
    "ExponentialLR": lambda m, o: S(m).ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda m, o: S(m).CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "CosineAnnealingLR-past-T_max": lambda m, o: S(m).CosineAnnealingLR(o, T_max=7),
    "LinearLR": lambda m, o: S(m).LinearLR(o, start_factor=0.25, end_factor=0.9,
                                           total_iters=12),
    "LinearLR-default": lambda m, o: S(m).LinearLR(o),
    "ConstantLR": lambda m, o: S(m).ConstantLR(o, factor=0.5, total_iters=6),
    "LambdaLR": lambda m, o: S(m).LambdaLR(o, lr_lambda=lambda e: 0.95 ** e),
    "LambdaLR-per-group": lambda m, o: S(m).LambdaLR(
        o, lr_lambda=[lambda e: 1 / (e + 1), lambda e: e // 5 + 1]),
    "MultiplicativeLR": lambda m, o: S(m).MultiplicativeLR(o, lr_lambda=lambda e: 0.97),
    "PolynomialLR": lambda m, o: S(m).PolynomialLR(o, total_iters=20, power=2.0),
    "CosineAnnealingWarmRestarts": lambda m, o: S(m).CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=0.0005),
    "CosineAnnealingWarmRestarts-T_mult-1": lambda m, o: S(m).CosineAnnealingWarmRestarts(
        o, T_0=7),
    "OneCycleLR-cos": lambda m, o: S(m).OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=STEPS),
    "OneCycleLR-linear-three-phase": lambda m, o: S(m).OneCycleLR(
        o, max_lr=0.3, epochs=3, steps_per_epoch=10, anneal_strategy="linear",
        three_phase=True, pct_start=0.25, div_factor=10.0, final_div_factor=100.0),
    "OneCycleLR-no-momentum": lambda m, o: S(m).OneCycleLR(
        o, max_lr=0.3, total_steps=40, cycle_momentum=False),
    "SequentialLR": lambda m, o: S(m).SequentialLR(
        o, schedulers=[S(m).LinearLR(o, start_factor=0.1, total_iters=5),
                       S(m).CosineAnnealingLR(o, T_max=15)], milestones=[5]),
    "SequentialLR-three": lambda m, o: S(m).SequentialLR(
        o, schedulers=[S(m).ConstantLR(o, factor=0.2, total_iters=3),
                       S(m).ExponentialLR(o, gamma=0.9), S(m).StepLR(o, step_size=3)],
        milestones=[4, 12]),
    "ChainedScheduler": lambda m, o: S(m).ChainedScheduler(
        [S(m).ConstantLR(o, factor=0.5, total_iters=4), S(m).ExponentialLR(o, gamma=0.9)]),
}


def make_optimizer(m, kind):
    a = m.zeros(3, requires_grad=True)
    b = m.zeros(2, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "SGD":
        return m.optim.SGD(groups, lr=0.1, momentum=0.9)
    return m.optim.Adam(groups, lr=0.1)


def trajectory(m, build, kind, steps=STEPS, resume_at=None):
    """get_last_lr() and the momentum/beta1 of each group: after construction, after each step."""
    opt = make_optimizer(m, kind)
    sched = build(m, opt)

    def record():
        moms = [g["betas"][0] if kind == "Adam" else g["momentum"] for g in opt.param_groups]
        return list(sched.get_last_lr()), moms

    out = [record()]
    for t in range(steps):
        if t == resume_at:
            saved_opt, saved = opt.state_dict(), sched.state_dict()
            opt = make_optimizer(m, kind)
            sched = build(m, opt)
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved)
        opt.step()
        sched.step()
        out.append(record())
    return out


def flat(rows):
    return [x for row in rows for x in row]


def assert_same(got, want):
    assert len(got) == len(want)
    for t, ((g_lr, g_mom), (w_lr, w_mom)) in enumerate(zip(got, want)):
        assert g_lr == pytest.approx(w_lr, rel=1e-12, abs=1e-15), f"lr after step {t}"
        assert g_mom == pytest.approx(w_mom, rel=1e-12, abs=1e-15), f"momentum after step {t}"


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_matches_torch(name, kind):
    build = SCHEDULERS[name]
    assert_same(trajectory(gg, build, kind), trajectory(torch, build, kind))


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "LinearLR", "LambdaLR",
                                  "OneCycleLR-cos", "CosineAnnealingWarmRestarts",
                                  "SequentialLR", "ChainedScheduler"])
def test_state_dict_round_trip(name):
    build = SCHEDULERS[name]
    got = trajectory(gg, build, "SGD", resume_at=12)
    assert_same(got, trajectory(gg, build, "SGD"))
    assert_same(got, trajectory(torch, build, "SGD", resume_at=12))


def test_initial_lr_and_base_lrs():
    for m in (torch, gg):
        opt = make_optimizer(m, "SGD")
        sched = S(m).StepLR(opt, step_size=2)
        assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.05]
        assert sched.base_lrs == [0.1, 0.05] and sched.last_epoch == 0
        with pytest.raises(KeyError, match="initial_lr"):
            S(m).StepLR(make_optimizer(m, "SGD"), step_size=2, last_epoch=3)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "LinearLR", "ConstantLR", "PolynomialLR",
                                  "CosineAnnealingWarmRestarts"])
def test_step_with_epoch_matches_torch(name):
    """The deprecated ``step(epoch)`` uses the closed form where torch has one."""
    results = []
    for m in (torch, gg):
        opt = make_optimizer(m, "SGD")
        sched = SCHEDULERS[name](m, opt)
        lrs = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (3, 7, 2, 15, 11):
                opt.step()
                sched.step(epoch)
                lrs.append(sched.get_last_lr())
        results.append(lrs)
    assert flat(results[1]) == pytest.approx(flat(results[0]), rel=1e-12)


def test_warns_when_stepped_before_optimizer():
    for m in (torch, gg):
        opt = make_optimizer(m, "SGD")
        sched = S(m).StepLR(opt, step_size=2)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            sched.step()


def test_tensor_lr_is_filled_in_place():
    results = []
    for m in (torch, gg):
        w = m.zeros(2, requires_grad=True)
        lr = m.tensor(0.1)
        opt = m.optim.SGD([w], lr=lr)
        sched = S(m).ExponentialLR(opt, gamma=0.5)
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] is lr
        results.append([float(x) for x in sched.get_last_lr()])
    assert results[1] == pytest.approx(results[0])


PLATEAU_LOSSES = [1.0, 0.9, 0.91, 0.92, 0.93, 0.89, 0.9, 0.95, 0.96, 0.97, 0.98, 0.5, 0.5, 0.5,
                  0.4999, 0.51, 0.52, 0.53, 0.54, 0.55, 0.56, 0.2, 0.2, 0.3, 0.3, 0.3, 0.3, 0.3,
                  0.3, 0.3]

PLATEAU_CASES = [
    {},
    {"patience": 2},
    {"patience": 1, "cooldown": 2, "factor": 0.5},
    {"patience": 0, "threshold": 0.05, "threshold_mode": "abs", "min_lr": 0.01},
    {"patience": 1, "threshold": 0.1, "threshold_mode": "rel", "min_lr": [0.02, 0.001]},
    {"mode": "max", "patience": 1, "factor": 0.3},
    {"mode": "max", "patience": 2, "threshold_mode": "abs", "threshold": 0.01, "cooldown": 1},
    {"patience": 0, "factor": 0.5, "eps": 0.03},
]


@pytest.mark.parametrize("kwargs", PLATEAU_CASES, ids=[str(c) for c in PLATEAU_CASES])
def test_reduce_lr_on_plateau(kwargs):
    results = []
    for m in (torch, gg):
        opt = make_optimizer(m, "SGD")
        sched = S(m).ReduceLROnPlateau(opt, **kwargs)
        lrs = [sched.get_last_lr()]
        for loss in PLATEAU_LOSSES:
            opt.step()
            sched.step(m.tensor(loss) if loss > 0.95 else loss)
            lrs.append(sched.get_last_lr())
        results.append((lrs, sched.num_bad_epochs, sched.cooldown_counter, sched.best))
    assert flat(results[1][0]) == pytest.approx(flat(results[0][0]), rel=1e-12)
    assert results[1][1:] == results[0][1:]


def test_reduce_lr_on_plateau_state_dict_round_trip():
    results = []
    for m in (torch, gg):
        opt = make_optimizer(m, "SGD")
        sched = S(m).ReduceLROnPlateau(opt, patience=1)
        for loss in PLATEAU_LOSSES[:10]:
            sched.step(loss)
        fresh = S(m).ReduceLROnPlateau(opt, mode="max")
        fresh.load_state_dict(sched.state_dict())
        for loss in PLATEAU_LOSSES[10:]:
            fresh.step(loss)
        results.append(fresh.get_last_lr())
    assert results[1] == pytest.approx(results[0], rel=1e-12)


ERRORS = {
    "not-optimizer": lambda m: S(m).StepLR(object(), step_size=1),
    "constant-factor": lambda m: S(m).ConstantLR(make_optimizer(m, "SGD"), factor=2.0),
    "linear-start": lambda m: S(m).LinearLR(make_optimizer(m, "SGD"), start_factor=0),
    "lambda-count": lambda m: S(m).LambdaLR(make_optimizer(m, "SGD"), [lambda e: 1.0]),
    "plateau-mode": lambda m: S(m).ReduceLROnPlateau(make_optimizer(m, "SGD"), mode="avg"),
    "plateau-factor": lambda m: S(m).ReduceLROnPlateau(make_optimizer(m, "SGD"), factor=1.0),
    "onecycle-steps": lambda m: S(m).OneCycleLR(make_optimizer(m, "SGD"), max_lr=0.1),
    "onecycle-too-far": lambda m: [s.step() for s in [S(m).OneCycleLR(
        make_optimizer(m, "SGD"), max_lr=0.1, total_steps=3)] for _ in range(4)],
    "warm-restarts-T_0": lambda m: S(m).CosineAnnealingWarmRestarts(make_optimizer(m, "SGD"),
                                                                    T_0=0),
    "sequential-milestones": lambda m: (lambda o: S(m).SequentialLR(
        o, [S(m).StepLR(o, 2), S(m).StepLR(o, 3)], milestones=[]))(make_optimizer(m, "SGD")),
    "sequential-plateau": lambda m: (lambda o: S(m).SequentialLR(
        o, [S(m).StepLR(o, 2), S(m).ReduceLROnPlateau(o)], milestones=[3]))(
        make_optimizer(m, "SGD")),
}


def outcome(m, prog):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prog(m)
    except Exception as e:  # noqa: BLE001 - the outcome compared with torch's
        return type(e), str(e)
    return None


@pytest.mark.parametrize("prog", list(ERRORS), ids=list(ERRORS))
def test_errors_match_torch(prog):
    want = outcome(torch, ERRORS[prog])
    assert want is not None
    got = outcome(gg, ERRORS[prog])
    assert got[0] is want[0]
    assert got[1] == want[1]

