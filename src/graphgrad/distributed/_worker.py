"""One rank under the launcher: runs the user's script (or ``-m module``) as ``__main__``; on
an uncaught exception it reports the error, tells the other ranks and ends the job
(Note [Failure notices] in _backend.py). Run by ``graphgrad.distributed.run``, not by hand.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import time
import traceback

from ._backend import PeerFailureError, abort, import_mpi, launched_world, notify_failure


def _run_dir_file(name):
    run_dir = os.environ.get("GRAPHGRAD_RUN_DIR")
    return os.path.join(run_dir, name) if run_dir else None


def _fail(rank, exc, code=1):
    peer = isinstance(exc, PeerFailureError)
    summary = (f"{type(exc).__name__}: {exc}" if not isinstance(exc, SystemExit)
               else f"exited with code {exc.code}")
    text = "" if peer else traceback.format_exc()
    lines = [f"[rank {rank}] {line}" for line in text.rstrip().splitlines()]
    lines.append(f"[rank {rank}] " + (f"stopped: {exc}" if peer else f"failed: {summary}"))
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    path = _run_dir_file(f"error.{rank}.json")
    if path:
        # The report goes in the file too: when one rank aborts the job, mpiexec can kill the
        # others before it has forwarded what they just wrote, and the launcher echoes it.
        record = {"rank": rank, "error": summary, "peer": peer, "time": time.time(),
                  "failed_rank": getattr(exc, "failed_rank", rank), "report": lines}
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.replace(path + ".tmp", path)  # the launcher never reads half a record
    notify_failure(summary, unresponsive=getattr(exc, "missing_ranks", ()))
    abort(code)


def main() -> None:
    rank, size = launched_world() or (0, 1)
    if size > 1:
        # MPI_Init waits for every rank (the launcher's rendezvous) and cannot time out: do it
        # now, as every rank starts, so that a rank that is slow to reach
        # init_process_group makes the others' init_process_group(timeout=...) expire
        # instead of hanging them in MPI_Init.
        try:
            import_mpi()
        except ImportError:
            pass  # init_process_group will say what to install
    path = _run_dir_file(f"pid.{rank}")
    if path:
        with open(path, "w") as f:
            f.write(str(os.getpid()))
    args = sys.argv[1:]
    try:
        if args and args[0] == "-m":
            sys.argv = args[1:]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = args
            sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            _fail(rank, e, e.code if isinstance(e.code, int) else 1)
    except BaseException as e:  # noqa: BLE001 - any failure must end the whole job
        _fail(rank, e)


if __name__ == "__main__":
    main()
