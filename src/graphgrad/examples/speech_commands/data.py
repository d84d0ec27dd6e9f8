"""Keyword clips: eSpeak NG synthesis (cached, deterministic for a seed), time-shift and noise
augmentation, WAV files, and a reader for the Google Speech Commands v2 folder layout.

Synthesis runs in fresh worker processes, one fixed chunk of clips each: eSpeak NG keeps state
across utterances inside a process (see Note [Deterministic synthesis]). NumPy only here (SciPy
is used to resample when it is installed); no graphgrad import, so workers start fast.
"""

from __future__ import annotations

import ctypes
import hashlib
import io
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import tempfile
import wave
from dataclasses import dataclass

import numpy as np

SAMPLE_RATE = 16000
CLIP_SAMPLES = SAMPLE_RATE          # one second, as in Speech Commands
CACHE_VERSION = 1
CHUNK = 500                         # clips per worker process; fixed, so the output is too

# Speech Commands v2's 35 words: the ten commands of its benchmark are the fine-tuning task,
# the other 25 the pretraining one.
FINETUNE_WORDS = ("yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go")
PRETRAIN_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                  "nine", "bed", "bird", "cat", "dog", "happy", "house", "marvin", "sheila",
                  "tree", "wow", "backward", "forward", "follow", "learn", "visual")
# English accents shipped by eSpeak NG 1.51 (Debian) and 1.52 (espeakng-loader) alike.
ACCENTS = ("en", "en-us", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd",
           "en-us-nyc", "en-029")
RATES = (130, 221)                  # words per minute; slower ones overrun a second
PITCHES = (15, 86)                  # eSpeak's 0-99 base pitch
SPLITS = ("train", "validation", "test")

# Note [Deterministic synthesis]
# eSpeak NG seeds its noise sources from the clock unless espeak_ng_SetRandSeed is called, and
# some of its state (pitch flutter, filters) carries from one utterance to the next inside a
# process, even across espeak_Terminate/espeak_Initialize. So one clip depends on the clips
# synthesized before it in the same process. We seed every clip and synthesize each fixed chunk
# of the job list in a fresh process: the output then depends on the seed alone, not on the
# number of cores or on what the calling process did before.


@dataclass
class Clips:
    """Variable-length int16 clips at 16 kHz, stored end to end, with a label, a speaker and a
    split (train, validation or test) for each."""

    words: tuple
    audio: np.ndarray       # int16, all clips concatenated
    offsets: np.ndarray     # int64, len(clips) + 1
    labels: np.ndarray      # int64
    speakers: np.ndarray    # str
    splits: np.ndarray      # str

    def __len__(self) -> int:
        return len(self.labels)

    def clip(self, i: int) -> np.ndarray:
        return self.audio[self.offsets[i]:self.offsets[i + 1]]

    def take(self, index) -> Clips:
        index = np.asarray(index, dtype=np.int64)
        pieces = [self.clip(i) for i in index]
        lengths = np.array([len(p) for p in pieces], dtype=np.int64)
        audio = np.concatenate(pieces) if pieces else np.zeros(0, np.int16)
        return Clips(self.words, audio, np.concatenate([[0], np.cumsum(lengths)]),
                     self.labels[index], self.speakers[index], self.splits[index])

    def split(self, name: str) -> Clips:
        return self.take(np.flatnonzero(self.splits == name))

    def select_words(self, words) -> Clips:
        """The clips of ``words`` only, relabelled 0..len(words)-1 in that order."""
        words = tuple(words)
        mapping = np.full(len(self.words), -1)
        for new, word in enumerate(words):
            mapping[self.words.index(word)] = new
        keep = np.flatnonzero(mapping[self.labels] >= 0)
        out = self.take(keep)
        out.words, out.labels = words, mapping[out.labels]
        return out

    def save(self, path: str) -> None:
        tmp = path + ".tmp.npz"
        np.savez_compressed(tmp, audio=self.audio, offsets=self.offsets, labels=self.labels,
                            speakers=self.speakers.astype("U"), splits=self.splits.astype("U"),
                            words=np.array(self.words))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str) -> Clips:
        with np.load(path) as f:
            return cls(tuple(str(w) for w in f["words"]), f["audio"], f["offsets"], f["labels"],
                       f["speakers"], f["splits"])


