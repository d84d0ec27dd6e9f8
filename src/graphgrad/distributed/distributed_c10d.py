"""The default process group and the collectives on tensors, with torch.distributed's names.

Collectives work in place on a tensor's NumPy buffer (no copy when it is contiguous). Before
each public collective the ranks exchange a small header (collective, op, root, dtype, shape),
so a mismatch raises the same RuntimeError on every rank instead of hanging or mixing data.
Every wait honours the group's ``timeout`` (torch's default, 30 minutes): a collective that
does not complete raises DistTimeoutError naming the collective and the ranks that did not join
it (Note [Timeouts] in _backend.py).
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from .._tensor import Tensor, bump_version
from . import _backend
from ._backend import DistBackendError, DistError, DistTimeoutError, PeerFailureError

__all__ = ["ReduceOp", "Work", "GroupMember", "group", "init_process_group",
           "destroy_process_group", "is_initialized", "is_available", "is_mpi_available",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "broadcast",
           "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
           "reduce", "send", "recv", "isend", "irecv", "all_gather_object",
           "broadcast_object_list", "DistError", "DistBackendError", "DistTimeoutError",
           "PeerFailureError", "default_pg_timeout"]

# torch.distributed.default_pg_timeout
default_pg_timeout = timedelta(seconds=_backend.DEFAULT_TIMEOUT)


def _seconds(timeout, name="timeout"):
    """A timedelta as seconds (torch accepts timedelta only), or None for None."""
    if timeout is None:
        return None
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected {name} argument to be of type datetime.timedelta, got "
                        f"{timeout}")
    return timeout.total_seconds()


class ReduceOp:
    """Reduction operations (``dist.ReduceOp.SUM`` ...); AVG divides the sum by world size."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    RedOpType = str


_OP_CODES = {op: i for i, op in enumerate(("sum", "avg", "product", "min", "max", "band", "bor",
                                           "bxor"))}
_COLLECTIVES = ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier", "reduce",
                "all_gather_into_tensor", "reduce_scatter_tensor")


class _World:
    """The default process group's state."""

    backend = None


_world = _World()


class _Group:
    """``dist.group.WORLD``: stands for the default group wherever ``group=`` is accepted."""

    def __repr__(self) -> str:
        return "<graphgrad.distributed.group.WORLD>"


class group:  # noqa: N801 - torch's name
    WORLD = _Group()


class GroupMember:
    WORLD = group.WORLD
    NON_GROUP_MEMBER = -100


def is_available() -> bool:
    """True: the package is importable (MPI itself is needed only for more than one rank)."""
    return True


def is_mpi_available() -> bool:
    """Whether mpi4py and an MPI library can be loaded."""
    try:
        _backend.import_mpi()
    except ImportError:
        return False
    return True


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None) -> None:
    """Joins the default process group of the ranks started by the launcher
    (``python -m graphgrad.distributed.run -n N script.py``) or any ``mpiexec``. Started
    without a launcher, the world is this one process and needs no MPI.

    ``backend`` is "mpi" (the default; "gloo" is accepted as a synonym, so CPU scripts written
    for torch run unchanged). ``rank``/``world_size``, when given, must equal MPI's.
    ``timeout`` (a timedelta; default 30 minutes, as torch) bounds every wait of the group,
    and the creation of the group itself: past it, DistTimeoutError names the collective and
    the ranks that did not join it.

    >>> import graphgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_rank(), dist.get_world_size()
    (0, 1)
    >>> dist.destroy_process_group()
    """
    if _world.backend is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "mpi" if backend is None else str(backend).lower()
    if name in ("nccl", "ucc", "xccl", "hccl"):
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in "
                           "(graphgrad runs on CPU; use backend='mpi')")
    if name not in ("mpi", "gloo", "cpu:mpi", "cpu:gloo"):
        raise ValueError(f"Invalid backend: '{backend}' (graphgrad.distributed supports 'mpi')")
    seconds = _seconds(default_pg_timeout if timeout is None else timeout)
    launched = _backend.launched_world()
    if launched is None or launched[1] == 1 and not is_mpi_available():
        impl = _backend.SelfBackend()
    else:
        impl = _backend.MPIBackend(seconds)
    if world_size not in (-1, None) and world_size != impl.size:
        raise ValueError(f"world_size={world_size} does not match the {impl.size} processes "
                         "MPI started")
    if rank not in (-1, None) and rank != impl.rank:
        raise ValueError(f"rank={rank} does not match this process's MPI rank {impl.rank}")
    _world.backend = impl


