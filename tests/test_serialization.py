"""graphgrad.save / graphgrad.load: safetensors files, structure round trips, atomic writes.

The structure that comes back is compared with what torch.load gives for the same object saved
by torch.save; files are checked against the `safetensors` library in both directions. torch's
own formats are tested in test_serialization_torch.py, malformed files and file-system
hardening in test_serialization_hardening.py.
"""

from __future__ import annotations

import collections
import io
import math
import os
import pickle

import numpy as np
import pytest
import safetensors.numpy as stnp
import torch

import graphgrad
from graphgrad.serialization import SerializationError, _safetensors

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def to_gg(obj):
    """The same structure with torch tensors replaced by graphgrad tensors."""
    if isinstance(obj, torch.Tensor):
        return graphgrad.from_numpy(obj.detach().numpy().copy())
    if isinstance(obj, dict):
        return type(obj)((k, to_gg(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_gg(v) for v in obj)
    return obj


def norm(obj):
    """Types, dtypes, shapes and values of a structure, for either library."""
    if isinstance(obj, (torch.Tensor, graphgrad.Tensor)):
        return ("tensor", str(obj.dtype), tuple(obj.shape), obj.detach().tolist(),
                obj.requires_grad)
    if isinstance(obj, dict):
        return (type(obj).__name__, [(norm(k), norm(v)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [norm(v) for v in obj])
    if isinstance(obj, float) and math.isnan(obj):
        return ("float", "nan")
    return (type(obj).__name__, obj)


def torch_roundtrip(obj, tmp_path):
    path = tmp_path / "torch.pt"
    torch.save(obj, path)
    return torch.load(path, weights_only=True)


def gg_roundtrip(obj, tmp_path):
    path = tmp_path / "gg.safetensors"
    graphgrad.save(obj, path)
    return graphgrad.load(path)


def torch_optimizer_state():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.9), amsgrad=True)
    model(torch.randn(5, 3)).pow(2).sum().backward()
    opt.step()
    return model.state_dict(), opt.state_dict()


# -- round trips ---------------------------------------------------------------------------------
def test_state_dict_roundtrip_matches_torch(tmp_path):
    model_sd, _ = torch_optimizer_state()
    assert norm(gg_roundtrip(to_gg(model_sd), tmp_path)) == norm(
        torch_roundtrip(model_sd, tmp_path))


def test_optimizer_state_dict_roundtrip_matches_torch(tmp_path):
    _, opt_sd = torch_optimizer_state()
    got = gg_roundtrip(to_gg(opt_sd), tmp_path)
    assert norm(got) == norm(torch_roundtrip(opt_sd, tmp_path))
    assert isinstance(got["param_groups"][0]["betas"], tuple)
    assert list(got["state"]) == [0, 1, 2, 3]  # int keys stay ints


def test_graphgrad_module_and_optimizer_roundtrip(tmp_path):
    model = graphgrad.nn.Linear(3, 2)
    opt = graphgrad.optim.Adam(model.parameters(), lr=0.1, betas=(0.8, 0.9))
    for p in model.parameters():
        p.grad = graphgrad.ones_like(p)
    opt.step()
    graphgrad.save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "ck",
                   format="safetensors")
    ck = graphgrad.load(tmp_path / "ck")
    fresh = graphgrad.nn.Linear(3, 2)
    fresh.load_state_dict(ck["model"])
    assert all(np.array_equal(a.detach().numpy(), b.detach().numpy())
               for a, b in zip(fresh.parameters(), model.parameters()))
    opt2 = graphgrad.optim.Adam(fresh.parameters(), lr=0.5)
    opt2.load_state_dict(ck["opt"])
    assert norm(opt2.state_dict()) == norm(opt.state_dict())


def test_python_values_roundtrip_matches_torch(tmp_path):
    obj = {"none": None, "t": True, "f": False, "i": -3, "big": 2**70, "x": 1.5, "inf": math.inf,
           "nan": math.nan, "s": "héllo", "l": [1, [2.0, None]], "tup": (1, (2, "a")),
           7: "int key", (1, 2): "tuple key", 2.5: "float key", "empty": {}, "el": [],
           "od": collections.OrderedDict(b=1, a=2), "tensor": torch.tensor([1, 2])}
    got = gg_roundtrip(to_gg(obj), tmp_path)
    assert norm(got) == norm(torch_roundtrip(obj, tmp_path))


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_roundtrip_and_safetensors_reads_them(tmp_path, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) * 50).astype(dtype)
    sd = {"a": graphgrad.from_numpy(a), "scalar": graphgrad.from_numpy(a[0, 0, None].reshape(())),
          "empty": graphgrad.from_numpy(a[:0]), "t": graphgrad.from_numpy(a).t()}
    path = tmp_path / "d.safetensors"
    graphgrad.save(sd, path)
    got = graphgrad.load(path)
    theirs = stnp.load_file(str(path))
    for k, v in sd.items():
        assert got[k].dtype == v.dtype and np.array_equal(got[k].numpy(), v.numpy())
        assert theirs[k].dtype == v.numpy().dtype and np.array_equal(theirs[k], v.numpy())
    assert list(got) == list(sd)


