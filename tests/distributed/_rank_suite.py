"""Runs on every rank under the launcher (``run -n N _rank_suite.py OUTDIR``): collectives,
DDP trajectories, no_sync, unused parameters, pipelines and a checkpoint resume. Each scenario
writes what it saw to OUTDIR/<name>.r<rank>.npz; the tests compare it with references."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _models  # noqa: E402

import graphgrad as torch  # noqa: E402
import graphgrad.distributed as dist  # noqa: E402
from graphgrad.distributed.pipeline import (  # noqa: E402
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    split_sequential,  # noqa: E402
)
from graphgrad.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

OUT = sys.argv[1]
dist.init_process_group("mpi")
RANK, WORLD = dist.get_rank(), dist.get_world_size()


def save(name, **arrays):
    np.savez(os.path.join(OUT, f"{name}.r{RANK}.npz"), **arrays)


def state(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def collectives():
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    res = {}
    for op in ("SUM", "AVG", "MAX", "MIN", "PRODUCT"):
        t = torch.tensor(base + RANK)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        res[op] = t.numpy()
    t = torch.tensor(base + RANK).t()  # a non-contiguous view: reduced in place all the same
    dist.all_reduce(t)
    res["SUM_T"] = t.numpy()
    t = torch.full((4,), float(RANK))
    dist.broadcast(t, src=WORLD - 1)
    res["bcast"] = t.numpy()
    outs = [torch.zeros(3, dtype=torch.int64) for _ in range(WORLD)]
    dist.all_gather(outs, torch.tensor([RANK, RANK * 10, -RANK]))
    res["gather"] = np.stack([o.numpy() for o in outs])
    o = torch.zeros(2)
    dist.reduce_scatter(o, [torch.full((2,), float(RANK * 100 + i)) for i in range(WORLD)])
    res["reduce_scatter"] = o.numpy()
    w = dist.all_reduce(torch.ones(3), async_op=True)
    w.wait()
    res["async_done"] = np.array(w.is_completed())
    # A ring of messages: rank r sends r+1 copies of r to its right neighbour.
    right, left = (RANK + 1) % WORLD, (RANK - 1) % WORLD
    work = dist.isend(torch.full((RANK + 1,), float(RANK)), dst=right)
    got = torch.zeros(left + 1)
    res["recv_src"] = np.array(dist.recv(got, src=left))
    work.wait()
    res["recv"] = got.numpy()
    save("collectives", **res)


def mismatch():
    msgs = []
    try:
        dist.all_reduce(torch.zeros(2, 2 + RANK))
    except RuntimeError as e:
        msgs.append(str(e))
    try:
        if RANK == 0:
            dist.broadcast(torch.zeros(3), src=0)
        else:
            dist.all_reduce(torch.zeros(3))
    except RuntimeError as e:
        msgs.append(str(e))
    t = torch.ones(2)
    dist.all_reduce(t)  # the group still works after the errors
    save("mismatch", msgs=np.array(msgs), after=t.numpy())


def ddp(kind, opt_name):
    torch.manual_seed(RANK)  # different on each rank: DDP must broadcast rank 0's
    model = _models.MODELS[kind](torch)
    before = state(model)
    net = DDP(model, bucket_cap_mb=0.0005)  # several small buckets
    init = state(model)
    opt = _models.optimizer(torch, opt_name, net.parameters())
    x, y = _models.data(kind)
    n = _models.BATCH // WORLD
    xs, ys = torch.tensor(x[RANK * n:(RANK + 1) * n]), torch.tensor(y[RANK * n:(RANK + 1) * n])
    loss_fn = torch.nn.CrossEntropyLoss()
    traj = {}
    for step in range(_models.STEPS):
        opt.zero_grad()
        loss_fn(net(xs), ys).backward()
        opt.step()
        traj.update({f"{step}/{k}": v for k, v in state(model).items()})
    save(f"ddp_{kind}_{opt_name}", n_buckets=np.array(len(net._buckets)),
         **{f"init/{k}": v for k, v in init.items()},
         **{f"before/{k}": v for k, v in before.items()}, **traj)


def no_sync():
    torch.manual_seed(0)
    model = _models.mlp(torch)
    net = DDP(model)
    x, y = _models.data("mlp")
    n = _models.BATCH // WORLD
    loss_fn = torch.nn.CrossEntropyLoss()
    # Two half-shards: the first backward inside no_sync stays local.
    half = n // 2
    parts = [slice(RANK * n, RANK * n + half), slice(RANK * n + half, (RANK + 1) * n)]
    with net.no_sync():
        loss_fn(net(torch.tensor(x[parts[0]])), torch.tensor(y[parts[0]])).backward()
    local = {k: p.grad.numpy().copy() for k, p in model.named_parameters()}
    loss_fn(net(torch.tensor(x[parts[1]])), torch.tensor(y[parts[1]])).backward()
    save("no_sync", **{f"local/{k}": v for k, v in local.items()},
         **{f"synced/{k}": p.grad.numpy() for k, p in model.named_parameters()},
         **{f"init/{k}": v for k, v in state(model).items()})


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(3, 4)
        self.head_a = torch.nn.Linear(4, 2)
        self.head_b = torch.nn.Linear(4, 2)

    def forward(self, x, use_b):
        h = self.trunk(x)
        return self.head_b(h) if use_b else self.head_a(h)


def unused():
    torch.manual_seed(0)
    model = TwoHeads()
    net = DDP(model, find_unused_parameters=True)
    x = torch.full((2, 3), float(RANK + 1))
    # head_b is used on the last rank only; head_a on the others.
    net(x, use_b=RANK == WORLD - 1).sum().backward()
    grads = {k: (p.grad.numpy() if p.grad is not None else np.array(np.nan))
             for k, p in model.named_parameters()}
    # Then with head_b unused everywhere: its .grad stays None.
    model.zero_grad()
    net(x, use_b=False).sum().backward()
    b_none = np.array(model.head_b.weight.grad is None)
    strict = DDP(TwoHeads())
    strict(x, use_b=False).sum().backward()
    try:
        strict(x, use_b=False)
        msg = ""
    except RuntimeError as e:
        msg = str(e)
    save("unused", **{f"grad/{k}": v for k, v in grads.items()}, b_none=b_none,
         error=np.array(msg), **{f"init/{k}": v for k, v in state(model).items()})


def pipeline(num_stages, schedule):
    if RANK >= num_stages:
        return
    torch.manual_seed(0)
    full = _models.pipe_model(torch)
    init = state(full)
    parts = split_sequential(full, num_stages)
    kinds = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}
    stage = PipelineStage(parts[RANK], RANK, num_stages)
    sched = kinds[schedule](stage, n_microbatches=4, loss_fn=torch.nn.CrossEntropyLoss())
    opt = torch.optim.SGD(parts[RANK].parameters(), lr=0.1, momentum=0.9)
    x, y = _models.data("mlp", seed=1)
    mine = {id(m) for m in parts[RANK].children()}
    names = [n for n, c in full.named_children() if id(c) in mine]
    traj, losses = {}, []
    for step in range(_models.STEPS):
        opt.zero_grad()
        step_losses = []
        sched.step(*((torch.tensor(x),) if stage.is_first else ()),
                   target=torch.tensor(y) if stage.is_last else None, losses=step_losses)
        opt.step()
        if stage.is_last:
            losses.append(np.mean([float(v) for v in step_losses]))
        for k, v in state(full).items():
            if k.split(".")[0] in names:
                traj[f"{step}/{k}"] = v
    save(f"pipe{num_stages}_{schedule}", losses=np.array(losses),
         **{f"init/{k}": v for k, v in init.items()}, **traj)


def checkpoint():
    path = os.path.join(OUT, "ckpt")
    os.makedirs(path, exist_ok=True)
    x, y = _models.data("mlp", seed=2)
    n = _models.BATCH // WORLD
    xs, ys = torch.tensor(x[RANK * n:(RANK + 1) * n]), torch.tensor(y[RANK * n:(RANK + 1) * n])
    loss_fn = torch.nn.CrossEntropyLoss()

    def train(net, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            loss_fn(net(xs), ys).backward()
            opt.step()

    torch.manual_seed(0)
    model = _models.mlp(torch)
    net = DDP(model)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    train(net, opt, 2)
    if RANK == 0:  # only rank 0 writes
        torch.save({"model": net.module.state_dict(), "optim": opt.state_dict()},
                   os.path.join(path, "ckpt.pt"))
    dist.barrier()
    train(net, opt, 2)
    straight = state(model)
    # Resume on every rank from the file, in fresh objects with a different init.
    torch.manual_seed(100 + RANK)
    model2 = _models.mlp(torch)
    ckpt = torch.load(os.path.join(path, "ckpt.pt"))
    model2.load_state_dict(ckpt["model"])
    net2 = DDP(model2)
    opt2 = torch.optim.Adam(net2.parameters(), lr=0.01)
    opt2.load_state_dict(ckpt["optim"])
    train(net2, opt2, 2)
    save("checkpoint", files=np.array(sorted(os.listdir(path))),
         **{f"straight/{k}": v for k, v in straight.items()},
         **{f"resumed/{k}": v for k, v in state(model2).items()})


collectives()
mismatch()
for kind in ("mlp", "cnn"):
    for opt_name in ("sgd", "adam"):
        ddp(kind, opt_name)
no_sync()
unused()
stages = 2 if WORLD == 2 else 3
pipeline(stages, "gpipe")
pipeline(stages, "1f1b")
checkpoint()
dist.barrier()
dist.destroy_process_group()
