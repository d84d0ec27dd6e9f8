"""torch.save's file formats, read and written: the zip archive (torch >= 1.6) and the
legacy sequence of pickles. See Note [torch file formats].

Note [torch file formats]
* zip: records ``<archive>/data.pkl`` (the pickled object, protocol 2; tensors refer to their
  storages by persistent id ``('storage', torch.FloatStorage, key, location, numel)``),
  ``<archive>/data/<key>`` (each storage's raw bytes), ``byteorder`` ("little"/"big"),
  ``version``, ``.format_version``, ``.storage_alignment``. Records are stored uncompressed and
  graphgrad writes each one 64-byte aligned as torch does (so ``mmap=True`` loads can map
  them); it reads any archive name and deflated records too.
* legacy (``_use_new_zipfile_serialization=False``): pickles of the magic number, the protocol
  version (1001) and a sys-info dict, then the object (persistent ids with a sixth element,
  view metadata), then the list of storage keys, then per key an int64 element count and the
  storage's bytes.
Loaded storages are views into the file's buffer (zip) or one allocation each, checked against
the file's size first (legacy); tensors are NumPy views of them, so tensors that shared a
storage when saved share memory again.
"""

from __future__ import annotations

import collections
import copyreg
import io
import os
import pickle
import struct
import sys
import types
import zipfile

import numpy as np

from .._device import device as _device_cls
from .._dtype import dtype as _dtype_cls
from .._storage import UntypedStorage, _base
from .._tensor import Size, Tensor
from . import _options, _rebuild, _unpickle
from ._errors import SerializationError

__all__ = ["MAGIC_NUMBER", "PROTOCOL_VERSION", "prepare_torch", "read_zip", "read_legacy"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_ALIGN = 64
_CHUNK = 1 << 24


class BufferFile:
    """A read-only binary file over a buffer (bytearray, mmap), without copying it."""

    def __init__(self, buf, pos: int = 0) -> None:
        self._mv = memoryview(buf).cast("B")
        self._pos = pos

    def read(self, n: int = -1) -> bytes:
        end = len(self._mv) if n is None or n < 0 else min(self._pos + n, len(self._mv))
        out = self._mv[self._pos:end].tobytes()
        self._pos = max(self._pos, end)
        return out

    def readline(self, limit: int = -1) -> bytes:
        mv = self._mv
        end = len(mv) if limit is None or limit < 0 else min(len(mv), self._pos + limit)
        i = self._pos
        while i < end and mv[i] != 10:
            i += 1
        return self.read(min(i + 1, end) - self._pos)

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos if whence == 0 else self._pos + pos if whence == 1 else len(self._mv) + pos
        return self._pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True


# -- restoring locations (map_location) --------------------------------------------------------
def _restore(storage, location, map_location):
    """The storage a tensor of ``location`` uses under ``map_location``; CPU only."""
    if not isinstance(location, str):
        raise SerializationError(f"{storage.where}: storage location {location!r}")
    loc = location
    if isinstance(map_location, dict):
        loc = map_location.get(location, location)
    elif callable(map_location):
        result = map_location(UntypedStorage._of(storage.bytes), location)
        if result is None:
            loc = location
        elif isinstance(result, UntypedStorage):
            if result._base is not storage.bytes:
                if storage.pending is not None:  # a legacy storage is filled later
                    raise SerializationError(f"{storage.where}: map_location returned a new "
                                             "storage, which legacy files do not support")
                storage = _rebuild.LoadedStorage(
                    np.frombuffer(memoryview(result._base).cast("B"), np.uint8),
                    storage.dtype_name, storage.where)
            return storage
        else:
            raise TypeError(f"map_location returned a {type(result).__name__}, expected a "
                            "storage or None")
    elif map_location is not None:
        return storage  # a device, checked up front
    loc = str(loc)
    if loc.startswith("cuda"):
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
            "is False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")
    if loc != "cpu":
        from .._device import check_device

        try:
            check_device(loc)
        except RuntimeError as e:
            raise SerializationError(f"{storage.where}: storage location {loc!r}: {e}") \
                from None
    return storage


def _pid_fields(pid, n: int, where: str):
    if not isinstance(pid, tuple) or len(pid) < n:
        raise SerializationError(f"{where}: unknown persistent id {pid!r}")
    kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
    return kind, pid[1:]


