"""The per-call cost of graphgrad.compile's Python-state guards (compiler/pyguards.py) and of
the replay lock (api.py, Note [Threads]), in one process, one thread.

For each program: the median time per call of the compiled function as it is, with its
Python-state guards switched off (``variant.guards.py = None``: what the replay cost before
the guards existed), with the forward runner's replay lock bypassed (``run_unlocked``), and
of the guard check alone; plus how many guards the capture made. Timings on a loaded machine
vary run to run; compare the columns of one run.
Run: ``python bench/bench_guards.py [--reps N]``.
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import graphgrad as gg  # noqa: E402

SHIFT = 10.0


def timeit(fn, reps, warmup=20):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def seed_step():
    """The seed example, whole step compiled (closure reads: opt, w, b)."""
    w = gg.tensor(3.0, requires_grad=True)
    b = gg.tensor(1.0, requires_grad=True)
    opt = gg.optim.SGD([w, b], lr=0.01)

    def step(x):
        opt.zero_grad()
        loss = (x * w + b - SHIFT) ** 2
        loss.backward()
        opt.step()
        return loss
    cf = gg.compile(step)
    x = gg.tensor(2.0)
    return cf, lambda: cf(x)


def seed_idiom():
    """The seed example in the PyTorch idiom: compile(loss_fn), backward and step outside."""
    w = gg.tensor(3.0, requires_grad=True)
    b = gg.tensor(1.0, requires_grad=True)
    opt = gg.optim.SGD([w, b], lr=0.01)

    def loss_fn(x):
        return (x * w + b - SHIFT) ** 2
    cf = gg.compile(loss_fn)

    def call():
        opt.zero_grad()
        cf(gg.tensor(2.0)).backward()
        opt.step()
    return cf, call


def mlp_model():
    """compile(model) of an MLP with Dropout (module attributes read in nn code)."""
    gg.manual_seed(0)
    m = gg.nn.Sequential(gg.nn.Linear(32, 64), gg.nn.ReLU(), gg.nn.Dropout(0.0),
                         gg.nn.Linear(64, 10))
    cm = gg.compile(m)
    x = gg.randn(8, 32)

    def call():
        with gg.no_grad():
            cm(x)
    return cm._compiled, call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3000)
    args = ap.parse_args()
    print(f"{'program':<16}{'guards':>7}{'as is':>10}{'no guards':>11}{'no lock':>10}"
          f"{'check':>9}{'guards':>8}{'lock':>7}")
    for make in (seed_step, seed_idiom, mlp_model):
        cf, call = make()
        call()
        call()
        v = next(v for v in cf.variants if v.runner is not None)
        py = v.guards.py
        n = len(py) if py is not None else 0
        with_g = timeit(call, args.reps)
        v.guards.py = None
        without = timeit(call, args.reps)
        v.guards.py = py
        locked = v.runner.run
        v.runner.run = v.runner.run_unlocked
        no_lock = timeit(call, args.reps)
        v.runner.run = locked
        check = timeit(py.check, args.reps) if py is not None else 0.0
        print(f"{make.__name__:<16}{n:>7}{with_g * 1e6:>8.2f}us{without * 1e6:>9.2f}us"
              f"{no_lock * 1e6:>8.2f}us{check * 1e6:>7.2f}us"
              f"{(with_g / without - 1) * 100:>7.1f}%{(with_g / no_lock - 1) * 100:>6.1f}%")
        if py is not None:
            for line in py.lines():
                print(f"    {line.split('  [')[0]}")


if __name__ == "__main__":
    main()
