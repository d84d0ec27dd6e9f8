"""Checkpoints both ways with torch 2.13: torch.save -> graphgrad.load and graphgrad.save ->
torch.load, in torch's zip and legacy formats, weights-only and full, plus the safe-globals API
and the refusal of a malicious pickle (nothing executed)."""

from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch

import graphgrad
from graphgrad import serialization
from graphgrad.serialization import SerializationError

FORMATS = [pytest.param(True, id="zip"), pytest.param(False, id="legacy")]
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
          "complex64", "complex128"]


def norm(obj):
    """Types, dtypes, shapes, strides and values of a structure, for either library."""
    if isinstance(obj, (torch.Tensor, graphgrad.Tensor)):
        kind = "param" if isinstance(obj, (torch.nn.Parameter, graphgrad.nn.Parameter)) else "t"
        return (kind, str(obj.dtype), tuple(obj.shape), tuple(obj.stride()),
                obj.detach().tolist(), obj.requires_grad)
    if isinstance(obj, dict):
        meta = getattr(obj, "_metadata", None)
        return (type(obj).__name__, [(norm(k), norm(v)) for k, v in obj.items()], norm(meta))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [norm(v) for v in obj])
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, sorted(map(repr, obj)))
    if isinstance(obj, (torch.dtype, graphgrad.dtype, torch.device, graphgrad.device)):
        return ("named", str(obj))
    return (type(obj).__name__, obj)


def torch_checkpoint():
    """A torch model's and Adam's state dicts, views, and the Python values torch.load allows."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.9), amsgrad=True)
    model(torch.randn(5, 3)).pow(2).sum().backward()
    opt.step()
    base = torch.arange(12.0).reshape(3, 4)
    return {"model": model.state_dict(), "optim": opt.state_dict(), "base": base,
            "rows": base[1:], "t": base.t(), "col": base[:, 2], "expanded": torch.ones(3)[None]
            .expand(2, 3), "param": torch.nn.Parameter(torch.full((2,), 0.5)),
            "leaf": torch.ones(2, requires_grad=True), "size": torch.Size([2, 3]),
            "dtype": torch.float16, "device": torch.device("cpu"), "bytes": b"\x00\xff",
            "set": {1, 2}, "complex": 1 + 2j, "nested": [(1, [2.5]),
                                                                                   {"k": None}],
            "empty": torch.zeros(0, 3), "scalar": torch.tensor(7, dtype=torch.int16),
            "conj": torch.tensor([1 + 2j, 3 - 1j]).conj()}


def to_graphgrad(obj):
    """torch's checkpoint with graphgrad objects, for saving from graphgrad."""
    if isinstance(obj, torch.nn.Parameter):
        return graphgrad.nn.Parameter(to_graphgrad(obj.detach()), obj.requires_grad)
    if isinstance(obj, torch.Tensor):
        t = graphgrad.from_numpy(obj.detach().resolve_conj().numpy().copy())
        return t.requires_grad_() if obj.requires_grad else t
    if isinstance(obj, torch.Size):
        return graphgrad.Size(obj)
    if isinstance(obj, torch.dtype):
        return getattr(graphgrad, str(obj).removeprefix("torch."))
    if isinstance(obj, torch.device):
        return graphgrad.device(str(obj))
    if isinstance(obj, dict):
        out = type(obj)((k, to_graphgrad(v)) for k, v in obj.items())
        if hasattr(obj, "_metadata"):
            out._metadata = obj._metadata
        return out
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_graphgrad(v) for v in obj)
    return obj


def saved_by_torch(obj, zip_format: bool) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=zip_format)
    buf.seek(0)
    return buf


# -- torch.save -> graphgrad.load ---------------------------------------------------------------
@pytest.mark.parametrize("zip_format", FORMATS)
@pytest.mark.parametrize("weights_only", [True, False])
def test_torch_checkpoint_loads_as_torch_loads_it(zip_format, weights_only):
    ck = torch_checkpoint()
    theirs = torch.load(saved_by_torch(ck, zip_format), weights_only=weights_only)
    ours = graphgrad.load(saved_by_torch(ck, zip_format), weights_only=weights_only)
    for key in ck:
        assert norm(ours[key]) == norm(theirs[key]), key
    assert isinstance(ours["model"], collections.OrderedDict)
    assert type(ours["param"]) is graphgrad.nn.Parameter and type(ours["size"]) is graphgrad.Size
    assert ours["dtype"] is graphgrad.float16 and list(ours["optim"]["state"]) == [0, 1, 2, 3,
                                                                                    4, 5]


