"""bfloat16 as a real dtype (ml_dtypes), CPU autocast that casts, and GradScaler with float16,
against torch 2.13: printing, casting, promotion, finfo, compute rounded as torch's CPU
kernels, gradients in the parameter's dtype, autocast's op lists, and small models that train
under autocast with losses close to float32's and to torch's."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg
from graphgrad import _dtype

pytest.importorskip("ml_dtypes", reason="bfloat16 needs the ml_dtypes package (extra 'bf16')")

RNG = np.random.default_rng(7)
X = (RNG.standard_normal((4, 6)) * 3).astype(np.float32)


def f32(t):
    """A tensor's values as float32 (exact for bfloat16), for either framework."""
    return t.float().detach().numpy()


def test_optional_dtype_names_its_extra():
    fake = _dtype._OptionalDtype("fakefloat", 2, "no_such_module_for_graphgrad", "x", "bf16")
    assert fake.is_floating_point and fake.itemsize == 2 and repr(fake) == "torch.fakefloat"
    with pytest.raises(ModuleNotFoundError, match=r"pip install graphgrad\[bf16\]"):
        fake.np  # noqa: B018


def test_dtype_object_finfo_and_pickle():
    assert repr(gg.bfloat16) == "torch.bfloat16" and gg.bfloat16.is_floating_point
    assert gg.bfloat16.itemsize == torch.bfloat16.itemsize == 2
    assert pickle.loads(pickle.dumps(gg.bfloat16)) is gg.bfloat16
    ours, theirs = gg.finfo(gg.bfloat16), torch.finfo(torch.bfloat16)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("values", [[1.0, 2.0], [1.0, 2.5, 3.14159], [1e-5, 3e5], [[-0.5, 7.25],
                                    [100.0, -3e-3]], [], [3.3]])
def test_repr_and_casts_match_torch(values):
    ours = gg.tensor(values, dtype=gg.bfloat16)
    theirs = torch.tensor(values, dtype=torch.bfloat16)
    assert repr(ours) == repr(theirs)
    assert repr(gg.tensor(values).bfloat16()) == repr(torch.tensor(values).bfloat16())
    assert repr(ours.half()) == repr(theirs.half())
    np.testing.assert_array_equal(f32(ours), f32(theirs))


def test_round_to_nearest_even_as_torch():
    x = (RNG.standard_normal(4096) * 10.0 ** RNG.uniform(-30, 30, 4096)).astype(np.float32)
    np.testing.assert_array_equal(f32(gg.tensor(x).to(gg.bfloat16)),
                                  f32(torch.tensor(x).to(torch.bfloat16)))


def test_promotion_table_matches_torch():
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
             "float64", "complex64", "complex128", "bfloat16"]
    for n in names:
        ours = gg.promote_types(gg.bfloat16, getattr(gg, n))
        theirs = torch.promote_types(torch.bfloat16, getattr(torch, n))
        assert str(ours) == str(theirs), n
    b = gg.ones(2, dtype=gg.bfloat16)
    tb = torch.ones(2, dtype=torch.bfloat16)
    for other, tother in ((2, 2), (2.5, 2.5), (gg.ones(2), torch.ones(2)),
                          (gg.ones(2, dtype=gg.int64), torch.ones(2, dtype=torch.int64)),
                          (gg.ones(2, dtype=gg.float16), torch.ones(2, dtype=torch.float16)),
                          (gg.tensor(1.0, dtype=gg.float64),
                           torch.tensor(1.0, dtype=torch.float64))):
        assert str((b * other).dtype) == str((tb * tother).dtype)


