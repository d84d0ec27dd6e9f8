"""A rank script for the waiting tests (test_waiting.py): rank 1 hangs (before joining the
group, or before a collective) while the others wait with a 1 s timeout; or every rank
spins until the launcher is signalled."""

import os
import sys
import time
from datetime import timedelta

import graphgrad as torch
import graphgrad.distributed as dist

mode = sys.argv[1]
rank = int(os.environ.get("PMI_RANK", "0"))
if mode == "init" and rank == 1:
    time.sleep(60)  # never joins in time: the others' init_process_group times out
dist.init_process_group("mpi", timeout=timedelta(seconds=1))
if mode == "spin":
    with open(os.path.join(sys.argv[2], f"rank{rank}.pid"), "w") as f:
        f.write(str(os.getpid()))
    while True:
        time.sleep(0.05)
t = torch.ones(4)
dist.all_reduce(t)  # every rank joins this one
if rank == 1:
    time.sleep(60)  # hung in compute: the next all_reduce cannot complete
dist.all_reduce(t)