def _storage_fields(rest, where: str):
    stype, key, location, numel = rest[:4]
    if not isinstance(stype, _rebuild.StorageType):
        raise SerializationError(f"{where}: storage of type {stype!r}")
    if not isinstance(key, str) or type(numel) is not int or numel < 0:
        raise SerializationError(f"{where}: storage key {key!r} with {numel!r} elements")
    if stype.dtype_name is None:
        itemsize = 1
    else:
        d = _rebuild.dtype_named(stype.dtype_name)
        itemsize = _rebuild.numpy_dtype(d, where).itemsize
    return stype, key, location, numel, itemsize


# -- zip ---------------------------------------------------------------------------------------
def read_zip(buf, name: str, weights_only: bool, map_location, pickle_load_args: dict):
    try:
        zf = zipfile.ZipFile(BufferFile(buf))
        names = zf.namelist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as e:
        raise SerializationError(f"{name}: not a readable zip archive ({e})") from None
    pkls = [n for n in names if n == "data.pkl" or (n.endswith("/data.pkl")
                                                    and n.count("/") == 1)]
    if not pkls:
        if any(n.endswith("constants.pkl") or "/code/" in n for n in names):
            raise SerializationError(f"{name} is a TorchScript archive (torch.jit.save); "
                                     "graphgrad loads torch.save checkpoints only")
        raise SerializationError(f"{name}: a zip archive without data.pkl, not a torch.save "
                                 "checkpoint")
    prefix = pkls[0][:-len("data.pkl")]
    order = _options.byteorder_for_unrecorded(sys.byteorder)
    if prefix + "byteorder" in names:
        order = _record(zf, buf, prefix + "byteorder", name).tobytes().decode("ascii",
                                                                              "replace")
        if order not in ("little", "big"):
            raise SerializationError(f"{name}: byteorder record {order!r}")
    swap = order != sys.byteorder
    loaded: dict = {}

    def persistent_load(pid):
        kind, rest = _pid_fields(pid, 5, name)
        if kind != "storage":
            raise SerializationError(f"{name}: unknown persistent id kind {kind!r}")
        stype, key, location, numel, itemsize = _storage_fields(rest, name)
        s = loaded.get(key)
        if s is None:  # each storage is read and mapped once (map_location called once)
            record = f"{prefix}data/{key}"
            if record not in names:
                raise SerializationError(f"{name}: storage record {record} is missing")
            data = _record(zf, buf, record, name, numel * itemsize)
            s = _rebuild.LoadedStorage(data, stype.dtype_name, f"{name}: storage {key}", swap)
            s = loaded[key] = _restore(s, location, map_location)
        return s

    pkl = _record(zf, buf, pkls[0], name)
    return _unpickled(BufferFile(pkl), persistent_load, weights_only, pickle_load_args, name)


def _record(zf, buf, record: str, name: str, expect: int | None = None) -> np.ndarray:
    """A record's bytes: a view into ``buf`` when stored, else decompressed (bounded)."""
    info = zf.getinfo(record)
    if expect is not None and info.file_size != expect:
        raise SerializationError(f"{name}: record {record} holds {info.file_size} bytes but "
                                 f"its tensor storage needs {expect}")
    if info.compress_type == zipfile.ZIP_STORED:
        at = info.header_offset
        head = bytes(memoryview(buf)[at:at + 30])
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise SerializationError(f"{name}: corrupt zip entry {record}")
        start = at + 30 + int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30],
                                                                                 "little")
        if start + info.file_size > len(buf) or info.compress_size != info.file_size:
            raise SerializationError(f"{name}: file is truncated: record {record} ends past "
                                     "the end of the file")
        return np.frombuffer(memoryview(buf)[start:start + info.file_size].cast("B"),
                             np.uint8)
    # deflate expands at most about 1032:1: a larger claimed size is a corrupt header
    if info.file_size > 1100 * info.compress_size + 4096:
        raise SerializationError(f"{name}: record {record} claims {info.file_size} bytes "
                                 f"from {info.compress_size} compressed")
    try:
        data = bytearray(zf.read(record))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as e:
        raise SerializationError(f"{name}: cannot read record {record} ({e})") from None
    return np.frombuffer(data, np.uint8)


