"""The transport under ``graphgrad.distributed``: MPI through mpi4py (imported lazily), or, for a
world of one process started without a launcher, a local stand-in with the same calls.

Both expose non-blocking calls on contiguous NumPy arrays that return requests; ``wait`` polls
them and, on MPI, also polls for failure notices from other ranks (Note [Failure notices]) and
gives up after the process group's timeout (Note [Timeouts]).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

__all__ = ["MPIBackend", "SelfBackend", "PeerFailureError", "DistError", "DistBackendError",
           "DistTimeoutError", "launched_world", "import_mpi", "notify_failure",
           "DEFAULT_TIMEOUT"]

EXTRA_HINT = "pip install 'graphgrad[distributed]' (mpi4py and the mpich wheel)"

# Tags on the control communicator: failure notices and their acknowledgements, and the
# "who else is waiting?" question a timed-out rank asks, with its answers.
_FAIL, _ACK, _ASK, _ANSWER = 1, 2, 3, 4

# torch's default process-group timeout (torch.distributed.default_pg_timeout): 30 minutes.
DEFAULT_TIMEOUT = 1800.0
# How long a timed-out rank waits for the others to say what they are waiting in.
_ASK_GRACE = 1.0


class DistError(RuntimeError):
    """Base of the errors graphgrad.distributed raises (torch.distributed.DistError)."""


class DistBackendError(DistError):
    """An error from the transport (torch.distributed.DistBackendError)."""


class DistTimeoutError(DistBackendError):
    """A collective or message did not complete within the process group's timeout;
    ``missing_ranks`` are the ranks that were not waiting in it (Note [Timeouts])."""

    def __init__(self, message, missing_ranks=()):
        super().__init__(message)
        self.missing_ranks = list(missing_ranks)


class PeerFailureError(DistBackendError):
    """Another rank failed; ``failed_rank`` names it. Raised on every surviving rank that
    waits on a collective or a message (Note [Failure notices])."""

    def __init__(self, message, failed_rank):
        super().__init__(message)
        self.failed_rank = failed_rank


def launched_world():
    """(rank, size) from the environment an MPI launcher sets, or None without one."""
    for rank_key, size_key in (("PMI_RANK", "PMI_SIZE"),
                               ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                               ("PMIX_RANK", "PMIX_SIZE"),
                               ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE")):
        if rank_key in os.environ and size_key in os.environ:
            return int(os.environ[rank_key]), int(os.environ[size_key])
    return None


def import_mpi():
    """mpi4py's MPI module, or an ImportError that names the extra to install."""
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as e:  # RuntimeError: mpi4py without an MPI library
        raise ImportError(f"graphgrad.distributed needs mpi4py and an MPI library for more "
                          f"than one process: {EXTRA_HINT}. ({e})") from e
    return MPI


class _Done:
    """A request that completed when it was made (the local stand-in's)."""

    __slots__ = ()

    def Test(self):  # noqa: N802 - mpi4py's name
        return True

    def Wait(self):  # noqa: N802
        return None


DONE = _Done()


class SelfBackend:
    """A world of one process, without MPI: collectives are identities or copies."""

    rank = 0
    size = 1
    name = "self"
    timeout = DEFAULT_TIMEOUT  # nothing here ever waits
    seq = 0

    def allreduce(self, arr, op):
        return DONE

    def bcast(self, arr, root):
        return DONE

    def allgather(self, send, recv):
        recv.reshape(-1)[:] = send.reshape(-1)
        return DONE

    def reduce_scatter(self, send, recv, op):
        recv.reshape(-1)[:] = send.reshape(-1)
        return DONE

    def barrier(self):
        return DONE

    def send(self, arr, dst, tag, meta=False):
        raise ValueError(f"Invalid destination rank: {dst} (a world of one process has no "
                         "peer to send to)")

    def recv(self, arr, src, tag, meta=False):
        raise ValueError(f"Invalid source rank: {src} (a world of one process has no peer)")

    def probe_meta(self, src, tag):
        raise ValueError(f"Invalid source rank: {src} (a world of one process has no peer)")

    def wait(self, req, what="", timeout=None):
        return None

    def waitall(self, reqs, what="", timeout=None):
        return None

    def test(self, req):
        return True

    def free(self):
        pass


