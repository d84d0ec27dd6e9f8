"""The keyword spotter's ONNX export command: the file onnxruntime runs gives graphgrad's logits,
at batch sizes other than the traced one."""

import numpy as np
import pytest

import graphgrad as torch
from graphgrad.examples.speech_commands import export
from graphgrad.examples.speech_commands.model import KeywordSpotter

ort = pytest.importorskip("onnxruntime", reason="onnxruntime (graphgrad[onnx]) is missing")


def test_export_command_runs_in_onnxruntime(tmp_path, capsys):
    torch.manual_seed(0)
    model = KeywordSpotter(4, width=8)
    checkpoint = tmp_path / "keyword_spotter.pt"
    torch.save({"model": model.state_dict(), "words": ["yes", "no", "up", "down"],
                "config": {"width": 8, "seed": 0}}, str(checkpoint))
    out = tmp_path / "model.onnx"
    export.main(["--checkpoint", str(checkpoint), "--output", str(out)])
    assert "0 errors" in capsys.readouterr().out
    session = ort.InferenceSession(str(out))
    model.eval()
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 40, 51)).astype(np.float32)
        (got,) = session.run(None, {"input": x})
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
