"""The keyword-spotting example: log-mel features against references, the Speech Commands v2
folder reader on a fake tree, deterministic synthesis, and ``--quick`` runs end to end (with
and without ``--leak``), including ``predict`` on WAV files.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from graphgrad.examples.speech_commands import data, features

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
MODULE = "graphgrad.examples.speech_commands"


def _has_espeak() -> bool:
    try:
        data.find_backend()
        return True
    except RuntimeError:
        return False


needs_espeak = pytest.mark.skipif(not _has_espeak(),
                                  reason="needs eSpeak NG: espeakng-loader or espeak-ng on PATH")


def _reference_signal():
    # Same formula as fixtures/make_logmel_reference.py.
    t = np.arange(16000) / 16000
    chirp = np.sin(2 * np.pi * (200 * t + 1900 * t ** 2))
    tone = 0.5 * np.sin(2 * np.pi * 440 * t) * (0.5 + 0.5 * np.cos(2 * np.pi * 3 * t))
    burst = 0.3 * np.sin(2 * np.pi * 3000 * t) * ((t > 0.4) & (t < 0.6))
    return (0.4 * (chirp + tone + burst)).astype(np.float32)


def test_log_mel_matches_librosa_reference():
    # Stored outputs of librosa 0.11 (filters.mel and feature.melspectrogram, Slaney scale and
    # norm, centred constant-padded frames); see fixtures/make_logmel_reference.py.
    ref = np.load(os.path.join(FIXTURES, "logmel_librosa.npz"))
    fb = features.mel_filterbank(16000, 512, 40, 20.0, 8000.0)
    np.testing.assert_allclose(fb, ref["mel_filterbank"], rtol=1e-5, atol=1e-8)
    log_mel = features.log_mel_spectrogram(_reference_signal())
    np.testing.assert_allclose(log_mel, ref["log_mel"], atol=1e-4)


def test_power_spectrogram_matches_torch_stft():
    torch = pytest.importorskip("torch", reason="needs torch (the test extra) for torch.stft")
    rng = np.random.default_rng(0)
    waves = np.stack([_reference_signal(), rng.standard_normal(16000).astype(np.float32) * 0.1,
                      np.zeros(16000, np.float32)])
    waves[2, 7000:7100] = 1.0
    for n_fft, win, hop in ((512, 480, 320), (400, 400, 160), (256, 200, 100)):
        ours = features.power_spectrogram(waves, n_fft, win, hop)
        spec = torch.stft(torch.from_numpy(waves).double(), n_fft=n_fft, hop_length=hop,
                          win_length=win, window=torch.hann_window(win, dtype=torch.float64),
                          center=True, pad_mode="constant", return_complex=True)
        expected = (spec.abs() ** 2).numpy()
        assert ours.shape == expected.shape
        np.testing.assert_allclose(ours, expected, rtol=1e-3, atol=1e-4 * expected.max())


def _tone(freq, seconds, rate):
    t = np.arange(int(seconds * rate)) / rate
    return 0.5 * np.sin(2 * np.pi * freq * t)


def make_fake_tree(root, words=("yes", "no", "zero", "one"), speakers=("aa11", "bb22", "cc33"),
                   clips_per_speaker=2):
    """A tiny Speech Commands v2 tree: <word>/<speaker>_nohash_<n>.wav, the two split lists
    (speaker bb22 is validation, cc33 test), and _background_noise_/."""
    validation, testing = [], []
    for w, word in enumerate(words):
        os.makedirs(root / word)
        for speaker in speakers:
            for n in range(clips_per_speaker):
                name = f"{speaker}_nohash_{n}.wav"
                # One clip per word at 8 kHz and 0.5 s, to exercise resampling and padding.
                rate, seconds = (8000, 0.5) if (speaker, n) == ("aa11", 1) else (16000, 1.0)
                data.write_wav(root / word / name, _tone(300 + 100 * w, seconds, rate), rate)
                if speaker == "bb22":
                    validation.append(f"{word}/{name}")
                elif speaker == "cc33":
                    testing.append(f"{word}/{name}")
    (root / "validation_list.txt").write_text("\n".join(validation) + "\n")
    (root / "testing_list.txt").write_text("\n".join(testing) + "\n")
    os.makedirs(root / "_background_noise_")
    noise = np.random.default_rng(0).uniform(-0.5, 0.5, 48000)
    data.write_wav(root / "_background_noise_" / "white_noise.wav", noise)
    return words


def test_speech_commands_tree(tmp_path):
    words = make_fake_tree(tmp_path)
    clips, noises = data.read_speech_commands(str(tmp_path))
    assert clips.words == tuple(sorted(words))
    assert len(clips) == 4 * 3 * 2
    for split, speaker in (("train", "aa11"), ("validation", "bb22"), ("test", "cc33")):
        part = clips.split(split)
        assert len(part) == 8 and set(part.speakers) == {speaker}
        assert sorted(np.bincount(part.labels)) == [2, 2, 2, 2]
    lengths = np.diff(clips.offsets)
    assert sorted(set(lengths)) == [8000, 16000]         # 0.5 s at 8 kHz -> 8000 at 16 kHz
    # The resampled clip keeps its tone: "one" was written as 600 Hz at 8 kHz.
    half = clips.take(np.flatnonzero(lengths == 8000)).select_words(["one"]).clip(0) / 32768
    spectrum = np.abs(np.fft.rfft(half))
    assert abs(np.argmax(spectrum) * 16000 / len(half) - 600) <= 2
    assert len(noises) == 1 and len(noises[0]) == 48000

    fine = clips.select_words(["yes", "no"])
    assert fine.words == ("yes", "no") and len(fine) == 12
    # Clips keep their order (the tree's sorted words); labels follow the new word order.
    assert [fine.words[label] for label in fine.labels] == ["no"] * 6 + ["yes"] * 6
    assert list(fine.labels[:6]) == [1] * 6
    capped, _ = data.read_speech_commands(str(tmp_path), words=["yes"], max_per_word=1)
    assert capped.words == ("yes",) and list(capped.splits) == ["train", "validation", "test"]

    # Augmentation: centred without rng; with one, deterministic for a seed, one second long.
    plain = data.place(clips, [0], None)
    assert plain.shape == (1, 16000)
    np.testing.assert_array_equal(plain[0], clips.clip(0) / np.float32(32768))
    a = data.place(clips, range(6), np.random.default_rng(3), noises)
    b = data.place(clips, range(6), np.random.default_rng(3), noises)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, data.place(clips, range(6), np.random.default_rng(4), noises))
    assert features.batch_log_mel(a).shape == (6, 40, 51)


def test_quick_run_on_fake_tree(tmp_path):
    make_fake_tree(tmp_path / "sc")
    out = _run("--quick", "--data", str(tmp_path / "sc"), "--out", str(tmp_path / "out"),
               "--pretrain-epochs", "1", "--finetune-epochs", "1")
    assert "data: 24 clips of 4 words" in out
    assert re.search(r"fine-tune accuracy \(held-out voices\): [\d.]+%", out)
    assert os.path.exists(tmp_path / "out" / "keyword_spotter.pt")


@needs_espeak
def test_synthesis_is_deterministic_and_cached(tmp_path):
    words, counts = ("yes", "seven"), {"train": 3, "test": 2}
    logs = []
    a = data.synthesize(words, counts, seed=5, cache=str(tmp_path / "a"), log=logs.append)
    b = data.synthesize(words, counts, seed=5, cache=str(tmp_path / "b"), workers=1,
                        log=logs.append)
    np.testing.assert_array_equal(a.audio, b.audio)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    assert list(a.speakers) == list(b.speakers)
    assert len(a) == 10 and list(a.splits[:5]) == ["train"] * 3 + ["test"] * 2
    assert all(0 < n <= 16000 for n in np.diff(a.offsets))
    # Held-out voices: no test clip's variant is a training clip's.
    variant = np.array([s.split("+")[1] for s in a.speakers])
    assert not set(variant[a.splits == "test"]) & set(variant[a.splits == "train"])
    c = data.synthesize(words, counts, seed=5, cache=str(tmp_path / "a"), log=logs.append)
    assert "(cached)" in logs[-1]
    np.testing.assert_array_equal(a.audio, c.audio)
    d = data.synthesize(words, counts, seed=6, cache=str(tmp_path / "a"), log=logs.append)
    assert not np.array_equal(a.audio[:1000], d.audio[:1000])


def _run(*args, timeout=300):
    extra = [] if args[0] == "predict" else ["--no-progress"]
    proc = subprocess.run([sys.executable, "-m", MODULE, *args, *extra],
                          capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    return out


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("speech_cache"))


def _memory(out, label):
    """[(first, last)] KiB per epoch of the stage ``label`` from the printed epoch lines."""
    pattern = rf"\[{re.escape(label)}\] epoch .*memory per batch (\d+) -> (\d+) KiB"
    return [(int(a), int(b)) for a, b in re.findall(pattern, out)]


@needs_espeak
def test_quick_end_to_end_and_predict(tmp_path, cache):
    out = _run("--quick", "--out", str(tmp_path), "--cache-dir", cache)
    pre = float(re.search(r"pretrain accuracy \(held-out voices\): ([\d.]+)%", out).group(1))
    fine = float(re.search(r"fine-tune accuracy \(held-out voices\): ([\d.]+)%", out).group(1))
    assert 0 <= pre <= 100 and 0 <= fine <= 100
    assert "GraphRetentionWarning" not in out
    # total += loss.item(): memory after every fine-tuning step is the same.
    memory = _memory(out, "fine-tune")
    assert memory and all(a == b for a, b in memory)
    checkpoint = tmp_path / "keyword_spotter.pt"
    assert checkpoint.exists()
    with open(tmp_path / "training.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"

    # predict: a held-out synthesized word as it is, and inside 2 s of audio at 22.05 kHz.
    from graphgrad.examples.speech_commands.__main__ import QUICK
    words = QUICK["finetune_words"]
    clips = data.synthesize(words, QUICK["finetune_counts"], 1, cache, log=lambda _: None)
    word = clips.clip(int(np.flatnonzero(clips.splits == "test")[0])) / 32768
    data.write_wav(tmp_path / "word.wav", word)
    longer = np.zeros(32000, np.float32)
    longer[20000:20000 + len(word)] = word
    data.write_wav(tmp_path / "long.wav", data.resample(longer, 16000, 22050), 22050)
    out = _run("predict", str(tmp_path / "word.wav"), str(tmp_path / "long.wav"),
               "--checkpoint", str(checkpoint))
    lines = re.findall(r"(\S+\.wav): (\w+) \(([\d.]+)%\); then (.*)", out)
    assert len(lines) == 2, out
    for _, predicted, p, rest in lines:
        assert predicted in words and 100 / len(words) <= float(p) <= 100
        assert len(rest.split(", ")) == 2


@needs_espeak
def test_quick_leak_warns_and_memory_grows(tmp_path, cache):
    out = _run("--quick", "--leak", "--out", str(tmp_path), "--cache-dir", cache)
    assert "GraphRetentionWarning" in out
    assert re.search(r"kept alive by: train\.py:\d+ .*total_loss \+= loss \* len\(yb\)", out)
    flat, leaky = _memory(out, "fine-tune"), _memory(out, "fine-tune (leak)")
    assert flat and all(a == b for a, b in flat)
    assert all(b > a for a, b in leaky)                   # grows within every epoch
    assert leaky[-1][1] > leaky[0][0] + 50                # and across them (KiB)
    m = re.search(r"total \+= loss\.item\(\): (\d+) -> (\d+) KiB; total \+= loss: (\d+) -> "
                  r"(\d+) KiB", out)
    a0, a1, b0, b1 = map(int, m.groups())
    assert a0 == a1 and b1 > b0
    # The leak changes memory only: the same accuracy with and without it.
    accs = re.findall(r"fine-tune(?: \(leak\))?: held-out voices accuracy ([\d.]+)%", out)
    assert len(accs) == 2 and accs[0] == accs[1]
    assert (tmp_path / "training.png").exists()


def _mpi_missing():
    try:
        import mpi4py.MPI  # noqa: F401
        return None
    except (ImportError, RuntimeError) as e:     # RuntimeError: mpi4py without an MPI library
        return f"needs mpi4py and an MPI library (pip install '.[distributed]'): {e}"


@needs_espeak
@pytest.mark.skipif(_mpi_missing() is not None, reason=_mpi_missing() or "")
def test_quick_data_parallel_two_ranks(tmp_path, cache):
    out = _run("--quick", "--nproc", "2", "--out", str(tmp_path), "--cache-dir", cache)
    assert "data-parallel on 2 ranks: 16 clips per rank and step" in out
    # Rank 0 alone reports and writes; every epoch line and the summary appear once.
    assert out.count("fine-tune accuracy (held-out voices)") == 1
    assert len(re.findall(r"\[pretrain\] epoch 1/2", out)) == 1
    assert len(_memory(out, "fine-tune")) == 3
    assert all(a == b for a, b in _memory(out, "fine-tune"))
    assert "GraphRetentionWarning" not in out
    assert sorted(os.listdir(tmp_path)) == ["keyword_spotter.pt", "training.png"]
    # The checkpoint is an ordinary one: predict reads it.
    from graphgrad.examples.speech_commands.__main__ import QUICK
    clips = data.synthesize(QUICK["finetune_words"], QUICK["finetune_counts"], 1, cache,
                            log=lambda _: None)
    data.write_wav(tmp_path / "word.wav", clips.clip(0) / 32768)
    out = _run("predict", str(tmp_path / "word.wav"), "--checkpoint",
               str(tmp_path / "keyword_spotter.pt"))
    assert re.search(r"word\.wav: (\w+) \(", out).group(1) in QUICK["finetune_words"]