# ---------------------------------------------------------------------------------------------
# WAV files and resampling


def read_wav(path) -> tuple[np.ndarray, int]:
    """A PCM WAV file as float32 mono in [-1, 1) and its sample rate."""
    with wave.open(str(path) if not isinstance(path, io.IOBase) else path, "rb") as f:
        width, channels, rate = f.getsampwidth(), f.getnchannels(), f.getframerate()
        raw = f.readframes(f.getnframes())
    if width == 1:
        x = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128) / 128
    elif width in (2, 4):
        dtype = np.int16 if width == 2 else np.int32
        x = np.frombuffer(raw, dtype).astype(np.float32) / -float(np.iinfo(dtype).min)
    else:
        raise ValueError(f"{path}: unsupported sample width of {width} bytes")
    return x.reshape(-1, channels).mean(axis=1), rate


def write_wav(path, x: np.ndarray, rate: int = SAMPLE_RATE) -> None:
    """Writes float (in [-1, 1]) or int16 samples as a 16-bit mono WAV file."""
    x = np.asarray(x)
    if x.dtype != np.int16:
        x = (np.clip(x, -1, 1 - 1 / 32768) * 32768).astype(np.int16)
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(rate)
        f.writeframes(x.astype("<i2").tobytes())


def resample(x: np.ndarray, rate_in: int, rate_out: int = SAMPLE_RATE) -> np.ndarray:
    """Polyphase resampling with SciPy when it is installed, else band-limited FFT resampling."""
    if rate_in == rate_out:
        return np.asarray(x, dtype=np.float32)
    g = np.gcd(rate_in, rate_out)
    try:
        from scipy.signal import resample_poly
    except ImportError:
        n_out = int(round(len(x) * rate_out / rate_in))
        spectrum = np.fft.rfft(x)[: n_out // 2 + 1]
        return (np.fft.irfft(spectrum, n_out) * (n_out / len(x))).astype(np.float32)
    return resample_poly(x, rate_out // g, rate_in // g).astype(np.float32)


def trim(x: np.ndarray, threshold: float = 0.02, margin: int = 800) -> np.ndarray:
    """Cuts leading and trailing silence (below ``threshold`` of the peak), keeping 50 ms."""
    loud = np.flatnonzero(np.abs(x) > threshold * (np.abs(x).max() + 1e-12))
    if len(loud) == 0:
        return x[:0]
    return x[max(loud[0] - margin, 0):loud[-1] + margin]


# ---------------------------------------------------------------------------------------------
# eSpeak NG


def find_backend() -> str:
    """``"library"`` (PyPI ``espeakng-loader``), else ``"cli"`` (``espeak-ng`` on PATH)."""
    try:
        import espeakng_loader  # noqa: F401
        return "library"
    except ImportError:
        pass
    if shutil.which("espeak-ng"):
        return "cli"
    raise RuntimeError("speech synthesis needs eSpeak NG: `pip install graphgrad[examples]` "
                       "(it brings espeakng-loader) or install the espeak-ng program; or pass "
                       "--data PATH to a Speech Commands v2 folder")


def list_variants(backend: str) -> list[str]:
    """Voice variants (timbres) of the installation, as plain names, sorted."""
    if backend == "library":
        import espeakng_loader
        names = os.listdir(os.path.join(espeakng_loader.get_data_path(), "voices", "!v"))
    else:
        out = subprocess.run(["espeak-ng", "--voices=variant"], capture_output=True, text=True,
                             check=True).stdout
        names = [m.group(1) for m in re.finditer(r"!v/(\S+)", out)]
    return sorted(n for n in set(names) if re.fullmatch(r"[A-Za-z0-9_]+", n))


def backend_version(backend: str) -> str:
    if backend == "library":
        from importlib.metadata import version
        return "espeakng-loader " + version("espeakng-loader")
    out = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True).stdout
    return out.strip()


class _Library:
    """libespeak-ng through ctypes, synchronous mode: samples arrive through a callback."""

    def __init__(self):
        import espeakng_loader
        lib = ctypes.CDLL(espeakng_loader.get_library_path())
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                          ctypes.c_int]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint,
                                     ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_void_p]
        self.rate = lib.espeak_Initialize(2, 0, espeakng_loader.get_data_path().encode(), 0)
        if self.rate <= 0:
            raise RuntimeError("espeak_Initialize failed")
        self.chunks = []
        callback_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short),
                                         ctypes.c_int, ctypes.c_void_p)

        def on_samples(samples, n, events):
            if samples and n > 0:
                self.chunks.append(np.ctypeslib.as_array(samples, shape=(n,)).copy())
            return 0

        self.callback = callback_type(on_samples)   # kept alive as long as the library is
        lib.espeak_SetSynthCallback(self.callback)
        self.lib = lib

    def __call__(self, word, voice, rate, pitch, seed):
        self.chunks.clear()
        self.lib.espeak_ng_SetRandSeed(ctypes.c_long(seed))
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise RuntimeError(f"eSpeak NG has no voice {voice!r}")
        self.lib.espeak_SetParameter(1, rate, 0)    # espeakRATE
        self.lib.espeak_SetParameter(3, pitch, 0)   # espeakPITCH
        text = word.encode()
        self.lib.espeak_Synth(text, len(text) + 1, 0, 0, 0, 0, None, None)
        samples = np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.int16)
        return samples.astype(np.float32) / 32768, self.rate