@pytest.mark.parametrize("zip_format", FORMATS)
def test_views_share_storage_again(zip_format):
    ours = graphgrad.load(saved_by_torch(torch_checkpoint(), zip_format))
    theirs = torch.load(saved_by_torch(torch_checkpoint(), zip_format))
    for lib in (ours, theirs):
        lib["base"][1, 2] = -5.0  # one write is seen through every view of the storage
    for key in ("rows", "t", "col"):
        assert norm(ours[key]) == norm(theirs[key])
    assert ours["rows"].untyped_storage() == ours["base"].untyped_storage()
    assert ours["rows"].untyped_storage() != ours["leaf"].untyped_storage()


@pytest.mark.parametrize("zip_format", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_loads(zip_format, dtype):
    t = (torch.arange(-3, 9).reshape(3, 4) * 37).to(getattr(torch, dtype))
    ours = graphgrad.load(saved_by_torch({"t": t, "v": t[1:, ::2]}, zip_format))
    assert str(ours["t"].dtype) == str(t.dtype)
    assert np.array_equal(ours["t"].numpy(), t.numpy())
    assert np.array_equal(ours["v"].numpy(), t[1:, ::2].numpy())


def test_bfloat16_loads_or_says_what_to_install():
    import safetensors.torch as safetensors_torch

    t = torch.tensor([1.5, -2.25, 3e38], dtype=torch.bfloat16)
    buf = saved_by_torch(t, True)
    if not isinstance(getattr(graphgrad, "bfloat16", None), graphgrad.dtype):
        with pytest.raises(SerializationError, match="bfloat16"):
            graphgrad.load(buf)
        return
    got = graphgrad.load(buf)
    assert got.dtype == graphgrad.bfloat16
    assert got.float().tolist() == t.float().tolist()
    for fmt in ("torch", "safetensors"):  # and back: torch's BFloat16Storage, safetensors BF16
        out = io.BytesIO()
        graphgrad.save({"t": got}, out, format=fmt)
        out.seek(0)
        back = torch.load(out) if fmt == "torch" else safetensors_torch.load(out.getvalue())
        assert back["t"].dtype == torch.bfloat16 and back["t"].tolist() == t.tolist()


def test_dtypes_graphgrad_lacks_are_refused_clearly():
    with pytest.raises(SerializationError, match=r"torch\.uint16"):
        graphgrad.load(saved_by_torch(torch.ones(2, dtype=torch.uint16), True))


def test_torch_module_loads_with_weights_only_false():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8, 3))
    buf = saved_by_torch(model, True)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL "
                       r"torch\.nn\.modules\.container\.Sequential.*add_safe_globals"):
        graphgrad.load(buf)
    buf.seek(0)
    ours = graphgrad.load(buf, weights_only=False)
    assert isinstance(ours[0], graphgrad.nn.Conv2d) and isinstance(ours[3], graphgrad.nn.Linear)
    x = torch.randn(2, 1, 4, 4)
    got = ours(graphgrad.from_numpy(x.numpy())).detach().numpy()
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_safe_globals_allow_a_class():
    model = torch.nn.Linear(2, 1)
    buf = saved_by_torch(model, True)
    needed = [graphgrad.nn.Linear, graphgrad.nn.Parameter]
    with serialization.safe_globals(needed):
        assert serialization.get_safe_globals() == needed
        ours = graphgrad.load(buf)
    assert isinstance(ours, graphgrad.nn.Linear) and serialization.get_safe_globals() == []
    np.testing.assert_array_equal(ours.weight.detach().numpy(), model.weight.detach().numpy())
    serialization.add_safe_globals([graphgrad.nn.Linear])
    try:
        buf.seek(0)
        assert isinstance(graphgrad.load(buf), graphgrad.nn.Linear)
    finally:
        serialization.clear_safe_globals()
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        graphgrad.load(buf)


class Evil:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


