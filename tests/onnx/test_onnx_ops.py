"""Every op of the table: exported from the OpInfo samples, run in onnxruntime, compared with
graphgrad eager; the mapping table covers every OpDef (a mapping or a stated reason)."""

from __future__ import annotations

import numpy as np
import pytest
from _roundtrip import OP_DB, exported_ops, results

import graphgrad as gg
import onnx
from graphgrad.compiler.ir import Graph
from graphgrad.onnx.audit import _close, run_onnx
from graphgrad.onnx.export import Prepared, convert
from graphgrad.onnx.ops import LATEST_OPSET, MAPPINGS, REASONS, lookup
from graphgrad.ops import OPS


@pytest.mark.parametrize("name", [op.name for op in OP_DB])
def test_round_trip(name):
    rows = results()[name]
    failed = [f"{label}: {detail}" for label, status, detail, _ in rows if status == "fail"]
    assert not failed, "\n".join(failed)


def test_every_op_has_a_mapping_or_a_reason():
    missing = sorted(n for n in OPS if n not in MAPPINGS and n not in REASONS)
    assert not missing, f"ops with neither an ONNX mapping nor a reason: {missing}"
    assert not set(MAPPINGS) & set(REASONS)
    assert not set(MAPPINGS) - set(OPS), "mappings for ops that are not in the table"
    for name, why in REASONS.items():
        assert isinstance(why, str) and len(why) > 30, name
        with pytest.raises(gg.onnx.ExportError, match=name):
            lookup(name, LATEST_OPSET)


# Ops that a no_grad forward capture never records (in-place fills on tensors that require
# grad, the backward of diagonal): converted from hand-built IR graphs instead.
def _hand_built():
    f32 = np.float32
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(f32)
    src = rng.standard_normal((4,)).astype(f32)
    return {
        "zero": ([x], [0], {"values": 0}),
        "fill": ([x], [0], {"values": np.asarray(2.5, f32)}),
        "fill.Tensor": ([x, np.asarray(-1.5, f32)], [0, 1], {}),
        "copy": ([x, src], [0, 1], {}),
        "index_put": ([x, src], [0, 1], {"key": (np.array([0, 2]),), "accumulate": False}),
        "diagonal_backward": ([rng.standard_normal((3,)).astype(f32)], [0],
                              {"in_shape": (3, 4), "offset": 0, "dim1": 0, "dim2": 1}),
    }


@pytest.mark.parametrize("name", sorted(_hand_built()))
def test_hand_built_graph(name):
    arrays, order, params = _hand_built()[name]
    g = Graph()
    vals = [g.new_value(a.shape, a.dtype, "input", name=f"arg{i}") for i, a in enumerate(arrays)]
    op = OPS[name]
    expected = np.asarray(op.forward(np, *arrays, **params))
    instr = g.add(op, [vals[i] for i in order], [(expected.shape, expected.dtype)], params)
    g.outputs = [instr.outs[0]]
    p = Prepared()
    p.graph = g
    p.input_names = [f"input_{i}" for i in range(len(arrays))]
    p.output_names = ["output"]
    model, _ = convert(p, LATEST_OPSET)
    onnx.checker.check_model(model, full_check=True)
    (got,) = run_onnx(model, {n: a for n, a in zip(p.input_names, arrays)})
    assert _close(got, expected, 1e-6, 1e-6) is None


def test_every_mapping_is_exercised():
    """Each mapped op is round-tripped by some OpInfo sample or a hand-built graph."""
    unexercised = sorted(set(MAPPINGS) - exported_ops() - set(_hand_built()))
    assert not unexercised, f"mapped ops no round trip reaches: {unexercised}"
