"""Which keyword a WAV file says, from a checkpoint the example wrote:
``python -m graphgrad.examples.speech_commands predict FILE.wav --checkpoint PATH``.
"""

from __future__ import annotations

import argparse

import numpy as np

import graphgrad as torch

from . import data
from .features import HOP_LENGTH, log_mel_spectrogram
from .model import KeywordSpotter


def load_model(path: str):
    """The fine-tuned model and its words from a checkpoint written by the example."""
    checkpoint = torch.load(path)
    needed = ("model", "words", "config")
    missing = [k for k in needed if not isinstance(checkpoint, dict) or k not in checkpoint]
    if missing or not isinstance(checkpoint["config"], dict) or "width" not in \
            checkpoint["config"]:
        held = (f"a dict with keys {sorted(map(str, checkpoint))}" if isinstance(checkpoint, dict)
                else f"a {type(checkpoint).__name__}")
        raise ValueError(
            f"{path} is not a checkpoint written by the keyword-spotting example: it holds "
            f"{held}, but predict needs 'model' (the state_dict), 'words' (the keywords, in "
            "the order of the model's outputs) and 'config' with 'width'. A bare state_dict "
            "does not say which word each output is; train with `python -m "
            "graphgrad.examples.speech_commands` to write one.")
    model = KeywordSpotter(len(checkpoint["words"]), width=checkpoint["config"]["width"])
    model.load_state_dict(checkpoint["model"])
    model.eval()
    return model, list(checkpoint["words"])


def one_second(wave: np.ndarray) -> np.ndarray:
    """The loudest second of a longer recording (10 ms steps), or a shorter one centred."""
    n = data.CLIP_SAMPLES
    if len(wave) <= n:
        left = (n - len(wave)) // 2
        return np.pad(wave, (left, n - len(wave) - left))
    energy = np.concatenate([[0.0], np.cumsum(wave.astype(np.float64) ** 2)])
    starts = np.arange(0, len(wave) - n + 1, HOP_LENGTH // 2)
    best = starts[np.argmax(energy[starts + n] - energy[starts])]
    return wave[best:best + n]


def predict(model, words, wave: np.ndarray, rate: int) -> list:
    """[(word, probability)] for one recording, most likely first."""
    wave = one_second(data.resample(wave, rate))
    x = torch.from_numpy(log_mel_spectrogram(wave)[None])
    with torch.no_grad():
        probs = torch.softmax(model(x), dim=1)[0].numpy()
    order = np.argsort(-probs)
    return [(words[i], float(probs[i])) for i in order]


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(prog="python -m graphgrad.examples.speech_commands predict",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", metavar="FILE.wav")
    ap.add_argument("--checkpoint", required=True, help="keyword_spotter.pt written by training")
    ap.add_argument("--top", type=int, default=3, help="how many words to show per file")
    args = ap.parse_args(argv)
    model, words = load_model(args.checkpoint)
    results = []
    for path in args.files:
        ranked = predict(model, words, *data.read_wav(path))
        others = ", ".join(f"{w} {p:.1%}" for w, p in ranked[1:args.top])
        print(f"{path}: {ranked[0][0]} ({ranked[0][1]:.1%})" + (f"; then {others}" if others
                                                                   else ""))
        results.append(ranked)
    return results
