"""The safetensors format: ``graphgrad.save(obj, "x.safetensors")`` and any safetensors file.

Tensors are stored as safetensors tensors; the Python structure around them (nested dicts,
lists, tuples, numbers, strings) is a JSON description in the header's ``__metadata__``, so a
state dict comes back as it went in. See Note [Checkpoint format]. Nothing is pickled.
"""

from __future__ import annotations

import collections
import json
import math

import numpy as np

from .._device import device as _device_cls
from .._dtype import _by_name as _dtype_by_name
from .._dtype import dtype as _dtype_cls
from .._tensor import Size, Tensor, wrap
from ._errors import SerializationError

__all__ = ["prepare_safetensors", "read_safetensors", "is_safetensors"]

# Note [Checkpoint format]
# A file is a standard safetensors file: 8-byte little-endian header length N, N bytes of JSON
# header ({"__metadata__": {str: str}, name: {"dtype", "shape", "data_offsets"}}), padded with
# spaces to a multiple of 8, then the raw little-endian tensor bytes. Tensors are written in
# order of decreasing item size, so every tensor starts aligned to its item size.
#   * A flat ``{str: Tensor}`` state dict uses its keys as tensor names, so
#     ``safetensors.numpy.load_file`` reads it as the same dict of arrays.
#   * Nested tensors are named by their path ("state.0.exp_avg"); the structure sits in
#     ``__metadata__["graphgrad.structure"]`` as JSON where a dict is {"dict": [[k, v], ...]}
#     (keys keep their type: int keys stay ints), a tuple is {"tuple": [...]}, a list is a JSON
#     list, a tensor is {"tensor": name} (+ "requires_grad", "parameter"), a NumPy array
#     {"ndarray": name}, a NumPy scalar {"npscalar": name}; None/bool/int/float/str are JSON
#     values (NaN and infinities included). Tuples come back as tuples and lists as lists (as
#     torch.load gives them), an OrderedDict as an OrderedDict (with a state dict's
#     ``_metadata``), other dict subclasses as dicts. torch.Size, dtype and device, set,
#     frozenset and bytes (what torch's weights-only unpickler allows) are {"size": [...]},
#     {"dtype": name}, {"device": str}, {"set": [...], "frozen"?: true}, {"bytes": latin-1}.
#   * The same tensor object reached twice is stored once and comes back as one object; distinct
#     tensors that share memory (views) are stored as separate copies.
#   * A safetensors file without our structure loads as a ``{name: Tensor}`` dict.
# Loaded tensors share one writable buffer holding the file's data (no copy per tensor).

_STRUCTURE_KEY = "graphgrad.structure"
_MAX_HEADER = 100_000_000  # the safetensors library's limit

_TO_CODE = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32",
            np.dtype(np.float64): "F64", np.dtype(np.int8): "I8", np.dtype(np.int16): "I16",
            np.dtype(np.int32): "I32", np.dtype(np.int64): "I64", np.dtype(np.uint8): "U8",
            np.dtype(np.bool_): "BOOL"}
_FROM_CODE = {code: dt for dt, code in _TO_CODE.items()}


def _add_bfloat16() -> None:
    """BF16 once graphgrad has a bfloat16 dtype (the ml_dtypes extra)."""
    from ._rebuild import _bfloat16

    bf = _bfloat16()
    if "BF16" not in _FROM_CODE and hasattr(bf, "np"):
        _TO_CODE[np.dtype(bf.np)] = "BF16"
        _FROM_CODE["BF16"] = np.dtype(bf.np)
# Valid safetensors dtypes that graphgrad has no tensor type for (it has no bfloat16).
_UNSUPPORTED = ("BF16", "U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3",
                "F6_E3M2", "C64")