def _cli(word, voice, rate, pitch, seed):
    """One ``espeak-ng`` process per clip (a fresh process, so deterministic by itself)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "clip.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(rate), "-p", str(pitch), "-w", path,
                        word], check=True, capture_output=True)
        return read_wav(path)


def _synthesize_chunk(args):
    """Worker: synthesizes ``jobs`` in order and returns 16 kHz int16 clips, silence trimmed."""
    backend, jobs = args
    speak = _Library() if backend == "library" else _cli
    out = []
    for word, voice, rate, pitch, seed in jobs:
        x, sr = speak(word, voice, rate, pitch, seed)
        x = trim(resample(x, sr))[:CLIP_SAMPLES]
        out.append((np.clip(x, -1, 1 - 1 / 32768) * 32768).astype(np.int16))
    return out


def speaker_splits(variants, seed: int) -> dict:
    """Voice variants held out per split: 20% for test and 10% for validation, never trained."""
    order = np.random.default_rng([seed, 0]).permutation(len(variants))
    n_test, n_val = max(1, len(variants) // 5), max(1, len(variants) // 10)
    return {"test": [variants[i] for i in sorted(order[:n_test])],
            "validation": [variants[i] for i in sorted(order[n_test:n_test + n_val])],
            "train": [variants[i] for i in sorted(order[n_test + n_val:])]}


def make_jobs(words, counts: dict, voices: dict, seed: int):
    """The clip list: for each word and split, ``counts[split]`` clips, each with a random
    accent, a variant of that split, a speed, a pitch and eSpeak's noise seed."""
    rng = np.random.default_rng([seed, 1])
    jobs, labels, speakers, splits = [], [], [], []
    for label, word in enumerate(words):
        for split in SPLITS:
            for _ in range(counts.get(split, 0)):
                accent = ACCENTS[rng.integers(len(ACCENTS))]
                variant = voices[split][rng.integers(len(voices[split]))]
                rate, pitch = int(rng.integers(*RATES)), int(rng.integers(*PITCHES))
                voice = f"{accent}+{variant}"
                jobs.append((word, voice, rate, pitch, int(rng.integers(1, 2**31 - 1))))
                labels.append(label)
                speakers.append(voice)
                splits.append(split)
    return jobs, np.array(labels, np.int64), np.array(speakers), np.array(splits)


