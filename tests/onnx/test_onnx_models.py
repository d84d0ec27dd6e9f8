"""Whole models exported to ONNX files, checked by onnx.checker (full check) and run in
onnxruntime at the traced batch and, with a dynamic batch axis, at other batch sizes; the
outputs must equal graphgrad eager within float32 tolerance."""

from __future__ import annotations

import io
import os

import numpy as np
import onnxruntime as ort
import pytest

import graphgrad as torch
import graphgrad.onnx as gx
import onnx
from graphgrad import nn

RTOL, ATOL = 1e-4, 1e-5


def _x(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


class _Recurrent(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(5, 7, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(14, 3)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


def _cnn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=2), nn.BatchNorm2d(8),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))


def _spotter():
    from graphgrad.examples.speech_commands.model import KeywordSpotter

    return KeywordSpotter(n_classes=5, width=4), (40, 51)


MODELS = {
    "mlp": lambda: (nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 16), nn.Tanh(),
                                  nn.Linear(16, 3), nn.LogSoftmax(-1)), (6,)),
    "cnn_batchnorm": lambda: (_cnn(), (3, 12, 12)),
    "lstm": lambda: (_Recurrent(nn.LSTM), (6, 5)),
    "gru": lambda: (_Recurrent(nn.GRU), (6, 5)),
    "transformer_encoder_layer": lambda: (
        nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True),
        (5, 16)),
    "keyword_spotter": _spotter,
}


def _train_a_little(model, shape):
    """A few train-mode forwards so that batch norm's running statistics are not the
    initial zeros and ones (eval mode must then use them)."""
    model.train()
    with torch.no_grad():
        for s in range(3):
            model(_x(8, *shape, seed=10 + s) * 2 + 0.5)
    model.eval()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_exports_with_dynamic_batch(name, tmp_path):
    model, shape = MODELS[name]()
    _train_a_little(model, shape)
    path = tmp_path / f"{name}.onnx"
    report = gx.export(model, (_x(2, *shape),), str(path), input_names=["x"],
                       output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    assert report.ok, str(report)
    assert not report.warnings, str(report)
    assert os.listdir(tmp_path) == [f"{name}.onnx"]  # nothing left from the atomic write
    onnx.checker.check_model(str(path), full_check=True)
    loaded = onnx.load(str(path))
    assert loaded.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    # parameters are initializers named as in state_dict
    names = {t.name for t in loaded.graph.initializer}
    assert set(dict(model.named_parameters())) <= names
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch in (2, 1, 5):
        x = _x(batch, *shape, seed=batch)
        (got,) = sess.run(None, {"x": x.numpy()})
        with torch.no_grad():
            want = model(x).numpy()
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_file_object_and_static_shapes():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    buf = io.BytesIO()
    gx.export(model, _x(2, 4), buf)
    m = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(m, full_check=True)
    assert [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim] == [2, 4]
    assert m.opset_import[0].version == 21


def test_opset_selection():
    model = nn.Sequential(nn.Linear(4, 3), nn.Softmax(-1))
    for asked, written in ((17, 17), (13, 13), (40, 21)):
        buf = io.BytesIO()
        gx.export(model, (_x(2, 4),), buf, opset_version=asked)
        m = onnx.load_from_string(buf.getvalue())
        assert m.opset_import[0].version == written
        sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
        x = _x(2, 4)
        want = model(x).detach().numpy()
        np.testing.assert_allclose(sess.run(None, {"input": x.numpy()})[0], want,
                                   rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="opset"):
        gx.export(model, (_x(2, 4),), io.BytesIO(), opset_version=9)


def test_keyword_arguments_and_several_outputs():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 2)

        def forward(self, x, *, scale):
            y = self.a(x)
            return y * scale, y.sum(-1)

    model = Two()
    x, s = _x(4, 3), _x(4, 2, seed=3)
    buf = io.BytesIO()
    gx.export(model, (x, {"scale": s}), buf, input_names=["x", "scale"],
              output_names=["scaled", "total"])
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"x": x.numpy(), "scale": s.numpy()})
    want = model(x, scale=s)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.detach().numpy(), rtol=RTOL, atol=ATOL)


def test_python_number_from_a_shape_stays_dynamic():
    class Mean(nn.Module):
        def forward(self, x):
            return x.sum(0) / x.shape[0]  # an int computed from the batch size

    buf = io.BytesIO()
    gx.export(Mean(), (_x(4, 3),), buf, input_names=["x"], dynamic_axes={"x": [0]})
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    x = _x(7, 3, seed=7)
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], Mean()(x).detach().numpy(),
                               rtol=RTOL, atol=ATOL)


def test_export_onnx_helper(tmp_path):
    model, shape = _spotter()
    model.eval()
    report = gx.export_onnx(model, _x(2, *shape), str(tmp_path / "model.onnx"))
    assert report.ok
    sess = ort.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    x = _x(3, *shape, seed=3)
    np.testing.assert_allclose(sess.run(None, {"input": x.numpy()})[0], model(x).detach().numpy(),
                               rtol=RTOL, atol=ATOL)


def test_large_model_uses_external_data(tmp_path, monkeypatch):
    import sys

    # a 1 MB limit stands in for protobuf's 2 GB (the module, not the function of that name)
    monkeypatch.setattr(sys.modules["graphgrad.onnx.export"], "_LIMIT", 1 << 20)
    model = nn.Linear(512, 600)
    path = tmp_path / "big.onnx"
    gx.export(model, (_x(2, 512),), str(path))
    assert sorted(os.listdir(tmp_path)) == ["big.onnx", "big.onnx.data"]
    assert os.path.getsize(path) < 100_000
    onnx.checker.check_model(str(path), full_check=True)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = _x(2, 512)
    np.testing.assert_allclose(sess.run(None, {"input": x.numpy()})[0],
                               model(x).detach().numpy(), rtol=RTOL, atol=ATOL)
    with pytest.raises(gx.ExportError, match="path"):
        gx.export(model, (_x(2, 512),), io.BytesIO())


def test_command_line(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "kws.onnx"
    cmd = [sys.executable, "-m", "graphgrad.onnx", "tests.onnx._cli_model:make",
           "--input-shape", "2,40,51", "-o", str(out)]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    assert res.returncode == 0, res.stderr
    assert "0 errors" in res.stdout
    onnx.checker.check_model(str(out), full_check=True)
