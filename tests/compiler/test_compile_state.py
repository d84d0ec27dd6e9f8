"""graphgrad.compile and Python state: every program runs once eagerly and once compiled over
several calls with the state changed between calls; outputs and the effects they leave must be
eager's (compiler/pyguards.py: guards on what the capture read, graph breaks for side effects;
compiler/trace.py: one thread records; api.py: replays serialized per runner)."""

import enum
import threading
import time
import types
import warnings

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import nn
from graphgrad.compiler import GraphBreak

N = 5


def eager(fn):
    return fn


CREATED: list = []  # the CompiledFunctions a compiled run made


def compiled(fn):
    cf = gg.compile(fn)
    CREATED.append(getattr(cf, "_compiled", cf))
    return cf


def _np(out):
    if isinstance(out, (list, tuple)):
        return [_np(o) for o in out]
    if isinstance(out, gg.Tensor):
        return out.detach().numpy().copy()
    return out


def _same(a, b):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    else:
        assert a == b


X = np.linspace(-0.7, 1.3, 12, dtype=np.float32).reshape(3, 4)


def _x():
    return gg.tensor(X)


# -- programs: each takes the wrapper (eager or compiled) and returns what it observed ----
SCALE = 2.0
FLAG = True


def p_global_float(wrap):
    global SCALE
    SCALE = 2.0
    f = wrap(lambda x: (x * SCALE).sum())
    outs = []
    for i in range(N):
        SCALE = [2.0, 2.0, 3.5, -1.0, 3.5][i]
        outs.append(_np(f(_x())))
    return outs


def p_global_flag(wrap):
    global FLAG

    def f(x):
        return x.relu() if FLAG else x.tanh()
    f = wrap(f)
    outs = []
    for i in range(N):
        FLAG = i % 2 == 0
        outs.append(_np(f(_x())))
    return outs


def p_closure_float(wrap):
    scale = 1.5

    def f(x):
        return x * scale + 1
    f = wrap(f)
    outs = []
    for i in range(N):
        scale = 1.5 + (i // 2)  # noqa: F841 - read through the closure cell
        outs.append(_np(f(_x())))
    return outs


def p_closure_tensor(wrap):
    w = gg.ones(4)

    def f(x):
        return (x * w).sum(0)
    f = wrap(f)
    outs = []
    for i in range(N):
        if i in (2, 4):
            w = gg.full((4,), float(i))  # noqa: F841 - a rebound closure tensor
        outs.append(_np(f(_x())))
    return outs


G_W = None


def p_global_tensor(wrap):
    global G_W
    G_W = gg.ones(4)
    f = wrap(lambda x: x @ G_W)
    outs = []
    for i in range(N):
        if i == 2:
            G_W = gg.arange(4.0)
        outs.append(_np(f(_x())))
    return outs


class Temp(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.temperature = 1.0

    def forward(self, x):
        return (self.lin(x) / self.temperature).softmax(-1)


def p_module_float_attr(wrap):
    gg.manual_seed(0)
    m = Temp()
    f = wrap(m)
    outs = []
    for i in range(N):
        m.temperature = [1.0, 1.0, 0.5, 2.0, 2.0][i]
        with gg.no_grad():
            outs.append(_np(f(_x())))
    return outs


def p_dropout_p(wrap):
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.0))
    gg.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.0))
    f = wrap(m)
    outs = []
    for i in range(N):
        m[1].p = [0.0, 0.0, 1.0, 1.0, 0.0][i]
        with gg.no_grad():
            outs.append(_np(f(_x())))
    return outs


def p_leaky_slope(wrap):
    act = nn.LeakyReLU(0.1)

    def f(x):
        return act(x) * 2
    f = wrap(f)
    outs = []
    for i in range(N):
        act.negative_slope = 0.1 * (1 + i // 2)
        outs.append(_np(f(_x())))
    return outs


def p_train_eval(wrap):
    gg.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(1.0))
    f = wrap(m)
    outs = []
    for i in range(N):
        m.train(i % 2 == 0)
        with gg.no_grad():
            outs.append(_np(f(_x())))
    return outs


G_MODEL = None


def p_parameter_rebound_through_global(wrap):
    global G_MODEL
    gg.manual_seed(0)
    G_MODEL = nn.Linear(4, 2)
    f = wrap(lambda x: G_MODEL(x).sum(0))
    outs = []
    for i in range(N):
        if i == 2:
            G_MODEL.weight = nn.Parameter(gg.ones(2, 4))
        with gg.no_grad():
            outs.append(_np(f(_x())))
    return outs