def _unpickled(file, persistent_load, weights_only, pickle_load_args, name):
    args = {"encoding": "utf-8", **pickle_load_args}
    try:
        return _unpickle.unpickle(file, persistent_load, weights_only, **args)
    except RecursionError as e:
        raise SerializationError(f"{name}: pickle nested too deeply ({e})") from None
    except (pickle.UnpicklingError, SerializationError, RuntimeError):
        raise
    except (EOFError, struct.error, ValueError, TypeError, IndexError, KeyError,
            AttributeError, OverflowError, MemoryError, UnicodeDecodeError) as e:
        if not weights_only and not isinstance(e, (EOFError, struct.error, MemoryError)):
            raise  # a full unpickle runs the file's own code: its errors are its own
        raise SerializationError(f"{name}: corrupt pickle ({type(e).__name__}: {e})") from None


# -- legacy ------------------------------------------------------------------------------------
def read_legacy(buf, name: str, weights_only: bool, map_location, pickle_load_args: dict):
    f = BufferFile(buf)
    pre = []
    for what in ("magic number", "protocol version", "system info"):
        try:
            pre.append(_unpickle.unpickle(f, _no_pids, True))
        except Exception as e:  # noqa: BLE001 - any failure here: not a legacy checkpoint
            raise SerializationError(f"{name}: not a torch checkpoint (reading its {what}: "
                                     f"{type(e).__name__}: {e})") from None
        if type(pre[0]) is not int or pre[0] != MAGIC_NUMBER:
            raise SerializationError(f"{name}: a pickle file, not a torch.save checkpoint (no "
                                     "magic number); graphgrad.load reads torch.save files, "
                                     "not arbitrary pickles")
    magic, version, info = pre
    if version != PROTOCOL_VERSION or not isinstance(info, dict):
        raise SerializationError(f"{name}: legacy checkpoint of protocol {version!r}")
    little = info.get("little_endian", True)
    swap = bool(little) != (sys.byteorder == "little")
    storages: dict = {}
    restored: dict = {}
    total = [0]

    def persistent_load(pid):
        kind, rest = _pid_fields(pid, 2, name)
        if kind == "module" and not weights_only:
            return rest[0]  # a module class saved with its source (legacy whole modules)
        if kind != "storage" or len(rest) < 4:
            raise SerializationError(f"{name}: unknown persistent id {pid!r}")
        stype, key, location, numel, itemsize = _storage_fields(rest, name)
        if len(rest) > 4 and rest[4] is not None:
            raise SerializationError(f"{name}: storage views (view metadata {rest[4]!r}) are "
                                     "not supported")
        s = storages.get(key)
        if s is None:
            total[0] += numel * itemsize
            if total[0] > len(buf):  # bounded allocation: the bytes must be in the file
                raise SerializationError(f"{name}: file is truncated: its storages need "
                                         f"{total[0]} bytes but the file holds {len(buf)}")
            s = storages[key] = _rebuild.LoadedStorage(np.zeros(numel * itemsize, np.uint8),
                                                       stype.dtype_name,
                                                       f"{name}: storage {key}")
            s.numel, s.itemsize, s.pending = numel, itemsize, []
            restored[key] = _restore(s, location, map_location)
        return restored[key]

    result = _unpickled(f, persistent_load, weights_only, pickle_load_args, name)
    keys = _unpickled(f, _no_pids, True, {}, name)
    if not isinstance(keys, list):
        raise SerializationError(f"{name}: corrupt storage key list")
    pos = f.tell()
    mv = memoryview(buf).cast("B")
    for key in keys:
        s = storages.get(key)
        if s is None:
            raise SerializationError(f"{name}: storage {key!r} is not used by the object")
        if pos + 8 > len(mv):
            raise SerializationError(f"{name}: file is truncated at storage {key}")
        count = int.from_bytes(mv[pos:pos + 8], "little" if little else "big", signed=True)
        nbytes = s.numel * s.itemsize
        if count != s.numel or pos + 8 + nbytes > len(mv):
            raise SerializationError(f"{name}: storage {key} holds {count} elements, expected "
                                     f"{s.numel}, or the file is truncated")
        s.bytes[:] = np.frombuffer(mv[pos + 8:pos + 8 + nbytes], np.uint8)
        if swap and s.itemsize > 1:  # numpy swaps complex numbers per component
            s.bytes.view(_rebuild.numpy_dtype(_rebuild.dtype_named(s.dtype_name), name)
                         ).byteswap(inplace=True)
        pos += 8 + nbytes
        for work in s.pending:
            work()
        s.pending = None
    return result


