"""A fixed workload for instruction counts of the always-on diagnostics, run under
``valgrind --tool=callgrind``: ``python bench/bench_diagnostics_callgrind.py {chain,mlp} N``.
The difference between two values of N cancels the import cost. See BENCHMARKS.md."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import graphgrad as torch  # noqa: E402


def chain(n: int) -> None:
    """A 100-op chain on 16 floats, forward and backward, ``n`` times."""
    x = torch.randn(16, requires_grad=True)
    for _ in range(n):
        y = x
        for i in range(100):
            y = y * 1.0001 + 0.0001 if i % 2 else y.tanh()
        y.sum().backward()


def mlp(n: int) -> None:
    """A 3-layer MLP SGD step with loss.item() logging, ``n`` times."""
    torch.manual_seed(0)
    nn = torch.nn
    m = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                      nn.Linear(32, 4))
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    x, y = torch.randn(8, 32), torch.randint(0, 4, (8,))
    for _ in range(n):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        loss.item()


if __name__ == "__main__":
    {"chain": chain, "mlp": mlp}[sys.argv[1]](int(sys.argv[2]))
