"""ONNX export from the compiler's IR, with an audit that lists every problem in one report.

``graphgrad.onnx.export(model, args, f, ...)`` writes an ONNX file that onnxruntime runs to
graphgrad's numbers; ``graphgrad.onnx.audit(model, args, ...)`` reports unsupported ops, baked
shapes and Python values, axes that did not stay dynamic and train-mode behaviour. Needs the
``onnx`` extra (onnx, onnxruntime), imported only when called. See docs/onnx.md.
"""

from __future__ import annotations

from .audit import AuditReport, audit
from .builder import ExportError
from .export import export

__all__ = ["export", "audit", "AuditReport", "ExportError", "supported_ops", "TrainingMode",
           "export_onnx"]


class TrainingMode:
    """torch.onnx.TrainingMode: pass as ``export(..., training=TrainingMode.EVAL)``."""

    EVAL = "eval"
    TRAINING = "train"
    PRESERVE = None


def export_onnx(model, example_input, path, *, dynamic_batch=True, input_name="input",
                output_name="output", opset_version=None):
    """Exports a one-input, one-output model with a dynamic batch axis (axis 0) to ``path``,
    in eval mode; for examples' ``--export`` commands. Returns the audit report."""
    axes = {input_name: {0: "batch"}, output_name: {0: "batch"}} if dynamic_batch else None
    was = model.training
    model.eval()
    try:
        return export(model, (example_input,), path, input_names=[input_name],
                      output_names=[output_name], dynamic_axes=axes,
                      opset_version=opset_version)
    finally:
        model.train(was)


def supported_ops():
    """{op name: (min opset, ONNX operators)} for every op of graphgrad.ops.OPS that exports;
    ``graphgrad.onnx.ops.REASONS`` says why the others do not."""
    from .ops import MAPPINGS

    return {k: (m.min_opset, m.onnx_ops) for k, m in sorted(MAPPINGS.items())}