CFG = {"scale": 1.0}


def p_dict_item(wrap):
    CFG["scale"] = 1.0
    f = wrap(lambda x: x * CFG["scale"])
    outs = []
    for i in range(N):
        CFG["scale"] = 1.0 + i // 2
        outs.append(_np(f(_x())))
    return outs


NS = types.SimpleNamespace(shift=0.0, power=2)


def p_object_attr(wrap):
    NS.shift, NS.power = 0.0, 2
    f = wrap(lambda x: x.pow(NS.power) + NS.shift)
    outs = []
    for i in range(N):
        NS.shift = float(i // 2)
        NS.power = 2 if i < 3 else 3
        outs.append(_np(f(_x())))
    return outs


SCALES = [1.0, 2.0]


def p_list_iterated(wrap):
    SCALES[:] = [1.0, 2.0]

    def f(x):
        for s in SCALES:
            x = x * s
        return x
    f = wrap(f)
    outs = []
    for i in range(N):
        if i == 2:
            SCALES.append(3.0)
        if i == 3:
            SCALES[0] = -1.0
        outs.append(_np(f(_x())))
    return outs


class Mode(enum.Enum):
    SUM = 1
    MEAN = 2


MODE = Mode.SUM
ACT = "relu"


def p_enum_and_str(wrap):
    global MODE, ACT

    def f(x):
        y = x.relu() if ACT == "relu" else x.sigmoid()
        return y.sum() if MODE is Mode.SUM else y.mean()
    f = wrap(f)
    outs = []
    for i in range(N):
        MODE = Mode.SUM if i < 2 else Mode.MEAN
        ACT = "relu" if i != 3 else "sigmoid"
        outs.append(_np(f(_x())))
    return outs


def p_nested_compiled(wrap):
    global SCALE
    SCALE = 1.0
    inner = wrap(lambda x: x * SCALE)
    outer = wrap(lambda x: inner(x).sum() + 1)
    outs = []
    for i in range(N):
        SCALE = 1.0 + i // 3
        outs.append(_np(outer(_x())))
    return outs


# -- side effects: replayed eagerly (a graph break), never run once and dropped -----------
LOG: list = []
COUNT = 0
STORE: dict = {}


def p_list_append(wrap):
    LOG.clear()

    def f(x):
        y = x * 2
        LOG.append(1)
        return y
    f = wrap(f)
    outs = [_np(f(_x())) for _ in range(N)]
    return outs + [len(LOG)]


def p_global_counter(wrap):
    global COUNT
    COUNT = 0

    def f(x):
        global COUNT
        COUNT += 1
        return x + 1
    f = wrap(f)
    outs = [_np(f(_x())) for _ in range(N)]
    return outs + [COUNT]


def p_nonlocal_counter(wrap):
    n = 0

    def f(x):
        nonlocal n
        n += 1
        return x - 1
    f = wrap(f)
    outs = [_np(f(_x())) for _ in range(N)]
    return outs + [n]


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * 3


def p_self_counter(wrap):
    m = Counting()
    f = wrap(m)
    outs = [_np(f(_x())) for _ in range(N)]
    return outs + [m.calls]


def p_dict_store(wrap):
    STORE.clear()

    def f(x):
        y = x.exp()
        STORE["last"] = STORE.get("last", 0) + 1
        return y
    f = wrap(f)
    outs = [_np(f(_x())) for _ in range(N)]
    return outs + [STORE["last"]]


def p_local_containers_are_fine(wrap):
    def f(x):
        parts = []
        d = {}
        for k in range(3):
            parts.append(x * k)
            d[k] = parts[-1]
        return gg.stack(parts).sum(0) + d[1]
    f = wrap(f)
    return [_np(f(_x())) for _ in range(N)]


def p_dict_get_and_len(wrap):
    CFG.clear()
    CFG["scale"] = 1.0
    SCALES[:] = [1.0, 2.0]

    def f(x):
        y = x * CFG.get("scale", 0.5) * len(SCALES)
        return y + 1 if "shift" in CFG else y
    f = wrap(f)
    outs = []
    for i in range(N):
        if i == 1:
            CFG["scale"] = 3.0
        if i == 2:
            SCALES.append(0.0)
        if i == 3:
            CFG["shift"] = True
        outs.append(_np(f(_x())))
    return outs


G_SEQ = None


def p_module_structure_through_global(wrap):
    global G_SEQ
    gg.manual_seed(0)
    G_SEQ = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
    f = wrap(lambda x: G_SEQ(x).sum(0))
    outs = []
    for i in range(N):
        if i == 2:
            G_SEQ.append(nn.Sigmoid())
        if i == 3:
            G_SEQ[0] = nn.Linear(4, 4)
        with gg.no_grad():
            outs.append(_np(f(_x())))
    return outs


def p_manual_seed_inside(wrap):
    def f(x):
        gg.manual_seed(3)
        return x + gg.rand(3, 4)
    f = wrap(f)
    outs = []
    for i in range(N):
        gg.manual_seed(i)
        outs.append(_np(f(_x())) + _np(gg.rand(1)).sum())
    return outs


PROGRAMS = [p_dict_get_and_len, p_module_structure_through_global, p_manual_seed_inside,
            p_global_float, p_global_flag, p_closure_float, p_closure_tensor, p_global_tensor,
            p_module_float_attr, p_dropout_p, p_leaky_slope, p_train_eval,
            p_parameter_rebound_through_global, p_dict_item, p_object_attr, p_list_iterated,
            p_enum_and_str, p_nested_compiled, p_list_append, p_global_counter,
            p_nonlocal_counter, p_self_counter, p_dict_store, p_local_containers_are_fine]


EFFECTS = {p_list_append, p_global_counter, p_nonlocal_counter, p_self_counter, p_dict_store,
           p_manual_seed_inside}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__[2:])