class _Encoder:
    """Turns a Python structure into JSON, collecting its arrays under unique names."""

    def __init__(self, arrays: dict) -> None:
        self.arrays = arrays
        self.names_by_id: dict[int, str] = {}
        self.keep: list = []  # keeps encoded objects alive so their ids stay unique
        self.active: set[int] = set()

    def encode(self, obj):
        return self._node(obj, [])

    def _name(self, obj, path) -> str:
        base = ".".join(path) or "tensor"
        name, k = base, 1
        while name in self.arrays or name == "__metadata__":
            k += 1
            name = f"{base}#{k}"
        self.names_by_id[id(obj)] = name
        self.keep.append(obj)
        return name

    def _array(self, obj, data, path) -> str:
        name = self.names_by_id.get(id(obj))
        if name is None:
            _add_bfloat16()
            if data.dtype not in _TO_CODE:
                raise TypeError(f"graphgrad.save cannot store dtype {data.dtype} (at "
                                f"{'.'.join(path) or 'top level'})")
            name = self._name(obj, path)
            self.arrays[name] = data
        return name

    def _node(self, obj, path):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, Tensor):
            if str(getattr(obj, "layout", "torch.strided")) != "torch.strided":
                raise TypeError(f"graphgrad.save cannot store a {obj.layout} tensor in a "
                                f"safetensors file (at {'.'.join(path) or 'top level'}): save "
                                "it in torch's format, or save its to_dense()")
            node = {"tensor": self._array(obj, obj._data, path)}
            if obj._rg:
                node["requires_grad"] = True
            if type(obj).__name__ == "Parameter":
                node["parameter"] = True
            return node
        if isinstance(obj, np.ndarray):
            return {"ndarray": self._array(obj, obj, path)}
        if isinstance(obj, np.generic):
            return {"npscalar": self._array(obj, np.asarray(obj), path)}
        if isinstance(obj, (int, float)):
            return obj
        if isinstance(obj, Size):  # a tuple, but torch.load gives a torch.Size back
            return {"size": [int(v) for v in obj]}
        if isinstance(obj, _dtype_cls):
            return {"dtype": str(obj).removeprefix("torch.")}
        if isinstance(obj, _device_cls):
            return {"device": str(obj)}
        if isinstance(obj, bytes):
            return {"bytes": obj.decode("latin-1")}
        if isinstance(obj, (set, frozenset)):
            node = {"set": [self._node(v, [*path, str(i)]) for i, v in enumerate(obj)]}
            if isinstance(obj, frozenset):
                node["frozen"] = True
            return node
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in self.active:
                raise ValueError("graphgrad.save cannot store a self-referencing structure "
                                 f"(at {'.'.join(path) or 'top level'})")
            self.active.add(id(obj))
            try:
                return self._container(obj, path)
            finally:
                self.active.discard(id(obj))
        raise TypeError(
            f"graphgrad.save cannot store a {type(obj).__name__} (at "
            f"{'.'.join(path) or 'top level'}): it stores tensors, NumPy arrays, dict, list, "
            "tuple, str, int, float, bool and None, and never pickles objects. Save it in "
            "torch's format (any other file name) or save a state_dict() instead.")

    def _container(self, obj, path):
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if isinstance(k, (Tensor, np.ndarray, dict, list)):
                    raise TypeError(f"graphgrad.save cannot store a dict key of type "
                                    f"{type(k).__name__}")
                items.append([self._node(k, path), self._node(v, [*path, str(k)])])
            node = {"dict": items}
            if isinstance(obj, collections.OrderedDict):
                node["ordered"] = True
                # a state dict's per-module versions, which _load_from_state_dict reads
                meta = getattr(obj, "_metadata", None)
                if isinstance(meta, dict):
                    node["metadata"] = self._node(meta, [*path, "_metadata"])
            return node
        items = [self._node(v, [*path, str(i)]) for i, v in enumerate(obj)]
        return {"tuple": items} if isinstance(obj, tuple) else items