def cache_dir() -> str:
    """``$XDG_CACHE_HOME/graphgrad/speech_commands``, by default under ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "graphgrad", "speech_commands")


def synthesize(words, counts: dict, seed: int = 0, cache: str | None = None,
               workers: int | None = None, log=print) -> Clips:
    """Synthesizes (or loads from the cache) ``counts[split]`` clips per word and split.

    The same arguments give the same clips on every run, whatever ``workers`` is.
    """
    backend = find_backend()
    variants = list_variants(backend)
    voices = speaker_splits(variants, seed)
    spec = {"version": CACHE_VERSION, "words": list(words), "counts": counts, "seed": seed,
            "backend": backend_version(backend), "variants": variants, "accents": ACCENTS,
            "rates": RATES, "pitches": PITCHES, "chunk": CHUNK}
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    cache = cache or cache_dir()
    path = os.path.join(cache, f"synth-{key}.npz")
    if os.path.exists(path):
        log(f"data: {path} (cached)")
        return Clips.load(path)

    jobs, labels, speakers, splits = make_jobs(words, counts, voices, seed)
    chunks = [(backend, jobs[i:i + CHUNK]) for i in range(0, len(jobs), CHUNK)]
    workers = workers or min(len(chunks), os.cpu_count() or 1, 4)
    log(f"data: synthesizing {len(jobs)} clips of {len(words)} words with eSpeak NG "
        f"({backend}; {len(ACCENTS)} accents x {len(variants)} voices, "
        f"{len(voices['test'])} voices held out for test) in {workers} process(es)")
    # A fresh process per chunk: see Note [Deterministic synthesis].
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers, maxtasksperchild=1) as pool:
        pieces = [clip for chunk in pool.map(_synthesize_chunk, chunks, chunksize=1)
                  for clip in chunk]
    lengths = np.array([len(p) for p in pieces], dtype=np.int64)
    clips = Clips(tuple(words), np.concatenate(pieces), np.concatenate([[0], np.cumsum(lengths)]),
                  labels, speakers, splits)
    os.makedirs(cache, exist_ok=True)
    clips.save(path)
    log(f"data: cached in {path}")
    return clips


# ---------------------------------------------------------------------------------------------
# The Speech Commands v2 folder layout


def read_speech_commands(root: str, words=None, max_per_word: int | None = None,
                         seed: int = 0) -> tuple[Clips, list]:
    """Reads ``root/<word>/<clip>.wav`` with the splits of ``validation_list.txt`` and
    ``testing_list.txt`` (the rest is train), and ``_background_noise_/*.wav``.

    ``max_per_word`` keeps at most that many training clips per word (and a quarter of it for
    validation and test), chosen with ``seed``. Returns the clips and the background noises.
    """
    def listed(name):
        path = os.path.join(root, name)
        if not os.path.exists(path):
            return set()
        with open(path) as f:
            return {line.strip().replace("\\", "/") for line in f if line.strip()}

    validation, testing = listed("validation_list.txt"), listed("testing_list.txt")
    found = sorted(d for d in os.listdir(root)
                   if os.path.isdir(os.path.join(root, d)) and not d.startswith("_"))
    words = tuple(w for w in (words or found) if w in found)
    if not words:
        raise ValueError(f"{root}: no word folders (expected <word>/<clip>.wav)")
    rng = np.random.default_rng([seed, 2])
    pieces, labels, speakers, splits = [], [], [], []
    for label, word in enumerate(words):
        names = sorted(n for n in os.listdir(os.path.join(root, word)) if n.endswith(".wav"))
        by_split = {s: [] for s in SPLITS}
        for name in names:
            rel = f"{word}/{name}"
            by_split["test" if rel in testing else
                     "validation" if rel in validation else "train"].append(name)
        for split, chosen in by_split.items():
            cap = max_per_word if split == "train" else (max_per_word and max(max_per_word // 4, 1))
            if cap and len(chosen) > cap:
                chosen = [chosen[i] for i in sorted(rng.choice(len(chosen), cap, replace=False))]
            for name in chosen:
                x, rate = read_wav(os.path.join(root, word, name))
                x = resample(x, rate)[:CLIP_SAMPLES]
                pieces.append((np.clip(x, -1, 1 - 1 / 32768) * 32768).astype(np.int16))
                labels.append(label)
                speakers.append(name.split("_nohash_")[0])
                splits.append(split)
    lengths = np.array([len(p) for p in pieces], dtype=np.int64)
    clips = Clips(words, np.concatenate(pieces), np.concatenate([[0], np.cumsum(lengths)]),
                  np.array(labels, np.int64), np.array(speakers), np.array(splits))
    noise_dir = os.path.join(root, "_background_noise_")
    noises = []
    if os.path.isdir(noise_dir):
        for name in sorted(os.listdir(noise_dir)):
            if name.endswith(".wav"):
                x, rate = read_wav(os.path.join(noise_dir, name))
                noises.append(resample(x, rate))
    return clips, noises


# ---------------------------------------------------------------------------------------------
# Augmentation


def colored_noise(rng, n: int) -> np.ndarray:
    """White, pink or brown noise (power falling as f^0, f^-1 or f^-2), unit RMS."""
    alpha = rng.choice([0.0, 1.0, 2.0])
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(spectrum), dtype=np.float64)
    f[0] = 1.0
    x = np.fft.irfft(spectrum / f ** (alpha / 2), n)
    return x / (np.sqrt(np.mean(x * x)) + 1e-12)


def noise_bank(rng, count: int = 12, seconds: int = 4) -> list:
    """A few long colored noises; clips take random excerpts (an FFT per clip costs more)."""
    return [colored_noise(rng, seconds * CLIP_SAMPLES).astype(np.float32) for _ in range(count)]


def place(clips: Clips, index, rng: np.random.Generator | None, noises=(),
          noise_prob: float = 0.8, snr_db=(5.0, 30.0), max_extra_shift: int = 1600):
    """One-second float32 waves (len(index), 16000) of the clips: each clip centred, then, with
    ``rng``, shifted in time (anywhere it still fits, plus up to ``max_extra_shift`` samples
    that may cut its edge), scaled, and mixed with noise at a random SNR. No ``rng``: centred,
    as they are."""
    out = np.zeros((len(index), CLIP_SAMPLES), np.float32)
    bank = noise_bank(rng) if rng is not None else []
    for row, i in enumerate(index):
        x = clips.clip(i).astype(np.float32) / 32768
        slack = CLIP_SAMPLES - len(x)
        start = slack // 2
        if rng is not None:
            reach = slack // 2 + max_extra_shift
            start += int(rng.integers(-reach, reach + 1))
        lo, hi = max(start, 0), min(start + len(x), CLIP_SAMPLES)
        out[row, lo:hi] = x[lo - start:hi - start]
        if rng is None:
            continue
        gain = rng.uniform(0.3, 1.0) / (np.abs(x).max() + 1e-6)
        out[row] *= gain
        if rng.random() < noise_prob:
            pool = noises if len(noises) and rng.random() < 0.5 else bank
            source = pool[rng.integers(len(pool))]
            begin = int(rng.integers(0, max(len(source) - CLIP_SAMPLES, 0) + 1))
            noise = np.resize(source[begin:begin + CLIP_SAMPLES], CLIP_SAMPLES)
            noise = noise / (np.sqrt(np.mean(noise * noise)) + 1e-12)
            speech_rms = gain * np.sqrt(np.mean(x * x))
            snr = rng.uniform(*snr_db)
            out[row] += (speech_rms * 10 ** (-snr / 20) * noise).astype(np.float32)
    return out