class MPIBackend:
    """Collectives and messages on duplicates of MPI_COMM_WORLD: one for collectives, one for
    point-to-point data, one for message headers, one for failure notices."""

    name = "mpi"

    def __init__(self, timeout=DEFAULT_TIMEOUT):
        MPI = import_mpi()
        self.MPI = MPI
        world = MPI.COMM_WORLD
        self.rank = world.Get_rank()
        self.size = world.Get_size()
        self.timeout = float(timeout)
        self.seq = 0  # public collectives started (distributed_c10d counts them)
        self.waiting = None  # (what, seq) while this rank waits, for a timed-out peer's ask
        # NOTE: more ranks than cores (4 ranks on 2 cores in CI) make a pure spin starve the
        # rank it waits for; yield the core between polls then.
        self.yield_cpu = self.size > (os.cpu_count() or 1)
        self.ops = {"sum": MPI.SUM, "product": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX,
                    "band": MPI.BAND, "bor": MPI.BOR, "bxor": MPI.BXOR,
                    "lor": MPI.LOR, "land": MPI.LAND}
        # Communicators made without blocking, so that a rank that never joins makes
        # init_process_group time out instead of hanging (no asking around until ctrl exists).
        self.comm = self.p2p = self.meta = self.ctrl = None
        self._ready = False
        dups = [world.Idup() for _ in range(4)]
        self.waitall([r for _, r in dups], "init_process_group")
        self.comm, self.p2p, self.meta, self.ctrl = (c for c, _ in dups)
        self._ready = True
        _state["backend"] = self

    # -- non-blocking calls on contiguous arrays -----------------------------------------
    def allreduce(self, arr, op):
        return self.comm.Iallreduce(self.MPI.IN_PLACE, arr, self.ops[op])

    def bcast(self, arr, root):
        return self.comm.Ibcast(arr, root=root)

    def allgather(self, send, recv):
        return self.comm.Iallgather(send, recv)

    def reduce_scatter(self, send, recv, op):
        return self.comm.Ireduce_scatter_block(send, recv, self.ops[op])

    def barrier(self):
        return self.comm.Ibarrier()

    def send(self, arr, dst, tag, meta=False):
        return (self.meta if meta else self.p2p).Isend(arr, dest=dst, tag=tag)

    def recv(self, arr, src, tag, meta=False):
        comm = self.meta if meta else self.p2p
        return comm.Irecv(arr, source=self.MPI.ANY_SOURCE if src is None else src, tag=tag)

    def probe_meta(self, src, tag):
        """Waits for a header from ``src`` (any rank when None); returns its source rank."""
        status = self.MPI.Status()
        source = self.MPI.ANY_SOURCE if src is None else src
        what = "recv" + ("" if src is None else f" from rank {src}")
        deadline = time.monotonic() + self.timeout
        self.waiting = (what, self.seq)
        try:
            while not self.meta.Iprobe(source=source, tag=tag, status=status):
                self._poll_failures(what)
                if time.monotonic() >= deadline:
                    self._timed_out(what, self.timeout)
                if self.yield_cpu:
                    os.sched_yield()
        finally:
            self.waiting = None
        return status.Get_source()

    # -- waiting ---------------------------------------------------------------------------
    def test(self, req):
        return req.Test()

    def wait(self, req, what="", timeout=None):
        """Completes ``req``, checking for failure notices every millisecond or so; raises
        DistTimeoutError after ``timeout`` seconds (the group's timeout when None)."""
        if req.Test():
            return
        limit = self.timeout if timeout is None else float(timeout)
        self._wait_until(req, what, time.monotonic() + limit, limit)

    def _wait_until(self, req, what, deadline, limit):
        test = req.Test
        if test():
            return
        clock = time.monotonic
        next_check = clock() + 0.001
        yield_cpu = self.yield_cpu
        self.waiting = (what, self.seq)
        try:
            while not test():
                if yield_cpu:
                    os.sched_yield()
                now = clock()
                if now >= next_check:
                    self._poll_failures(what)
                    if now >= deadline:
                        self._timed_out(what, limit)
                    next_check = now + 0.001
        finally:
            self.waiting = None

    def waitall(self, reqs, what="", timeout=None):
        # One deadline for the lot: each request gets what the earlier ones left.
        limit = self.timeout if timeout is None else float(timeout)
        deadline = time.monotonic() + limit
        for r in reqs:
            self._wait_until(r, what, deadline, limit)

    def _timed_out(self, what, limit):
        """Asks every other rank what it is waiting in, then raises DistTimeoutError naming
        the ranks that did not answer (Note [Timeouts])."""
        MPI = self.MPI
        seq = self.seq
        if not self._ready:
            raise DistTimeoutError(f"[rank {self.rank}] init_process_group timed out after "
                                   f"{limit:g} seconds: not all {self.size} ranks joined the "
                                   "process group")
        peers = [r for r in range(self.size) if r != self.rank]
        for r in peers:
            self.ctrl.isend((what, seq), dest=r, tag=_ASK)
        answers, deadline = {}, time.monotonic() + _ASK_GRACE
        while len(answers) < len(peers) and time.monotonic() < deadline:
            status = MPI.Status()
            if self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_ANSWER, status=status):
                answers[status.Get_source()] = self.ctrl.recv(source=status.Get_source(),
                                                              tag=_ANSWER)
            else:
                self._answer_asks()  # a peer timing out at the same time asks us too
                time.sleep(0.002)
        missing = [r for r in peers if answers.get(r) is None]
        elsewhere = [f"rank {r} was waiting in {a[0]} (collective #{a[1]})"
                     for r, a in sorted(answers.items()) if a is not None and a != (what, seq)]
        joined = sorted([self.rank] + [r for r, a in answers.items() if a == (what, seq)])
        detail = "; ".join(
            ([f"rank{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} did "
              f"not join it"] if missing else []) + elsewhere
            + [f"rank{'s' if len(joined) > 1 else ''} {', '.join(map(str, joined))} "
               f"{'were' if len(joined) > 1 else 'was'} waiting"])
        raise DistTimeoutError(f"[rank {self.rank}] {what} (collective #{seq} of the default "
                               f"process group) timed out after {limit:g} seconds: {detail}",
                               missing)

    def _answer_asks(self):
        MPI = self.MPI
        status = MPI.Status()
        while self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_ASK, status=status):
            src = status.Get_source()
            self.ctrl.recv(source=src, tag=_ASK)
            self.ctrl.isend(self.waiting, dest=src, tag=_ANSWER)

    def _poll_failures(self, what=""):
        if not self._ready:
            return
        MPI = self.MPI
        status = MPI.Status()
        if not self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_FAIL, status=status):
            if self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_ASK, status=status):
                self._answer_asks()
            return
        src = status.Get_source()
        notice = json.loads(self.ctrl.recv(source=src, tag=_FAIL))
        self.ctrl.isend(b"", dest=src, tag=_ACK)
        _state["peer_failed"] = True
        where = f" while waiting in {what}" if what else ""
        raise PeerFailureError(f"rank {notice['rank']} failed: {notice['error']} (rank "
                               f"{self.rank} stopped{where})", notice["rank"])

    def free(self):
        for c in (self.comm, self.p2p, self.meta, self.ctrl):
            if c is not None:
                c.Free()
        if _state.get("backend") is self:
            _state["backend"] = None


