"""The trained keyword spotter as an ONNX file:
``python -m graphgrad.examples.speech_commands export --checkpoint PATH [--output model.onnx]``.
The batch axis stays dynamic; the exporter's audit runs first and onnxruntime checks the file
(needs ``pip install 'graphgrad[onnx]'``).
"""

from __future__ import annotations

import argparse

import numpy as np

import graphgrad as torch

from . import data
from .features import log_mel_spectrogram
from .predict import load_model


def export(checkpoint: str, output: str = "model.onnx"):
    """Writes ``output`` from the checkpoint; returns the audit report."""
    from graphgrad.onnx import export_onnx

    model, words = load_model(checkpoint)
    example = torch.from_numpy(log_mel_spectrogram(np.zeros(data.CLIP_SAMPLES, np.float32))[None])
    report = export_onnx(model, example, output)
    return report, words


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m graphgrad.examples.speech_commands export",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True, help="keyword_spotter.pt written by training")
    ap.add_argument("--output", default="model.onnx", help="the ONNX file (default: %(default)s)")
    args = ap.parse_args(argv)
    report, words = export(args.checkpoint, args.output)
    print(report)
    print(f"wrote {args.output}: input 'input' (batch, mels, frames) -> output 'output' "
          f"(batch, {len(words)}) logits over {', '.join(words)}")
    return report