def test_program_matches_eager(program):
    want = program(eager)
    CREATED.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = program(compiled)
    _same(want, got)
    variants = [v for cf in CREATED for v in cf.variants]
    if program in EFFECTS:  # a graph break: every call ran the Python function
        assert variants and all(v.runner is None for v in variants)
    else:  # the guards let replays run where the state had not changed
        assert any(v.runner is not None and v.calls for v in variants)


def test_changed_global_recaptures_naming_the_guard_and_line():
    global SCALE
    SCALE = 2.0
    cf = gg.compile(lambda x: x * SCALE)
    cf(_x())
    cf(_x())
    assert len(cf.variants) == 1 and cf.variants[0].runner is not None
    SCALE = 4.0
    cf(_x())
    assert len(cf.variants) == 2
    (why,) = cf.recaptures
    assert "global 'SCALE' changed from 2.0 to 4.0" in why
    assert "test_compile_state.py:" in why
    text = str(gg.compiler.explain(cf, _x()))
    assert "global 'SCALE' == 4.0" in text and "test_compile_state.py:" in text


def test_side_effect_is_a_graph_break_naming_the_line():
    def f(x):
        LOG.append(0)
        return x * 2
    cf = gg.compile(f)
    with pytest.warns(UserWarning, match=r"graph break.*list\.append\(\).*test_compile_state"):
        cf(_x())
    assert cf.variants[0].runner is None


def test_side_effect_with_fullgraph_raises():
    def f(x):
        y = x * 2
        print("side effect", end="")
        return y
    cf = gg.compile(f, fullgraph=True)
    with pytest.raises(GraphBreak, match=r"print\(\)"):
        cf(_x())


def test_print_runs_on_every_call(capsys):
    def f(x):
        print("hi")
        return x + 1
    cf = gg.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            cf(_x())
    assert capsys.readouterr().out == "hi\n" * 3