def _no_pids(pid):
    raise SerializationError(f"unexpected persistent id {pid!r}")


# -- saving ------------------------------------------------------------------------------------
class _StorageRef:
    __slots__ = ("key", "type", "numel", "array")

    def __init__(self, key, stype, numel, array) -> None:
        self.key, self.type, self.numel, self.array = key, stype, numel, array


class _Storages:
    """The storages a pickle refers to, keyed by the memory they are: views share one."""

    def __init__(self) -> None:
        self.by_memory: dict = {}
        self.refs: list[_StorageRef] = []
        self.keep: list = []

    def _new(self, array: np.ndarray, stype) -> _StorageRef:
        ref = _StorageRef(str(len(self.refs)), stype, array.size, array)
        self.refs.append(ref)
        return ref

    def locate(self, a: np.ndarray, dtype):
        """(storage, offset, strides) in elements for array ``a``."""
        stype = _rebuild.storage_type_for(dtype)
        item = a.dtype.itemsize
        base = _base(a)
        if a.size and (base.flags.c_contiguous or base.flags.f_contiguous) \
                and base.nbytes % item == 0:
            off = a.ctypes.data - base.ctypes.data
            extent = off + sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + item
            if off >= 0 and off % item == 0 and extent <= base.nbytes and all(
                    s >= 0 and s % item == 0 for s in a.strides):
                key = (id(base), a.dtype.str)
                ref = self.by_memory.get(key)
                if ref is None:
                    flat = base.reshape(-1, order="A").view(np.uint8).view(a.dtype)
                    ref = self.by_memory[key] = self._new(flat, stype)
                    self.keep.append(base)  # ids stay unique while we pickle
                return ref, off // item, tuple(s // item for s in a.strides)
        c = np.ascontiguousarray(a)
        strides, acc = [], 1
        for n in reversed(a.shape):
            strides.append(acc)
            acc *= max(n, 1)
        return self._new(c.reshape(-1), stype), 0, tuple(reversed(strides))


class TorchPickler(pickle._Pickler):
    """Pickles as torch.save does: graphgrad tensors become ``torch._utils._rebuild_tensor_v2``
    calls on persistent storages, and graphgrad's classes, dtypes, ``Size`` and devices are
    written under torch's names (Note [torch checkpoint names]), so torch reads the file
    without graphgrad installed."""

    def __init__(self, file, protocol: int, storages: _Storages, legacy: bool) -> None:
        super().__init__(file, protocol)
        from ..nn.modules.rnn import RNNBase

        self._rnn_base = RNNBase
        self.storages = storages
        self.legacy = legacy
        _rebuild.init_save_names()

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            pid = ("storage", obj.type, obj.key, "cpu", obj.numel)
            return (*pid, None) if self.legacy else pid
        return None

    def reducer_override(self, obj):
        t = type(obj)
        if t in _PLAIN:
            return NotImplemented
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if t is _rebuild.LayoutName:
            return _rebuild._get_layout, (str(obj),)
        if t is Size:
            return _rebuild._size, (tuple(obj),)
        if t is _device_cls:
            return _rebuild._device, (str(obj),)
        if isinstance(obj, self._rnn_base):
            return self._rnn(obj)
        if t is _rebuild.StorageType or t is _rebuild.MissingDtype:
            return obj.__name__ if t is _rebuild.StorageType else obj.name
        if t is _dtype_cls:
            return str(obj).removeprefix("torch.")  # saved as a global: torch.float32
        return NotImplemented

    @staticmethod
    def _rnn(module):
        # torch's RNNBase.__setstate__ reads _flat_weights, which graphgrad does not keep
        state = dict(module.__dict__)
        names = state.get("_flat_weights_names", [])
        state.setdefault("_flat_weights", [getattr(module, n, None) for n in names])
        return copyreg.__newobj__, (type(module),), state

    def _tensor(self, t: Tensor):
        from ..nn.parameter import Parameter

        layout = str(getattr(t, "layout", "torch.strided"))
        if layout != "torch.strided":  # as torch's Tensor.__reduce_ex__ saves sparse tensors
            name = _rebuild.LayoutName(layout)
            if layout == "torch.sparse_coo":
                data = (t._indices(), t._values(), Size(t.shape), t.is_coalesced())
            elif layout in ("torch.sparse_csr", "torch.sparse_bsr"):
                data = (t.crow_indices(), t.col_indices(), t.values(), Size(t.shape))
            else:
                data = (t.ccol_indices(), t.row_indices(), t.values(), Size(t.shape))
            return _rebuild._rebuild_sparse_tensor, (name, data)
        if isinstance(t, Parameter):
            plain = t.detach()
            state = {k: v for k, v in vars(t).items() if not k.startswith("_")}
            hooks = collections.OrderedDict()
            if state:
                return _rebuild._rebuild_parameter_with_state, (plain, t.requires_grad, hooks,
                                                                state)
            return _rebuild._rebuild_parameter, (plain, t.requires_grad, hooks)
        a = t._data
        ref, offset, strides = self.storages.locate(a, t.dtype)
        return _rebuild._rebuild_tensor_v2, (ref, offset, tuple(a.shape), strides,
                                             bool(t.requires_grad), collections.OrderedDict())

    def save_global(self, obj, name=None):
        hit = _rebuild.torch_name(obj)
        if hit is None:
            return super().save_global(obj, name)
        module, qual = hit
        if self.proto >= 4:
            self.save(module)
            self.save(qual)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + qual.encode("utf-8")
                       + b"\n")
        self.memoize(obj)


