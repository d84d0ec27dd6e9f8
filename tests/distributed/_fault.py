"""A rank script for the fault tests: rank 1 raises, dies or exits while the others sit in
collectives (or compute); see test_faults.py."""

import os
import signal
import sys
import time

import graphgrad as torch
import graphgrad.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi")
rank = dist.get_rank()
t = torch.ones(1000)
dist.all_reduce(t)
if rank == 1:
    time.sleep(0.3)
    if mode == "raise":
        raise ValueError("boom on purpose")
    if mode == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "exit":
        sys.exit(3)
if rank == 2 and mode == "raise":
    time.sleep(60)  # busy elsewhere: ended by the abort, not left running
for _ in range(10**6):
    dist.all_reduce(t)