def test_files_written_by_safetensors_load(tmp_path):
    arrays = {d: (np.arange(6).reshape(2, 3) - 2).astype(d) for d in DTYPES}
    arrays["scalar"] = np.array(3.5, dtype=np.float32)
    path = tmp_path / "theirs.safetensors"
    stnp.save_file(arrays, str(path), metadata={"format": "np"})
    got = graphgrad.load(path)
    assert set(got) == set(arrays)
    for k, a in arrays.items():
        assert isinstance(got[k], graphgrad.Tensor) and got[k].numpy().dtype == a.dtype
        assert np.array_equal(got[k].numpy(), a)
    got["float32"].add_(1)  # loaded tensors are writable


def test_nested_file_is_valid_safetensors(tmp_path):
    _, opt_sd = torch_optimizer_state()
    path = tmp_path / "opt.safetensors"
    graphgrad.save(to_gg(opt_sd), path)
    theirs = stnp.load_file(str(path))
    assert np.array_equal(theirs["state.0.exp_avg"], opt_sd["state"][0]["exp_avg"].numpy())
    assert len(theirs) == 4 * 4  # step, exp_avg, exp_avg_sq, max_exp_avg_sq per parameter


def test_header_layout_is_aligned(tmp_path):
    path = tmp_path / "a.safetensors"
    graphgrad.save({"b": graphgrad.ones(3, dtype=graphgrad.bool),
                    "d": graphgrad.ones(5, dtype=graphgrad.float64),
                    "h": graphgrad.ones(1, dtype=graphgrad.float16)}, path)
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    assert (8 + n) % 8 == 0
    import json

    header = json.loads(raw[8:8 + n])
    sizes = {"F64": 8, "F16": 2, "BOOL": 1}
    for k, v in header.items():
        if k != "__metadata__":
            assert v["data_offsets"][0] % sizes[v["dtype"]] == 0


def test_tensor_attributes_and_sharing(tmp_path):
    w = graphgrad.randn(2, requires_grad=True)
    p = graphgrad.nn.Parameter(graphgrad.ones(2))
    got = gg_roundtrip({"w": w, "again": w, "p": p, "arr": np.arange(3), "np": np.float32(2)},
                       tmp_path)
    assert got["w"].requires_grad and got["w"].is_leaf and got["w"] is got["again"]
    assert type(got["p"]).__name__ == "Parameter" and got["p"].requires_grad
    assert isinstance(got["arr"], np.ndarray) and got["arr"].tolist() == [0, 1, 2]
    assert type(got["np"]) is np.float32 and got["np"] == 2
    one = gg_roundtrip(graphgrad.tensor([1.0, 2.0]), tmp_path)
    assert isinstance(one, graphgrad.Tensor) and one.tolist() == [1.0, 2.0]


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    graphgrad.save({"a": graphgrad.arange(3)}, buf, format="safetensors")
    buf.seek(0)
    assert graphgrad.load(buf)["a"].tolist() == [0, 1, 2]
    with open(tmp_path / "f", "wb") as fh:
        graphgrad.save([graphgrad.ones(1), 2], fh, format="safetensors")
    with open(tmp_path / "f", "rb") as fh:
        got = graphgrad.load(fh, map_location="cpu", weights_only=True)
    assert norm(got) == norm([graphgrad.ones(1), 2])
    graphgrad.save({"x": 1}, str(tmp_path / "str_path"), format="safetensors")
    loaded = graphgrad.load(str(tmp_path / "str_path"), map_location=graphgrad.device("cpu"))
    assert loaded == {"x": 1}


def test_unsupported_objects_are_refused(tmp_path):
    with pytest.raises(TypeError, match="never pickles"):
        graphgrad.save({"m": object()}, tmp_path / "x.safetensors")
    cyc = []
    cyc.append(cyc)
    with pytest.raises(ValueError, match="self-referencing"):
        graphgrad.save(cyc, tmp_path / "x", format="safetensors")
    assert not os.listdir(tmp_path)
    with pytest.raises(RuntimeError, match="no backend for device 'cuda'"):
        graphgrad.load(io.BytesIO(), map_location="cuda")