def destroy_process_group(group=None) -> None:
    """Leaves the default process group; ``init_process_group`` may be called again."""
    impl = _world.backend
    if impl is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    _world.backend = None
    impl.free()


def is_initialized() -> bool:
    return _world.backend is not None


def _default(group=None):
    impl = _world.backend
    if impl is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    if group is not None and group is not GroupMember.WORLD:
        raise ValueError("graphgrad.distributed supports the default group only (group=None)")
    return impl


def _collective(group=None):
    """The group's backend, counting one more collective (the number a timeout names)."""
    impl = _default(group)
    impl.seq += 1
    return impl


def get_rank(group=None) -> int:
    return _default(group).rank


def get_world_size(group=None) -> int:
    return _default(group).size


def get_backend(group=None) -> str:
    return _default(group).name if _default(group).name == "mpi" else "mpi"


# -- work handles ---------------------------------------------------------------------------
class Work:
    """What an ``async_op=True`` collective returns: ``wait()`` completes it (copying a
    non-contiguous tensor back, dividing for AVG)."""

    def __init__(self, impl, reqs, finish=None, what=""):
        self._impl = impl
        self._reqs = reqs
        self._finish = finish
        self._what = what
        self._done = False
        self._result = None

    def wait(self, timeout=None) -> bool:
        """Completes the operation; ``timeout`` (a timedelta) replaces the group's."""
        if not self._done:
            self._impl.waitall(self._reqs, self._what, _seconds(timeout))
            self._done = True
            if self._finish is not None:
                self._result = self._finish()
        return True

    def is_completed(self) -> bool:
        if not self._done and all(self._impl.test(r) for r in self._reqs):
            self.wait()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def result(self):
        return self._result

    def exception(self):
        return None


def _run(impl, reqs, finish, async_op, what):
    work = Work(impl, reqs, finish, what)
    if async_op:
        return work
    work.wait()
    return None


