"""The audit on deliberately bad models: each problem is found, named with the user's line,
and all of them come in one report (export refuses with that report)."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

import graphgrad as torch
import graphgrad.onnx as gx
from graphgrad import nn


def _x(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _line(marker):
    """``file:line`` of the line of this file holding ``marker``."""
    with open(__file__) as fh:
        for i, text in enumerate(fh, 1):
            if marker in text and "_line(" not in text:
                return f"{__file__}:{i}"
    raise AssertionError(marker)


class PythonBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:  # MARK-branch
            return y * 2
        return -y


class BakedBatch(nn.Module):
    def forward(self, x):
        return x.view(4, 2, -1).sum(1)  # MARK-view


class BakedScale(nn.Module):
    def forward(self, x):
        return x / math.sqrt(x.shape[1])  # MARK-scale


class TwoUnsupported(nn.Module):
    def forward(self, x):
        a = torch.linalg.inv(x @ x.mT + torch.eye(3))  # MARK-inv
        return torch.unique(a.round()), a.cumsum(0)


def test_python_branch_on_a_tensor_value():
    report = gx.audit(PythonBranch(), (_x(2, 4),))
    (err,) = report.errors
    assert err.kind == "graph-break"
    assert "reads a tensor's value into Python" in err.message and "torch.where" in err.message
    assert err.site == _line("MARK-branch")
    with pytest.raises(gx.ExportError, match="graph-break"):
        gx.export(PythonBranch(), (_x(2, 4),), io.BytesIO())


def test_reshape_with_a_baked_batch_size():
    axes = {"input": {0: "batch"}, "output": {0: "batch"}}
    report = gx.audit(BakedBatch(), (_x(4, 6),), dynamic_axes=axes)
    kinds = {f.kind for f in report.errors}
    assert "baked-shape" in kinds, str(report)
    err = report.of_kind("baked-shape")[0]
    assert err.site == _line("MARK-view")
    assert "axis 0 goes from 4 to 5" in err.message
    # without declared dynamic axes the probe of the batch axis still reports it, as a note
    notes = gx.audit(BakedBatch(), (_x(4, 6),)).notes
    assert [n.kind for n in notes] == ["baked-shape"]


def test_python_number_computed_from_a_dynamic_size():
    report = gx.audit(BakedScale(), (_x(2, 9),), dynamic_axes={"input": [1]})
    (err,) = [f for f in report.errors if f.kind == "baked-value"]
    assert "2.449" in err.message or "3.0" in err.message
    assert err.site == _line("MARK-scale")
    assert err.op == "div"


def test_every_unsupported_op_in_one_report():
    report = gx.audit(TwoUnsupported(), (_x(3, 3),), probe_batch=False)
    ops = sorted(f.op for f in report.of_kind("unsupported-op"))
    assert ops == ["linalg_inv_ex", "unique"], str(report)
    inv = next(f for f in report.errors if f.op == "linalg_inv_ex")
    assert "matrix inverse" in inv.message
    assert inv.site == _line("MARK-inv")
    # cumsum has a mapping: it is not reported
    assert not [f for f in report.findings if f.op == "cumsum"]


def test_minimum_opset_is_reported():
    class Bits(nn.Module):
        def forward(self, x):
            return (x > 0) ^ (x < 1)

    ok = gx.audit(Bits(), (_x(3),), opset_version=18)
    assert ok.ok, str(ok)
    report = gx.audit(Bits(), (_x(3),), opset_version=17)
    (err,) = report.errors
    assert err.op == "bitwise_xor" and err.min_opset == 18
    assert "needs opset 18" in err.message


def test_declared_dynamic_output_axis_that_stays_fixed():
    class Total(nn.Module):
        def forward(self, x):
            return x.sum(0)

    axes = {"input": {0: "batch"}, "output": {0: "batch"}}
    report = gx.audit(Total(), (_x(3, 5),), dynamic_axes=axes)
    (err,) = report.errors
    assert err.kind == "not-dynamic" and "'output' axis 0" in err.message


def test_unknown_dynamic_axes_name():
    with pytest.raises(ValueError, match="neither input nor output"):
        gx.audit(nn.Linear(2, 2), (_x(3, 2),), dynamic_axes={"x": [0]})


def test_train_mode_behaviour():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5), nn.Linear(4, 2))
    report = gx.audit(model, (_x(8, 4),))
    train = report.of_kind("training-mode")
    assert {f.op for f in train} >= {"BatchNorm1d", "Dropout"}, str(report)
    # the dropout mask is a random draw: no deterministic ONNX form
    assert any("random" in f.message for f in report.errors)
    model.eval()
    assert gx.audit(model, (_x(8, 4),)).ok
    # training= switches the mode for the export only
    model.train()
    gx.export(model, (_x(8, 4),), io.BytesIO(), training=gx.TrainingMode.EVAL)
    assert model.training


def test_report_text_lists_everything():
    report = gx.audit(TwoUnsupported(), (_x(3, 3),), probe_batch=False)
    text = str(report)
    assert text.splitlines()[0].startswith("graphgrad.onnx audit (opset 21): 2 errors")
    assert "linalg_inv_ex" in text and "unique" in text
    with pytest.raises(gx.ExportError) as info:
        gx.export(TwoUnsupported(), (_x(3, 3),), io.BytesIO())
    assert "linalg_inv_ex" in str(info.value) and "unique" in str(info.value)


def test_index_computed_from_the_input_values():
    class TopRows(nn.Module):
        def forward(self, x):
            idx = x[:, 0].argsort()
            return x.index_select(0, idx)  # MARK-index

    report = gx.audit(TopRows(), (_x(5, 3),), probe_batch=False)
    errs = [f for f in report.errors if f.kind in ("baked-value", "graph-break")]
    assert errs, str(report)
    assert errs[0].site == _line("MARK-index")


def test_index_from_a_buffer_is_fixed():
    class Pick(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("idx", torch.tensor([2, 0]))

        def forward(self, x):
            return x.index_select(1, self.idx)

    report = gx.audit(Pick(), (_x(4, 3),))
    assert report.ok and not report.warnings, str(report)