# -- atomic writes ------------------------------------------------------------------------------
@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_crash_mid_save_keeps_previous_file(tmp_path, monkeypatch, exc):
    path = tmp_path / "ck.safetensors"
    graphgrad.save({"a": graphgrad.zeros(4), "b": graphgrad.zeros(4)}, path)
    before = path.read_bytes()
    real = _safetensors._write_array
    calls = []

    def write_then_crash(fh, a):
        if calls:  # the first tensor is written, the second write fails halfway
            raise exc
        calls.append(1)
        real(fh, a)

    monkeypatch.setattr(_safetensors, "_write_array", write_then_crash)
    with pytest.raises(type(exc)):
        graphgrad.save({"a": graphgrad.ones(4), "b": graphgrad.ones(4)}, path)
    assert calls and path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ck.safetensors"]  # no temp file left behind
    monkeypatch.undo()
    graphgrad.save({"a": graphgrad.ones(4)}, path)
    assert graphgrad.load(path)["a"].tolist() == [1.0] * 4


def test_save_keeps_open_permissions_and_follows_symlinks(tmp_path):
    umask = os.umask(0o022)
    try:
        graphgrad.save({"a": graphgrad.ones(1)}, tmp_path / "p", format="safetensors")
        with open(tmp_path / "q", "wb"):
            pass
    finally:
        os.umask(umask)
    assert os.stat(tmp_path / "p").st_mode & 0o777 == os.stat(tmp_path / "q").st_mode & 0o777
    os.symlink(tmp_path / "p", tmp_path / "link")
    graphgrad.save({"b": graphgrad.ones(1)}, tmp_path / "link", format="safetensors")
    assert os.path.islink(tmp_path / "link") and list(graphgrad.load(tmp_path / "p")) == ["b"]


# -- bad files ----------------------------------------------------------------------------------
def good_bytes():
    buf = io.BytesIO()
    graphgrad.save({"a": graphgrad.arange(10, dtype=graphgrad.float32)}, buf,
                   format="safetensors")
    return buf.getvalue()


@pytest.mark.parametrize("cut", [0, 3, 8, 20, -1, -40])
def test_truncated_file_gives_clear_error(tmp_path, cut):
    raw = good_bytes()
    path = tmp_path / "trunc.safetensors"
    path.write_bytes(raw[:cut])
    with pytest.raises(SerializationError, match=r"trunc\.safetensors.*(truncated|empty)"):
        graphgrad.load(path)


def edited(header_edit):
    raw = good_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = raw[8:8 + n].decode()
    new = header_edit(header).encode()
    return len(new).to_bytes(8, "little") + new + raw[8 + n:]


@pytest.mark.parametrize("raw, match", [
    (lambda: edited(lambda h: h.replace('"F32"', '"Q7"')), "unknown dtype 'Q7'"),
    (lambda: edited(lambda h: h.replace('"F32"', '"U16"').replace("40]", "20]")),
     "dtype U16.*does not support"),
    (lambda: edited(lambda h: h.replace("[10]", "[11]")), "needs 44"),
    (lambda: edited(lambda h: h.replace("[10]", "[-1]")), "corrupt header entry"),
    (lambda: edited(lambda h: h[:-9] + "}" * 9), "corrupt safetensors header"),
    (lambda: edited(lambda h: h.replace('"graphgrad.structure":"', '"graphgrad.structure":"[')),
     "corrupt graphgrad structure"),
    (lambda: edited(lambda h: h.replace('"format":"pt"', '"format":7')), "strings to strings"),
    (lambda: b"\x10" + b"\x00" * 7 + b"[" + b" " * 15, "does not start with"),
    (lambda: (2**40).to_bytes(8, "little") + b"{}", "limit"),
    (lambda: b"\x93NUMPY" + b"\x00" * 40, "NumPy"),
    (lambda: bytes(range(256)) * 4, "safetensors"),
])
def test_corrupt_files_give_clear_errors(tmp_path, raw, match):
    path = tmp_path / "bad.ckpt"
    path.write_bytes(raw())
    with pytest.raises(SerializationError, match=match) as e:
        graphgrad.load(path)
    assert "bad.ckpt" in str(e.value)
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, ValueError)


def test_plain_pickles_are_not_checkpoints(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(pickle.dumps({"a": 1}))  # a pickle without torch's magic number
    with pytest.raises(SerializationError, match="not a torch.save checkpoint"):
        graphgrad.load(path)
