"""Bodies of the child processes of test_shared_memory.py (importable by spawned children)."""

import os


def add_one(t, done):
    t.add_(1)
    done.set()


def bounce(inbox, outbox, release):
    t = inbox.get(timeout=60)
    t.mul_(10)
    outbox.put(t)  # back to the parent: the same memory, not a copy
    release.wait(60)  # the sender must outlive the receiver's take (file_descriptor strategy)


def report_fds(q):
    q.put(len(os.listdir("/proc/self/fd")))


def sgd_steps(model, coef, steps, lock):
    """Steps of SGD on the linear loss (w * coef).sum() + b * coef.sum(): the gradient is
    constant, so the final parameters do not depend on how two processes interleave."""
    import graphgrad as torch

    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    c = torch.tensor(coef)
    for _ in range(steps):
        with lock:  # the read-modify-write of an update is not atomic across processes
            opt.zero_grad()
            loss = (model.weight * c).sum() + model.bias.sum() * c.sum()
            loss.backward()
            opt.step()


def hogwild(model, seed, steps):
    """Lock-free SGD on a small regression, as PyTorch's mnist_hogwild example trains."""
    import graphgrad as torch

    torch.manual_seed(seed)
    x = torch.randn(64, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [3.0], [0.5]])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()


def hogwild_rank(rank, model, seed, steps):
    """``hogwild`` as an ``mp.spawn`` target (the rank comes first)."""
    hogwild(model, seed, steps)


def put_and_exit(lib, q):
    import importlib

    q.put(importlib.import_module(lib).ones(3))
