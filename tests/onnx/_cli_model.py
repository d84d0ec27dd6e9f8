"""A factory for the command-line test (python -m graphgrad.onnx tests.onnx._cli_model:make)."""

from graphgrad.examples.speech_commands.model import KeywordSpotter


def make():
    return KeywordSpotter(n_classes=4, width=4)
