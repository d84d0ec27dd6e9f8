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
    opts = ap.parse_args()
    reps = 5 if opts.quick else 30
    warnings.simplefilter("ignore")
    results = {}
    rng = np.random.default_rng(0)
    v16 = rng.standard_normal(16).astype(np.float32)
    big = rng.standard_normal(1 << 22).astype(np.float32)
    xb = rng.standard_normal((64, 784)).astype(np.float32)
    yb = rng.integers(0, 10, 64)
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
    for name, row in results.items():
        print(f"\n{name}")
        base = row.get("torch eager")
        tc = row.get("torch.compile")
        for label, t in row.items():
            if isinstance(t, float) and not label.endswith(" s"):
                extra = f"  {t / base:6.3f}x torch eager" if base else ""
                if isinstance(tc, float):
                    extra += f"  {t / tc:6.3f}x torch.compile"
                print(f"  {label:22s} {t * 1e6:12.1f} us{extra}")
            else:
                print(f"  {label:22s} {t}")
    x, y = graphgrad.tensor(xb), graphgrad.tensor(yb)
    eager_peak = peak_memory(mlp(graphgrad), (x, y))
    comp_peak = peak_memory(graphgrad.compile(mlp(graphgrad)), (x, y))
    print(f"\nMLP step peak memory (tracemalloc): eager {eager_peak / 1e6:.2f} MB, compiled "
          f"{comp_peak / 1e6:.2f} MB ({1 - comp_peak / eager_peak:.0%} less)")
    cold, warm = compile_times()
    print(f"MLP step first call (capture + passes + kernels): cold cache {cold}, warm {warm} s")


if __name__ == "__main__":
    main()
