"""Shared memory that is shared: ``share_memory_``/``is_shared``, tensors through
``graphgrad.multiprocessing`` (fork and spawn), Hogwild training, and no litter."""

from __future__ import annotations

import gc
import os
import pickle
import sys
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
import torch

import graphgrad
import graphgrad.multiprocessing as gmp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _mp_children as kids  # noqa: E402

METHODS = ["fork", "spawn"]


def _start(ctx, target, *args):
    p = ctx.Process(target=target, args=args)
    p.start()
    return p


def _join(p):
    p.join(60)
    assert p.exitcode == 0, p.exitcode


def _views_after_share(m):
    t = m.zeros(4)
    v = t[1:3]
    before = t.is_shared()
    t.share_memory_()
    t[1] = 5.0
    v.add_(1.0)
    return [before, t.is_shared(), v.is_shared(), t.tolist(), v.tolist(),
            v.data_ptr() - t.data_ptr(), t.untyped_storage().is_shared()]


def _storage_share(m):
    t = m.arange(4.0)
    v = t[2:]
    s = t.untyped_storage()
    r = s.share_memory_()  # through the storage: the tensors on it move with it
    t[3] = 9.0
    return [r is s, t.is_shared(), v.is_shared(), s.is_shared(), v.tolist(),
            t.untyped_storage().data_ptr() == s.data_ptr()]


def test_share_memory_moves_the_storage_and_keeps_views_as_torch():
    assert _views_after_share(graphgrad) == _views_after_share(torch)
    assert _storage_share(graphgrad) == _storage_share(torch)
    m = graphgrad.nn.Linear(3, 2)
    m(graphgrad.ones(1, 3)).sum().backward()
    assert m.share_memory() is m
    assert all(p.is_shared() and p.grad.is_shared() for p in m.parameters())


@pytest.mark.parametrize("method", METHODS)
def test_childs_inplace_add_is_seen_by_the_parent(method):
    ctx = gmp.get_context(method)
    t = graphgrad.zeros(3)
    view = t[1:]
    t.share_memory_()
    done = ctx.Event()
    _join(_start(ctx, kids.add_one, t, done))
    assert done.is_set()
    assert t.tolist() == [1.0, 1.0, 1.0] and view.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("method", METHODS)
def test_queue_sends_the_handle_not_a_copy(method):
    ctx = gmp.get_context(method)
    inbox, outbox, release = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = _start(ctx, kids.bounce, inbox, outbox, release)
    u = graphgrad.ones(2)  # not shared yet: sending moves it to shared memory, as torch
    inbox.put(u)
    back = outbox.get(timeout=60)
    release.set()
    _join(p)
    assert u.is_shared() and back.is_shared()
    assert u.tolist() == [10.0, 10.0]  # the child's mul_ wrote into the parent's tensor
    assert back.data_ptr() == u.data_ptr()  # mapped once per process


def _refusal(m):
    x = m.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as e:
        ForkingPickler.dumps(x)
    return str(e.value)


def test_pickling_rules_match_torch():
    assert _refusal(graphgrad) == _refusal(torch)

    def plain(m):
        t = m.arange(3.0)
        t.share_memory_()
        r = pickle.loads(pickle.dumps(t))  # plain pickle (and save) copies the values
        r.add_(1)
        return [t.tolist(), r.tolist(), r.is_shared()]
    assert plain(graphgrad) == plain(torch)
    p = graphgrad.nn.Parameter(graphgrad.ones(2))
    q = ForkingPickler.loads(ForkingPickler.dumps(p))
    assert type(q) is graphgrad.nn.Parameter and q.requires_grad and q.data_ptr() == p.data_ptr()


def _sequential_oracle(coefs, steps):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 1)
    w0 = [m.weight.detach().clone(), m.bias.detach().clone()]
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for c in coefs:
        c = torch.tensor(c)
        for _ in range(steps):
            opt.zero_grad()
            ((m.weight * c).sum() + m.bias.sum() * c.sum()).backward()
            opt.step()
    return [w0[0] - m.weight.detach(), w0[1] - m.bias.detach()]


def test_two_process_sgd_updates_are_all_seen_by_the_parent():
    ctx = gmp.get_context("fork")  # spawn: the lock-free test below
    coefs = [[1.0, 2.0, 3.0], [-0.5, 4.0, 0.25]]
    model = graphgrad.nn.Linear(3, 1)
    w0 = [model.weight.detach().clone(), model.bias.detach().clone()]
    model.share_memory()
    lock = ctx.Lock()
    procs = [_start(ctx, kids.sgd_steps, model, c, 5, lock) for c in coefs]
    for p in procs:
        _join(p)
    moved = [(w0[0] - model.weight.detach()).numpy(), (w0[1] - model.bias.detach()).numpy()]
    both = _sequential_oracle(coefs, 5)  # the displacement does not depend on w0 here
    one = _sequential_oracle(coefs[:1], 5)
    for got, want, single in zip(moved, both, one):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)
        assert not np.allclose(got, single.numpy(), atol=1e-3)  # both processes counted


def test_lock_free_hogwild_trains_the_parents_model():
    graphgrad.manual_seed(1)
    model = graphgrad.nn.Linear(4, 1)
    single = graphgrad.nn.Linear(4, 1)
    single.load_state_dict(model.state_dict())
    model.share_memory()
    ctx = gmp.spawn(kids.hogwild_rank, args=(model, 7, 30), nprocs=2, join=False)
    kids.hogwild(single, 7, 30)  # one process's share of the work
    assert ctx.join(60)
    graphgrad.manual_seed(7)
    x = graphgrad.randn(64, 4)
    y = x @ graphgrad.tensor([[1.0], [-2.0], [3.0], [0.5]])
    with graphgrad.no_grad():
        both = graphgrad.nn.functional.mse_loss(model(x), y).item()
        one = graphgrad.nn.functional.mse_loss(single(x), y).item()
    assert both < one  # two processes' steps landed on one set of parameters


def _fds():
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux's /proc")
def test_segments_are_released_and_nothing_is_left_in_dev_shm():
    gc.collect()
    base = _fds()
    t = graphgrad.zeros(1000)
    t.share_memory_()
    views = [t[i::3] for i in range(3)]
    assert _fds() == base + 1  # one descriptor per shared storage, not per view
    ctx = gmp.get_context("spawn")
    done = ctx.Event()
    _join(_start(ctx, kids.add_one, views[1], done))
    assert t[1].item() == 1.0 and t[0].item() == 0.0
    del t, views
    gc.collect()
    assert _fds() == base
    if os.path.isdir("/dev/shm"):  # anonymous memory files: never a name to leave behind
        assert not [f for f in os.listdir("/dev/shm") if "graphgrad" in f]


def _sender_exits_first(lib, mpmod):
    ctx = mpmod.get_context("fork")
    q = ctx.Queue()
    _join(_start(ctx, kids.put_and_exit, lib, q))
    with pytest.raises(OSError) as e:
        q.get(timeout=30)
    return e


def test_a_sender_that_exits_before_the_take_fails_as_torch():
    import torch.multiprocessing as tmp

    ours, theirs = _sender_exits_first("graphgrad", gmp), _sender_exits_first("torch", tmp)
    # Python's resource sharer fails the same way for both: ConnectionRefusedError, or
    # FileNotFoundError when the sender's temporary directory (its socket's) went with it.
    gone = (ConnectionRefusedError, FileNotFoundError)
    assert isinstance(ours.value, gone) and isinstance(theirs.value, gone)
    assert "keep the sender alive" in str(ours.value)
