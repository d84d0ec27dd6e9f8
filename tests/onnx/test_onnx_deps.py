"""Without the ``onnx`` extra, export and audit fail with an ImportError that says what to
install (and importing graphgrad, or graphgrad.onnx, never needs it)."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

import graphgrad as torch
import graphgrad.onnx as gx


@pytest.mark.parametrize("missing", ["onnx", "onnxruntime"])
def test_missing_package_names_the_extra(monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # import of it raises ImportError
    with pytest.raises(ImportError, match=r"graphgrad\[onnx\]") as info:
        gx.audit(torch.nn.Linear(2, 2), (torch.zeros(3, 2),))
    assert f"'{missing}' package" in str(info.value)
    with pytest.raises(ImportError, match=r"graphgrad\[onnx\]"):
        gx.export(torch.nn.Linear(2, 2), (torch.zeros(3, 2),), io.BytesIO())


def test_import_does_not_need_onnx():
    code = ("import sys; sys.modules['onnx'] = None; sys.modules['onnxruntime'] = None; "
            "import graphgrad, graphgrad.onnx; print(graphgrad.onnx.supported_ops()['add'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "(13, 'Add / Sub (and Mul for alpha)')"
