"""Checkpoint hardening (issue 14): file modes, temporary files of killed saves, malformed
safetensors headers, a missing parent directory, and the keyword-spotting example's message
for a checkpoint that is only a state_dict."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import zipfile

import pytest
import torch

import graphgrad
from graphgrad.serialization import SerializationError

FORMATS = ["ck.pt", "ck.safetensors"]


@pytest.mark.parametrize("name", FORMATS)
def test_resave_keeps_a_private_mode_and_temp_is_private(tmp_path, monkeypatch, name):
    path = tmp_path / name
    graphgrad.save({"a": graphgrad.ones(2)}, path)
    os.chmod(path, 0o600)
    modes = []
    real_open = os.open

    def spy(file, flags, mode=0o777, *args, **kwargs):
        fd = real_open(file, flags, mode, *args, **kwargs)
        if ".tmp-" in os.fspath(file):
            modes.append(os.fstat(fd).st_mode & 0o777)  # while it is being written
        return fd

    monkeypatch.setattr(os, "open", spy)
    umask = os.umask(0o022)
    try:
        graphgrad.save({"a": graphgrad.zeros(2)}, path)
        graphgrad.save({"a": graphgrad.zeros(2)}, tmp_path / ("new_" + name))
    finally:
        os.umask(umask)
    assert modes == [0o600, 0o600]
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(tmp_path / ("new_" + name)).st_mode & 0o777 == 0o644  # 0666 minus umask
    assert graphgrad.load(path)["a"].tolist() == [0.0, 0.0]


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_next_save_removes_temp_files_of_dead_saves(tmp_path):
    path = tmp_path / "ck.pt"
    stale = [tmp_path / f".ck.pt.tmp-{dead_pid()}-0badc0de",
             tmp_path / f".ck.pt.{dead_pid()}.deadbeef.tmp"]  # the previous version's name
    alive = tmp_path / f".ck.pt.tmp-{os.getppid()}-12345678"  # a save still running
    other = tmp_path / f".other.pt.tmp-{dead_pid()}-0badc0de"  # another checkpoint's
    for p in (*stale, alive, other):
        p.write_bytes(b"x")
    graphgrad.save({"a": graphgrad.ones(1)}, path)
    assert sorted(os.listdir(tmp_path)) == sorted(["ck.pt", alive.name, other.name])


def test_killed_save_leaves_a_temp_file_that_the_next_save_removes(tmp_path):
    path = tmp_path / "big.pt"
    script = textwrap.dedent(f"""
        import sys, time
        import graphgrad
        from graphgrad.serialization import _torch_format
        real = _torch_format._write_bytes
        def slow(write, mv):
            real(write, mv)
            if len(mv) > 1000:
                print("writing", flush=True)
                time.sleep(60)
        _torch_format._write_bytes = slow
        graphgrad.save({{"w": graphgrad.ones(100_000)}}, {str(path)!r})
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "writing"
        temps = [n for n in os.listdir(tmp_path) if re.fullmatch(
            rf"\.big\.pt\.tmp-{child.pid}-[0-9a-f]+", n)]
        assert len(temps) == 1
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert not path.exists() and len(os.listdir(tmp_path)) == 1
    graphgrad.save({"w": graphgrad.ones(3)}, path)
    assert os.listdir(tmp_path) == ["big.pt"]


@pytest.mark.parametrize("name", FORMATS)
def test_missing_parent_directory_is_named_as_torch_names_it(tmp_path, name):
    target = tmp_path / "no_such_dir" / name
    with pytest.raises(RuntimeError) as theirs:
        torch.save({"a": torch.ones(1)}, target)
    with pytest.raises(RuntimeError) as ours:
        graphgrad.save({"a": graphgrad.ones(1)}, target)
    assert str(ours.value) == str(theirs.value)
    assert not (tmp_path / "no_such_dir").exists()