# -- helpers ----------------------------------------------------------------------------------
def _check_tensor(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor but got {type(t)} instead.")


def _contig(t):
    """(buffer, finish): a C-contiguous array on ``t``'s data, and a function that writes it
    back into ``t`` when it had to be copied."""
    arr = t._data
    if arr.flags.c_contiguous and arr.flags.writeable:
        return arr, None
    buf = np.ascontiguousarray(arr)
    if not arr.flags.writeable:
        buf = buf.copy()

    def back():
        np.copyto(t._data, buf) if t._data.flags.writeable else None
    return buf, back


def _meta_row(what, arr, op="sum", root=0, count=0):
    shape = arr.shape
    row = np.zeros(13, np.int64)
    row[0] = _COLLECTIVES.index(what)
    row[1] = _OP_CODES.get(op, -1)
    row[2] = root
    row[3] = ord(arr.dtype.char)
    row[4] = arr.ndim
    row[5:5 + min(arr.ndim, 7)] = shape[:7]
    row[12] = count if arr.ndim <= 7 else hash(shape[7:]) ^ count
    return row


def _describe(row):
    what = _COLLECTIVES[row[0]]
    shape = [int(s) for s in row[5:5 + min(row[4], 7)]]
    return f"{what}(shape={shape}, dtype={np.dtype(chr(row[3])).name})"


def _agree(impl, what, arr, op="sum", root=0, count=0):
    """Exchanges headers; raises the same RuntimeError on every rank when they differ."""
    if impl.size == 1:
        return
    mine = _meta_row(what, arr, op, root, count)
    rows = np.empty((impl.size, mine.size), np.int64)
    impl.wait(impl.allgather(mine, rows), what)
    if (rows == rows[0]).all():
        return
    detail = "; ".join(f"rank {r}: {_describe(row)}" + ("" if row[1] == rows[0][1] else
                                                          f" op={list(_OP_CODES)[row[1]]}")
                       + ("" if row[2] == rows[0][2] else f" root={row[2]}")
                       + ("" if row[12] == rows[0][12] else f" list length={row[12]}")
                       for r, row in enumerate(rows))
    raise RuntimeError(f"{what}: the ranks called mismatched collectives or passed tensors of "
                       f"different shapes or dtypes: {detail}")


def _mpi_op(op, arr):
    if op not in _OP_CODES:
        raise ValueError(f"unknown reduce op {op!r}")
    if arr.dtype == np.bool_:
        return {"sum": "lor", "max": "lor", "bor": "lor", "min": "land", "product": "land",
                "band": "land"}.get(op, op)
    if op in ("band", "bor", "bxor") and arr.dtype.kind == "f":
        raise RuntimeError(f"Cannot use ReduceOp.{op.upper()} with a floating-point tensor")
    if op == "avg":
        if arr.dtype.kind != "f":
            raise RuntimeError("ReduceOp.AVG needs a floating-point tensor")
        return "sum"
    return op


def _reduce_buffer(arr):
    """A buffer MPI can reduce: 16-bit floats are reduced in float32."""
    if arr.dtype.kind == "f" and arr.dtype.itemsize == 2 or arr.dtype.kind == "V":
        return arr.astype(np.float32)
    return arr


def _finisher(*steps):
    steps = [s for s in steps if s is not None]
    if not steps:
        return None

    def finish():
        for s in steps:
            s()
    return finish


# -- collectives --------------------------------------------------------------------------------
def barrier(group=None, async_op=False, device_ids=None):
    """Waits until every rank reached the barrier."""
    impl = _collective(group)
    return _run(impl, [impl.barrier()], None, async_op, "barrier")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across ranks in place; every rank gets the result.

    >>> import graphgrad as torch, graphgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = torch.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist.ReduceOp.AVG)
    >>> t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    _check_tensor(tensor)
    impl = _collective(group)
    buf, back = _contig(tensor)
    mpi_op = _mpi_op(op, buf)
    _agree(impl, "all_reduce", buf, op)
    red = _reduce_buffer(buf)
    req = impl.allreduce(red, mpi_op)

    def post():
        if op == ReduceOp.AVG:
            np.divide(red, impl.size, out=red, casting="unsafe")
        if red is not buf:
            np.copyto(buf, red, casting="unsafe")
    return _run(impl, [req], _finisher(post, back, lambda: bump_version(tensor)), async_op,
                "all_reduce")


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces ``tensor`` across ranks; rank ``dst`` gets the result (the others' tensors are
    left as they are)."""
    _check_tensor(tensor)
    impl = _collective(group)
    dst = dst if group_dst is None else group_dst
    buf = np.ascontiguousarray(tensor._data)
    mpi_op = _mpi_op(op, buf)
    _agree(impl, "reduce", buf, op, dst)
    red = np.array(_reduce_buffer(buf), copy=True)
    req = impl.allreduce(red, mpi_op)  # every rank computes it; simpler than a rooted reduce

    def post():
        if impl.rank == dst:
            if op == ReduceOp.AVG:
                np.divide(red, impl.size, out=red, casting="unsafe")
            np.copyto(tensor._data, red, casting="unsafe")
            bump_version(tensor)
    return _run(impl, [req], post, async_op, "reduce")


def broadcast(tensor, src=0, group=None, async_op=False, group_src=None):
    """Copies rank ``src``'s tensor into every rank's ``tensor``."""
    _check_tensor(tensor)
    impl = _collective(group)
    src = src if group_src is None else group_src
    if not 0 <= src < impl.size:
        raise ValueError(f"Invalid src rank {src} for a world of {impl.size}")
    buf, back = _contig(tensor)
    _agree(impl, "broadcast", buf, root=src)
    req = impl.bcast(_backend.as_buffer(buf), src)
    return _run(impl, [req], _finisher(back, lambda: bump_version(tensor)), async_op,
                "broadcast")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fills ``tensor_list[i]`` with rank i's ``tensor`` on every rank."""
    _check_tensor(tensor)
    impl = _collective(group)
    if len(tensor_list) != impl.size:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors for a world "
                         f"of {impl.size}")
    for t in tensor_list:
        _check_tensor(t, "tensor_list")
        if t.shape != tensor.shape or t.dtype != tensor.dtype:
            raise RuntimeError(f"all_gather: every output must have the input's shape "
                               f"{list(tensor.shape)} and dtype, got {list(t.shape)}")
    send = np.ascontiguousarray(tensor._data)
    _agree(impl, "all_gather", send)
    recv = np.empty((impl.size,) + send.shape, send.dtype)
    req = impl.allgather(_backend.as_buffer(send), _backend.as_buffer(recv))

    def post():
        for t, part in zip(tensor_list, recv):
            np.copyto(t._data, part)
            bump_version(t)
    return _run(impl, [req], post, async_op, "all_gather")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenates every rank's ``input_tensor`` along dim 0 (or stacks, when
    ``output_tensor`` has one more dim) into ``output_tensor``."""
    _check_tensor(output_tensor, "output_tensor")
    impl = _collective(group)
    send = np.ascontiguousarray(input_tensor._data)
    if output_tensor._data.size != send.size * impl.size:
        raise RuntimeError(f"all_gather_into_tensor: output has {output_tensor._data.size} "
                           f"elements, expected {send.size} x world size {impl.size}")
    _agree(impl, "all_gather_into_tensor", send)
    buf, back = _contig(output_tensor)
    req = impl.allgather(_backend.as_buffer(send), _backend.as_buffer(buf.reshape(-1)))
    return _run(impl, [req], _finisher(back, lambda: bump_version(output_tensor)), async_op,
                "all_gather_into_tensor")


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` on rank r gets the reduction over ranks of ``input_list[r]``."""
    _check_tensor(output, "output")
    impl = _collective(group)
    if len(input_list) != impl.size:
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors for a "
                         f"world of {impl.size}")
    for t in input_list:
        if t.shape != output.shape or t.dtype != output.dtype:
            raise RuntimeError(f"reduce_scatter: every input must have the output's shape "
                               f"{list(output.shape)} and dtype, got {list(t.shape)}")
    send = np.stack([t._data for t in input_list]) if input_list else None
    return _reduce_scatter(impl, output, send, op, async_op, "reduce_scatter")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` on rank r gets the reduction over ranks of chunk r of ``input`` (dim 0)."""
    _check_tensor(output, "output")
    impl = _collective(group)
    if input._data.size != output._data.size * impl.size:
        raise RuntimeError(f"reduce_scatter_tensor: input has {input._data.size} elements, "
                           f"expected {output._data.size} x world size {impl.size}")
    return _reduce_scatter(impl, output, np.ascontiguousarray(input._data), op, async_op,
                           "reduce_scatter_tensor")


def _reduce_scatter(impl, output, send, op, async_op, what):
    buf, back = _contig(output)
    mpi_op = _mpi_op(op, buf)
    _agree(impl, what, buf, op)
    send = _reduce_buffer(send)
    red = _reduce_buffer(buf)
    req = impl.reduce_scatter(send.reshape(-1), red.reshape(-1), mpi_op)

    def post():
        if op == ReduceOp.AVG:
            np.divide(red, impl.size, out=red, casting="unsafe")
        if red is not buf:
            np.copyto(buf, red, casting="unsafe")
    return _run(impl, [req], _finisher(post, back, lambda: bump_version(output)), async_op,
                what)


# -- point to point -------------------------------------------------------------------------
# A message is a header (dtype char, ndim, shape) on the header communicator, then the data.
_HEADER = 10


def _header(arr):
    h = np.zeros(_HEADER, np.int64)
    h[0] = ord(arr.dtype.char)
    h[1] = arr.ndim
    h[2:2 + min(arr.ndim, 8)] = arr.shape[:8]
    return h


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Starts sending ``tensor`` to rank ``dst``; returns a Work."""
    _check_tensor(tensor)
    impl = _default(group)
    dst = dst if group_dst is None else group_dst
    if dst == impl.rank:
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process.")
    data = np.ascontiguousarray(tensor._data)
    head = _header(data)
    reqs = [impl.send(head, dst, tag, meta=True), impl.send(_backend.as_buffer(data), dst, tag)]
    work = Work(impl, reqs, None, "send")
    work._keep = (head, data)  # the buffers must outlive the request
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None) -> None:
    """Sends ``tensor`` to rank ``dst`` (completes when the buffer may be reused)."""
    isend(tensor, dst, group, tag, group_dst).wait()


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Starts receiving into ``tensor`` from rank ``src`` (any rank when None)."""
    work = Work(_default(group), [], None, "recv")
    work._finish = lambda: _recv_now(tensor, src if group_src is None else group_src, group, tag)
    return work


def recv(tensor, src=None, group=None, tag=0, group_src=None) -> int:
    """Receives into ``tensor`` from rank ``src`` (any rank when None); returns the sender's
    rank. A message of another shape or dtype raises RuntimeError naming both."""
    return _recv_now(tensor, src if group_src is None else group_src, group, tag)


def _recv_now(tensor, src, group, tag):
    _check_tensor(tensor)
    impl = _default(group)
    if src == impl.rank:
        raise ValueError("Invalid source rank: source rank should not be the same as the rank "
                         "of the current process.")
    source = impl.probe_meta(src, tag)
    head = np.empty(_HEADER, np.int64)
    impl.wait(impl.recv(head, source, tag, meta=True), "recv")
    dtype = np.dtype(chr(head[0]))
    shape = tuple(int(s) for s in head[2:2 + min(head[1], 8)])
    buf, back = _contig(tensor)
    if dtype != buf.dtype or (head[1] <= 8 and shape != buf.shape):
        # Drain the data so the channel stays in step, then say what arrived.
        junk = np.empty(shape, dtype)
        impl.wait(impl.recv(_backend.as_buffer(junk), source, tag), "recv")
        raise RuntimeError(f"recv: rank {source} sent shape {list(shape)} dtype {dtype.name}, "
                           f"but the receiving tensor has shape {list(buf.shape)} dtype "
                           f"{buf.dtype.name}")
    impl.wait(impl.recv(_backend.as_buffer(buf), source, tag), "recv")
    if back is not None:
        back()
    bump_version(tensor)
    return source


# -- Python objects (small metadata; pickled) ---------------------------------------------------
def all_gather_object(object_list, obj, group=None) -> None:
    """Fills ``object_list[i]`` with rank i's picklable ``obj``."""
    impl = _collective(group)
    if impl.size == 1:
        object_list[0] = obj
        return
    import pickle

    data = np.frombuffer(pickle.dumps(obj), np.uint8)
    sizes = np.empty(impl.size, np.int64)
    impl.wait(impl.allgather(np.array([data.size], np.int64), sizes), "all_gather_object")
    buf = np.zeros((impl.size, int(sizes.max())), np.uint8)
    mine = np.zeros(buf.shape[1], np.uint8)
    mine[:data.size] = data
    impl.wait(impl.allgather(mine, buf), "all_gather_object")
    for r in range(impl.size):
        object_list[r] = pickle.loads(buf[r, :sizes[r]].tobytes())


def broadcast_object_list(object_list, src=0, group=None, device=None, group_src=None) -> None:
    """Replaces ``object_list``'s items on every rank with rank ``src``'s."""
    src = src if group_src is None else group_src
    gathered = [None] * get_world_size(group)
    all_gather_object(gathered, list(object_list) if get_rank(group) == src else None, group)
    object_list[:] = gathered[src]
