"""The ``meta`` device (graphgrad/_meta.py) against torch 2.13: shapes, dtypes and devices of
meta tensors and of ops on them, torch's refusals to read values, repr, modules moved to
meta, and the model-ensembling idiom (functional_call on a meta module under vmap)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import graphgrad as gg

RNG = np.random.default_rng(11)
A = RNG.standard_normal((2, 3)).astype(np.float32)


def _meta(m, a=A):
    return m.tensor(a).to("meta")


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e).split(" (in ")[0]
    return None


@pytest.mark.parametrize("name,fn", [
    ("unary", lambda m, a: a.exp()),
    ("binary", lambda m, a: a * a + 1),
    ("zero_dim_cpu", lambda m, a: a + m.tensor(2.0)),
    ("matmul", lambda m, a: a @ a.T),
    ("reduce", lambda m, a: a.sum(1, keepdim=True)),
    ("view", lambda m, a: a.T[1:]),
    ("index", lambda m, a: a[:, m.tensor([0, 2])]),
    ("cat", lambda m, a: m.cat([a, a], 0)),
    ("cast", lambda m, a: a.to(m.float64).long()),
    ("compare", lambda m, a: a > 0),
    ("softmax", lambda m, a: a.softmax(-1)),
    ("svd", lambda m, a: m.linalg.svd(a, full_matrices=False)[0]),
])
def test_ops_on_meta_tensors_are_meta(name, fn):
    got, want = fn(gg, _meta(gg)), fn(torch, _meta(torch))
    assert got.is_meta and str(got.device) == "meta" == str(want.device)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    assert repr(got).split(", grad_fn")[0] == repr(want).split(", grad_fn")[0]


def test_meta_allocates_nothing():
    t = gg.ones(1000, 1000).to("meta")
    assert t._data.strides == (0, 0) and t._data.base.nbytes <= 8
    assert (t @ t)._data.strides == (0, 0)


@pytest.mark.parametrize("name,fn", [
    ("item", lambda m, a: a.sum().item()),
    ("item_many", lambda m, a: a.item()),
    ("float", lambda m, a: float(a.sum())),
    ("bool", lambda m, a: bool(a[0, 0])),
    ("numpy", lambda m, a: a.numpy()),
    ("tolist", lambda m, a: a.tolist()),
    ("to_cpu", lambda m, a: a.to("cpu")),
    ("cpu", lambda m, a: a.cpu()),
    ("mixed_devices", lambda m, a: a + m.ones(2, 3)),
])
def test_reading_values_raises_as_torch(name, fn):
    got, want = _err(lambda: fn(gg, _meta(gg))), _err(lambda: fn(torch, _meta(torch)))
    assert want is not None and got == want


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_repr(dtype):
    got = repr(_meta(gg, A > 0 if dtype == "bool" else A.astype(dtype)))
    want = repr(_meta(torch, A > 0 if dtype == "bool" else A.astype(dtype)))
    assert got == want
    assert repr(gg.tensor(A, requires_grad=True).to("meta")) == \
        repr(torch.tensor(A, requires_grad=True).to("meta"))


def test_module_to_meta():
    got, want = gg.nn.Linear(2, 3).to("meta"), torch.nn.Linear(2, 3).to("meta")
    assert repr(got.weight) == repr(want.weight)
    assert str(got.bias.device) == "meta"
    out_g, out_t = got(_meta(gg, A[:, :2])), want(_meta(torch, A[:, :2]))
    assert repr(out_g).split(", grad_fn")[0] == repr(out_t).split(", grad_fn")[0]


def _ensemble(m, rng_seed=0):
    """The "Model ensembling" tutorial: a meta copy of one model, the stacked real states
    passed to functional_call under vmap."""
    rng = np.random.default_rng(rng_seed)
    nn = m.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(12, 8), nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(nn.functional.relu(self.fc1(x)))

    models = [MLP() for _ in range(3)]
    with m.no_grad():
        for model in models:
            for p in model.parameters():
                p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    batch = m.tensor(rng.standard_normal((5, 12)).astype(np.float32))
    params, buffers = m.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return m.func.functional_call(base, (params, buffers), (x,))

    out = m.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, batch)
    loop = m.stack([model(batch) for model in models])
    return out, loop, base


def test_model_ensembling_with_a_meta_base_model():
    out_g, loop_g, base = _ensemble(gg)
    out_t, _, _ = _ensemble(torch)
    assert str(base.fc1.weight.device) == "meta" and str(out_g.device) == "cpu"
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(out_g.detach().numpy(), loop_g.detach().numpy(), rtol=1e-5,
                               atol=1e-5)


def test_hook_released_when_meta_tensors_die():
    import gc

    from graphgrad.ops import _dispatch

    t = gg.ones(2).to("meta")
    assert _dispatch._fwd is not None
    del t
    gc.collect()
    assert _dispatch._fwd is None


@pytest.mark.parametrize("name,fn", [
    ("empty", lambda m: m.empty(2, 3, device="meta")),
    ("zeros_int", lambda m: m.zeros(4, dtype=m.int64, device="meta")),
    ("ones_device_obj", lambda m: m.ones((1, 2), device=m.device("meta"))),
    ("full", lambda m: m.full((2,), 1.5, device="meta")),
    ("zeros_like", lambda m: m.zeros_like(m.empty(3, 1, device="meta"))),
    ("requires_grad", lambda m: m.empty(2, device="meta", requires_grad=True)),
])
def test_factories_on_meta(name, fn):
    got, want = fn(gg), fn(torch)
    assert got.is_meta and repr(got) == repr(want)


def test_custom_function_on_meta():
    def run(m):
        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return (x * 2).sum(0)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        return Double.apply(_meta(m))

    got, want = run(gg), run(torch)
    assert got.is_meta and repr(got).split(", grad_fn")[0] == repr(want).split(", grad_fn")[0]


def test_inplace_writes_and_module_init_on_meta():
    for m in (gg, torch):
        a = m.ones(2, 3, device="meta")
        assert a.add_(1) is a and a.zero_().is_meta and a.uniform_().is_meta
        a[0] = 1
        a[m.tensor([0, 1])] = 2.0
        assert a.copy_(m.ones(2, 3)).is_meta and a.mul_(a).is_meta
    assert repr(gg.nn.Linear(2, 3, device="meta").weight) == \
        repr(torch.nn.Linear(2, 3, device="meta").weight)