@pytest.mark.parametrize("zip_format", FORMATS)
def test_malicious_pickle_is_refused_and_nothing_runs(tmp_path, monkeypatch, zip_format):
    monkeypatch.chdir(tmp_path)
    buf = saved_by_torch({"w": torch.ones(1), "x": Evil()}, zip_format)
    calls = []
    monkeypatch.setattr(os, "system", lambda cmd: calls.append(cmd))
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL (posix|os)"
                       r"\.system"):
        graphgrad.load(buf)
    assert calls == [] and not (tmp_path / "pwned").exists()
    monkeypatch.undo()
    assert serialization.get_unsafe_globals_in_checkpoint(saved_by_torch(
        {"w": torch.ones(1), "x": Evil()}, zip_format)) in (["posix.system"], ["os.system"])


def test_map_location_and_mmap(tmp_path):
    path = tmp_path / "ck.pt"
    w = torch.arange(6.0).reshape(2, 3)
    torch.save({"w": w, "view": w[1]}, path)  # one storage: map_location sees it once
    seen = []
    for where in ("cpu", graphgrad.device("cpu"), {"cpu": "cpu"},
                  lambda storage, loc: seen.append(loc) or storage):
        assert graphgrad.load(path, map_location=where)["w"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert seen == ["cpu"]
    mapped = graphgrad.load(path, mmap=True)["w"]
    mapped.add_(1)  # private mapping: writable, and the file keeps its bytes
    assert mapped.tolist()[0] == [1, 2, 3] and graphgrad.load(path)["w"].tolist()[0] == [0, 1, 2]
    with pytest.raises(ValueError, match="file path"):
        graphgrad.load(io.BytesIO(path.read_bytes()), mmap=True)
    torch.save(torch.ones(1), tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        graphgrad.load(tmp_path / "old.pt", mmap=True)


def test_cuda_storages_need_a_map_location(tmp_path):
    buf = saved_by_torch({"w": torch.ones(2)}, True)
    raw = buf.getvalue()
    # the same file, with its storage's location rewritten to 'cuda:0' in the pickle
    zf = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zo:
        for info in zf.infolist():
            data = zf.read(info)
            if info.filename.endswith("data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            zo.writestr(info.filename, data)
    with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
        graphgrad.load(io.BytesIO(out.getvalue()))
    got = graphgrad.load(io.BytesIO(out.getvalue()), map_location={"cuda:0": "cpu"})
    assert got["w"].tolist() == [1.0, 1.0]


# -- graphgrad.save -> torch.load ---------------------------------------------------------------
@pytest.mark.parametrize("zip_format", FORMATS)
def test_graphgrad_checkpoint_loads_in_torch_weights_only(tmp_path, zip_format):
    ck = torch_checkpoint()
    ck.pop("conj")  # graphgrad has no lazy conjugation: it saves values
    path = tmp_path / "gg.pt"
    graphgrad.save(to_graphgrad(ck), path, _use_new_zipfile_serialization=zip_format)
    theirs = torch.load(path, weights_only=True)
    expected = torch.load(saved_by_torch(ck, True), weights_only=True)
    for key in ck:
        if key in ("rows", "t", "col", "expanded"):  # converted separately: own storages
            assert norm(theirs[key])[4] == norm(expected[key])[4]
        else:
            assert norm(theirs[key]) == norm(expected[key]), key
    assert type(theirs["param"]) is torch.nn.Parameter and type(theirs["size"]) is torch.Size


def test_graphgrad_views_share_storage_in_torch(tmp_path):
    base = graphgrad.arange(12.0).reshape(3, 4)
    path = tmp_path / "v.pt"
    graphgrad.save({"base": base, "rows": base[1:], "t": base.t(), "col": base[:, 2],
                    "exp": graphgrad.ones(3)[None].expand(2, 3)}, path)
    got = torch.load(path)
    assert got["t"].stride() == (1, 4) and got["col"].stride() == (4,)
    assert got["exp"].stride() == (0, 1)
    assert got["rows"].untyped_storage().data_ptr() == got["base"].untyped_storage().data_ptr()
    got["base"][1, 2] = -1.0
    assert got["rows"][0, 2] == -1 and got["t"][2, 1] == -1 and got["col"][1] == -1


def test_graphgrad_module_loads_in_torch_and_back(tmp_path):
    graphgrad.manual_seed(0)
    nn = graphgrad.nn
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                          nn.Linear(8, 3), nn.LayerNorm(3))
    path = tmp_path / "model.pt"
    graphgrad.save(model, path)
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        torch.load(path)
    theirs = torch.load(path, weights_only=False)
    assert type(theirs[0]) is torch.nn.Conv2d and type(theirs[5]) is torch.nn.LayerNorm
    model.eval()
    theirs.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    want = model(graphgrad.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(theirs(torch.from_numpy(x)).detach().numpy(), want, rtol=1e-5,
                               atol=1e-6)
    ours = graphgrad.load(path, weights_only=False).eval()
    assert type(ours[0]) is nn.Conv2d
    np.testing.assert_allclose(ours(graphgrad.from_numpy(x)).detach().numpy(), want)


def test_records_are_64_byte_aligned(tmp_path):
    path = tmp_path / "a.pt"
    graphgrad.save({"a": graphgrad.ones(3), "b": graphgrad.zeros(5, dtype=graphgrad.float64)},
                   path)
    raw = path.read_bytes()
    infos = zipfile.ZipFile(path).infolist()
    assert [i.filename for i in infos][:4] == ["archive/data.pkl", "archive/.format_version",
                                               "archive/.storage_alignment", "archive/byteorder"]
    for info in infos:
        n, e = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + n + e) % 64 == 0, info.filename
        assert info.compress_type == zipfile.ZIP_STORED


def test_safetensors_still_chosen_by_name_or_format(tmp_path):
    graphgrad.save({"a": graphgrad.ones(2)}, tmp_path / "a.safetensors")
    graphgrad.save({"a": graphgrad.ones(2)}, tmp_path / "a.bin", format="safetensors")
    import safetensors.numpy

    for name in ("a.safetensors", "a.bin"):
        assert safetensors.numpy.load_file(str(tmp_path / name))["a"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="format must be one of"):
        graphgrad.save({}, tmp_path / "x", format="npz")


def test_storage_bigger_than_its_record_is_refused():
    raw = saved_by_torch({"w": torch.ones(4)}, True).getvalue()
    zf = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zo:
        for info in zf.infolist():
            data = zf.read(info)
            if info.filename.endswith("data.pkl"):  # claim 2**40 elements
                data = data.replace(b"K\x04t", b"\x8a\x06\x00\x00\x00\x00\x00\x01t")
            zo.writestr(info.filename, data)
    with pytest.raises(SerializationError, match="holds 16 bytes"):
        graphgrad.load(io.BytesIO(out.getvalue()))


def test_view_past_its_storage_is_refused():
    raw = saved_by_torch({"w": torch.ones(4)}, True).getvalue()
    bad = raw.replace(b"K\x00K\x04\x85", b"K\x03K\x04\x85")  # storage offset 3, size 4
    with pytest.raises(SerializationError, match="needs 7 elements but its storage holds 4"):
        graphgrad.load(io.BytesIO(bad))


def zip_with_pickle(pkl: bytes) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zo:
        zo.writestr("archive/data.pkl", pkl)
        zo.writestr("archive/version", "3\n")
    out.seek(0)
    return out


def test_huge_memo_index_allocates_nothing():
    import tracemalloc

    # LONG_BINPUT 2**27: the C unpickler grows its memo array to that index (1 GiB)
    pkl = b"\x80\x02K\x07r\x00\x00\x00\x08."
    tracemalloc.start()
    try:
        assert graphgrad.load(zip_with_pickle(pkl)) == 7
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


def test_counted_bytearray_past_the_end_is_refused():
    pkl = b"\x80\x05\x96" + (2**40).to_bytes(8, "little") + b"abc."
    with pytest.raises(pickle.UnpicklingError, match="past the end"):
        graphgrad.load(zip_with_pickle(pkl), weights_only=False)


class ParameterWithSlots:
    def __reduce__(self):  # a Parameter, then BUILD writing graphgrad's internal slot
        return (torch._utils._rebuild_parameter, (torch.ones(1), False,
                                                  collections.OrderedDict()), {"_data": 3})


def test_build_on_a_tensor_is_refused():
    buf = saved_by_torch({"p": ParameterWithSlots()}, True)
    with pytest.raises(pickle.UnpicklingError, match="can only build OrderedDict"):
        graphgrad.load(buf)


@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True), (5, 2, 3)),
    (lambda nn: nn.GRU(3, 4, batch_first=True), (2, 5, 3)),
    (lambda nn: nn.MultiheadAttention(4, 2), (5, 2, 4)),
])
def test_whole_recurrent_and_attention_modules_cross_both_ways(make, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def run(module, lib):
        xs = [lib.from_numpy(x)] * (3 if isinstance(module, (torch.nn.MultiheadAttention,
                                                             graphgrad.nn.MultiheadAttention))
                                    else 1)
        return module(*xs)[0].detach().numpy()

    ours = make(graphgrad.nn)
    buf = io.BytesIO()
    graphgrad.save(ours, buf)
    buf.seek(0)
    theirs = torch.load(buf, weights_only=False)
    assert type(theirs).__module__.startswith("torch.nn.modules")
    np.testing.assert_allclose(run(theirs, torch), run(ours, graphgrad), rtol=1e-5, atol=1e-6)
    torch.manual_seed(0)
    theirs = make(torch.nn)
    back = graphgrad.load(saved_by_torch(theirs, True), weights_only=False)
    assert type(back).__module__.startswith("graphgrad.nn.modules")
    np.testing.assert_allclose(run(back, graphgrad), run(theirs, torch), rtol=1e-5, atol=1e-6)


def test_torch_serialization_options(tmp_path):
    import mmap

    path = tmp_path / "ck.pt"
    torch.save({"w": torch.zeros(3)}, path)
    with serialization.set_default_mmap_options(mmap.MAP_SHARED):
        assert serialization.get_default_mmap_options() == mmap.MAP_SHARED
        graphgrad.load(path, mmap=True)["w"].add_(2)  # a shared mapping writes the file
    assert serialization.get_default_mmap_options() == torch.serialization \
        .get_default_mmap_options()
    assert torch.load(path)["w"].tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="MAP_PRIVATE or mmap.MAP_SHARED"):
        serialization.set_default_mmap_options(7)
    assert serialization.get_default_load_endianness() is None
    serialization.set_default_load_endianness(serialization.LoadEndianness.LITTLE)
    try:
        assert serialization.get_default_load_endianness() is serialization.LoadEndianness \
            .LITTLE
    finally:
        serialization.set_default_load_endianness(None)
    with pytest.raises(NotImplementedError, match="skip_data"):
        with serialization.skip_data():
            pass
    assert issubclass(serialization.SourceChangeWarning, Warning)
    assert serialization.DEFAULT_PROTOCOL == torch.serialization.DEFAULT_PROTOCOL
    for name in ("MAGIC_NUMBER", "PROTOCOL_VERSION", "SHORT_SIZE", "INT_SIZE", "LONG_SIZE",
                 "IS_WINDOWS", "UNSAFE_MESSAGE", "STORAGE_KEY_SEPARATOR"):
        assert getattr(serialization, name) == getattr(torch.serialization, name), name