OPS = [
    ("add", lambda m, a, b: a + b), ("mul", lambda m, a, b: a * b),
    ("div", lambda m, a, b: a / (b.abs() + 1)), ("exp", lambda m, a, b: (a / 4).exp()),
    ("tanh", lambda m, a, b: a.tanh()), ("gelu", lambda m, a, b: m.nn.functional.gelu(a)),
    ("softmax", lambda m, a, b: m.softmax(a, 1)), ("sum", lambda m, a, b: a.sum(1)),
    ("mean", lambda m, a, b: a.mean()), ("matmul", lambda m, a, b: a @ b.T),
    ("layer_norm", lambda m, a, b: m.nn.functional.layer_norm(a, (6,))),
    ("relu", lambda m, a, b: m.relu(a)), ("max", lambda m, a, b: a.max(1).values),
    ("transpose", lambda m, a, b: a.t() * 1), ("index", lambda m, a, b: a[1:3, ::2] + 0),
]


@pytest.mark.parametrize("name, fn", OPS, ids=[o[0] for o in OPS])
def test_compute_and_gradients_match_torch(name, fn):
    """Computed in float32 and rounded once, as torch's CPU kernels: equal up to one bfloat16
    rounding step; the gradients arrive in bfloat16."""
    y = (RNG.standard_normal((4, 6))).astype(np.float32)
    oa = gg.tensor(X, dtype=gg.bfloat16, requires_grad=True)
    ob = gg.tensor(y, dtype=gg.bfloat16)
    ta = torch.tensor(X, dtype=torch.bfloat16, requires_grad=True)
    tb = torch.tensor(y, dtype=torch.bfloat16)
    ours, theirs = fn(gg, oa, ob), fn(torch, ta, tb)
    assert str(ours.dtype) == str(theirs.dtype) == "torch.bfloat16"
    np.testing.assert_allclose(f32(ours), f32(theirs), rtol=2 ** -7, atol=1e-2)
    ours.float().sum().backward()
    theirs.float().sum().backward()
    assert str(oa.grad.dtype) == "torch.bfloat16"
    np.testing.assert_allclose(f32(oa.grad), f32(ta.grad), rtol=2 ** -6, atol=2e-2)


def test_views_alias_the_bfloat16_storage():
    x = gg.zeros(2, 3, dtype=gg.bfloat16)
    v = x[0]
    v.add_(1.5)
    x.t()[2, 1] = 4.0
    assert x.float().tolist() == [[1.5, 1.5, 1.5], [0.0, 0.0, 4.0]]


def _autocast_dtypes(m):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.autocast("cpu"):
            a = m.ones(3, 3) * 0.5
            b = a.bfloat16()
            F = m.nn.functional
            out += [a @ a, m.mv(a, a[0]), m.dot(a[0], a[0]), F.linear(m.ones(2, 3, 3), a, a[0]),
                    a @ a[0], a[0] @ a, a[0] @ a[0],
                    m.softmax(b, 0), F.layer_norm(b, (3,)), F.cross_entropy(b, m.tensor([0, 1, 2])),
                    F.mse_loss(b, b), b + a, m.cat([a, b]), F.gelu(b), b.sum(),
                    m.addmm(a, a, a), m.baddbmm(a[None], a[None], a[None]), m.bmm(a[None], a[None]),
                    F.conv1d(m.ones(1, 3, 5), m.ones(2, 3, 2)), F.prelu(a, m.tensor([0.1])),
                    F.nll_loss(b, m.tensor([0, 1, 2])), F.binary_cross_entropy_with_logits(b, b),
                    F.l1_loss(b, b), m.prod(b), m.cumsum(b, 0), m.matmul(a.double(), a.double()),
                    m.mm(a.half(), a.half()), F.linear(a, a, a[0]), F.linear(a, a)]
            with m.autocast("cpu", enabled=False):
                out.append(a @ a)
        with m.autocast("cpu", dtype=m.float16):
            out += [a @ a, F.linear(a, a, a[0]), F.mse_loss(a.half(), a.half())]
        out.append(a @ a)
    return [str(t.dtype) for t in out]


def test_autocast_op_lists_match_torch():
    assert _autocast_dtypes(gg) == _autocast_dtypes(torch)


