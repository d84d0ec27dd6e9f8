"""Runs on every rank under the launcher (``run -n N _fingerprint_rank.py OUTDIR``): DDP's graph
fingerprint on a rank-dependent branch, a parameter unused on one rank, a divergence on a later
step, ops that differ while the parameters agree, a parameter unused everywhere, and
find_unused_parameters' "marked ready twice". Each scenario writes the error it saw (and
timings) to OUTDIR/<name>.r<rank>.npz."""

import os
import sys
import time

import numpy as np


def main(out):
    import graphgrad as torch
    import graphgrad.distributed as dist
    from graphgrad.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    rank = dist.get_rank()

    def save(name, **arrays):
        np.savez(os.path.join(out, f"{name}.r{rank}.npz"), **arrays)

    class Branchy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(3, 2)
            self.b = torch.nn.Linear(3, 2)
            self.mode = "branch"

        def forward(self, x):
            if self.mode == "branch":
                if dist.get_rank() == 0:
                    out = self.a(x)  # BRANCH-A
                else:
                    out = self.b(x)  # BRANCH-B
                return out
            if self.mode == "skip_b" and dist.get_rank() == 1:
                return self.a(x)  # SKIP-B
            if self.mode == "activation":
                h = self.a(x)
                h = torch.relu(h) if dist.get_rank() == 0 else torch.tanh(h)
                return h + self.b(x)
            if self.mode == "only_a":
                return self.a(x)
            return self.a(x) + self.b(x)

    def attempt(net, x, backward=True):
        t0 = time.monotonic()
        try:
            y = net(x)
            if backward:
                y.sum().backward()
            return "", time.monotonic() - t0
        except RuntimeError as e:
            return str(e), time.monotonic() - t0

    x = torch.full((2, 3), float(rank + 1))
    torch.manual_seed(0)
    model = Branchy()
    net = DDP(model)
    msg, took = attempt(net, x)
    # The group stays usable: the same model then trains with both heads on every rank.
    model.mode = "both"
    model.zero_grad()
    after, _ = attempt(net, x)
    save("branch", error=np.array(msg), seconds=np.array(took), after=np.array(after),
         grad=model.a.weight.grad.numpy())

    model.mode = "skip_b"
    msg, took = attempt(net, x)
    save("skip", error=np.array(msg), seconds=np.array(took))

    # Ops differ (relu against tanh) while every rank uses the same parameters: allowed.
    model.mode = "activation"
    model.zero_grad()
    msg, _ = attempt(net, x)
    save("activation", error=np.array(msg), grad=model.b.weight.grad.numpy())

    # b unused on every rank: the next forward raises torch's error, with why_no_grad's cut.
    model.mode = "only_a"
    model.zero_grad()
    attempt(net, x)
    msg, _ = attempt(net, x, backward=False)
    save("unused_everywhere", error=np.array(msg))

    # find_unused_parameters marks b unused (the output does not reach it); the loss then uses
    # b.weight outside the forward: torch's "marked as ready twice", naming it.
    torch.manual_seed(0)
    model = Branchy()
    model.mode = "only_a"
    loose = DDP(model, find_unused_parameters=True)
    try:
        (loose(x).sum() + model.b.weight.sum()).backward()
        msg = ""
    except RuntimeError as e:
        msg = str(e)
    save("marked_twice", error=np.array(msg))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
