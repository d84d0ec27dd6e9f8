"""Why the CTC loss has no ONNX mapping: ONNX has no CTC operator, and its forward recursion
over time (a Loop with data-dependent per-sequence lengths) is training-only in practice."""

from __future__ import annotations

from .ops import unsupported

unsupported("ctc_loss", "ONNX has no CTC loss operator; the loss is a training objective whose "
            "log-space alpha recursion would need a Loop over time with per-sequence lengths. "
            "Export the network that produces the log-probabilities, not the loss")
