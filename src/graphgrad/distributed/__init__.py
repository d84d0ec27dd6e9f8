"""Training past one process, as ``torch.distributed``: a process group on MPI (mpi4py, with
MPICH from PyPI), collectives on tensors, point-to-point messages, a pipeline split
(``graphgrad.distributed.pipeline``) and a launcher (``python -m graphgrad.distributed.run``).
A world of one process, started without a launcher, needs no MPI.
"""

from .distributed_c10d import (
    DistBackendError,
    DistError,
    DistTimeoutError,
    GroupMember,
    PeerFailureError,
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    irecv,
    is_available,
    is_initialized,
    is_mpi_available,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    send,
)

__all__ = ["DistBackendError", "DistError", "DistTimeoutError", "GroupMember",
           "PeerFailureError", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
           "all_gather_object", "all_reduce", "barrier", "broadcast", "broadcast_object_list",
           "default_pg_timeout", "destroy_process_group", "get_backend", "get_rank",
           "get_world_size", "group", "init_process_group", "irecv", "is_available",
           "is_initialized", "is_mpi_available", "isend", "recv", "reduce", "reduce_scatter",
           "reduce_scatter_tensor", "send"]