def test_autocast_state_functions():
    assert gg.get_autocast_dtype("cpu") is gg.bfloat16
    with gg.autocast("cpu", dtype=gg.float16):
        assert gg.get_autocast_dtype("cpu") is gg.float16 and gg.is_autocast_cpu_enabled()
    assert gg.get_autocast_dtype("cpu") is gg.bfloat16 and not gg.is_autocast_cpu_enabled()


def _train(m, dtype=None, scaler=False, steps=25):
    """An MLP classifier, SGD; under autocast(dtype) when given; returns the losses."""
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((128, 20)).astype(np.float32)
    ys = (xs[:, :4].sum(1) > 0).astype(np.int64) + 2 * (xs[:, 4] > 0)
    w1 = rng.standard_normal((64, 20)).astype(np.float32) * 0.2
    w2 = rng.standard_normal((4, 64)).astype(np.float32) * 0.2
    model = m.nn.Sequential(m.nn.Linear(20, 64), m.nn.GELU(), m.nn.Linear(64, 4))
    with m.no_grad():
        model[0].weight.copy_(m.tensor(w1))
        model[2].weight.copy_(m.tensor(w2))
        model[0].bias.zero_()
        model[2].bias.zero_()
    opt = m.optim.SGD(model.parameters(), lr=0.5)
    gs = m.amp.GradScaler("cpu", init_scale=2.0 ** 10) if scaler else None
    x, y = m.tensor(xs), m.tensor(ys)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with m.autocast("cpu", dtype=dtype or m.bfloat16, enabled=dtype is not None):
            loss = m.nn.functional.cross_entropy(model(x), y)
        assert str(loss.dtype) == "torch.float32"
        if gs is None:
            loss.backward()
            opt.step()
        else:
            gs.scale(loss).backward()
            gs.step(opt)
            gs.update()
        losses.append(loss.item())
    assert str(model[0].weight.grad.dtype) == "torch.float32"
    return np.array(losses), (gs.get_scale() if gs else None)


@pytest.mark.parametrize("amp", ["bfloat16", "float16+GradScaler"])
def test_model_trains_under_autocast_close_to_float32_and_torch(amp):
    dtype = amp.split("+")[0]
    scaler = "GradScaler" in amp
    full, _ = _train(gg)
    ours, our_scale = _train(gg, getattr(gg, dtype), scaler)
    theirs, their_scale = _train(torch, getattr(torch, dtype), scaler)
    assert ours[-1] < 0.6 * ours[0]  # it learns
    np.testing.assert_allclose(ours, full, rtol=0.05, atol=0.02)
    np.testing.assert_allclose(ours, theirs, rtol=0.03, atol=0.01)
    assert our_scale == their_scale


def test_grad_scaler_skips_inf_steps_and_backs_off_in_float16():
    for m in (gg, torch):
        w = m.nn.Parameter(m.tensor([1.0, 2.0]))
        opt = m.optim.SGD([w], lr=0.1)
        gs = m.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=1)
        with m.autocast("cpu", dtype=m.float16):
            loss = (w.half() * 60000.0).sum()  # the scaled float16 gradient overflows
        gs.scale(loss).backward()
        gs.step(opt)
        gs.update()
        assert w.tolist() == [1.0, 2.0] and gs.get_scale() == 2.0 ** 15, m.__name__


def test_float16_scans_accumulate_in_float32_as_torch():
    x = np.random.default_rng(5).random(6000).astype(np.float16)
    for name in ("cumsum", "cumprod"):
        v = x if name == "cumsum" else 1 + x[:40] / 50
        ours = getattr(gg.tensor(v), name)(0)
        theirs = getattr(torch.tensor(v), name)(0)
        assert str(ours.dtype) == "torch.float16"
        np.testing.assert_allclose(f32(ours), f32(theirs), rtol=2 ** -10)


def _setitem(a):
    c = a.clone()
    c[0] = 1.5
    c[:, 1] = c[:, 2]
    return c


