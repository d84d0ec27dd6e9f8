"""graphgrad.optim.swa_utils against torch.optim.swa_utils: AveragedModel (SWA, EMA, custom
averages, buffers), SWALR and update_bn, on the same weights and data.
"""

import copy
import math
import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg


def make_model(m):
    return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.ReLU(),
                           m.nn.Linear(4, 2))


def paired_models():
    """A torch model and a graphgrad model with the same weights."""
    torch.manual_seed(0)
    tm = make_model(torch)
    gm = make_model(gg)
    gm.load_state_dict({k: gg.tensor(v.numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, gm


def arrays(module):
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def assert_same_state(got, want, rtol=1e-6, atol=1e-7):
    assert list(got) == list(want)
    for key in want:
        assert got[key].dtype == want[key].dtype, key
        np.testing.assert_allclose(got[key], want[key], rtol=rtol, atol=atol, err_msg=key)


def train_and_average(m, model, make_averaged, steps=5):
    """A few SGD steps on ``model`` (train mode, so BatchNorm statistics move), averaging
    after each; returns the averaged model's state after every update."""
    averaged = make_averaged(m, model)
    opt = m.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    states = []
    for _ in range(steps):
        x = m.tensor(rng.standard_normal((6, 3)).astype(np.float32))
        loss = (model(x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        averaged.update_parameters(model)
        states.append(arrays(averaged))
    return states, averaged


AVERAGES = {
    "swa": lambda m, model: m.optim.swa_utils.AveragedModel(model),
    "ema-avg-fn": lambda m, model: m.optim.swa_utils.AveragedModel(
        model, avg_fn=m.optim.swa_utils.get_ema_avg_fn(0.9)),
    "ema-multi": lambda m, model: m.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=m.optim.swa_utils.get_ema_multi_avg_fn(0.8)),
    "swa-multi": lambda m, model: m.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=m.optim.swa_utils.get_swa_multi_avg_fn()),
    "swa-avg-fn": lambda m, model: m.optim.swa_utils.AveragedModel(
        model, avg_fn=m.optim.swa_utils.get_swa_avg_fn()),
    "ema-buffers": lambda m, model: m.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=m.optim.swa_utils.get_ema_multi_avg_fn(0.9), use_buffers=True),
    "swa-buffers": lambda m, model: m.optim.swa_utils.AveragedModel(model, use_buffers=True),
    "custom": lambda m, model: m.optim.swa_utils.AveragedModel(
        model, avg_fn=lambda avg, cur, n: avg * 0.5 + cur * 0.5 + n * 0.0),
}


@pytest.mark.parametrize("kind", list(AVERAGES))
def test_averaged_model_matches_torch(kind):
    tm, gm = paired_models()
    want, t_avg = train_and_average(torch, tm, AVERAGES[kind])
    got, g_avg = train_and_average(gg, gm, AVERAGES[kind])
    for g, w in zip(got, want):
        assert_same_state(g, w)
    assert g_avg.n_averaged.item() == t_avg.n_averaged.item() == 5
    assert str(g_avg.n_averaged.dtype) == "torch.int64"
    # forward runs the averaged module
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    t_avg.eval()
    g_avg.eval()
    np.testing.assert_allclose(g_avg(gg.tensor(x)).detach().numpy(),
                               t_avg(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_averaged_model_is_a_copy_with_module_keys():
    tm, gm = paired_models()
    g_avg = gg.optim.swa_utils.AveragedModel(gm)
    t_avg = torch.optim.swa_utils.AveragedModel(tm)
    assert list(g_avg.state_dict()) == list(t_avg.state_dict())
    assert g_avg.module is not gm and g_avg.module[0].weight is not gm[0].weight
    assert [n for n, _ in g_avg.named_parameters()] == [n for n, _ in t_avg.named_parameters()]
    # a deep copy of the averaged model round-trips through its state_dict
    clone = copy.deepcopy(g_avg)
    clone.load_state_dict(g_avg.state_dict())


def test_averaged_model_errors_match_torch():
    for m, model in zip((torch, gg), paired_models()):
        sw = m.optim.swa_utils
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            sw.AveragedModel(model, avg_fn=sw.get_swa_avg_fn(),
                             multi_avg_fn=sw.get_swa_multi_avg_fn())
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
            sw.get_ema_multi_avg_fn(1.5)
        with pytest.raises(ValueError, match=r"Invalid decay value -0.1 provided"):
            sw.get_ema_avg_fn(-0.1)


def _outcome(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the outcome compared with torch's
        return type(e), str(e)
    return None


@pytest.mark.parametrize("n", [3, "tensor"])
def test_multi_avg_fn_on_integer_tensors(n):
    out = []
    for m in (torch, gg):
        avg = [m.tensor([10, 20, 30])]
        cur = [m.tensor([0, 4, 7])]
        m.optim.swa_utils.get_ema_multi_avg_fn(0.5)(avg, cur, None)
        num = 3 if n == 3 else m.tensor(3)
        # torch refuses both integer SWA paths (a float alpha, an integer addcdiv)
        error = _outcome(lambda: m.optim.swa_utils.get_swa_multi_avg_fn()(avg, cur, num))
        out.append((avg[0].tolist(), str(avg[0].dtype), error and error[0]))
    assert out[1] == out[0]
    assert out[0][2] is RuntimeError


def bn_data(m, loader_kind):
    rng = np.random.default_rng(3)
    xs = [m.tensor((rng.standard_normal((5, 3)) * 2 + 1).astype(np.float32)) for _ in range(4)]
    if loader_kind == "pairs":
        return [(x, m.zeros(5)) for x in xs]
    return xs


@pytest.mark.parametrize("loader_kind", ["tensors", "pairs"])
@pytest.mark.parametrize("training", [True, False])
def test_update_bn_matches_torch(loader_kind, training):
    tm, gm = paired_models()
    states = []
    for m, model in ((torch, tm), (gg, gm)):
        model.train(training)
        model[1].momentum = 0.3
        m.optim.swa_utils.update_bn(bn_data(m, loader_kind), model)
        assert model.training is training and model[1].momentum == 0.3
        states.append(arrays(model))
    assert_same_state(states[1], states[0], rtol=1e-5, atol=1e-6)


def test_update_bn_without_batchnorm_does_nothing():
    for m in (torch, gg):
        model = m.nn.Linear(3, 2)
        model.eval()
        m.optim.swa_utils.update_bn(bn_data(m, "tensors"), model)
        assert not model.training


def swalr_lrs(m, kwargs, epochs=14, groups=2):
    params = [m.zeros(2, requires_grad=True) for _ in range(groups)]
    opt = m.optim.SGD([{"params": [p], "lr": 0.5 + i} for i, p in enumerate(params)], lr=0.1)
    sched = m.optim.swa_utils.SWALR(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, sched, opt


SWALR_CASES = [
    {"swa_lr": 0.05},
    {"swa_lr": 0.05, "anneal_epochs": 3, "anneal_strategy": "linear"},
    {"swa_lr": [0.01, 0.2], "anneal_epochs": 5},
    {"swa_lr": 0.05, "anneal_epochs": 0},
    {"swa_lr": 0.05, "anneal_epochs": 1, "anneal_strategy": "linear"},
]


@pytest.mark.parametrize("kwargs", SWALR_CASES, ids=[str(i) for i in range(len(SWALR_CASES))])
def test_swalr_matches_torch(kwargs):
    got, g_sched, g_opt = swalr_lrs(gg, kwargs)
    want, t_sched, t_opt = swalr_lrs(torch, kwargs)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-12, abs=1e-15)
    assert [g["swa_lr"] for g in g_opt.param_groups] == [g["swa_lr"] for g in t_opt.param_groups]
    assert sorted(g_sched.state_dict()) == sorted(t_sched.state_dict())


def test_swalr_state_dict_round_trip():
    """A fresh SWALR (which itself re-sets lr and swa_lr) loads a saved state: as torch."""
    out = []
    for m in (torch, gg):
        kwargs = {"swa_lr": 0.05, "anneal_epochs": 6, "anneal_strategy": "linear"}
        lrs, sched, opt = swalr_lrs(m, kwargs, epochs=3)
        saved = copy.deepcopy(sched.state_dict())
        assert "anneal_func" not in saved and "optimizer" not in saved
        fresh = m.optim.swa_utils.SWALR(opt, swa_lr=1.0)
        fresh.load_state_dict(saved)
        assert fresh.anneal_func(0.3) == 0.3  # linear restored
        for _ in range(3):
            opt.step()
            fresh.step()
            lrs.append(fresh.get_last_lr())
        out.append(lrs)
    for g, w in zip(*reversed(out)):
        assert g == pytest.approx(w, rel=1e-12)


def test_swalr_errors_and_warning_match_torch():
    for m in (torch, gg):
        opt = m.optim.SGD([m.zeros(2, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
            m.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
            m.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
        with pytest.raises(ValueError, match="swa_lr must have the same length"):
            m.optim.swa_utils.SWALR(opt, swa_lr=[0.1, 0.2])
        sched = m.optim.swa_utils.SWALR(opt, swa_lr=0.1)
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()
        assert math.isclose(sched._cosine_anneal(0.5), 0.5)


def test_swa_training_loop_matches_torch():
    """The documented recipe: SGD, SWALR after a start epoch, AveragedModel, update_bn."""
    results = []
    for m, model in zip((torch, gg), paired_models()):
        swa_model = m.optim.swa_utils.AveragedModel(model)
        opt = m.optim.SGD(model.parameters(), lr=0.2)
        sched = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        swa_sched = m.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=2)
        data = bn_data(m, "tensors")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in range(8):
                for x in data:
                    opt.zero_grad()
                    (model(x) ** 2).mean().backward()
                    opt.step()
                if epoch >= 4:
                    swa_model.update_parameters(model)
                    swa_sched.step()
                else:
                    sched.step()
        m.optim.swa_utils.update_bn(data, swa_model)
        results.append(arrays(swa_model))
    assert_same_state(results[1], results[0], rtol=1e-5, atol=1e-6)
