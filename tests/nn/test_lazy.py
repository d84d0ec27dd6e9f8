"""Lazy layers against torch: the uninitialised module (repr, state_dict placeholders, errors),
the first forward (inferred shapes, the class it turns into, torch's initialisation bounds),
loading a checkpoint into an uninitialised module, and training with an optimizer built after
the dry run, compared step by step with torch from the same state.
"""

import copy

import numpy as np
import pytest
import torch

import graphgrad as gg

LAZY = [
    ("LazyLinear", (4,), {}, (2, 5)),
    ("LazyLinear", (4,), {"bias": False}, (3, 2, 5)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv1d", (4, 3), {"groups": 2}, (4, 6)),
    ("LazyConv2d", (4, 3), {"stride": 2, "padding_mode": "reflect", "padding": 1}, (2, 3, 6, 6)),
    ("LazyConv3d", (2, 2), {"bias": False}, (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2, "output_padding": 1, "stride": 2},
     (1, 2, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), {"momentum": None}, (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), {"affine": False}, (2, 3, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {"track_running_stats": False, "bias": False}, (4, 3, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"affine": False, "track_running_stats": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 3, 2)),
]
IDS = [f"{n}-{i}" for i, (n, *_) in enumerate(LAZY)]


def _placeholders(module):
    return [(k, type(v).__name__) for k, v in module.state_dict().items()]


@pytest.mark.parametrize("name, args, kw, shape", LAZY, ids=IDS)
def test_uninitialised_module_matches_torch(name, args, kw, shape):
    t_mod, g_mod = getattr(torch.nn, name)(*args, **kw), getattr(gg.nn, name)(*args, **kw)
    assert repr(g_mod) == repr(t_mod)
    assert _placeholders(g_mod) == _placeholders(t_mod)
    assert g_mod.has_uninitialized_params() == t_mod.has_uninitialized_params()
    assert [n for n, _ in g_mod.named_parameters()] == [n for n, _ in t_mod.named_parameters()]


@pytest.mark.parametrize("name, args, kw, shape", LAZY, ids=IDS)
def test_first_forward_turns_into_the_layer(name, args, kw, shape):
    t_mod, g_mod = getattr(torch.nn, name)(*args, **kw), getattr(gg.nn, name)(*args, **kw)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    t_out = t_mod(torch.tensor(x))
    g_mod(gg.tensor(x))
    assert type(g_mod).__name__ == type(t_mod).__name__ == name.replace("Lazy", "")
    assert repr(g_mod) == repr(t_mod)
    assert not hasattr(g_mod, "has_uninitialized_params")  # no longer a lazy module
    t_sd, g_sd = t_mod.state_dict(), g_mod.state_dict()
    assert list(g_sd) == list(t_sd)
    for k in t_sd:
        assert tuple(g_sd[k].shape) == tuple(t_sd[k].shape), k
        assert type(g_sd[k]).__name__ == "Tensor"
    weight = t_mod.weight.detach().numpy() if t_mod.weight is not None else None
    for (n, p), (_, q) in zip(g_mod.named_parameters(), t_mod.named_parameters()):
        assert isinstance(p, gg.nn.Parameter) and type(p).__name__ == "Parameter"
        a, b = p.detach().numpy(), q.detach().numpy()
        if "Norm" in name:  # torch's constants: weight ones, bias zeros
            np.testing.assert_array_equal(a, b)
        else:  # kaiming_uniform(a=sqrt(5)) and the bias share the bound 1/sqrt(fan_in)
            fan_in = weight.shape[1] * int(np.prod(weight.shape[2:]))
            assert 0 < np.abs(a).max() <= 1 / np.sqrt(fan_in) + 1e-6, n
    # Same state -> same output as torch's layer on the first batch, and the same buffers.
    g_mod.load_state_dict({k: gg.tensor(v.detach().numpy().copy())
                           for k, v in t_mod.state_dict().items()})
    t_mod.train(), g_mod.train()
    np.testing.assert_allclose(g_mod(gg.tensor(x)).detach().numpy(),
                               t_mod(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert t_out.shape == tuple(g_mod(gg.tensor(x)).shape)


def test_training_with_optimizer_built_after_dry_run():
    def build(m):
        return m.nn.Sequential(m.nn.LazyConv2d(4, 3), m.nn.LazyBatchNorm2d(), m.nn.ReLU(),
                               m.nn.Flatten(), m.nn.LazyLinear(2))

    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 6, 6)).astype(np.float32)
    y = rng.standard_normal((4, 2)).astype(np.float32)
    t_model, g_model = build(torch), build(gg)
    t_model(torch.tensor(x))
    g_model(gg.tensor(x))
    assert [type(mod).__name__ for mod in g_model] == [type(mod).__name__ for mod in t_model]
    g_model.load_state_dict({k: gg.tensor(v.numpy().copy())
                             for k, v in t_model.state_dict().items()})
    t_opt = torch.optim.SGD(t_model.parameters(), lr=0.1, momentum=0.9)
    g_opt = gg.optim.SGD(g_model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        for m, model, opt in ((torch, t_model, t_opt), (gg, g_model, g_opt)):
            opt.zero_grad()
            m.nn.functional.mse_loss(model(m.tensor(x)), m.tensor(y)).backward()
            opt.step()
    for (k, a), b in zip(t_model.state_dict().items(), g_model.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)


def test_load_state_dict_materialises():
    t_src = torch.nn.Linear(5, 3)
    state = {k: gg.tensor(v.detach().numpy().copy()) for k, v in t_src.state_dict().items()}
    lazy = gg.nn.LazyLinear(3)
    assert lazy.load_state_dict(state).missing_keys == []
    assert type(lazy).__name__ == "LazyLinear"  # as torch: it becomes Linear at forward
    assert tuple(lazy.weight.shape) == (3, 5)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), t_src.weight.detach().numpy())
    out = lazy(gg.ones(2, 5))
    assert type(lazy).__name__ == "Linear"
    np.testing.assert_allclose(out.detach().numpy(), t_src(torch.ones(2, 5)).detach().numpy(),
                               rtol=1e-6)
    # Uninitialised into uninitialised: nothing to copy, nothing missing.
    for m in (torch, gg):
        result = m.nn.LazyBatchNorm1d().load_state_dict(m.nn.LazyBatchNorm1d().state_dict())
        assert result.missing_keys == [] and result.unexpected_keys == []


def test_errors_match_torch():
    for m in (torch, gg):
        with pytest.raises(RuntimeError, match="Can't access the shape"):
            _ = m.nn.LazyLinear(3).weight.shape
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            m.nn.LazyConv2d(4, 3, groups=2)(m.ones(1, 3, 5, 5))
        with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\)"):
            m.nn.LazyConv2d(4, 3)(m.ones(5, 5))
        with pytest.raises(RuntimeError, match="size mismatch|Can't access the shape"):
            m.nn.Linear(2, 3).load_state_dict(m.nn.LazyLinear(3).state_dict())