def _layout(arrays: dict, metadata: dict):
    """The header bytes (length prefix included) and the arrays in file order."""
    # Larger items first, so each tensor starts at a multiple of its item size (the header is
    # padded to 8 bytes); a stable sort keeps the caller's order within one size.
    ordered = sorted(arrays.items(), key=lambda kv: -kv[1].dtype.itemsize)
    header = {"__metadata__": metadata}
    offset = 0
    for name, a in ordered:
        nbytes = a.size * a.dtype.itemsize
        header[name] = {"dtype": _TO_CODE[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-(8 + len(raw)) % 8)
    return len(raw).to_bytes(8, "little") + raw, [a for _, a in ordered]


def _write_array(fh, a: np.ndarray) -> None:
    le = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
    fh.write(le.reshape(-1).view(np.uint8).data)


def _write_file(fh, header: bytes, arrays) -> None:
    fh.write(header)
    for a in arrays:
        _write_array(fh, a)


def prepare_safetensors(obj):
    """Encodes ``obj`` (tensors in plain containers) now, so errors come before a file is
    touched, and returns the function that writes it to a binary file."""
    arrays: dict[str, np.ndarray] = {}
    structure = _Encoder(arrays).encode(obj)
    header, ordered = _layout(arrays, {"format": "pt",
                                       _STRUCTURE_KEY: json.dumps(structure,
                                                                  separators=(",", ":"))})
    return lambda fh: _write_file(fh, header, ordered)


def is_safetensors(buf) -> bool:
    """Whether ``buf`` starts like a safetensors file (a header length, then ``{``)."""
    return len(buf) >= 9 and buf[8:9] == b"{"


def read_safetensors(buf, name: str):
    """What ``write_safetensors`` wrote, or ``{name: Tensor}`` for another writer's file."""
    header, data_start = _parse_header(buf, name)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise SerializationError(f"{name}: corrupt safetensors header: __metadata__ must map "
                                 "strings to strings")
    arrays = _arrays(header, buf, data_start, name)
    if _STRUCTURE_KEY not in metadata:
        return {k: wrap(a, False, None) for k, a in arrays.items()}
    try:
        structure = json.loads(metadata[_STRUCTURE_KEY])
        return _Decoder(arrays).node(structure)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError,
            RecursionError) as e:
        raise SerializationError(f"{name}: corrupt graphgrad structure metadata "
                                 f"({type(e).__name__}: {e})") from None


def _parse_header(buf, name: str):
    if len(buf) < 8:
        raise SerializationError(
            f"{name}: file is truncated or empty ({len(buf)} bytes; a safetensors file starts "
            "with an 8-byte header length)")
    n = int.from_bytes(buf[:8], "little")
    if n > len(buf) - 8 or n > _MAX_HEADER or buf[8:9] != b"{":
        if buf[:6] == b"\x93NUMPY":
            raise SerializationError(f"{name} is a NumPy .npy file, not a checkpoint")
        if n > _MAX_HEADER:
            raise SerializationError(f"{name}: not a safetensors file (header length {n} is "
                                     f"over the {_MAX_HEADER}-byte limit)")
        if n > len(buf) - 8:
            raise SerializationError(f"{name}: file is truncated (header length {n} but only "
                                     f"{len(buf) - 8} bytes follow)")
        raise SerializationError(f"{name}: not a safetensors file (the JSON header does not "
                                 "start with '{')")
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # deep nesting: RecursionError
        raise SerializationError(f"{name}: corrupt safetensors header "
                                 f"({type(e).__name__}: {e})") from None
    if not isinstance(header, dict):
        raise SerializationError(f"{name}: corrupt safetensors header (not a JSON object)")
    return header, 8 + n


