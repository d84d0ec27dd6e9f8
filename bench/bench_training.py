"""Training-step benchmarks: graphgrad against torch eager with nn layers and optim, one process.

A full step (zero_grad, forward, cross entropy, backward, SGD step) for an MLP 784-512-256-10
(batch 128), an MNIST-size CNN (batch 32 of 1x28x28) and an LSTM (input 40, hidden 128, 50
steps, batch 32) with a Linear head, plus the CNN's conv layers alone (forward + backward). Both
frameworks start from the same weights and see the same batch. Prints medians and the ratio
graphgrad / torch (lower is better: the median of ratios of alternating samples) against the
targets. BLAS is held to one thread for both.
Run: ``python bench/bench_training.py [--quick] [--profile mlp|cnn|conv|lstm]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import graphgrad  # noqa: E402

torch.set_num_threads(1)


def _one_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1)


def mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def cnn(m):
    nn = m.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def lstm(m):
    class LSTMClassifier(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = m.nn.LSTM(40, 128)
            self.head = m.nn.Linear(128, 10)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[-1])

    return LSTMClassifier()


# name: (model builder, input shape, batch size, target ratio)
BENCHMARKS = {
    "mlp": (mlp, (128, 784), 128, 1.1),
    "cnn": (cnn, (32, 1, 28, 28), 32, 1.5),
    "lstm": (lstm, (50, 32, 40), 32, 1.5),
}
TITLES = {"mlp": "MLP 784-512-256-10 step, b=128",
          "cnn": "CNN step, b=32 of 1x28x28",
          "conv": "CNN conv layers fwd+bwd",
          "lstm": "LSTM 40->128, T=50, b=32 + head step"}


def _models(name):
    """The torch model and its graphgrad twin, holding the same weights."""
    build = BENCHMARKS[name][0]
    torch.manual_seed(0)
    t_model = build(torch)
    g_model = build(graphgrad)
    g_model.load_state_dict({k: graphgrad.tensor(v.detach().numpy())
                             for k, v in t_model.state_dict().items()})
    return {torch: t_model, graphgrad: g_model}


def make_step(name):
    """For each framework, one training step on a fixed batch with ``optim.SGD``."""
    _, shape, batch, _ = BENCHMARKS[name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.integers(0, 10, batch)
    steps = {}
    for m, model in _models(name).items():
        xt, yt = m.tensor(x), m.tensor(y)
        opt = m.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        F = m.nn.functional

        def step(model=model, opt=opt, xt=xt, yt=yt, F=F):
            opt.zero_grad()
            loss = F.cross_entropy(model(xt), yt)
            loss.backward()
            opt.step()
        steps[m] = step
    return steps


def make_conv():
    """The CNN's two conv layers on their real input sizes, forward + backward."""
    rng = np.random.default_rng(1)
    x1 = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
    x2 = rng.standard_normal((32, 16, 14, 14)).astype(np.float32)
    runs = {}
    for m, model in _models("cnn").items():
        c1, c2 = model[0], model[3]
        a1, a2 = m.tensor(x1), m.tensor(x2, requires_grad=True)

        def run(c1=c1, c2=c2, a1=a1, a2=a2):
            (c1(a1).sum() + c2(a2).sum()).backward()
            c1.weight.grad = c1.bias.grad = c2.weight.grad = c2.bias.grad = a2.grad = None
        runs[m] = run
    return runs


def _sample(fn, number):
    t = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t) / number


def compare(name, fns, target, repeat, number):
    # Samples alternate between the two frameworks and the ratio is the median of the per-pair
    # ratios: a neighbour's burst of load then hits one pair, not a whole framework's figure.
    for m in (graphgrad, torch):
        fns[m]()
    samples = {graphgrad: [], torch: []}
    ratios = []
    for _ in range(repeat):
        for m in (graphgrad, torch):
            samples[m].append(_sample(fns[m], number))
        ratios.append(samples[graphgrad][-1] / samples[torch][-1])
    g, t = statistics.median(samples[graphgrad]), statistics.median(samples[torch])
    ratio = statistics.median(ratios)
    verdict = "met" if ratio <= target else "MISSED"
    print(f"{TITLES[name]:<38} graphgrad {g * 1e3:8.2f} ms   torch {t * 1e3:8.2f} ms   "
          f"ratio {ratio:5.2f}   target <= {target} {verdict}", flush=True)
    return ratio


def profile(name, number=20):
    import cProfile
    import pstats

    fn = (make_conv() if name == "conv" else make_step(name))[graphgrad]
    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(number):
        fn()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--profile", choices=("mlp", "cnn", "conv", "lstm"),
                    help="cProfile graphgrad's step instead of benchmarking")
    args = ap.parse_args()
    with _one_thread():
        if args.profile:
            profile(args.profile)
            return
        r = 5 if args.quick else 15
        compare("mlp", make_step("mlp"), 1.1, r, 10)
        compare("cnn", make_step("cnn"), 1.5, r, 5)
        compare("conv", make_conv(), 1.5, r, 5)
        compare("lstm", make_step("lstm"), 1.5, r, 3)


if __name__ == "__main__":
    main()