def test_placeholders():
    for m in (torch, gg):
        p = m.nn.UninitializedParameter()
        assert repr(p) == "<UninitializedParameter>" and p.requires_grad
        p.materialize((2, 3))
        assert type(p) is m.nn.Parameter and tuple(p.shape) == (2, 3)
        b = m.nn.UninitializedBuffer(dtype=m.float64)
        assert repr(b) == "<UninitializedBuffer>"
        b.materialize((4,))
        assert type(b) is m.Tensor and b.dtype == m.float64 and tuple(b.shape) == (4,)

        class Custom(m.nn.modules.lazy.LazyModuleMixin, m.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = m.nn.UninitializedParameter()
                self.stat = m.nn.UninitializedBuffer()

            def initialize_parameters(self, x):
                self.w.materialize((x.shape[-1],))
                self.stat.materialize((1,))

            def forward(self, x):
                return x * self.w

        mod = Custom()
        assert [k for k, _ in mod.named_buffers()] == ["stat"]
        assert mod(m.ones(2, 3)).shape == (2, 3) and not mod.has_uninitialized_params()


def test_deepcopy_and_cast_before_forward():
    for m in (torch, gg):
        layer = m.nn.LazyLinear(3)
        twin = copy.deepcopy(layer).double()
        assert twin.has_uninitialized_params()
        assert twin(m.ones(2, 4, dtype=m.float64)).dtype == m.float64
        assert twin.weight.dtype == m.float64 and layer.has_uninitialized_params()