_A = RNG.standard_normal((4, 6)).astype(np.float32)
_B = RNG.standard_normal((6, 5)).astype(np.float32)
_I = RNG.integers(0, 4, (4,))
SWEEP = {  # name -> fn(module, a, b) on bfloat16 operands
    "neg": lambda m, a, b: -a,
    "sqrt": lambda m, a, b: a.abs().sqrt(),
    "log": lambda m, a, b: (a.abs()+1).log(),
    "sigmoid": lambda m, a, b: a.sigmoid(),
    "silu": lambda m, a, b: m.nn.functional.silu(a),
    "tanh_gelu": lambda m, a, b: m.nn.functional.gelu(a, approximate="tanh"),
    "clamp": lambda m, a, b: a.clamp(-0.5, 0.5),
    "where": lambda m, a, b: m.where(a > 0, a, m.zeros_like(a)),
    "gt": lambda m, a, b: (a > 0),
    "pow2": lambda m, a, b: a ** 2,
    "pow_t": lambda m, a, b: a.abs() ** 1.5,
    "rsqrt": lambda m, a, b: (a.abs()+1).rsqrt(),
    "mm": lambda m, a, b: a @ b,
    "bmm": lambda m, a, b: m.bmm(a[None], b[None]),
    "einsum": lambda m, a, b: m.einsum("ij,jk->ik", a, b),
    "sum0": lambda m, a, b: a.sum(0),
    "amax": lambda m, a, b: a.amax(1),
    "argmax": lambda m, a, b: a.argmax(1),
    "std": lambda m, a, b: a.std(1),
    "logsumexp": lambda m, a, b: a.logsumexp(1),
    "log_softmax": lambda m, a, b: m.log_softmax(a, 1),
    "cumsum": lambda m, a, b: a.cumsum(1),
    "cat": lambda m, a, b: m.cat([a, a]),
    "stack": lambda m, a, b: m.stack([a, a]),
    "reshape": lambda m, a, b: a.reshape(6, 4) * 1,
    "permute": lambda m, a, b: a.permute(1, 0) + 0,
    "expand": lambda m, a, b: a[:1].expand(3, 6) + 0,
    "gather": lambda m, a, b: a.gather(1, m.tensor(_I)[:, None]),
    "index_select": lambda m, a, b: a.index_select(0, m.tensor(_I)),
    "masked_fill": lambda m, a, b: a.masked_fill(a > 0, 0.0),
    "embedding": lambda m, a, b: m.nn.functional.embedding(m.tensor(_I), a),
    "dropout_eval": lambda m, a, b: m.nn.functional.dropout(a, 0.5, training=False),
    "conv1d": lambda m, a, b: m.nn.functional.conv1d(a[None], m.ones(2, 4, 3, dtype=a.dtype)),
    "max_pool1d": lambda m, a, b: m.nn.functional.max_pool1d(a[None], 2),
    "avg_pool1d": lambda m, a, b: m.nn.functional.avg_pool1d(a[None], 2),
    "layer_norm_w": lambda m, a, b: m.nn.functional.layer_norm(
        a, (6,), m.ones(6, dtype=a.dtype), m.zeros(6, dtype=a.dtype)),
    "rms_norm": lambda m, a, b: m.nn.functional.rms_norm(a, (6,)),
    "sdpa": lambda m, a, b: m.nn.functional.scaled_dot_product_attention(a[None], a[None], a[None]),
    "tril": lambda m, a, b: a.tril(),
    "triu_": lambda m, a, b: a.clone().triu_(),
    "topk": lambda m, a, b: a.topk(2, 1).values,
    "sort": lambda m, a, b: a.sort(1).values,
    "norm": lambda m, a, b: a.norm(),
    "mul_": lambda m, a, b: a.clone().mul_(2),
    "add_t": lambda m, a, b: a.clone().add_(a, alpha=0.5),
    "addcmul_": lambda m, a, b: a.clone().addcmul_(a, a, value=0.1),
    "lerp": lambda m, a, b: a.lerp(m.zeros_like(a), 0.3),
    "zero_": lambda m, a, b: a.clone().zero_(),
    "fill_": lambda m, a, b: a.clone().fill_(2.5),
    "copy_": lambda m, a, b: m.zeros_like(a).copy_(a),
    "setitem": lambda m, a, b: _setitem(a),
    "cross_entropy": lambda m, a, b: m.nn.functional.cross_entropy(a, m.tensor(_I)),
    "mse": lambda m, a, b: m.nn.functional.mse_loss(a, a * 0.5),
    "item": lambda m, a, b: m.tensor(a.sum().item()),
    "tolist": lambda m, a, b: m.tensor(a.tolist()),
    "eq": lambda m, a, b: a == a,
    "isnan": lambda m, a, b: a.isnan(),
    "nan_to_num": lambda m, a, b: a.nan_to_num(),
    "sign": lambda m, a, b: a.sign(),
    "round": lambda m, a, b: a.round(),
    "floor": lambda m, a, b: a.floor(),
    "mean_dim": lambda m, a, b: a.mean(1, keepdim=True),
    "var": lambda m, a, b: a.var(0),
    "softplus": lambda m, a, b: m.nn.functional.softplus(a),
    "leaky_relu": lambda m, a, b: m.nn.functional.leaky_relu(a),
    "elu": lambda m, a, b: m.nn.functional.elu(a),
    "hardtanh": lambda m, a, b: m.nn.functional.hardtanh(a),
    "linear3d": lambda m, a, b: m.nn.functional.linear(a[None], b.T, None),
    "interp": lambda m, a, b: m.nn.functional.interpolate(a[None], scale_factor=2),
    "pad": lambda m, a, b: m.nn.functional.pad(a, (1, 1)),
    "one_hot_mul": lambda m, a, b: a * m.nn.functional.one_hot(m.tensor(_I), 6),
}


