"""Collectives and messages on 2 and 4 ranks against NumPy's arithmetic on what each rank
contributed; mismatched shapes raise on every rank; a world of one works without a launcher."""

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.distributed as dist


def test_collectives(suite):
    w = suite.world
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    contrib = [base + r for r in range(w)]
    for rank, got in enumerate(suite.ranks("collectives")):
        np.testing.assert_allclose(got["SUM"], np.sum(contrib, 0))
        np.testing.assert_allclose(got["AVG"], np.mean(contrib, 0), rtol=1e-6)
        np.testing.assert_array_equal(got["MAX"], np.max(contrib, 0))
        np.testing.assert_array_equal(got["MIN"], np.min(contrib, 0))
        np.testing.assert_allclose(got["PRODUCT"], np.prod(contrib, 0), rtol=1e-6)
        np.testing.assert_allclose(got["SUM_T"], np.sum(contrib, 0).T)
        np.testing.assert_array_equal(got["bcast"], np.full(4, w - 1.0))
        np.testing.assert_array_equal(got["gather"], [[r, 10 * r, -r] for r in range(w)])
        np.testing.assert_array_equal(got["reduce_scatter"],
                                      np.full(2, sum(100 * q + rank for q in range(w))))
        assert bool(got["async_done"])
        left = (rank - 1) % w
        assert int(got["recv_src"]) == left
        np.testing.assert_array_equal(got["recv"], np.full(left + 1, float(left)))


def test_mismatched_shapes_raise_on_every_rank(suite):
    for got in suite.ranks("mismatch"):
        shape_msg, kind_msg = got["msgs"]
        assert "all_reduce" in shape_msg and "rank 0: all_reduce(shape=[2, 2]" in shape_msg
        assert "rank 1: all_reduce(shape=[2, 3]" in shape_msg
        assert "rank 0: broadcast" in kind_msg and "rank 1: all_reduce" in kind_msg
        np.testing.assert_array_equal(got["after"], np.full(2, float(suite.world)))


def test_world_of_one_without_launcher():
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.get_rank()
    dist.init_process_group("mpi")
    try:
        assert dist.is_initialized() and (dist.get_rank(), dist.get_world_size()) == (0, 1)
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group("mpi")
        t = gg.tensor([1.0, -2.0])
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        dist.broadcast(t, src=0)
        out = [gg.zeros(2)]
        dist.all_gather(out, t)
        np.testing.assert_array_equal(out[0].numpy(), [1.0, -2.0])
        dist.barrier()
        with pytest.raises(ValueError, match="Invalid destination rank"):
            dist.send(t, dst=0)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


def test_unknown_backend():
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()
