"""The ONNX tests need the ``onnx`` extra (onnx, onnxruntime); without it they are skipped
with that reason, except test_onnx_deps.py, which checks the error users get."""

from __future__ import annotations

import importlib.util

collect_ignore = []
if importlib.util.find_spec("onnx") is None or importlib.util.find_spec("onnxruntime") is None:
    collect_ignore = ["test_onnx_ops.py", "test_onnx_models.py", "test_onnx_audit.py"]
