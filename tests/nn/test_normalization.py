"""Normalization layers beyond the ModuleInfo table: running statistics after several training
steps equal torch's (exponential and cumulative averages, instance norm), the fused primitive
against its decomposition (Note [Normalization primitive]), graph shape, old checkpoints, and
Embedding's padding row, initialisation, from_pretrained and max_norm.
"""

import numpy as np
import pytest
import torch

import graphgrad as gg


def _pair(name, *args, dtype=np.float64, **kwargs):
    t = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, np.dtype(dtype).name))
    g = getattr(gg.nn, name)(*args, **kwargs).to(getattr(gg, np.dtype(dtype).name))
    g.load_state_dict({k: gg.tensor(v.detach().numpy().copy()) for k, v in
                       t.state_dict().items()})
    return t, g


def _close(a, b, rtol=1e-7, atol=1e-7):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name, kwargs, shape", [
    ("BatchNorm1d", {}, (6, 3)),
    ("BatchNorm1d", {"momentum": None}, (5, 3, 4)),
    ("BatchNorm2d", {"momentum": 0.25}, (4, 3, 3, 2)),
    ("BatchNorm2d", {"momentum": None, "affine": False}, (2, 3, 4, 4)),
    ("InstanceNorm1d", {"track_running_stats": True, "affine": True}, (3, 3, 5)),
    ("InstanceNorm2d", {"track_running_stats": True, "momentum": 0.5}, (2, 3, 3, 3)),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_running_stats_after_training_steps_match_torch(name, kwargs, shape, dtype):
    """Several training forwards (and backwards): running buffers, num_batches_tracked,
    gradients; then the eval-mode output, which reads the running buffers."""
    tol = (1e-5, 1e-5) if dtype == np.float32 else (1e-10, 1e-10)
    t, g = _pair(name, shape[1], dtype=dtype, **kwargs)
    rng = np.random.default_rng(0)
    for step in range(4):
        x = (rng.standard_normal(shape) * (step + 1) + step).astype(dtype)
        tx, gx = torch.tensor(x, requires_grad=True), gg.tensor(x, requires_grad=True)
        w = rng.standard_normal(shape).astype(dtype)
        (t(tx) * torch.tensor(w)).sum().backward()
        (g(gx) * gg.tensor(w)).sum().backward()
        _close(gx.grad, tx.grad, *tol)
    for (n, a), (m, b) in zip(t.named_buffers(), g.named_buffers()):
        assert n == m
        if a.dtype == torch.int64:
            assert int(b) == int(a) == (4 if name.startswith("Batch") else 0)
        else:
            _close(b, a, *tol)
    for (_, a), (_, b) in zip(t.named_parameters(), g.named_parameters()):
        _close(b.grad, a.grad, *tol)
    t.eval()
    g.eval()
    x = rng.standard_normal(shape).astype(dtype)
    _close(g(gg.tensor(x)), t(torch.tensor(x)), *tol)


def test_functional_batch_norm_updates_given_buffers_in_place():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 4, 3))
    out = {}
    for m in (torch, gg):
        rm, rv = m.zeros(4, dtype=m.float64), m.ones(4, dtype=m.float64)
        keep_rm = rm
        for _ in range(3):
            m.nn.functional.batch_norm(m.tensor(x), rm, rv, training=True, momentum=0.2)
        assert rm is keep_rm
        out[m] = (rm, rv, rm._version)
    _close(out[gg][0], out[torch][0])
    _close(out[gg][1], out[torch][1])
    assert out[gg][2] == out[torch][2] == 0  # torch's kernel does not bump the version


def _decomposed(x, weight, bias, axes, wshape, eps):
    mean = x.mean(axes, keepdim=True)
    var = ((x - mean) ** 2).mean(axes, keepdim=True)
    return (x - mean) / (var + eps).sqrt() * weight.reshape(wshape) + bias.reshape(wshape)


