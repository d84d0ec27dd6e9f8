"""autocast and GradScaler against torch's CPU build: arguments, warnings, state, and float32
training steps with loss scaling (including inf/nan skipping and scale growth)."""

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg


def outcome(m, f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", f(m))
        except Exception as ex:  # noqa: BLE001 - the outcome is compared
            return (type(ex).__name__, str(ex))


def same(f):
    assert outcome(torch, f) == outcome(gg, f)


def enabled_inside(m, ctx, device):
    with ctx:
        return m.is_autocast_enabled(device)


@pytest.mark.parametrize("call", [
    lambda m: enabled_inside(m, m.autocast("cpu"), "cpu"),
    lambda m: enabled_inside(m, m.autocast("cpu"), "cuda"),
    lambda m: enabled_inside(m, m.autocast("cpu", enabled=False), "cpu"),
    lambda m: enabled_inside(m, m.autocast("cpu", dtype=m.float16), "cpu"),
    lambda m: enabled_inside(m, m.autocast("cpu", dtype=m.float32), "cpu"),
    lambda m: enabled_inside(m, m.autocast("cpu", dtype=m.float64), "cpu"),
    lambda m: enabled_inside(m, m.autocast("cuda"), "cuda"),
    lambda m: enabled_inside(m, m.amp.autocast("cpu"), "cpu"),
    lambda m: enabled_inside(m, m.amp.autocast(device_type="cpu", cache_enabled=False), "cpu"),
    lambda m: enabled_inside(m, m.cpu.amp.autocast(), "cpu"),
    lambda m: enabled_inside(m, m.cuda.amp.autocast(), "cuda"),
    lambda m: m.autocast(device_type=1),
    lambda m: m.is_autocast_enabled(), lambda m: m.is_autocast_enabled("cpu"),
    lambda m: m.amp.is_autocast_available("cpu"), lambda m: m.amp.is_autocast_available("cuda"),
])
def test_autocast_state(call):
    same(call)


def test_autocast_unknown_device():
    for m in (torch, gg):
        with pytest.raises(RuntimeError, match="device type at start of device string: xyz"):
            m.autocast("xyz")


def test_autocast_nested_and_restored():
    def prog(m):
        with m.autocast("cpu"):
            with m.autocast("cpu", enabled=False):
                inner = m.is_autocast_enabled("cpu")
            outer = m.is_autocast_enabled("cpu")
        return inner, outer, m.is_autocast_enabled("cpu")

    same(prog)


def test_autocast_decorator():
    def prog(m):
        @m.autocast("cpu")
        def f(x):
            return m.is_autocast_enabled("cpu"), (x * 2).tolist()

        return f(m.ones(2)), m.is_autocast_enabled("cpu")

    same(prog)


def test_autocast_warnings():
    for m in (torch, gg):
        with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported"):
            m.autocast("cuda")
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not"):
            m.autocast("cpu", dtype=m.float64)
        with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast\\(args...\\)` is deprec"):
            m.cpu.amp.autocast()
        with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast\\(args...\\)` is depre"):
            m.cuda.amp.autocast()


def test_autocast_cpu_casts_without_warning():
    # an enabled CPU region casts matmul to bfloat16, as torch's (tests/test_bfloat16_autocast.py
    # checks the op lists); it warns nothing
    pytest.importorskip("ml_dtypes", reason="CPU autocast's bfloat16 needs ml_dtypes")
    for m in (gg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with m.autocast("cpu"):
                y = m.ones(2, 2) @ m.ones(2, 2)
        assert str(y.dtype) == "torch.bfloat16"


# -- GradScaler ---------------------------------------------------------------------------------
def train(m, scaler_args, scaler_kwargs, losses_mult, interval=2000):
    """A few SGD steps of a float32 linear model under a GradScaler; returns what torch shows."""
    m.manual_seed(0)
    w = m.nn.Parameter(m.tensor([[0.5, -1.0], [2.0, 0.25]]))
    b = m.nn.Parameter(m.tensor([0.1, -0.2]))
    opt = m.optim.SGD([w, b], lr=0.1, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = m.amp.GradScaler(*scaler_args, growth_interval=interval, **scaler_kwargs)
    x = m.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    record = []
    for k in losses_mult:
        opt.zero_grad()
        loss = ((x @ w + b) ** 2).mean() * k
        scaled = scaler.scale(loss)
        scaled.backward()
        ret = scaler.step(opt)
        scaler.update()
        record.append((float(scaled.item()), ret, scaler.get_scale(), w.detach().tolist(),
                       b.detach().tolist()))
    return record, scaler.state_dict(), scaler.is_enabled()


@pytest.mark.parametrize("args", [(("cpu",), {}), (("cpu", 2.0**10, 4.0, 0.25), {}),
                                  (("cpu",), {"enabled": False}), ((), {})])
@pytest.mark.parametrize("mults", [[1.0, 1.0, 1.0], [1.0, float("inf"), 1.0],
                                   [float("nan"), 1.0, 1.0, 1.0, 1.0]])
def test_grad_scaler_training(args, mults):
    want, got = train(torch, *args, mults, 2), train(gg, *args, mults, 2)
    assert want[1:] == got[1:]
    for (ws, wr, wsc, ww, wb), (gs, gr, gsc, gw, gb) in zip(want[0], got[0]):
        assert wr == gr and wsc == gsc
        np.testing.assert_allclose(gs, ws, rtol=1e-6)
        np.testing.assert_allclose(gw, ww, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gb, wb, rtol=1e-5, atol=1e-6)


def test_grad_scaler_unscale_then_clip():
    def prog(m):
        w = m.nn.Parameter(m.tensor([1.0, 2.0]))
        opt = m.optim.SGD([w], lr=0.1)
        scaler = m.amp.GradScaler("cpu", init_scale=1024.0)
        scaler.scale((w * w).sum()).backward()
        scaler.unscale_(opt)
        grad = w.grad.tolist()
        m.nn.utils.clip_grad_norm_([w], 1.0)
        scaler.step(opt)
        scaler.update()
        return grad, [round(v, 6) for v in w.tolist()], scaler.get_scale()

    same(prog)


@pytest.mark.parametrize("misuse", ["double_unscale", "unscale_after_step", "double_step",
                                    "step_before_scale", "closure", "update_without_step"])
def test_grad_scaler_errors(misuse):
    def prog(m):
        w = m.nn.Parameter(m.tensor([1.0, 2.0]))
        opt = m.optim.SGD([w], lr=0.1)
        scaler = m.amp.GradScaler("cpu")
        if misuse == "step_before_scale":
            return scaler.step(opt)
        scaler.scale((w * w).sum()).backward()
        if misuse == "double_unscale":
            scaler.unscale_(opt)
            scaler.unscale_(opt)
        if misuse == "unscale_after_step":
            scaler.step(opt)
            scaler.unscale_(opt)
        if misuse == "double_step":
            scaler.step(opt)
            scaler.step(opt)
        if misuse == "closure":
            scaler.step(opt, closure=lambda: 0.0)
        if misuse == "update_without_step":
            scaler.update()

    same(prog)


@pytest.mark.parametrize("call", [
    lambda m: m.amp.GradScaler("cpu").get_scale(),
    lambda m: m.amp.GradScaler("cpu").state_dict(),
    lambda m: m.amp.GradScaler().state_dict(),
    lambda m: m.amp.GradScaler("cpu", enabled=False).get_scale(),
    lambda m: m.amp.GradScaler("cpu", growth_factor=1.0),
    lambda m: m.amp.GradScaler("cpu", backoff_factor=1.0),
    lambda m: m.amp.GradScaler("cpu").load_state_dict({}),
    lambda m: m.cuda.amp.GradScaler().is_enabled(),
    lambda m: m.cpu.amp.GradScaler().is_enabled(),
    lambda m: m.amp.GradScaler("cpu", enabled=False).scale(m.tensor(2.0)).item(),
    lambda m: [t.item() for t in m.amp.GradScaler("cpu", init_scale=4.0).scale(
        [m.tensor(2.0), (m.tensor(3.0), m.tensor(1.0))])[1]],
    lambda m: m.amp.GradScaler("cpu").scale(3),
    lambda m: str(m.amp.GradScaler("cpu").scale(m.tensor(2.0, dtype=m.float16)).dtype),
    lambda m: str(m.amp.GradScaler("cpu").scale(m.ones(2, dtype=m.float16)).dtype),
])
def test_grad_scaler_api(call):
    same(call)


def test_grad_scaler_state_dict_round_trip():
    def prog(m):
        a = m.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
        b = m.amp.GradScaler("cpu")
        b.load_state_dict(a.state_dict())
        return b.state_dict(), b.get_growth_interval(), b.get_backoff_factor()

    same(prog)


def test_grad_scaler_update_new_scale():
    def prog(m):
        w = m.nn.Parameter(m.tensor([1.0]))
        opt = m.optim.SGD([w], lr=0.1)
        s = m.amp.GradScaler("cpu")
        s.scale(w.sum()).backward()
        s.step(opt)
        s.update(128.0)
        return s.get_scale()

    same(prog)


def test_grad_scaler_warnings():
    for m in (torch, gg):
        with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
            m.amp.GradScaler()
        with pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler\\(args...\\)"):
            m.cuda.amp.GradScaler()
