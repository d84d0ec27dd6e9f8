"""graphgrad.viz: the DOT text of the seed example's graph, checked against the graph itself
(node names from torch's grad_fn chain) and rendered when Graphviz is installed."""

import shutil

import pytest
import torch

import graphgrad as gg


def seed(m):
    x = m.tensor(2.0)
    w = m.tensor(3.0, requires_grad=True)
    b = m.tensor(1.0, requires_grad=True)
    return (x * w + b - 10) ** 2, w, b


def _torch_node_names(fn, out):
    if fn is None or id(fn) in out:
        return out
    out[id(fn)] = type(fn).__name__
    for child, _ in fn.next_functions:
        _torch_node_names(child, out)
    return out


def test_seed_example_dot():
    loss, w, b = seed(gg)
    dot = gg.viz.to_dot(loss, params={"w": w, "b": b})
    assert dot.startswith("digraph graphgrad {") and dot.rstrip().endswith("}")
    expected = set(_torch_node_names(seed(torch)[0].grad_fn, {}).values()) - {"AccumulateGrad"}
    assert expected == {"PowBackward0", "SubBackward0", "AddBackward0", "MulBackward0"}
    for name in expected:
        assert dot.count(f'"{name}') == 1
    assert '"w\\n()"' in dot and '"b\\n()"' in dot  # leaves, named
    assert "PowBackward0\\nsaved () float32 4 B" in dot  # saved tensor: shape, dtype, bytes
    assert dot.count("->") == 6  # 5 edges between nodes and leaves, 1 to the output
    loss.backward()
    assert "saved: freed by backward" in gg.viz.to_dot(loss)


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="Graphviz's dot program is not installed (apt-get install graphviz)")
def test_render_png(tmp_path):
    pytest.importorskip("graphviz", reason="the graphviz package (graphgrad[viz]) is missing")
    loss, w, b = seed(gg)
    path = gg.viz.render(loss, str(tmp_path / "seed"), params={"w": w, "b": b})
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
