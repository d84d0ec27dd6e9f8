"""graphgrad.compile's core: golden IR, training loops compiled vs eager, guards and
re-capture, graph breaks, fresh randomness, explain and verify."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphgrad as gg

CORE = {"core_only": True}


def test_golden_ir_elementwise_sum():
    f = gg.compile(lambda x, y: (x * y + 1.0).sum(), options=CORE)
    f(gg.ones(3), gg.ones(3))
    # Written from the program: mul, add of a weak scalar, full sum to a 0-d value.
    assert f.variants[0].graph.format() == (
        "graph(%0:f32[3], %1:f32[3]):\n"
        "  %2:f32[3] = mul(%0, %1)\n"
        "  %3:f32[3] = add(%2, 1.0)\n"
        "  %4:f32[] = sum(%3, shape=(3,))\n"
        "  return (%4)")


def test_golden_ir_backward_and_folding():
    def f(x):
        (x * 2.0).sum().backward()
        return x * 1.0  # an identity the algebraic pass removes

    c = gg.compile(f, options=CORE)
    c(gg.ones(2, requires_grad=True))
    # d/dx sum(2x) = 2 everywhere: the seed's chain folds to one constant, accumulated into
    # the argument's grad; x * 1.0 is x itself.
    assert c.variants[0].graph.format() == (
        "graph(%0:f32[2]):\n"
        "  %1:f32[2] = const [2., 2.]\n"
        "  %2:f32[2] = accumulate_grad(%1)\n"
        "  return (%0)")


def test_golden_ir_cast_and_external():
    w = gg.tensor([1.0, 2.0], dtype=gg.float64)
    c = gg.compile(lambda x: w - x.neg().neg(), options=CORE)
    c(gg.ones(2, dtype=gg.float32))
    # float32 input promoted to float64 (a cast); neg(neg(x)) is x.
    assert c.variants[0].graph.format() == (
        "graph(%0:f32[2]):\n"
        "  %1:f64[2] = external\n"
        "  %2:f64[2] = cast[f64](%0)\n"
        "  %3:f64[2] = sub(%1, %2)\n"
        "  return (%3)")


def _train(m, kind, steps, compiled, seed=0):
    m.manual_seed(seed)
    if kind == "mlp":
        net = m.nn.Sequential(m.nn.Linear(6, 16), m.nn.Tanh(), m.nn.Dropout(0.2),
                              m.nn.Linear(16, 2))
        xs = np.random.default_rng(1).standard_normal((steps, 8, 6)).astype(np.float32)
    elif kind == "cnn":
        # (pooling ops return structured auxiliary values, a graph break for now)
        net = m.nn.Sequential(m.nn.Conv2d(1, 4, 3, padding=1), m.nn.ReLU(),
                              m.nn.Conv2d(4, 4, 2, stride=2), m.nn.Flatten(),
                              m.nn.Linear(4 * 4 * 4, 2))
        xs = np.random.default_rng(1).standard_normal((steps, 4, 1, 8, 8)).astype(np.float32)
    else:
        net = _LSTMNet(m)
        xs = np.random.default_rng(1).standard_normal((steps, 5, 3, 4)).astype(np.float32)
    batch = xs.shape[2] if kind == "lstm" else xs.shape[1]
    ys = np.random.default_rng(2).standard_normal((steps, batch, 2)).astype(np.float32)
    opt = m.optim.Adam(net.parameters(), lr=1e-2)

    def step(x, y):
        opt.zero_grad()
        loss = m.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        return loss

    run = gg.compile(step, options=CORE) if compiled else step
    losses = [run(m.tensor(x), m.tensor(y)).item() for x, y in zip(xs, ys)]
    return losses, run


class _LSTMNet:
    def __init__(self, m):
        self.lstm = m.nn.LSTM(4, 6)
        self.head = m.nn.Linear(6, 2)

    def parameters(self):
        return list(self.lstm.parameters()) + list(self.head.parameters())

    def __call__(self, x):
        out, _ = self.lstm(x)
        return self.head(out[-1])


@pytest.mark.parametrize("kind", ["mlp", "cnn", "lstm"])
def test_training_loop_matches_eager(kind):
    eager, _ = _train(gg, kind, 20, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no graph break may hide an eager fallback
        compiled, run = _train(gg, kind, 20, True)
    assert len(run.variants) == 1 and run.variants[0].runner is not None
    np.testing.assert_allclose(compiled, eager, rtol=1e-6, atol=1e-7)


def test_recapture_on_each_guard():
    lin = gg.nn.Linear(3, 2)
    f = gg.compile(lambda x, s: lin(x) * s, options=CORE)
    f(gg.ones(4, 3), 2.0)
    f(gg.ones(4, 3), 2.0)
    assert len(f.variants) == 1
    f(gg.ones(5, 3), 2.0)          # shape
    f(gg.ones(4, 3, dtype=gg.float64).float(), 3.0)  # Python scalar
    f(gg.ones(4, 3, requires_grad=True), 2.0)  # requires_grad
    with gg.no_grad():
        f(gg.ones(4, 3), 2.0)      # grad mode
    assert len(f.variants) == 5
    assert any("shape" in r for r in f.recaptures)
    assert any("Python value" in r for r in f.recaptures)
    assert any("requires_grad" in r for r in f.recaptures)
    assert any("grad mode" in r for r in f.recaptures)


def test_recapture_on_train_eval_and_parameter_identity():
    net = gg.nn.Sequential(gg.nn.Linear(3, 3), gg.nn.Dropout(0.5))
    f = gg.compile(net, options=CORE)
    x = gg.ones(2, 3)
    f(x)
    net.eval()
    out = f(x)
    np.testing.assert_allclose(out.detach().numpy(), net(x).detach().numpy())
    net[0] = gg.nn.Linear(3, 3)
    out = f(x)
    np.testing.assert_allclose(out.detach().numpy(), net(x).detach().numpy())
    cf = f._compiled
    assert len(cf.variants) == 3 and "train/eval" in cf.recaptures[0]
    g = gg.compile(net, options=CORE)
    g(x)
    net[0] = gg.nn.Linear(3, 3)
    np.testing.assert_allclose(g(x).detach().numpy(), net(x).detach().numpy())
    assert "identities" in g._compiled.recaptures[0]


def test_recompile_limit_warns_naming_the_guard():
    f = gg.compile(lambda x: x + 1, options=CORE)
    for n in range(1, 10):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f(gg.ones(n))
    assert len(f.variants) == 8
    assert "recompile limit (8)" in str(w[-1].message) and "shape" in str(w[-1].message)


def test_graph_break_warns_naming_the_line_and_fullgraph_raises():
    def f(x):
        y = x * 2
        if y.sum() > 0:  # bool() of a tensor: data-dependent Python
            return y
        return -y

    c = gg.compile(f, options=CORE)
    with pytest.warns(UserWarning, match=r"graph break.*test_compile_core.py:\d+") as rec:
        out = c(gg.ones(2))
    line = f.__code__.co_firstlineno + 2
    assert f"test_compile_core.py:{line}" in str(rec[0].message)
    np.testing.assert_allclose(out.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(c(-gg.ones(2)).numpy(), [2.0, 2.0])  # eager: right branch
    strict = gg.compile(f, fullgraph=True, options=CORE)
    with pytest.raises(gg.compiler.GraphBreak, match="__bool__"):
        strict(gg.ones(2))


def test_item_is_never_baked():
    c = gg.compile(lambda x: x * x.sum().item(), options=CORE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c(gg.ones(2))
        out = c(gg.full((2,), 2.0))
    np.testing.assert_allclose(out.numpy(), [8.0, 8.0])


def test_fresh_randomness_on_every_replay():
    c = gg.compile(lambda x: gg.nn.functional.dropout(x, 0.5) + gg.rand(64), options=CORE)
    x = gg.ones(64)
    gg.manual_seed(3)
    outs = [c(x).numpy().copy() for _ in range(3)]
    assert not np.array_equal(outs[1], outs[2])
    assert c.variants[0].runner is not None
    # the same seed gives the same draws as eager, in the same order
    gg.manual_seed(3)
    eager = [(gg.nn.functional.dropout(x, 0.5) + gg.rand(64)).numpy() for _ in range(3)]
    np.testing.assert_array_equal(outs, eager)


def test_explain_output():
    lin = gg.nn.Linear(3, 2)
    with gg.no_grad():
        text = str(gg.compiler.explain(lambda x: lin(x).relu().sum(), gg.ones(4, 3)))
    assert "graph breaks: 0" in text
    assert "addmm(" in text and "relu(" in text and "'weight'" not in text
    assert "passes:" in text and "guards:" in text
    broken = str(gg.compiler.explain(lambda x: x * x.sum().item(), gg.ones(2)))
    assert "graph breaks: 1" in broken and "item()" in broken


def test_verify_catches_a_broken_op():
    f = gg.compile(lambda x: (x * 3.0).exp().sum(), verify=True, options=CORE)
    x = gg.tensor([0.1, 0.2])
    f(x)
    v = f.variants[0]
    # Break the exp instr of the compiled graph on purpose.
    assert v.graph.instrs[1].name == "exp"
    v.graph.instrs[1].fn = lambda a: np.exp(a) + 1.0
    v.runner = gg.compiler.executor.Executor(v.graph)
    with pytest.warns(UserWarning, match=r"first divergent value: instr #1 %\d+:f32\[2\] = exp"):
        out = f(x)
    np.testing.assert_allclose(out.numpy(), np.exp(np.array([0.3, 0.6], np.float32)).sum(),
                               rtol=1e-6)
    assert v.runner is None  # falls back to eager from now on


def test_module_compile_in_place():
    net = gg.nn.Linear(3, 2)
    want = net(gg.ones(1, 3)).detach().numpy()
    net.compile(options=CORE)
    for _ in range(2):
        np.testing.assert_allclose(net(gg.ones(1, 3)).detach().numpy(), want)
