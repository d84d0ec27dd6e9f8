"""Gradient all-reduce of a 100 MB model on 2 ranks: DistributedDataParallel's bucketed,
hook-driven averaging against mpi4py's raw ``Allreduce`` on one buffer of the same size.

    python bench/bench_distributed.py            # launches itself on 2 ranks

DDP's time covers what a backward's hooks do: copying each gradient (divided by the world size)
into its bucket, the non-blocking all-reduces, the final wait and, by default, the copy back
into each ``.grad`` (``gradient_as_bucket_view=True`` skips that copy). Medians of 9 rounds.
"""

import os
import subprocess
import sys
import time

import numpy as np


def main():
    from mpi4py import MPI

    import graphgrad as torch
    import graphgrad.distributed as dist
    from graphgrad.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    # 6 x (2048 x 2048 + 2048) float32 parameters: 100.7 MB of gradients.
    model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(6)])
    params = list(model.parameters())
    nbytes = sum(p._data.nbytes for p in params)
    rng = np.random.default_rng(rank)
    grads = [rng.standard_normal(p.shape).astype(np.float32) for p in params]

    def median(fn, rounds=9, setup=None):
        times = []
        for _ in range(rounds):
            if setup is not None:
                setup()
            MPI.COMM_WORLD.Barrier()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    def best(fn, rounds=99):
        # The fingerprint's own cost: the fastest round (a slower one waited for the other
        # rank, which a step pays at its all-reduce anyway).
        times = []
        for _ in range(rounds):
            MPI.COMM_WORLD.Barrier()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    flat = np.concatenate([g.ravel() for g in grads])

    def raw():
        MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, flat)

    results = {"raw mpi4py Allreduce": median(raw)}
    for as_view in (False, True):
        ddp = DDP(model, gradient_as_bucket_view=as_view)

        def fresh_grads():
            # As backward leaves them (outside the timing): each .grad its own array.
            for p, g in zip(params, grads):
                p._grad = torch.tensor(g)

        def sync(ddp=ddp):
            # What backward's post-accumulate-grad hooks do, in backward's order.
            ddp._reset_iteration(True)
            for p in reversed(params):
                ddp._grad_ready(p)

        results[f"DDP (gradient_as_bucket_view={as_view})"] = median(sync, setup=fresh_grads)
        for h in ddp._handles:
            h.remove()
    # The graph fingerprint (Note [DDP fingerprint]) against the training step that pays it:
    # forward, backward and the averaging of a batch of 32 through the same model.
    from graphgrad.distributed import fingerprint

    ddp = DDP(model, gradient_as_bucket_view=True)
    x = torch.randn(32, 2048)

    def step():
        model.zero_grad()
        ddp(x).sum().backward()

    out = ddp(x)

    def check():
        fingerprint.check(ddp._impl, [out], ddp._name_of, 1)

    step_t, check_t = median(step), best(check)
    for h in ddp._handles:
        h.remove()
    # A small model, where the fingerprint weighs most: 5 layers of 16 units, batch 8.
    small = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 4))
    sddp, sx = DDP(small), torch.randn(8, 10)

    def small_step():
        small.zero_grad()
        sddp(sx).sum().backward()

    sout = sddp(sx)

    def small_check():
        fingerprint.check(sddp._impl, [sout], sddp._name_of, 1)

    small_t, small_check_t = median(small_step, rounds=99), best(small_check)
    if rank == 0:
        raw_t = results["raw mpi4py Allreduce"]
        print(f"{world} ranks, {nbytes / 1e6:.1f} MB of gradients, OMP_NUM_THREADS="
              f"{os.environ.get('OMP_NUM_THREADS')}")
        for name, t in results.items():
            print(f"  {name:40s} {t * 1e3:8.1f} ms  {nbytes / t / 1e9:6.2f} GB/s  "
                  f"overhead {100 * (t / raw_t - 1):+6.1f}%")
        print(f"  DDP training step (batch 32, 6 x Linear(2048, 2048)) {step_t * 1e3:8.1f} ms; "
              f"graph fingerprint (best of 99) {check_t * 1e6:.0f} us "
              f"({100 * check_t / step_t:.3f}%)")
        print(f"  DDP training step (batch 8, MLP 10-16-16-4) {small_t * 1e3:8.3f} ms; "
              f"graph fingerprint (best of 99) {small_check_t * 1e6:.0f} us "
              f"({100 * small_check_t / small_t:.1f}%)")
    dist.destroy_process_group()


if __name__ == "__main__":
    if "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_RANK" in os.environ:
        main()
    else:
        sys.exit(subprocess.call([sys.executable, "-m", "graphgrad.distributed.run", "-n", "2",
                                  os.path.abspath(__file__)]))