def _arrays(header: dict, buf, start: int, name: str) -> dict:
    data_len = len(buf) - start
    out = {}
    spans = []
    for key, info in header.items():
        where = f"{name}: tensor {key!r}"
        try:
            code, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
            # type() is int: bools are ints to Python but not dims; NumPy takes dims < 2**63
            ok = (isinstance(shape, list) and all(type(s) is int and 0 <= s < 2**63
                                                  for s in shape)
                  and type(begin) is int and type(end) is int and 0 <= begin <= end)
        except (TypeError, KeyError, ValueError):
            ok = False
        if not ok:
            raise SerializationError(f"{where} has a corrupt header entry: {info!r}")
        if code == "BF16":
            _add_bfloat16()
        dt = _FROM_CODE.get(code)
        if dt is None:
            if code in _UNSUPPORTED:
                raise SerializationError(f"{where} has dtype {code}, which graphgrad does not "
                                         f"support (supported: {', '.join(_FROM_CODE)})")
            raise SerializationError(f"{where} has an unknown dtype {code!r}")
        count = math.prod(shape)  # exact: NumPy's int64 product would wrap around
        if end - begin != count * dt.itemsize:
            raise SerializationError(f"{where}: data_offsets {[begin, end]} hold {end - begin} "
                                     f"bytes but shape {shape} of {code} needs "
                                     f"{count * dt.itemsize}")
        if end > data_len:
            raise SerializationError(f"{name}: file is truncated: tensor {key!r} ends at byte "
                                     f"{end} of the data but the file holds {data_len}")
        spans.append((begin, end, key))
        a = np.frombuffer(buf, dtype=dt.newbyteorder("<"), count=count, offset=start + begin)
        if not a.dtype.isnative or (start + begin) % dt.itemsize:
            a = a.astype(dt)  # big-endian host, or an unaligned tensor from another writer
        try:
            out[key] = a.reshape(shape)
        except (ValueError, OverflowError) as e:  # a shape NumPy cannot index (size 0)
            raise SerializationError(f"{where} has shape {shape}, which NumPy cannot hold "
                                     f"({e})") from None
    # As the safetensors library: tensors tile the data without overlaps (overlapping
    # tensors would alias each other's memory) or holes.
    spans.sort()
    at = 0
    for begin, end, key in spans:
        if begin != at:
            what = "overlaps the tensor before it" if begin < at else "leaves a hole before it"
            raise SerializationError(f"{name}: tensor {key!r} at data_offsets {[begin, end]} "
                                     f"{what} (which ends at {at})")
        at = end
    return out


class _Decoder:
    """Rebuilds the Python structure from its JSON description; see Note [Checkpoint format]."""

    def __init__(self, arrays: dict) -> None:
        self.arrays = arrays
        self.made: dict[str, object] = {}

    def node(self, n):
        # Iterative over containers would gain nothing: depth is that of the user's structure.
        if isinstance(n, list):
            return [self.node(x) for x in n]
        if not isinstance(n, dict):
            return n
        if "dict" in n:
            items = ((self._key(k), self.node(v)) for k, v in n["dict"])
            if not n.get("ordered"):
                return dict(items)
            od = collections.OrderedDict(items)
            if "metadata" in n:
                od._metadata = self.node(n["metadata"])
            return od
        if "tuple" in n:
            return tuple(self.node(x) for x in n["tuple"])
        if "size" in n:
            dims = n["size"]
            if not isinstance(dims, list) or not all(type(d) is int for d in dims):
                raise ValueError(f"torch.Size of non-integers {dims!r}")
            return Size(dims)
        if "dtype" in n:
            return _dtype_by_name(n["dtype"])
        if "device" in n:
            return _device_cls(n["device"])
        if "bytes" in n:
            return n["bytes"].encode("latin-1")
        if "set" in n:
            return (frozenset if n.get("frozen") else set)(self._key(x) for x in n["set"])
        for kind in ("tensor", "ndarray", "npscalar"):
            if kind in n:
                return self._leaf(kind, n)
        raise ValueError(f"unknown structure node {n!r}")

    def _key(self, k):
        k = self.node(k)
        return tuple(k) if isinstance(k, list) else k  # keys must be hashable

    def _leaf(self, kind: str, n: dict):
        name = n[kind]
        if name in self.made:
            return self.made[name]
        a = self.arrays[name]
        if kind == "ndarray":
            obj = a
        elif kind == "npscalar":
            obj = a[()]
        elif n.get("parameter"):
            from ..nn.parameter import Parameter

            obj = Parameter(wrap(a, False, None), bool(n.get("requires_grad")))
        else:
            obj = wrap(a, bool(n.get("requires_grad")) and a.dtype.kind == "f", None)
        self.made[name] = obj
        return obj
