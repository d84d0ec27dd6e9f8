"""torch.compile's controls in graphgrad: mode/backend/options checks, set_stance (function,
context manager, decorator), reset(), and GRAPHGRAD_LOGS=recompiles (compiler/controls.py,
stance.py, logs.py), compared with torch 2.13 where torch defines the behaviour."""

import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import graphgrad as gg

SCALE = 1.0


def _f(x):
    return (x * SCALE).sum()


def _x(dtype=gg.float32):
    return gg.ones(4, dtype=dtype)


@pytest.mark.parametrize("mode", [None, "default", "reduce-overhead", "max-autotune",
                                  "max-autotune-no-cudagraphs"])
def test_modes_torch_accepts_compile(mode):
    cf = gg.compile(lambda x: x + 1, mode=mode)
    np.testing.assert_array_equal(cf(_x()).numpy(), np.full(4, 2.0, np.float32))


def test_unknown_mode_raises_naming_the_accepted_ones():
    with pytest.raises(RuntimeError) as theirs:
        torch.compile(lambda x: x, mode="fast")(torch.ones(1))
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast") as ours:
        gg.compile(lambda x: x, mode="fast")
    for m in ("default", "reduce-overhead", "max-autotune"):
        assert m in str(ours.value) and m in str(theirs.value)


def test_mode_and_options_together_raise_as_torch():
    with pytest.raises(RuntimeError, match="Either mode or options"):
        torch.compile(lambda x: x, mode="default", options={"a": 1})
    with pytest.raises(RuntimeError, match="Either mode or options"):
        gg.compile(lambda x: x, mode="default", options={"core_only": True})


@pytest.mark.parametrize("backend", ["inductor", "eager", "aot_eager", "numpy", None])
def test_backends(backend):
    cf = gg.compile(lambda x: (x.sin() * 2).sum(), backend=backend)
    for _ in range(3):
        np.testing.assert_allclose(cf(_x()).item(), (_x().sin() * 2).sum().item(), rtol=1e-6)
    assert cf.variants[0].runner is not None
    if backend in ("eager", "aot_eager"):
        assert cf.options.get("core_only")


def test_unknown_backend_raises_naming_the_accepted_ones():
    with pytest.raises(RuntimeError, match="Invalid backend"):
        torch.compile(lambda x: x, backend="nope")(torch.ones(1))
    with pytest.raises(RuntimeError, match="Invalid backend: 'nope'") as err:
        gg.compile(lambda x: x, backend="nope")
    for name in ("inductor", "eager", "numba", "numpy"):
        assert name in str(err.value)
    assert gg.compiler.list_backends() == sorted(gg.compiler.list_backends())
    with pytest.raises(RuntimeError, match="callable backend"):
        gg.compile(lambda x: x, backend=lambda gm, ex: gm)


def test_module_compile_checks_too():
    m = gg.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="Invalid backend"):
        m.compile(backend="nope")


# -- set_stance -------------------------------------------------------------------------
def test_force_eager_as_context_manager_function_and_decorator():
    global SCALE
    SCALE = 1.0
    cf = gg.compile(_f)
    with gg.compiler.set_stance("force_eager"):
        assert cf(_x()).item() == 4.0
    assert not cf.variants  # nothing captured
    gg.compiler.set_stance("force_eager")
    try:
        cf(_x())
        assert not cf.variants
    finally:
        gg.compiler.set_stance("default")
    cf(_x())
    assert len(cf.variants) == 1

    @gg.compiler.set_stance("force_eager")
    def run():
        return cf(_x(gg.float64))
    assert gg.compiler.set_stance.current() == "default"  # the decorator set nothing now
    run()
    assert len(cf.variants) == 1


