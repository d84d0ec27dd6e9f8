"""The launcher: ``python -m graphgrad.distributed.run -n 4 train.py ARGS`` (or ``-m module``)
starts 4 ranks with ``mpiexec``: the MPICH wheel's in this environment's bin, else the one on
PATH (Open MPI gets its run-as-root and oversubscribe flags). When a rank fails, it names the
rank and its error; the exit status is nonzero. SIGTERM or SIGINT to the launcher ends mpiexec
and every rank it started within a few seconds (as torchrun does), and the launcher exits with
128 + the signal's number.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

__all__ = ["find_mpiexec", "mpiexec_command", "main"]

# How long mpiexec gets to end its ranks after SIGTERM before everything is SIGKILLed.
_STOP_GRACE = 2.0


def find_mpiexec() -> str:
    """``$GRAPHGRAD_MPIEXEC``, else ``mpiexec`` next to this Python (the mpich wheel in a venv),
    else in ``sys.prefix``'s bin, else on PATH."""
    env = os.environ.get("GRAPHGRAD_MPIEXEC")
    if env:
        return env
    for d in (os.path.dirname(sys.executable), os.path.join(sys.prefix, "bin")):
        path = os.path.join(d, "mpiexec")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    path = shutil.which("mpiexec") or shutil.which("mpirun")
    if path is None:
        raise FileNotFoundError("no mpiexec found next to this Python or on PATH: "
                                "pip install 'graphgrad[distributed]' (mpi4py and mpich)")
    return path


def _flavour(mpiexec: str) -> str:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=30).stdout.lower()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if "open mpi" in out or "open-mpi" in out or "openrte" in out:
        return "openmpi"
    return "mpich" if "hydra" in out or "mpich" in out else "unknown"


def mpiexec_command(nproc: int, program: list[str], mpiexec: str | None = None) -> list[str]:
    """The mpiexec command line that starts ``nproc`` ranks of ``program`` (a script and its
    arguments, or ``["-m", module, ...]``) under graphgrad's worker wrapper."""
    mpiexec = mpiexec or find_mpiexec()
    cmd = [mpiexec]
    if _flavour(mpiexec) == "openmpi":
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        if nproc > (os.cpu_count() or 1):
            cmd.append("--oversubscribe")
    return cmd + ["-n", str(nproc), sys.executable, "-m", "graphgrad.distributed._worker",
                  *program]


def _pump(src, dst, seen):
    for line in iter(src.readline, ""):
        dst.write(line)
        dst.flush()
        seen.append(line)
    src.close()


def _watch_deaths(run_dir: str, done: threading.Event, deaths: dict) -> None:
    """Polls the ranks' pids (the workers write them to ``pid.<rank>``) and records when each
    disappears: when MPICH kills the survivors after one rank died, its report lists them all
    alike, and only the order of disappearance tells which one died first."""
    pids: dict[int, int] = {}
    while not done.wait(0.001):
        for path in glob.glob(os.path.join(run_dir, "pid.*")):
            rank = int(path.rsplit(".", 1)[1])
            if rank not in pids:
                try:
                    with open(path) as f:
                        pids[rank] = int(f.read().strip())
                except (OSError, ValueError):
                    continue
        for rank, pid in pids.items():
            if rank not in deaths and not _alive(pid):
                deaths[rank] = time.monotonic()


def _first_death(deaths: dict):
    """The rank seen to disappear strictly first, or None when it is not clear."""
    if not deaths:
        return None
    order = sorted(deaths.items(), key=lambda kv: kv[1])
    if len(order) > 1 and order[1][1] - order[0][1] < 0.002:
        return None
    return order[0][0]


def _alive(pid: int) -> bool:
    """False once the process has started to exit: gone, a zombie, or flagged PF_EXITING
    (set first thing in the kernel's do_exit, so a killed rank shows it before the ranks
    that notice its closed sockets and exit after it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    state, flags = fields[0], int(fields[6])
    return state not in "ZX" and not flags & 0x4


def _error_records(run_dir: str) -> list[dict]:
    """The workers' error files (written atomically by _worker._fail), by rank."""
    errors = []
    for path in glob.glob(os.path.join(run_dir, "error.*.json")):
        with open(path) as f:
            errors.append(json.load(f))
    return sorted(errors, key=lambda e: e["rank"])


def _unforwarded(errors: list[dict], output: list[str]) -> list[str]:
    """The lines of the ranks' error reports that never reached the launcher: mpiexec kills
    the survivors of an abort without forwarding what they wrote last."""
    seen = {line.rstrip("\n") for line in output}
    return [line for e in errors for line in e.get("report", []) if line not in seen]


def _summary(run_dir: str, output: list[str], deaths: dict | None = None) -> str | None:
    """Which rank failed first and why, from the workers' error files or, for a rank that
    died, the launcher's report of its pid."""
    errors = _error_records(run_dir)
    own = sorted((e for e in errors if not e["peer"]), key=lambda e: e["time"])
    if own:
        first = own[0]
        stopped = sorted(e["rank"] for e in errors if e["peer"])
        tail = f"; ranks {stopped} stopped with its error" if stopped else ""
        return f"rank {first['rank']} failed: {first['error']}{tail}"
    pids = {}
    for path in glob.glob(os.path.join(run_dir, "pid.*")):
        with open(path) as f:
            pids[int(f.read().strip() or -1)] = int(path.rsplit(".", 1)[1])
    text = "".join(output)
    reported = [(int(m.group(1)), int(m.group(2))) for m in
                re.finditer(r"PID (\d+) RUNNING AT .*?EXIT CODE: (\d+)", text, re.S)
                if int(m.group(1)) in pids]
    by_rank = {rank: pid for pid, rank in pids.items()}
    # a rank that reported a peer's failure was stopped by it, whenever it disappeared
    peers = {e["rank"] for e in errors if e["peer"]}
    first = _first_death({r: t for r, t in (deaths or {}).items() if r not in peers})
    if first is not None and first in by_rank and by_rank[first] not in dict(reported):
        # MPICH's report can name a rank it stopped rather than the one that died first
        return (f"rank {first} (pid {by_rank[first]}) died first; the other ranks were "
                f"stopped")
    reported.sort(key=lambda r: pids[r[0]] in peers)
    for pid, code in reported[:1]:
        how = f"killed by signal {code}" if code in (9, 15, 6, 11) else f"exit code {code}"
        return f"rank {pids[pid]} (pid {pid}) died ({how}); the other ranks were stopped"
    m = re.search(r"MPI_Abort\(MPI_COMM_WORLD, (\d+)\) - process (\d+)", text)
    if m:
        return f"rank {m.group(2)} called MPI_Abort with code {m.group(1)}"
    return None