@pytest.mark.parametrize("kind", ["batch", "layer", "group"])
def test_fused_norm_matches_its_decomposition(kind):
    """Forward, first and second derivatives of the fused op equal the composite's."""
    rng = np.random.default_rng(2)
    F = gg.nn.functional
    x0 = rng.standard_normal((4, 6, 3))
    if kind == "batch":
        p0 = rng.standard_normal((2, 6))
        axes, wshape = (0, 2), (6, 1)

        def fused(x, w, b):
            return F.batch_norm(x, None, None, w, b, training=True, eps=1e-3)
    elif kind == "layer":
        p0 = rng.standard_normal((2, 6, 3))
        axes, wshape = (1, 2), (6, 3)

        def fused(x, w, b):
            return F.layer_norm(x, (6, 3), w, b, eps=1e-3)
    else:
        p0 = rng.standard_normal((2, 6))
        axes, wshape = (2, 3), (2, 3, 1)

        def fused(x, w, b):
            return F.group_norm(x, 2, w, b, eps=1e-3)

    def composite(x, w, b):
        if kind == "group":
            return _decomposed(x.reshape(4, 2, 3, 3), w, b, axes, wshape, 1e-3).reshape(4, 6, 3)
        return _decomposed(x, w, b, axes, wshape, 1e-3)

    results = []
    for fn in (fused, composite):
        x = gg.tensor(x0, requires_grad=True)
        w = gg.tensor(p0[0], requires_grad=True)
        b = gg.tensor(p0[1], requires_grad=True)
        out = fn(x, w, b)
        up = gg.tensor(np.random.default_rng(3).standard_normal(out.shape))
        grads = gg.autograd.grad((out * out * up).sum(), (x, w, b), create_graph=True)
        second = gg.autograd.grad(sum((gr * gr).sum() for gr in grads), (x, w, b))
        results.append([out, *grads, *second])
    for a, b in zip(*results):
        _close(a, b, 1e-9, 1e-9)


def test_fused_norm_is_one_node_with_torch_names():
    x = gg.randn(4, 3, 5, requires_grad=True)
    w, b = gg.ones(3, requires_grad=True), gg.zeros(3, requires_grad=True)
    out = gg.nn.functional.batch_norm(x, None, None, w, b, training=True)
    assert type(out.grad_fn).__name__ == "NativeBatchNormBackward0"
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"] * 3
    ln = gg.nn.functional.layer_norm(x, (5,))
    assert type(ln.grad_fn).__name__ == "NativeLayerNormBackward0"
    emb = gg.nn.functional.embedding(gg.tensor([1, 2]), gg.randn(4, 2, requires_grad=True))
    assert type(emb.grad_fn).__name__ == "EmbeddingBackward0"
    assert len(emb.grad_fn.next_functions) == 1


def test_old_checkpoint_without_num_batches_tracked_loads():
    bn = gg.nn.BatchNorm1d(3)
    state = bn.state_dict()
    del state["num_batches_tracked"]
    state._metadata[""] = {"version": 1}
    bn.num_batches_tracked.fill_(5)
    result = bn.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert int(bn.num_batches_tracked) == 5


def test_batch_norm_module_errors_match_torch():
    for m in (torch, gg):
        with pytest.raises(ValueError, match="expected 4D input"):
            m.nn.BatchNorm2d(3)(m.ones(2, 3))
        with pytest.raises(ValueError, match="more than 1 value per channel"):
            m.nn.BatchNorm1d(3)(m.ones(1, 3))
        with pytest.raises(ValueError, match="must be divisible"):
            m.nn.GroupNorm(2, 3)
        with pytest.raises(ValueError, match="to match num_features"):
            m.nn.InstanceNorm1d(4, affine=True)(m.ones(2, 3, 5))


def test_embedding_padding_row_gets_no_gradient_and_init_is_torch_s():
    gg.manual_seed(0)
    emb = gg.nn.Embedding(1000, 8, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert np.all(w[3] == 0)
    rows = np.delete(w, 3, axis=0)
    assert abs(rows.mean()) < 0.02 and abs(rows.std() - 1) < 0.02  # N(0, 1)
    idx = gg.tensor([[3, 1, 3], [2, 3, 1]])
    emb(idx).sum().backward()
    grad = emb.weight.grad.numpy()
    assert np.all(grad[3] == 0)
    assert np.all(grad[1] == 2) and np.all(grad[2] == 1)
    assert np.count_nonzero(grad.any(axis=1)) == 2


def test_embedding_from_pretrained_and_max_norm_match_torch():
    w = np.random.default_rng(4).standard_normal((5, 3)) * 2
    t = torch.nn.Embedding.from_pretrained(torch.tensor(w), max_norm=1.5)
    g = gg.nn.Embedding.from_pretrained(gg.tensor(w), max_norm=1.5)
    assert not g.weight.requires_grad and g.weight.shape == (5, 3)
    idx = [[0, 2], [2, 4]]
    _close(g(gg.tensor(idx)), t(torch.tensor(idx)))
    _close(g.weight, t.weight)  # rows 0, 2, 4 renormalized in place, 1 and 3 untouched
    assert np.allclose(g.weight.detach().numpy()[1], w[1])
    with pytest.raises(AssertionError):
        gg.nn.Embedding.from_pretrained(gg.ones(3))