_PLAIN = {type(None), bool, int, float, str, bytes, list, dict, tuple, set, frozenset}
# pickle's dispatch table holds the base class's save_global for functions: route it here
TorchPickler.dispatch = {**pickle._Pickler.dispatch,
                         types.FunctionType: lambda self, obj: self.save_global(obj)}


def prepare_torch(obj, protocol: int, legacy: bool):
    """Pickles ``obj`` now (so errors come before a file is touched) and returns the function
    that writes the checkpoint to a binary file."""
    storages = _Storages()
    pkl = io.BytesIO()
    TorchPickler(pkl, protocol, storages, legacy).dump(obj)
    if legacy:
        return lambda fh: _write_legacy(fh, pkl.getbuffer(), storages.refs, protocol)
    return lambda fh: _write_zip(fh, pkl.getbuffer(), storages.refs)


def _as_bytes(a: np.ndarray) -> memoryview:
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return memoryview(np.ascontiguousarray(a).reshape(-1).view(np.uint8))


def _write_bytes(write, mv: memoryview) -> None:
    for i in range(0, len(mv), _CHUNK):
        write(mv[i:i + _CHUNK])


def _write_zip(fh, pkl: memoryview, refs) -> None:
    serial = "".join(str(b % 10) for b in os.urandom(40))
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_record(zf, "data.pkl", memoryview(pkl))
        _write_record(zf, ".format_version", memoryview(b"1"))
        _write_record(zf, ".storage_alignment", memoryview(str(_ALIGN).encode()))
        _write_record(zf, "byteorder", memoryview(sys.byteorder.encode()))
        for ref in refs:
            _write_record(zf, f"data/{ref.key}", _as_bytes(ref.array))
        _write_record(zf, "version", memoryview(b"3\n"))
        _write_record(zf, ".data/serialization_id", memoryview(serial.encode()))


def _write_record(zf: zipfile.ZipFile, record: str, mv: memoryview) -> None:
    info = zipfile.ZipInfo(f"archive/{record}", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = len(mv)
    zip64 = len(mv) * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for a local zip64 extra
    # pad the local header's extra field (id "FB", as torch) so the data starts 64-aligned
    start = zf.fp.tell() + 30 + len(info.filename.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -start % _ALIGN
    info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    with zf.open(info, "w", force_zip64=zip64) as w:
        _write_bytes(w.write, mv)


def _write_legacy(fh, pkl: memoryview, refs, protocol: int) -> None:
    info = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
            "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for value in (MAGIC_NUMBER, PROTOCOL_VERSION, info):
        pickle.dump(value, fh, protocol=protocol)
    fh.write(pkl)
    pickle.dump([ref.key for ref in refs], fh, protocol=protocol)
    for ref in refs:
        fh.write(int(ref.numel).to_bytes(8, sys.byteorder, signed=True))
        _write_bytes(fh.write, _as_bytes(ref.array))
