"""graphgrad.compile against graphgrad eager, torch eager and torch.compile, in one process.

Prints the median time per step of each and the ratios the compile issue sets as targets, the
peak memory of the MLP step (tracemalloc: NumPy reports its allocations) and the first-call
compile time, cold (empty kernel cache, a fresh process) and warm. Everything runs on one
thread (FACTS.md). Run: ``python bench/bench_compile.py [--quick]``.
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import graphgrad  # noqa: E402

torch.set_num_threads(1)


def timeit(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


# -- the programs (written once, run with m = torch or graphgrad) -----------------------------
def chain_step(m):
    def step(x):
        y = x
        for i in range(50):
            y = y * 1.01 + 0.01 if i % 2 else m.sin(y)
        y.sum().backward()
        return y
    return step


def gelu_step(m):
    c = float(np.sqrt(2.0 / np.pi))

    def step(x):
        y = 0.5 * x * (1.0 + m.tanh(c * (x + 0.044715 * x * x * x)))
        loss = y.sum()
        loss.backward()
        return loss
    return step


def mlp(m, seed=0):
    m.manual_seed(seed)
    model = m.nn.Sequential(m.nn.Linear(784, 512), m.nn.ReLU(), m.nn.Linear(512, 256),
                            m.nn.ReLU(), m.nn.Linear(256, 10))
    opt = m.optim.SGD(model.parameters(), lr=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = m.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def cnn(m, seed=0):
    m.manual_seed(seed)
    nn = m.nn
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
    opt = m.optim.SGD(model.parameters(), lr=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = m.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def seed_step(m):
    w = m.tensor(3.0, requires_grad=True)
    b = m.tensor(1.0, requires_grad=True)
    opt = m.optim.SGD([w, b], lr=0.01)

    def step(x):
        opt.zero_grad()
        loss = (x * w + b - 10) ** 2
        loss.backward()
        opt.step()
        return loss
    return step


# -- the PyTorch idiom: compile the loss function or the model; backward() and the optimizer
# step run outside (torch.compile's documented use; AOTAutograd compiles its backward)
def chain_loss(m):
    def loss(x):
        y = x
        for i in range(50):
            y = y * 1.01 + 0.01 if i % 2 else m.sin(y)
        return y.sum()
    return loss


def gelu_loss(m):
    c = float(np.sqrt(2.0 / np.pi))

    def loss(x):
        return (0.5 * x * (1.0 + m.tanh(c * (x + 0.044715 * x * x * x)))).sum()
    return loss


def _mlp_model(m, seed=0):
    m.manual_seed(seed)
    return m.nn.Sequential(m.nn.Linear(784, 512), m.nn.ReLU(), m.nn.Linear(512, 256),
                           m.nn.ReLU(), m.nn.Linear(256, 10))


def _cnn_model(m, seed=0):
    m.manual_seed(seed)
    nn = m.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def model_step(make_model):
    """``make(m, comp)``: an SGD step over ``comp(model)`` (the model itself without comp)."""
    def make(m, comp):
        model = make_model(m)
        run = comp(model) if comp is not None else model
        opt = m.optim.SGD(model.parameters(), lr=0.01)

        def step(x, y):
            opt.zero_grad()
            loss = m.nn.functional.cross_entropy(run(x), y)
            loss.backward()
            opt.step()
            return loss
        step.model = model
        return step
    return make


def loss_step(make_loss):
    """``make(m, comp)``: ``comp(loss_fn)(*args).backward()`` (gradients cleared first)."""
    def make(m, comp):
        fn = make_loss(m)
        fn = comp(fn) if comp is not None else fn

        def step(*args):
            for a in args:
                if getattr(a, "requires_grad", False):
                    a.grad = None
            fn(*args).backward()
        return step
    return make


def seed_idiom(m, comp):
    """The seed example with a fresh input tensor every call and compile(loss_fn)."""
    w = m.tensor(3.0, requires_grad=True)
    b = m.tensor(1.0, requires_grad=True)
    opt = m.optim.SGD([w, b], lr=0.01)

    def loss_fn(x):
        return (x * w + b - 10) ** 2
    fn = comp(loss_fn) if comp is not None else loss_fn

    def step():
        opt.zero_grad()
        loss = fn(m.tensor(2.0))
        loss.backward()
        opt.step()
        return loss
    return step


def run_idiom(name, make, args_for, reps, results, rounds=9):
    """Like run_case, for the PyTorch idiom: ``make(m, comp)`` builds the step. The four steps
    are timed in alternating rounds (``reps // rounds`` calls each) so that a change in load
    hits them alike; each figure is the median over rounds, each ratio the median of the
    per-round ratios."""
    row, steps = {}, {}
    for label, m, comp in (("graphgrad eager", graphgrad, None), ("graphgrad.compile", graphgrad,
                           graphgrad.compile), ("torch eager", torch, None),
                           ("torch.compile", torch, torch.compile)):
        args = args_for(m)
        try:
            fn = make(m, comp)
            if comp is not None:
                t0 = time.perf_counter()
                fn(*args)
                row[label + " first call s"] = time.perf_counter() - t0
            for _ in range(3):
                fn(*args)
        except Exception as err:  # torch.compile needs a C++ compiler; report, don't die
            row[label] = f"unavailable ({type(err).__name__}: {err})"[:200]
            continue
        steps[label] = (fn, args)
    n = max(1, reps // rounds)
    samples: dict = {label: [] for label in steps}
    for _ in range(rounds):
        for label, (fn, args) in steps.items():
            t = time.perf_counter()
            for _ in range(n):
                fn(*args)
            samples[label].append((time.perf_counter() - t) / n)
    for label, ts in samples.items():
        row[label] = statistics.median(ts)
    row["_rounds"] = samples
    results[name] = row
    return row


def _peaks(step, args, reps=3):
    """Peak bytes over 3 steps after warm-up: (tracemalloc: every NumPy allocation, the
    compiled replay's temporaries and saved values included; graphgrad.memory.max_allocated
    above the bytes live before the first step, gradients cleared: what tensors hold, so a
    compiled replay's own temporaries and saved arrays are not in it)."""
    step(*args)
    step(*args)
    for p in step.model.parameters():
        p.grad = None  # the first step's zero_grad frees them anyway
    graphgrad.memory.reset_peak()
    base = graphgrad.memory.allocated()
    tracemalloc.start()
    for _ in range(reps):
        step(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, graphgrad.memory.max_allocated() - base


def _leaf(m, a):
    return m.tensor(a, requires_grad=True)


def _zero(t):
    t.grad = None


def run_case(name, make, args_for, reps, results):
    row = {}
    for label, m, comp in (("graphgrad eager", graphgrad, None), ("graphgrad.compile", graphgrad,
                           graphgrad.compile), ("torch eager", torch, None),
                           ("torch.compile", torch, torch.compile)):
        args = args_for(m)
        fn = make(m)
        if comp is not None:
            try:
                fn = comp(fn)
                t0 = time.perf_counter()
                fn(*args)
                row[label + " first call s"] = time.perf_counter() - t0
            except Exception as err:  # torch.compile needs a C++ compiler; report, don't die
                row[label] = f"unavailable ({type(err).__name__})"
                continue
        grads = [a for a in args if getattr(a, "requires_grad", False)]

        def call(fn=fn, args=args, grads=grads):
            for g in grads:
                g.grad = None
            fn(*args)
        row[label] = timeit(call, reps)
    results[name] = row
    return row


def peak_memory(step, args, reps=3):
    step(*args)  # capture / warm up outside the measurement
    tracemalloc.start()
    for _ in range(reps):
        step(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


_COLD = """
import os, time, numpy as np
os.environ["GRAPHGRAD_CACHE_DIR"] = {cache!r}
import graphgrad
from bench_compile import mlp
step = graphgrad.compile(mlp(graphgrad))
x = graphgrad.randn(64, 784); y = graphgrad.randint(0, 10, (64,))
t = time.perf_counter(); step(x, y); print(time.perf_counter() - t)
"""


def compile_times():
    cache = tempfile.mkdtemp(prefix="gg-kernels-")
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    for _ in range(2):  # cold (empty cache), then warm (a new process, same cache)
        r = subprocess.run([sys.executable, "-c", _COLD.format(cache=cache)], cwd=here, env=env,
                           capture_output=True, text=True, timeout=600)
        out.append(float(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else
                   f"failed: {r.stderr.strip().splitlines()[-1:]}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-idiom", action="store_true", help="only the whole-step cases")
    ap.add_argument("--only-idiom", action="store_true", help="only the PyTorch-idiom cases")
    opts = ap.parse_args()
    reps = 5 if opts.quick else 30
    warnings.simplefilter("ignore")
    results = {}
    rng = np.random.default_rng(0)
    v16 = rng.standard_normal(16).astype(np.float32)
    big = rng.standard_normal(1 << 22).astype(np.float32)
    xb = rng.standard_normal((64, 784)).astype(np.float32)
    yb = rng.integers(0, 10, 64)
    if opts.only_idiom:
        run_idiom_cases(opts, reps, results, rng, v16, big, yb)
        _print(results)
        return
    run_case("100-op chain, 16 floats, fwd+bwd", chain_step, lambda m: (_leaf(m, v16),),
             reps * 20, results)
    run_case("GELU (tanh, primitives) 2**22 f32 fwd+bwd", gelu_step,
             lambda m: (_leaf(m, big),), max(reps // 2, 3), results)
    run_case("MLP 784-512-256-10 SGD step, batch 64", mlp,
             lambda m: (m.tensor(xb), m.tensor(yb)), reps * 2, results)
    xc = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
    run_case("CNN (2 conv, 2 maxpool, linear) SGD step, batch 32 28x28", cnn,
             lambda m: (m.tensor(xc), m.tensor(yb[:32])), reps * 2, results)
    run_case("seed example step", seed_step, lambda m: (m.tensor(2.0),), reps * 20, results)
    if not opts.skip_idiom:
        run_idiom_cases(opts, reps, results, rng, v16, big, yb)
    _print(results)
    x, y = graphgrad.tensor(xb), graphgrad.tensor(yb)
    eager_peak = peak_memory(mlp(graphgrad), (x, y))
    comp_peak = peak_memory(graphgrad.compile(mlp(graphgrad)), (x, y))
    print(f"\nMLP step peak memory (tracemalloc): eager {eager_peak / 1e6:.2f} MB, compiled "
          f"{comp_peak / 1e6:.2f} MB ({1 - comp_peak / eager_peak:.0%} less)")
    cold, warm = compile_times()
    print(f"MLP step first call (capture + passes + kernels): cold cache {cold}, warm {warm} s")


def run_idiom_cases(opts, reps, results, rng, v16, big, yb):
    x128 = rng.standard_normal((128, 784)).astype(np.float32)
    y128 = rng.integers(0, 10, 128)
    xc = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
    run_idiom("idiom: 100-op chain, 16 floats, compile(loss_fn) + backward()",
              loss_step(chain_loss), lambda m: (_leaf(m, v16),), reps * 20, results)
    run_idiom("idiom: GELU 2**22 f32, compile(loss_fn) + backward()", loss_step(gelu_loss),
              lambda m: (_leaf(m, big),), max(reps // 2, 3), results)
    run_idiom("idiom: MLP 784-512-256-10 SGD step, batch 128, compile(model)",
              model_step(_mlp_model), lambda m: (m.tensor(x128), m.tensor(y128)), reps * 2,
              results)
    run_idiom("idiom: CNN SGD step, batch 32 28x28, compile(model)", model_step(_cnn_model),
              lambda m: (m.tensor(xc), m.tensor(yb[:32])), reps * 2, results)
    run_idiom("idiom: seed example, fresh tensor per call, compile(loss_fn)", seed_idiom,
              lambda m: (), reps * 20, results)
    x, y = graphgrad.tensor(x128), graphgrad.tensor(y128)
    make = model_step(_mlp_model)
    (te, le), (tc, lc) = _peaks(make(graphgrad, None), (x, y)), _peaks(
        make(graphgrad, graphgrad.compile), (x, y))
    results["_memory"] = (te, tc, le, lc)


def _ratio(a, b):
    return statistics.median([x / y for x, y in zip(a, b)])


def _print(results):
    mem = results.pop("_memory", None)
    for name, row in results.items():
        print(f"\n{name}")
        rounds = row.pop("_rounds", None)
        base = row.get("torch eager")
        tc = row.get("torch.compile")
        for label, t in row.items():
            if isinstance(t, float) and not label.endswith(" s"):
                if rounds is not None:  # medians of the per-round ratios
                    extra = "".join(f"  {_ratio(rounds[label], rounds[ref]):6.3f}x {ref}"
                                    for ref in ("graphgrad eager", "torch eager",
                                                "torch.compile") if ref in rounds)
                else:
                    extra = f"  {t / base:6.3f}x torch eager" if base else ""
                    if isinstance(tc, float):
                        extra += f"  {t / tc:6.3f}x torch.compile"
                print(f"  {label:22s} {t * 1e6:12.1f} us{extra}")
            else:
                print(f"  {label:22s} {t}")
    if mem is not None:
        te, tc, le, lc = mem
        print(f"\nidiom MLP step (batch 128) peak memory: tracemalloc eager {te / 1e6:.2f} MB, "
              f"compile(model) {tc / 1e6:.2f} MB ({1 - tc / te:.0%} less); "
              f"graphgrad.memory.max_allocated eager {le / 1e6:.2f} MB, compile(model) "
              f"{lc / 1e6:.2f} MB ({1 - lc / le:.0%} less; counts tensors only)")


if __name__ == "__main__":
    main()