def test_unaligned_records_load_aligned():
    raw = saved_by_torch({"w": torch.arange(5.0, dtype=torch.float64)}, True)
    with zipfile.ZipFile(raw) as zf:  # rewritten by Python's zipfile: records not aligned
        pkl = zf.read("archive/data.pkl")
        data = zf.read("archive/data/0")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zo:
        zo.writestr("archive/data.pkl", pkl)
        zo.writestr("archive/data/0", data)
        zo.writestr("archive/version", "3\n")
    w = graphgrad.load(io.BytesIO(out.getvalue()))["w"]
    assert w._data.flags.aligned and w.tolist() == [0, 1, 2, 3, 4]


def test_numpy_values_need_safe_globals_as_in_torch():
    buf = saved_by_torch({"a": np.arange(3.0), "s": np.float32(2)}, True)
    with pytest.raises(pickle.UnpicklingError, match=r"numpy\._core\.multiarray\._reconstruct"):
        graphgrad.load(buf)
    buf.seek(0)
    assert serialization.get_unsafe_globals_in_checkpoint(buf) == [
        "numpy._core.multiarray._reconstruct", "numpy.ndarray", "numpy.dtype",
        "numpy._core.multiarray.scalar"]
    buf.seek(0)
    with serialization.safe_globals([np._core.multiarray._reconstruct, np.ndarray, np.dtype,
                                     np.dtypes.Float64DType, np._core.multiarray.scalar,
                                     np.dtypes.Float32DType]):
        got = graphgrad.load(buf)
    assert got["a"].tolist() == [0.0, 1.0, 2.0] and type(got["s"]) is np.float32