def test_local_containers_keep_the_compiled_replay():
    cf = gg.compile(lambda x: gg.stack([x * k for k in range(3)]).sum(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf(_x())
        cf(_x())
    assert cf.variants[0].runner is not None and not cf.breaks


def test_returned_tensor_kind_is_the_same_on_capture_and_replay():
    gg.manual_seed(0)
    m = nn.Linear(4, 2)
    cm = gg.compile(m)
    kinds = []
    for _ in range(3):
        y = cm(_x())
        kinds.append((type(y).__name__, y.requires_grad, type(y.grad_fn).__name__))
    assert kinds[0] == kinds[1] == kinds[2]
    y = m(_x())
    assert kinds[0][:2] == (type(y).__name__, y.requires_grad)


# -- threads ------------------------------------------------------------------------------
_RNG = np.random.default_rng(0)
_W1 = _RNG.standard_normal((128, 64)).astype(np.float32) * 0.1
_W2 = _RNG.standard_normal((64, 32)).astype(np.float32) * 0.1


def _planned(x, w1, w2):
    # fused groups between matmuls: their outputs live in the memory plan's buffers, which
    # every call of the compiled function shares (without the replay lock, 62 of 160 calls
    # from 4 threads were wrong)
    a = (x * 2 + 1).tanh() * x
    b = a @ w1
    c = (b * b + b).sigmoid() - b
    return (c @ w2).sum(0)


def test_four_threads_calling_one_compiled_function():
    w1, w2 = gg.tensor(_W1), gg.tensor(_W2)
    f = lambda x: _planned(x, w1, w2)  # noqa: E731
    cf = gg.compile(f)
    inputs = [gg.tensor(np.random.default_rng(k).standard_normal((256, 128))
                        .astype(np.float32)) for k in range(4)]
    want = [f(t).numpy() for t in inputs]
    cf(inputs[0])
    cf(inputs[0])  # compiled now
    bad, errors = [], []

    def worker(k):
        try:
            for _ in range(25):
                got = cf(inputs[k]).numpy()
                if not np.allclose(got, want[k], rtol=1e-4, atol=1e-5):
                    bad.append(k)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not bad, (errors, len(bad))
    assert cf.variants[0].runner is not None


def test_capture_while_another_thread_runs_ops():
    gg.manual_seed(0)
    other = nn.Linear(8, 8)
    opt = gg.optim.SGD(other.parameters(), lr=1e-4)
    stop = threading.Event()
    started = threading.Event()
    steps = [0]

    def busy():
        z = gg.randn(16, 8)
        while not stop.is_set():
            opt.zero_grad()
            other(z).pow(2).sum().backward()
            opt.step()
            steps[0] += 1
            started.set()

    def f(x):
        # sleeps between ops hand the GIL to the other thread, which runs its own ops and
        # optimizer steps in the middle of this capture
        y = x
        for _ in range(10):
            y = (y * 1.01).sin()
            time.sleep(0.002)
        return y.sum()

    quiet = gg.compile(f)
    quiet(_x())
    n_quiet = len(quiet.variants[0].cap.graph.instrs)
    t = threading.Thread(target=busy)
    t.start()
    started.wait(10)
    try:
        cf = gg.compile(f)
        before = steps[0]
        cf(_x())
        during = steps[0] - before
        assert during > 0  # the other thread did run during the capture
        for _ in range(3):
            np.testing.assert_allclose(cf(_x()).item(), f(_x()).item(), rtol=1e-6)
    finally:
        stop.set()
        t.join()
    assert len(cf.variants[0].cap.graph.instrs) == n_quiet
    assert not any(i.op == "opaque" for i in cf.variants[0].cap.graph.instrs)
    assert steps[0] > 0 and during >= 0  # the other thread's steps ran, unrecorded


def test_capture_in_another_thread_is_not_nested():
    """Two threads whose first calls capture at the same time: one captures, the other runs
    that call eagerly; both get eager's values."""
    fs = [gg.compile(lambda x, k=k: (x * (k + 1)).sin().sum()) for k in range(2)]
    res, errors = {}, []

    def worker(k):
        try:
            for _ in range(5):
                res.setdefault(k, []).append(fs[k](_x()).item())
        except Exception as err:  # noqa: BLE001
            errors.append(err)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(2):
        want = (_x() * (k + 1)).sin().sum().item()
        np.testing.assert_allclose(res[k], [want] * 5, rtol=1e-6)


def test_a_replay_reentering_its_runner_is_refused():
    from graphgrad.compiler.api import _serialized

    class Runner:
        def run(self, tensors, keep_all=False):
            return self.run(tensors) if tensors else "ok"
    r = _serialized(Runner())
    assert r.run(()) == "ok"
    with pytest.raises(RuntimeError, match="from inside its own replay"):
        r.run((1,))
    assert r.run(()) == "ok"  # the lock was released


def test_another_threads_python_is_not_this_capture():
    """Side effects and reads of user code in another thread during a capture are that
    thread's (sys.monitoring, used on 3.12+, reports every thread's events)."""
    stop, started = threading.Event(), threading.Event()
    seen: list = []

    def helper():
        seen.append(SCALE)  # a side effect and a global read, in the other thread

    def busy():
        while not stop.is_set():
            helper()
            started.set()

    def f(x):
        y = x
        for _ in range(30):
            y = (y * 1.01).sin()
        return y.sum()
    t = threading.Thread(target=busy)
    t.start()
    started.wait(10)
    try:
        cf = gg.compile(f)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # a graph break would warn
            cf(_x())
            cf(_x())
    finally:
        stop.set()
        t.join()
    assert cf.variants[0].runner is not None and not cf.breaks
    assert not any("SCALE" in ln for ln in cf.variants[0].guards.lines())
