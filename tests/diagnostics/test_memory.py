"""graphgrad.memory against known allocations, and the graphs it reports."""

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import memory


@pytest.fixture(autouse=True)
def count_everything():
    prev = memory.min_tracked_bytes()
    memory.set_min_tracked_bytes(0)
    yield
    memory.set_min_tracked_bytes(prev)


def test_known_allocations_and_release():
    before = memory.storage_allocated()
    x = gg.zeros(256, 1024)  # 1 MiB of float32
    assert memory.storage_allocated() - before == 256 * 1024 * 4
    y = gg.ones(100, dtype=gg.float64)
    assert memory.storage_allocated() - before == 256 * 1024 * 4 + 800
    del x
    assert memory.storage_allocated() - before == 800
    del y
    assert memory.storage_allocated() == before


def test_views_and_detach_are_counted_once():
    before = memory.storage_allocated()
    x = gg.zeros(1000, 10)
    views = [x[1:], x.t(), x.view(-1), x.detach(), x[::2, 3]]
    assert memory.storage_allocated() - before == 40_000
    del x
    assert memory.storage_allocated() - before == 40_000  # the views keep the storage
    del views
    assert memory.storage_allocated() == before


def test_peak_and_reset():
    memory.reset_peak()
    base = memory.max_allocated()
    x = gg.zeros(500, 1000)
    del x
    assert memory.max_allocated() - base >= 2_000_000
    memory.reset_peak()
    assert memory.max_allocated() < base + 2_000_000


def test_saved_values_are_held_until_backward_frees_them():
    w = gg.randn(300, 300, requires_grad=True)
    before = memory.storage_allocated()
    loss = (w * 2).exp().sum()  # exp saves its output: 360 KB stay alive
    held = memory.storage_allocated() - before
    assert held >= 300 * 300 * 4
    loss.backward()
    after = memory.storage_allocated() - before
    # the saved output is released; the new w.grad takes its place
    assert after == w.grad.numel() * 4 + loss.numel() * 4


def test_graph_nodes_are_counted_in_allocated():
    w = gg.randn(3, requires_grad=True)
    before_nodes, before = memory.graph_nodes(), memory.allocated()
    y = ((w * 2).sin() + 1).sum()
    assert memory.graph_nodes() - before_nodes == 4
    assert memory.allocated() - before >= 4 * memory.NODE_BYTES
    del y
    assert memory.graph_nodes() == before_nodes


def test_live_graphs_report_root_nodes_bytes_and_ops():
    w = gg.randn(200, 200, requires_grad=True)
    with gg.autograd.graph.capture_sites():
        loss = (w @ w).tanh().sum()  # LINE: loss
    graphs = [g for g in memory.live_graphs() if g.root is loss.grad_fn]
    assert len(graphs) == 1
    g = graphs[0]
    assert g.nodes == 3
    # matmul saves w (once, deduplicated), tanh saves its output: two 160 KB buffers
    assert g.saved_bytes == 2 * 200 * 200 * 4
    assert {name for name, _ in g.by_op} == {"MmBackward0", "TanhBackward0"}
    assert g.site is not None and "loss = (w @ w).tanh().sum()" in g.site.source()
    snap = memory.snapshot()
    assert "live graph" in str(snap) and snap.graph_nodes >= 3
    np.testing.assert_equal(snap.allocated, snap.storage_bytes + snap.graph_nodes * 400)