@pytest.mark.parametrize("name", sorted(SWEEP))
def test_bfloat16_op_sweep_matches_torch(name):
    """Common ops on bfloat16 operands: the same dtype, values within bfloat16 rounding (or
    the same exception type). Composites (batch_norm) round after each op and drift by a
    few ulp, so they are not in the table."""
    fn = SWEEP[name]
    outs = []
    for m in (torch, gg):
        try:
            outs.append(fn(m, m.tensor(_A, dtype=m.bfloat16), m.tensor(_B, dtype=m.bfloat16)))
        except Exception as e:  # noqa: BLE001 - the outcome is compared
            outs.append(e)
    theirs, ours = outs
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert type(theirs) is type(ours), (theirs, ours)
        return
    assert str(ours.dtype) == str(theirs.dtype)
    want = theirs.float().numpy() if theirs.dtype.is_floating_point else theirs.numpy()
    got = ours.float().numpy() if ours.is_floating_point() else ours.numpy()
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2, equal_nan=True)


@pytest.mark.parametrize("opt", ["SGD", "AdamW"])
def test_bfloat16_model_trains_as_torch(opt):
    """Parameters, activations and gradients in bfloat16, as torch's CPU kernels keep them."""
    def run(m):
        rng = np.random.default_rng(11)
        model = m.nn.Sequential(m.nn.Linear(8, 16), m.nn.Tanh(), m.nn.Linear(16, 3))
        with m.no_grad():
            for p in model.parameters():
                p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
        model = model.to(m.bfloat16)
        o = getattr(m.optim, opt)(model.parameters(), lr=0.05)
        x = m.tensor(rng.standard_normal((32, 8)).astype(np.float32)).to(m.bfloat16)
        y = m.tensor(rng.integers(0, 3, 32))
        losses = []
        for _ in range(8):
            o.zero_grad()
            loss = m.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            o.step()
            losses.append(loss.item())
        assert str(model[0].weight.grad.dtype) == "torch.bfloat16"
        return np.array(losses)
    ours, theirs = run(gg), run(torch)
    assert ours[-1] < ours[0]
    np.testing.assert_allclose(ours, theirs, rtol=0.03, atol=0.02)
