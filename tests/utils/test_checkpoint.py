"""torch.utils.checkpoint compared with torch: gradients of checkpointed functions (both
variants) equal torch's and the un-checkpointed run's, dropout is replayed with the forward's
RNG state, fewer bytes are held after the forward, and warnings and errors are torch's."""

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg
import graphgrad.memory as ggmem

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 4)).astype(np.float32)
W1 = RNG.standard_normal((4, 6)).astype(np.float32)
W2 = RNG.standard_normal((6, 3)).astype(np.float32)


def _leaves(m):
    return [m.tensor(a, requires_grad=True) for a in (X, W1, W2)]


def _block(m, w1, w2):
    def f(x, scale=1.0):
        h = (x @ w1).tanh() * scale
        return (h.sigmoid() * h) @ w2
    return f


def _grads(m, mode, **kw):
    x, w1, w2 = _leaves(m)
    f = _block(m, w1, w2)
    if mode is None:
        y = f(x, **kw)
    else:
        y = m.utils.checkpoint.checkpoint(f, x, use_reentrant=mode, **kw)
    (y * y).sum().backward()
    return [t.grad.numpy() for t in (x, w1, w2)]


@pytest.mark.parametrize("mode", [True, False])
def test_gradients_match_torch_and_plain(mode):
    expected = _grads(torch, None)
    for got in (_grads(torch, mode), _grads(gg, mode), _grads(gg, None)):
        for a, b in zip(expected, got):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_kwargs_only_without_reentrant():
    expected = _grads(torch, False, scale=0.5)
    for a, b in zip(expected, _grads(gg, False, scale=0.5)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    for m in (torch, gg):
        x, w1, w2 = _leaves(m)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            m.utils.checkpoint.checkpoint(_block(m, w1, w2), x, use_reentrant=True, scale=0.5)


@pytest.mark.parametrize("mode", [True, False])
def test_dropout_replayed_with_forward_rng(mode):
    def run(checkpointed, preserve=True):
        gg.manual_seed(3)
        x = gg.tensor(X, requires_grad=True)
        f = lambda t: gg.nn.functional.dropout(t.exp(), 0.5, True) * t  # noqa: E731
        if checkpointed:
            y = gg.utils.checkpoint.checkpoint(f, x, use_reentrant=mode,
                                               preserve_rng_state=preserve)
        else:
            y = f(x)
        gg.rand(7)  # the stream moves on between forward and backward
        y.sum().backward()
        return x.grad.numpy()

    plain = run(False)
    np.testing.assert_allclose(run(True), plain, rtol=1e-6)
    assert not np.allclose(run(True, preserve=False), plain)


def test_rng_stream_unchanged_by_recomputation():
    for m in (torch, gg):
        m.manual_seed(1)
        x = m.ones(3, requires_grad=True)
        y = m.utils.checkpoint.checkpoint(lambda t: t * m.rand(3), x, use_reentrant=False)
        after_forward = m.rand(2)
        m.manual_seed(1)
        m.rand(3)
        assert m.equal(m.rand(2), after_forward)
        y.sum().backward()


def test_autograd_grad_without_reentrant_and_refused_with_it():
    for m in (torch, gg):
        x, w1, w2 = _leaves(m)
        y = m.utils.checkpoint.checkpoint(_block(m, w1, w2), x, use_reentrant=False)
        gx, = m.autograd.grad(y.sum(), x)
        assert w1.grad is None and gx.shape == x.shape
        y = m.utils.checkpoint.checkpoint(_block(m, w1, w2), x, use_reentrant=True)
        with pytest.raises(RuntimeError, match="incompatible with .grad"):
            m.autograd.grad(y.sum(), x)
        y = m.utils.checkpoint.checkpoint(_block(m, w1, w2), x, use_reentrant=True)
        with pytest.raises(RuntimeError, match="incompatible with .grad"):
            y.sum().backward(inputs=[x])


def test_double_backward_without_reentrant():
    out = []
    for m in (torch, gg):
        x = m.tensor(X, requires_grad=True)
        y = m.utils.checkpoint.checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
        g, = m.autograd.grad(y, x, create_graph=True)
        g.pow(2).sum().backward()
        out.append(x.grad.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)


def test_retain_graph_backward_twice_without_reentrant():
    out = []
    for m in (torch, gg):
        x, w1, w2 = _leaves(m)
        y = m.utils.checkpoint.checkpoint(_block(m, w1, w2), x, use_reentrant=False).sum()
        y.backward(retain_graph=True)
        y.backward()
        out.append(w1.grad.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-5)


def test_use_reentrant_warning_and_default():
    for m in (torch, gg):
        x, w1, w2 = _leaves(m)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = m.utils.checkpoint.checkpoint(_block(m, w1, w2), x)
            m.utils.checkpoint.checkpoint_sequential([m.nn.Tanh(), m.nn.Tanh()], 2, x)
        msgs = [str(w.message) for w in caught if w.category is UserWarning]
        assert any(s.startswith("torch.utils.checkpoint: the use_reentrant parameter should")
                   for s in msgs)
        assert any("checkpoint_sequential: the use_reentrant parameter" in s for s in msgs)
        assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"  # reentrant default


def test_no_input_requires_grad_warns_and_gives_no_grad():
    for m in (torch, gg):
        lin = m.nn.Linear(4, 2)
        x = m.tensor(X)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            y = m.utils.checkpoint.checkpoint(lin, x, use_reentrant=True)
        assert not y.requires_grad
        y = m.utils.checkpoint.checkpoint(lin, x, use_reentrant=False)
        y.sum().backward()
        assert lin.weight.grad is not None


def test_argument_errors():
    for m in (torch, gg):
        cp = m.utils.checkpoint
        x = m.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            cp.checkpoint(lambda t: t, x, use_reentrant=True, debug=True)
        with pytest.raises(ValueError, match="determinism_check should be one of"):
            cp.checkpoint(lambda t: t * 2, x, use_reentrant=False, determinism_check="bad")
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            cp.checkpoint_sequential([m.nn.Tanh()], 1, x, use_reentrant=False, foo=1)


def test_recomputation_that_differs_raises_checkpoint_error():
    for m in (torch, gg):
        calls = []

        def f(t):
            calls.append(1)
            return (t[: 3 - len(calls)] * 2).sin()  # a different shape when run again

        x = m.ones(4, requires_grad=True)
        y = m.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
        with pytest.raises(m.utils.checkpoint.CheckpointError, match="different metadata"):
            y.sum().backward()
        calls.clear()
        y = m.utils.checkpoint.checkpoint(f, x, use_reentrant=False, determinism_check="none")
        y.sum().backward()  # unchecked: the recomputed values are used as they are


@pytest.mark.parametrize("mode", [True, False])
def test_checkpoint_sequential_matches_torch(mode):
    grads = []
    for m in (torch, gg):
        m.manual_seed(0)
        layers = [m.nn.Linear(4, 8), m.nn.Tanh(), m.nn.Linear(8, 8), m.nn.ReLU(),
                  m.nn.Linear(8, 3)]
        for layer in layers:
            for p in layer.parameters():
                p.data = m.tensor(np.linspace(-1, 1, p.numel(), dtype=np.float32)
                                  .reshape(tuple(p.shape)))
        model = m.nn.Sequential(*layers)
        x = m.tensor(X, requires_grad=True)
        y = m.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=mode)
        y.pow(2).sum().backward()
        grads.append([x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", [True, False])
def test_activations_not_held_after_forward(mode):
    """Ten 256x256 float32 activations (256 KiB each) are saved without checkpointing; with
    it, what the forward leaves behind is its output alone, so allocated() is lower."""
    w = gg.tensor(RNG.standard_normal((256, 256)).astype(np.float32) / 16, requires_grad=True)
    x0 = RNG.standard_normal((256, 256)).astype(np.float32)

    def f(t):
        for _ in range(10):
            t = (t @ w).tanh()
        return t

    def held(checkpointed):
        x = gg.tensor(x0, requires_grad=True)
        before = ggmem.allocated()
        y = (gg.utils.checkpoint.checkpoint(f, x, use_reentrant=mode) if checkpointed
             else f(x))
        during = ggmem.allocated() - before
        y.sum().backward()
        return during, w.grad.numpy().copy()

    plain, g_plain = held(False)
    w.grad = None
    ckpt, g_ckpt = held(True)
    assert plain >= 10 * 256 * 256 * 4
    assert ckpt < plain / 4
    np.testing.assert_allclose(g_ckpt, g_plain, rtol=1e-4, atol=1e-5)