def test_previous_graphgrad_files_load_under_any_name(tmp_path):
    # the previous version wrote safetensors under every name; load tells formats apart
    obj = {"w": graphgrad.arange(3.0), "step": 4, "nested": [(1, "a")]}
    path = tmp_path / "old_checkpoint.pt"
    graphgrad.save(obj, path, format="safetensors")
    assert norm(graphgrad.load(path)) == norm(obj)


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_pickle_protocols(protocol):
    buf = io.BytesIO()
    graphgrad.save({"sd": graphgrad.nn.Linear(2, 1).state_dict(), "s": graphgrad.Size([2])},
                   buf, pickle_protocol=protocol)
    buf.seek(0)
    theirs = torch.load(buf, weights_only=protocol == 2)  # torch's allowlist: protocol 2 only
    buf.seek(0)
    ours = graphgrad.load(buf)
    assert norm(ours["sd"]) == norm(theirs["sd"]) and type(theirs["s"]) is torch.Size


def test_training_resumes_across_libraries():
    """A torch model+Adam checkpoint resumed in graphgrad, then graphgrad's checkpoint resumed
    in torch, follow torch's own uninterrupted run."""
    torch.manual_seed(0)

    def mlp(nn):
        return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))

    tm = mlp(torch.nn)
    topt = torch.optim.Adam(tm.parameters(), lr=0.01, amsgrad=True)
    x = torch.randn(5, 3)

    def step(model, opt, xs):
        opt.zero_grad()
        model(xs).pow(2).sum().backward()
        opt.step()

    step(tm, topt, x)
    ck = graphgrad.load(saved_by_torch({"m": tm.state_dict(), "o": topt.state_dict()}, True))
    gm = mlp(graphgrad.nn)
    gm.load_state_dict(ck["m"])
    gopt = graphgrad.optim.Adam(gm.parameters(), lr=0.5)
    gopt.load_state_dict(ck["o"])
    for _ in range(3):
        step(tm, topt, x)
        step(gm, gopt, graphgrad.from_numpy(x.numpy()))
    buf = io.BytesIO()
    graphgrad.save({"m": gm.state_dict(), "o": gopt.state_dict()}, buf)
    buf.seek(0)
    ck = torch.load(buf)
    tm2 = mlp(torch.nn)
    tm2.load_state_dict(ck["m"])
    topt2 = torch.optim.Adam(tm2.parameters(), lr=0.5)
    topt2.load_state_dict(ck["o"])
    for _ in range(3):
        step(tm, topt, x)
        step(tm2, topt2, x)
    for a, b in zip(tm.parameters(), tm2.parameters()):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore:Sparse invariant checks", "ignore:Sparse CSR tensor support")
def test_sparse_tensors_cross_both_ways():
    t = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [1, 0, 2]]), torch.tensor([1., 2., 3.]),
                                (2, 3))
    for theirs in (t, t.coalesce(), t.to_sparse_csr()):
        ours = graphgrad.load(saved_by_torch({"s": theirs}, True))["s"]
        assert str(ours.layout) == str(theirs.layout)
        np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
        buf = io.BytesIO()
        graphgrad.save({"s": ours}, buf)
        buf.seek(0)
        back = torch.load(buf)["s"]
        assert back.layout == theirs.layout and torch.equal(back.to_dense(), theirs.to_dense())
        if theirs.layout == torch.sparse_coo:
            assert ours.is_coalesced() == theirs.is_coalesced() == back.is_coalesced()
    bad = torch.sparse_coo_tensor(torch.tensor([[0, 7]]), torch.tensor([1.0, 2.0]), (2,),
                                  check_invariants=False)  # an index past the size
    with pytest.raises(SerializationError, match="sparse"):
        graphgrad.load(saved_by_torch(bad, True))
    with pytest.raises(TypeError, match="sparse_coo tensor in a safetensors file"):
        graphgrad.save({"s": ours.to_sparse()}, io.BytesIO(), format="safetensors")