# -- malformed safetensors headers ----------------------------------------------------------
def file_with(header: dict, data: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw + data


def tensor(shape, offsets, dtype="F32"):
    return {"dtype": dtype, "shape": shape, "data_offsets": offsets}


def deep(n: int) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize("raw, match", [
    # the product overflows int64 (NumPy's product wrapped it to 0, matching empty data)
    (file_with({"a": tensor([2**62, 4], [0, 0])}), "needs"),
    (file_with({"a": tensor([2**64], [0, 4])}, b"\0" * 4), "corrupt header entry"),
    (file_with({"a": tensor([True, 1], [0, 4])}, b"\0" * 4), "corrupt header entry"),
    (file_with({"a": tensor([0, 2**62, 2**62], [0, 0])}), "cannot hold"),
    (len(deep(100_000)).to_bytes(8, "little") + b"{" + deep(100_000)[1:-1].encode() + b"}",
     "corrupt safetensors header"),
    (file_with({"a": tensor([2], [0, 8]), "b": tensor([2], [0, 8])}, b"\0" * 8), "overlaps"),
    (file_with({"a": tensor([1], [0, 4]), "b": tensor([1], [8, 12])}, b"\0" * 12), "hole"),
    (file_with({"__metadata__": {"graphgrad.structure": json.dumps({"size": ["a", "b"]})}}),
     "torch.Size of non-integers"),
    (file_with({"__metadata__": {"graphgrad.structure": deep(100_000)}}), "RecursionError"),
])
def test_malformed_headers_raise_serialization_error(tmp_path, raw, match):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(raw)
    with pytest.raises(SerializationError, match=match):
        graphgrad.load(path)


def test_overlapping_offsets_are_refused_by_safetensors_too(tmp_path):
    import safetensors.numpy

    path = tmp_path / "overlap.safetensors"
    path.write_bytes(file_with({"a": tensor([2], [0, 8]), "b": tensor([2], [0, 8])}, b"\0" * 8))
    with pytest.raises(Exception):  # noqa: B017 - the library's own error type
        safetensors.numpy.load_file(str(path))
    with pytest.raises(SerializationError):
        graphgrad.load(path)


def test_torch_size_of_strings_is_refused_in_a_pickle():
    buf = io.BytesIO()
    torch.save({"s": torch.Size([2])}, buf)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as zf, zipfile.ZipFile(out, "w") as zo:
        for info in zf.infolist():
            data = zf.read(info)
            if info.filename.endswith("data.pkl"):  # torch.Size(("a",))
                data = data.replace(b"K\x02\x85", b"X\x01\x00\x00\x00a\x85")
            zo.writestr(info.filename, data)
    with pytest.raises(SerializationError, match="torch.Size of non-integers"):
        graphgrad.load(io.BytesIO(out.getvalue()))


# -- the keyword-spotting example -------------------------------------------------------------
def test_predict_says_what_a_state_dict_checkpoint_lacks(tmp_path):
    from graphgrad.examples.speech_commands import predict
    from graphgrad.examples.speech_commands.model import KeywordSpotter

    path = tmp_path / "weights.pt"
    graphgrad.save(KeywordSpotter(4, width=8).state_dict(), path)
    with pytest.raises(ValueError, match=r"holds a dict with keys \[.*\], but predict needs "
                       r"'model' .*'words'.*'config'") as e:
        predict.load_model(str(path))
    assert "KeyError" not in repr(e.value)


def test_damaged_checkpoints_raise_only_checkpoint_errors():
    import pickle
    import random

    buf = io.BytesIO()
    torch.manual_seed(0)
    torch.save({"sd": torch.nn.Linear(3, 2).state_dict(), "v": torch.ones(2, 3)[:, 1:],
                "s": torch.Size([1]), "l": [1, (2, "a")]}, buf)
    legacy = io.BytesIO()
    torch.save({"w": torch.arange(4.0), "k": "x"}, legacy, _use_new_zipfile_serialization=False)
    sources = [buf.getvalue(), legacy.getvalue()]
    rng = random.Random(0)
    for _ in range(400):
        raw = bytearray(rng.choice(sources))
        at = rng.randrange(len(raw))
        kind = rng.randrange(3)
        if kind == 0:
            raw[at] = rng.randrange(256)
        elif kind == 1:
            del raw[at:]
        else:
            del raw[at:at + rng.randint(1, 8)]
        try:
            graphgrad.load(io.BytesIO(bytes(raw)))
        except (SerializationError, pickle.UnpicklingError):
            pass