# Note [Failure notices]
# MPI has no fault tolerance: a rank that raises and exits leaves the others blocked in their
# next collective forever (mpi4py's MPI_Finalize at exit waits for them too), and a rank that
# dies makes the launcher (hydra) SIGKILL the rest. So the launcher's worker wrapper
# (_worker.py) catches an exception, writes it to the run directory, and calls
# notify_failure: it sends a notice to every other rank on the control communicator and waits
# (bounded) for their acknowledgements before MPI_Abort ends the job. Every graphgrad wait
# polls that communicator, so a rank blocked in a collective raises PeerFailureError naming the
# failed rank; a rank busy elsewhere is ended by the abort. The launcher names a rank that
# died from hydra's report and the pid files the workers write.
_state = {"backend": None, "peer_failed": False}

# Note [Timeouts]
# Every wait polls its request with a deadline: the group's timeout (init_process_group's,
# 30 minutes by default as torch) or Work.wait's. MPI cannot say which rank a collective waits
# for, so a rank whose deadline passes asks every other rank, on the control communicator,
# what it is waiting in; ranks inside a graphgrad wait answer within a millisecond (they poll
# that communicator), a hung rank (busy elsewhere, or stuck) does not. After at most
# _ASK_GRACE the error names the collective, its number in the group and the ranks that did
# not join it. Under the launcher the error then ends the job like any other failure (Note
# [Failure notices]), which stops the hung rank too. The communicators are made with
# MPI_Comm_idup so that a rank that never reaches init_process_group makes it time out; the
# launcher's worker initialises MPI as each rank starts, since MPI_Init itself waits for all.


def notify_failure(error: str, grace: float = 2.0, unresponsive=()) -> None:
    """Tells every other rank that this one failed with ``error``; waits up to ``grace``
    seconds for them to acknowledge (not for the ``unresponsive`` ranks, which a timeout
    found hung). Does nothing without an MPI backend, or when this rank is itself stopping
    because of another's failure."""
    backend = _state["backend"]
    if backend is None or _state["peer_failed"]:
        return
    MPI, ctrl = backend.MPI, backend.ctrl
    msg = json.dumps({"rank": backend.rank, "error": error})
    peers = [r for r in range(backend.size) if r != backend.rank]
    for r in peers:
        ctrl.isend(msg, dest=r, tag=_FAIL)
    peers = [r for r in peers if r not in set(unresponsive)]
    acked, deadline = set(), time.monotonic() + grace
    while len(acked) < len(peers) and time.monotonic() < deadline:
        status = MPI.Status()
        if ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_ACK, status=status):
            ctrl.recv(source=status.Get_source(), tag=_ACK)
            acked.add(status.Get_source())
        else:
            time.sleep(0.002)
    # The acknowledging ranks print their own error before aborting; give them a moment.
    time.sleep(0.2 if acked else 0.0)


def abort(code: int = 1) -> None:
    """Ends every rank of the job (MPI_Abort), or this process alone without MPI."""
    backend = _state["backend"]
    if backend is not None:
        backend.MPI.COMM_WORLD.Abort(code)
    # MPI started but no group (init_process_group failed): the job must still end, or the
    # launcher waits for ranks that wait for this one.
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
        MPI.COMM_WORLD.Abort(code)
    os._exit(code)


def as_buffer(arr: np.ndarray) -> np.ndarray:
    """``arr`` in a dtype MPI can carry bit for bit (float16/bfloat16 travel as uint16)."""
    if arr.dtype.kind == "f" and arr.dtype.itemsize == 2 or arr.dtype.kind == "V":
        return arr.view(np.uint16)
    return arr