def test_fail_on_recompile_raises_naming_the_guard():
    global SCALE
    SCALE = 1.0
    cf = gg.compile(_f)
    cf(_x())
    with gg.compiler.set_stance("fail_on_recompile"):
        assert cf(_x()).item() == 4.0  # a passing guard still replays
        with pytest.raises(RuntimeError, match="fail_on_recompile") as err:
            cf(_x(gg.float64))
        assert "dtype changed" in str(err.value)
        SCALE = 2.0
        with pytest.raises(RuntimeError, match="global 'SCALE' changed from 1.0 to 2.0"):
            cf(_x())
    SCALE = 1.0
    # torch raises on a first compile in this stance too
    tf = torch.compile(lambda x: x * 2)
    with torch.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError, match="fail_on_recompile"):
            tf(torch.ones(2))
    with gg.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError, match="fail_on_recompile"):
            gg.compile(lambda x: x * 2)(_x())


def test_eager_on_recompile_runs_eagerly_but_keeps_replaying():
    global SCALE
    SCALE = 1.0
    cf = gg.compile(_f)
    cf(_x())
    with gg.compiler.set_stance("eager_on_recompile"):
        SCALE = 3.0
        assert cf(_x()).item() == 12.0  # eager: the changed global is seen
        SCALE = 1.0
        assert cf(_x()).item() == 4.0
    assert len(cf.variants) == 1
    SCALE = 3.0
    assert cf(_x()).item() == 12.0
    assert len(cf.variants) == 2
    SCALE = 1.0


def test_unknown_stance_raises():
    with pytest.raises(ValueError, match="'force_eager'"):
        gg.compiler.set_stance("fast")
    assert gg.compiler.set_stance.current() == "default"


def test_reset_forgets_captures():
    cf = gg.compile(lambda x: x * 2)
    cf(_x())
    cf(_x(gg.float64))
    assert len(cf.variants) == 2 and cf.recaptures
    gg.compiler.reset()
    assert cf.variants == [] and cf.recaptures == []
    np.testing.assert_array_equal(cf(_x()).numpy(), np.full(4, 2.0, np.float32))
    assert len(cf.variants) == 1
    torch.compiler.reset()  # the oracle has the same entry point


# -- logs -------------------------------------------------------------------------------
def test_recompiles_logged_with_reason(caplog):
    global SCALE
    SCALE = 1.0
    cf = gg.compile(_f)
    with caplog.at_level(logging.DEBUG, logger="graphgrad._dynamo"):
        cf(_x())
        SCALE = 5.0
        cf(_x())
    SCALE = 1.0
    recs = [r for r in caplog.records if r.name == "graphgrad._dynamo"]
    assert len(recs) == 1
    msg = recs[0].getMessage()
    assert "Recompiling function _f" in msg and "global 'SCALE' changed from 1.0 to 5.0" in msg


def test_graphgrad_logs_env_prints_recompiles():
    script = textwrap.dedent("""
        import graphgrad as gg
        f = gg.compile(lambda x: x * 2)
        f(gg.ones(2))
        f(gg.ones(2, dtype=gg.float64))
    """)
    env = dict(os.environ, GRAPHGRAD_LOGS="recompiles")
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Recompiling function" in r.stderr and "dtype changed" in r.stderr


def test_recompiles_not_printed_by_default(capsys):
    from graphgrad.compiler import logs

    if os.environ.get("GRAPHGRAD_LOGS"):
        pytest.skip("GRAPHGRAD_LOGS is set in this environment")
    f = gg.compile(lambda x: x * 2)
    f(_x())
    f(_x(gg.float64))
    assert "Recompiling" not in capsys.readouterr().err and not logs._on


def test_explain_keeps_the_compiled_function_and_shows_the_compiled_backward():
    gg.manual_seed(0)
    m = gg.nn.Linear(3, 2)
    cm = gg.compile(m)
    x = gg.ones(4, 3)
    cm(x)
    cm(gg.ones(5, 3))
    before = list(cm._compiled.variants)
    with gg.compiler.set_stance("force_eager"):  # explain captures whatever the stance
        text = str(gg.compiler.explain(cm, x))
    assert cm._compiled.variants == before
    assert "recaptures of this compiled function so far: 1" in text
    assert "compiled backward (CompiledFunctionBackward" in text and "vjp" in text
    out = cm(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
