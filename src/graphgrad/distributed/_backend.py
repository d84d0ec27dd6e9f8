"""The transport under ``graphgrad.distributed``: MPI through mpi4py (imported lazily), or, for a
world of one process started without a launcher, a local stand-in with the same calls.

Both expose non-blocking calls on contiguous NumPy arrays that return requests; ``wait`` polls
them and, on MPI, also polls for failure notices from other ranks (Note [Failure notices]).
"""

from __future__ import annotations

import json
import os
import time

import numpy as np

__all__ = ["MPIBackend", "SelfBackend", "PeerFailureError", "DistError", "DistBackendError",
           "launched_world", "import_mpi", "notify_failure"]

EXTRA_HINT = "pip install 'graphgrad[distributed]' (mpi4py and the mpich wheel)"

# Tags on the control communicator.
_FAIL, _ACK = 1, 2


class DistError(RuntimeError):
    """Base of the errors graphgrad.distributed raises (torch.distributed.DistError)."""


class DistBackendError(DistError):
    """An error from the transport (torch.distributed.DistBackendError)."""


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

    def wait(self, req, what=""):
        return None

    def waitall(self, reqs, what=""):
        return None

    def test(self, req):
        return True

    def free(self):
        pass


class MPIBackend:
    """Collectives and messages on duplicates of MPI_COMM_WORLD: one for collectives, one for
    point-to-point data, one for message headers, one for failure notices."""

    name = "mpi"

    def __init__(self):
        MPI = import_mpi()
        self.MPI = MPI
        world = MPI.COMM_WORLD
        self.comm = world.Dup()
        self.p2p = world.Dup()
        self.meta = world.Dup()
        self.ctrl = world.Dup()
        self.rank = world.Get_rank()
        self.size = world.Get_size()
        # NOTE: more ranks than cores (4 ranks on 2 cores in CI) make a pure spin starve the
        # rank it waits for; yield the core between polls then.
        self.yield_cpu = self.size > (os.cpu_count() or 1)
        self.ops = {"sum": MPI.SUM, "product": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX,
                    "band": MPI.BAND, "bor": MPI.BOR, "bxor": MPI.BXOR,
                    "lor": MPI.LOR, "land": MPI.LAND}
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
        while not self.meta.Iprobe(source=source, tag=tag, status=status):
            self._poll_failures()
            if self.yield_cpu:
                os.sched_yield()
        return status.Get_source()

    # -- waiting ---------------------------------------------------------------------------
    def test(self, req):
        return req.Test()

    def wait(self, req, what=""):
        """Completes ``req``, checking for failure notices every millisecond or so."""
        test = req.Test
        if test():
            return
        clock = time.monotonic
        next_check = clock() + 0.001
        yield_cpu = self.yield_cpu
        while not test():
            if yield_cpu:
                os.sched_yield()
            if clock() >= next_check:
                self._poll_failures(what)
                next_check = clock() + 0.001

    def waitall(self, reqs, what=""):
        for r in reqs:
            self.wait(r, what)

    def _poll_failures(self, what=""):
        MPI = self.MPI
        status = MPI.Status()
        if not self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_FAIL, status=status):
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


def notify_failure(error: str, grace: float = 2.0) -> None:
    """Tells every other rank that this one failed with ``error``; waits up to ``grace``
    seconds for them to acknowledge. Does nothing without an MPI backend, or when this rank is
    itself stopping because of another's failure."""
    backend = _state["backend"]
    if backend is None or _state["peer_failed"]:
        return
    MPI, ctrl = backend.MPI, backend.ctrl
    msg = json.dumps({"rank": backend.rank, "error": error})
    peers = [r for r in range(backend.size) if r != backend.rank]
    for r in peers:
        ctrl.isend(msg, dest=r, tag=_FAIL)
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
    os._exit(code)


def as_buffer(arr: np.ndarray) -> np.ndarray:
    """``arr`` in a dtype MPI can carry bit for bit (float16/bfloat16 travel as uint16)."""
    if arr.dtype.kind == "f" and arr.dtype.itemsize == 2 or arr.dtype.kind == "V":
        return arr.view(np.uint16)
    return arr