class _Stop(BaseException):
    """Raised by the launcher's signal handler to leave its wait."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _rank_pids(run_dir: str) -> list[int]:
    pids = []
    for path in glob.glob(os.path.join(run_dir, "pid.*")):
        try:
            with open(path) as f:
                pids.append(int(f.read().strip()))
        except (OSError, ValueError):
            continue
    return pids


def _signal(pid_or_group, sig, group=False) -> None:
    try:
        (os.killpg if group else os.kill)(pid_or_group, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_job(proc, run_dir: str) -> None:
    """Ends mpiexec and every rank: SIGTERM first (the ranks' handlers and mpiexec's cleanup
    run), SIGKILL for whatever is left after a short grace. mpiexec leads its own process
    group, so its proxies and ranks are reached even if its own cleanup does not happen."""
    ranks = _rank_pids(run_dir)
    _signal(proc.pid, signal.SIGTERM, group=True)
    for pid in ranks:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + _STOP_GRACE
    while time.monotonic() < deadline:
        if proc.poll() is not None and not any(_alive(p) for p in ranks):
            break
        time.sleep(0.05)
    _signal(proc.pid, signal.SIGKILL, group=True)
    for pid in _rank_pids(run_dir):  # a rank may have written its pid file meanwhile
        if _alive(pid):
            _signal(pid, signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def launch(nproc: int, program: list[str], mpiexec: str | None = None, env=None) -> int:
    """Runs ``program`` on ``nproc`` ranks; returns the job's exit status."""
    env = dict(os.environ if env is None else env)
    if nproc > 1 and "OMP_NUM_THREADS" not in env:
        # As torchrun does: ranks sharing a machine should not each start a BLAS thread pool.
        env["OMP_NUM_THREADS"] = "1"
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    cmd = mpiexec_command(nproc, program, mpiexec)
    with tempfile.TemporaryDirectory(prefix="graphgrad-run-") as run_dir:
        env["GRAPHGRAD_RUN_DIR"] = run_dir
        # Its own session: a terminal's Ctrl-C reaches the launcher alone, which then stops
        # the job in order, and the whole job can be signalled as one process group.
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, bufsize=1, start_new_session=True)
        seen: list[str] = []
        pumps = [threading.Thread(target=_pump, args=(proc.stdout, sys.stdout, seen)),
                 threading.Thread(target=_pump, args=(proc.stderr, sys.stderr, seen))]
        done, deaths = threading.Event(), {}
        watcher = threading.Thread(target=_watch_deaths, args=(run_dir, done, deaths),
                                   daemon=True)
        for t in (*pumps, watcher):
            t.start()
        stopped = None
        old = _catch_stop_signals()
        try:
            try:
                rc = proc.wait()
            except (_Stop, KeyboardInterrupt) as e:
                stopped = e.signum if isinstance(e, _Stop) else signal.SIGINT
                _restore(old)  # a second signal while stopping is not a second stop
                _stop_job(proc, run_dir)
                rc = 128 + stopped
        finally:
            _restore(old)
        done.set()
        for t in (*pumps, watcher):
            t.join()
        if stopped is not None:
            sys.stderr.write(f"graphgrad.distributed.run: received "
                             f"{signal.Signals(stopped).name}; stopped mpiexec and its "
                             f"{nproc} rank{'s' if nproc > 1 else ''}\n")
            sys.stderr.flush()
        elif rc != 0:
            missing = _unforwarded(_error_records(run_dir), seen)
            why = _summary(run_dir, seen, deaths) or f"mpiexec exited with status {rc}"
            sys.stderr.write("".join(f"{line}\n" for line in missing))
            sys.stderr.write(f"graphgrad.distributed.run: {why}\n")
            sys.stderr.flush()
    return rc


def _catch_stop_signals():
    """Handlers that turn SIGTERM/SIGINT into _Stop (only the main thread may set them)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise _Stop(signum)
    return {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}


def _restore(old) -> None:
    if old:
        for s, h in old.items():
            signal.signal(s, h)
        old.clear()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graphgrad.distributed.run",
        description="Start N ranks of a training script on MPI.")
    parser.add_argument("-n", "--nproc", "--nproc-per-node", "--nproc_per_node", type=int,
                        default=1, dest="nproc", help="number of ranks (default 1)")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the program as a module, as python -m does")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to use")
    parser.add_argument("program", help="the script (or module with -m)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")
    a = parser.parse_args(argv)
    if a.nproc < 1:
        parser.error("-n must be at least 1")
    program = (["-m", a.program] if a.module else [a.program]) + a.args
    return launch(a.nproc, program, a.mpiexec)


if __name__ == "__main__":
    sys.exit(main())
