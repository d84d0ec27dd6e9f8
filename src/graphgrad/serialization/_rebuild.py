"""What torch's pickles name, rebuilt as graphgrad objects: storages, tensors, parameters,
dtypes, ``torch.Size`` and devices; every argument is checked before memory is touched.

Note [torch checkpoint names]
A torch pickle builds a tensor by calling ``torch._utils._rebuild_tensor_v2(storage,
storage_offset, size, stride, requires_grad, backward_hooks[, metadata])``, where ``storage``
is a persistent id ``('storage', torch.FloatStorage, key, location, numel)`` resolved by the
container (zip record ``data/<key>``, or the legacy file's storage section). The functions
here play those roles when loading, and the same objects name torch's globals when saving
(``TORCH_NAMES``), so graphgrad writes the pickles torch writes.
"""

from __future__ import annotations

import collections
import importlib
import math

import numpy as np

from .. import _dtype
from .._device import device as _device_cls
from .._tensor import Size, Tensor, wrap
from ._errors import SerializationError


# -- dtypes and storage types -----------------------------------------------------------------
class MissingDtype:
    """A torch dtype graphgrad has no tensors for (``torch.uint16``, quantized types)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _bfloat16():
    bf = getattr(_dtype, "bfloat16", None)
    return bf if isinstance(bf, _dtype.dtype) else MissingDtype("bfloat16")


# torch's dtypes by name; those graphgrad lacks load as MissingDtype and refuse tensors.
_TORCH_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                 "uint8", "bool", "complex64", "complex128", "complex32", "uint16", "uint32",
                 "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                 "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2",
                 "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
                 *(f"int{i}" for i in range(1, 8)), *(f"uint{i}" for i in range(1, 8)))
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
            "int": "int32", "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}


def dtype_named(name: str):
    """graphgrad's dtype for torch's dtype ``name``, or a MissingDtype."""
    name = _ALIASES.get(name, name)
    if name == "bfloat16":
        return _bfloat16()
    d = getattr(_dtype, name, None)
    return d if isinstance(d, _dtype.dtype) else MissingDtype(name)


class StorageType:
    """``torch.FloatStorage`` and its kin in a pickle: only the element type matters."""

    def __init__(self, name: str, dtype_name: str | None) -> None:
        self.__name__ = self.__qualname__ = name
        self.dtype_name = dtype_name  # None: torch.storage.UntypedStorage (bytes)

    def __repr__(self) -> str:
        return f"<torch storage type {self.__name__}>"


_STORAGE_DTYPES = {"Float": "float32", "Double": "float64", "Half": "float16",
                   "BFloat16": "bfloat16", "Long": "int64", "Int": "int32", "Short": "int16",
                   "Char": "int8", "Byte": "uint8", "Bool": "bool", "ComplexFloat": "complex64",
                   "ComplexDouble": "complex128", "QInt8": "qint8", "QUInt8": "quint8",
                   "QInt32": "qint32", "QUInt4x2": "quint4x2", "QUInt2x4": "quint2x4"}
STORAGE_TYPES = {f"{k}Storage": StorageType(f"{k}Storage", v) for k, v in _STORAGE_DTYPES.items()}
UNTYPED = StorageType("UntypedStorage", None)
_STORAGE_BY_DTYPE = {v: st for st in STORAGE_TYPES.values() for v in [st.dtype_name]}


def storage_type_for(dtype) -> StorageType:
    return _STORAGE_BY_DTYPE[str(dtype).removeprefix("torch.")]


def numpy_dtype(d, where: str) -> np.dtype:
    if isinstance(d, MissingDtype):
        extra = (" (install the bf16 extra: pip install graphgrad[bf16], which is ml_dtypes)"
                 if d.name == "bfloat16" else "")
        raise SerializationError(f"{where}: a tensor of dtype torch.{d.name}, which graphgrad "
                                 f"does not support{extra}")
    if not isinstance(d, _dtype.dtype):
        raise SerializationError(f"{where}: {d!r} is not a dtype")
    return np.dtype(d.np)


# -- storages ---------------------------------------------------------------------------------
class LoadedStorage:
    """One storage of a checkpoint: its bytes (a view into the file's buffer) and element type.

    ``big_endian`` storages are swapped to native order once, for the one element size they
    are read as."""

    def __init__(self, data: np.ndarray, dtype_name: str | None, where: str,
                 big_endian: bool = False) -> None:
        if data.ctypes.data % 16:  # a writer that does not align records: NumPy (and numba)
            data = np.frombuffer(bytearray(data), np.uint8)  # want aligned elements: copy
        self.bytes = data  # uint8, writable
        self.dtype_name = dtype_name
        self.where = where
        self._swapped = None if big_endian else 0
        self.pending = None  # a list of work to do once the bytes are read (legacy files)

    def typed(self, npdt: np.dtype) -> np.ndarray:
        b = self.bytes
        if b.nbytes % npdt.itemsize:
            raise SerializationError(f"{self.where}: a storage of {b.nbytes} bytes read as "
                                     f"{npdt} ({npdt.itemsize}-byte elements)")
        a = b.view(npdt)
        if self._swapped is None:  # big-endian file: swap in place, once
            a.byteswap(inplace=True)
            self._swapped = npdt.itemsize
        elif self._swapped and self._swapped != npdt.itemsize:
            raise SerializationError(f"{self.where}: a big-endian storage read with two "
                                     "element sizes")
        return a


def _ints(value, what: str, where: str) -> tuple:
    if not isinstance(value, (tuple, list, Size)) or not all(
            type(v) is int and 0 <= v < 2**63 for v in value):
        raise SerializationError(f"{where}: tensor {what} {value!r} is not a tuple of "
                                 "non-negative integers")
    return tuple(value)


def make_tensor(storage, offset, size, stride, dtype, requires_grad) -> Tensor:
    """The tensor ``storage[offset]`` with ``size``/``stride`` in elements, sharing the storage."""
    if not isinstance(storage, LoadedStorage):
        raise SerializationError(f"a tensor's storage is a {type(storage).__name__}, not a "
                                 "storage of the file")
    where = storage.where
    npdt = numpy_dtype(dtype, where)
    size = _ints(size, "size", where)
    stride = _ints(stride, "stride", where)
    if type(offset) is not int or offset < 0 or len(stride) != len(size):
        raise SerializationError(f"{where}: tensor with storage offset {offset!r}, size "
                                 f"{size} and stride {stride}")
    if type(requires_grad) is not bool:
        raise SerializationError(f"{where}: requires_grad {requires_grad!r} is not a bool")
    flat = storage.typed(npdt)
    numel = math.prod(size)
    try:
        if numel == 0:  # no bytes are read; keep torch's strides (NumPy would say 0)
            a = np.ndarray(size, npdt, buffer=np.empty(0, npdt),
                           strides=[s * npdt.itemsize for s in stride])
        else:
            last = offset + sum((n - 1) * s for n, s in zip(size, stride))
            if last >= len(flat):  # the view would read past the storage
                raise SerializationError(
                    f"{where}: tensor of size {list(size)}, stride {list(stride)} and offset "
                    f"{offset} needs {last + 1} elements but its storage holds {len(flat)}")
            a = np.ndarray(size, npdt, buffer=flat, offset=offset * npdt.itemsize,
                           strides=[s * npdt.itemsize for s in stride])
    except (ValueError, OverflowError, MemoryError) as e:
        raise SerializationError(f"{where}: tensor of size {list(size)}: {e}") from None
    if requires_grad and a.dtype.kind not in "fc" and a.dtype.name != "bfloat16":
        raise SerializationError(f"{where}: requires_grad on a {npdt} tensor (only floating "
                                 "point and complex tensors can require gradients)")
    return wrap(a, requires_grad, None)


def _apply_metadata(t: Tensor, metadata, storage) -> Tensor:
    if not metadata:
        return t
    if not isinstance(metadata, dict) or not set(metadata) <= {"conj", "neg"}:
        raise SerializationError(f"tensor metadata {metadata!r} is not supported")
    a = t._data
    out = np.empty_like(a)

    def resolve():  # torch's lazily conjugated / negated views: graphgrad stores the values
        np.copyto(out, a)
        if metadata.get("conj"):
            np.conjugate(out, out=out)
        if metadata.get("neg"):
            np.negative(out, out=out)

    if storage.pending is None:
        resolve()
    else:  # a legacy file's storage, filled after the pickle is read
        storage.pending.append(resolve)
    return wrap(out, t._rg, None)


# -- the rebuild functions (torch._utils.*) ------------------------------------------------------
def _rebuild_tensor(storage, storage_offset, size, stride):
    return make_tensor(storage, storage_offset, size, stride,
                       dtype_named(getattr(storage, "dtype_name", None) or "uint8"), False)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    dt = dtype_named(storage.dtype_name) if isinstance(storage, LoadedStorage) and \
        storage.dtype_name else MissingDtype("untyped")
    return _apply_metadata(make_tensor(storage, storage_offset, size, stride, dt,
                                       requires_grad), metadata, storage)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    return _apply_metadata(make_tensor(storage, storage_offset, size, stride, dtype,
                                       requires_grad), metadata, storage)


def _parameter(data, requires_grad, state=None, trusted=False):
    from ..nn.parameter import Parameter

    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise SerializationError(f"a Parameter of {type(data).__name__} with requires_grad "
                                 f"{requires_grad!r}")
    p = Parameter(data, requires_grad)
    _set_state(p, state, trusted)
    return p


def _set_state(obj, state, trusted: bool) -> None:
    """torch's _set_obj_state: ``state`` is a dict of attributes, or (dict, slots dict)."""
    if not state:
        return
    dicts = state if isinstance(state, tuple) else (state,)
    for d in dicts:
        if d is None:
            continue
        if not isinstance(d, dict):
            raise SerializationError(f"tensor state {state!r} is not a dict")
        for k, v in d.items():
            # a weights-only load may not reach graphgrad's internal slots (_data, _fn, ...)
            if not isinstance(k, str) or (not trusted and k.startswith("_")):
                raise SerializationError(f"a tensor attribute {k!r} in a weights-only load")
            setattr(obj, k, v)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _parameter(data, requires_grad, state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor subclass or a tensor with attributes: ``func(*args)`` then the type and state."""
    from ..nn.parameter import Parameter

    if func not in _REBUILDERS or not isinstance(args, tuple):
        raise SerializationError(f"_rebuild_from_type_v2 with {func!r}")
    t = func(*args)
    if new_type in (PARAMETER_TYPE, Parameter) and not isinstance(t, Parameter):
        t = Parameter(t, t.requires_grad)
    elif new_type not in (TENSOR_TYPE, Tensor, PARAMETER_TYPE, Parameter):
        raise SerializationError(f"a tensor of type {new_type!r}")
    _set_state(t, state, False)
    return t


def _unsupported(name: str, what: str):
    def refuse(*args, **kwargs):
        raise SerializationError(f"torch._utils.{name}: graphgrad cannot load {what}")

    refuse.__name__ = refuse.__qualname__ = name
    return refuse


def _size(dims=()):
    # torch.Size((2, 3)); a Size of strings or floats is refused, as torch refuses it
    if not isinstance(dims, (tuple, list)) or not all(type(d) is int for d in dims):
        raise SerializationError(f"torch.Size of non-integers {dims!r}")
    return Size(dims)


def _device(*args):
    if not 1 <= len(args) <= 2 or not isinstance(args[0], str) or (
            len(args) == 2 and args[1] is not None and type(args[1]) is not int):
        raise SerializationError(f"torch.device{args!r}")
    try:
        return _device_cls(*args)
    except (RuntimeError, ValueError, TypeError) as e:
        raise SerializationError(f"torch.device{args!r}: {e}") from None


_LAYOUTS = ("torch.strided", "torch.sparse_coo", "torch.sparse_csr", "torch.sparse_csc",
            "torch.sparse_bsr", "torch.sparse_bsc")


def _get_layout(name):
    if name not in _LAYOUTS:
        raise SerializationError(f"layout {name!r}: not a layout graphgrad loads")
    return LayoutName(name)


class LayoutName(str):
    """A layout in a pickle (torch.serialization._get_layout("torch.sparse_coo")): a string
    when loading, and saved back as that call."""


def _rebuild_sparse_tensor(layout, data):
    """torch's sparse tensors: COO ``(indices, values, size[, is_coalesced])`` or compressed
    ``(compressed_indices, plain_indices, values, size)``; invariants are checked."""
    import graphgrad

    if not isinstance(layout, LayoutName) or layout == "torch.strided" or not isinstance(
            data, tuple) or not all(isinstance(d, Tensor) for d in data[:-2]):
        raise SerializationError(f"sparse tensor of layout {layout!r} from {type(data)}")
    try:
        if layout == "torch.sparse_coo":
            if len(data) not in (3, 4):
                raise SerializationError(f"sparse COO tensor data of length {len(data)}")
            indices, values, size = data[:3]
            coalesced = data[3] if len(data) == 4 else None
            if coalesced is not None and type(coalesced) is not bool:
                raise SerializationError(f"sparse COO is_coalesced {coalesced!r}")
            return graphgrad.sparse_coo_tensor(indices, values, _size(size),
                                               check_invariants=True, is_coalesced=coalesced)
        if len(data) != 4:
            raise SerializationError(f"sparse compressed tensor data of length {len(data)}")
        compressed, plain, values, size = data
        return graphgrad.sparse_compressed_tensor(
            compressed, plain, values, _size(size), check_invariants=True,
            layout=getattr(graphgrad, layout.removeprefix("torch.")))
    except SerializationError:
        raise
    except (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError) as e:
        raise SerializationError(f"sparse tensor of layout {layout}: {e}") from None


class _TypeName:
    """``torch.Tensor`` / ``torch.nn.parameter.Parameter`` in a weights-only pickle: a type
    argument of _rebuild_from_type_v2, never called (``Tensor(10**12)`` would allocate)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


TENSOR_TYPE = _TypeName("torch.Tensor")
PARAMETER_TYPE = _TypeName("torch.nn.parameter.Parameter")


def _bytearray(*args):
    if args and not isinstance(args[0], (str, bytes)):  # bytearray(n) would allocate n bytes
        raise SerializationError(f"bytearray of {type(args[0]).__name__}")
    return bytearray(*args)


def _encode(obj, encoding="utf-8"):
    # protocol 2 pickles bytes as _codecs.encode(str, "latin1"); only text codecs are taken
    if not isinstance(obj, str) or encoding.lower().replace("-", "") not in (
            "latin1", "utf8", "ascii", "iso88591"):
        raise SerializationError(f"_codecs.encode with {encoding!r}")
    return obj.encode(encoding)


_REBUILDERS = {_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
               _rebuild_parameter_with_state, _rebuild_sparse_tensor}


def torch_globals() -> dict:
    """torch's weights-only allowlist ("module.name" -> the graphgrad object playing it)."""
    g = {"collections.OrderedDict": collections.OrderedDict,
         "collections.Counter": collections.Counter,
         "torch.nn.parameter.Parameter": PARAMETER_TYPE, "torch.Tensor": TENSOR_TYPE,
         "torch.Size": _size, "torch.device": _device,
         "torch.serialization._get_layout": _get_layout, "_codecs.encode": _encode,
         "builtins.bytearray": _bytearray, "builtins.set": set, "builtins.frozenset": frozenset,
         "builtins.complex": complex,
         "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
         "torch.storage.UntypedStorage": UNTYPED, "torch.UntypedStorage": UNTYPED}
    for f in _REBUILDERS:
        g[f"torch._utils.{f.__name__}"] = f
    for name, what in [("_rebuild_qtensor", "quantized tensors"),
                       ("_rebuild_meta_tensor_no_storage", "meta tensors"),
                       ("_rebuild_nested_tensor", "nested tensors"),
                       ("_rebuild_wrapper_subclass", "tensor subclasses"),
                       ("_rebuild_device_tensor_from_numpy", "tensors of other devices"),
                       ("_rebuild_device_tensor_from_cpu_tensor", "tensors of other devices")]:
        g[f"torch._utils.{name}"] = _unsupported(name, what)
    for name in (*_TORCH_DTYPES, *_ALIASES):
        g[f"torch.{name}"] = dtype_named(name)
    for name, st in STORAGE_TYPES.items():
        g[f"torch.{name}"] = st
        g[f"torch.storage.{name}"] = st
    return g


# -- names written when saving ------------------------------------------------------------------
def torch_name(obj):
    """(module, name) torch gives ``obj`` (a class, function, dtype or marker), or None."""
    init_save_names()
    hit = _SAVE_NAMES.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    if isinstance(obj, _dtype.dtype):
        return "torch", str(obj).removeprefix("torch.")
    if isinstance(obj, MissingDtype):
        return "torch", obj.name
    if isinstance(obj, type) and obj.__module__.startswith("graphgrad."):
        from ..nn.modules import _torch_layout

        module = _torch_layout.torch_path(obj)
        if module is not None:
            return module, obj.__qualname__
        return _public_torch_name(obj)
    if callable(obj) and getattr(obj, "__module__", "").startswith("graphgrad"):
        return _public_torch_name(obj)
    return None


# graphgrad namespaces that mirror torch's: an object reachable there by its own name gets
# torch's name in the same namespace (graphgrad.nn.functional.relu -> torch.nn.functional).
_MIRRORED = ("graphgrad.nn.functional", "graphgrad.nn.init", "graphgrad.nn", "graphgrad.optim",
             "graphgrad.optim.lr_scheduler", "graphgrad.nn.utils", "graphgrad")


def _public_torch_name(obj):
    name = getattr(obj, "__name__", None)
    for ns in _MIRRORED:
        mod = importlib.import_module(ns)
        if name and getattr(mod, name, None) is obj:
            return "torch" + ns.removeprefix("graphgrad"), name
    return None


def _save_names() -> dict:
    from ..nn.parameter import Parameter

    names = {}
    for full, obj in torch_globals().items():
        if isinstance(obj, MissingDtype) or isinstance(obj, _dtype.dtype):
            continue
        module, _, name = full.rpartition(".")
        names.setdefault(id(obj), (obj, (module, name)))
    names[id(Parameter)] = (Parameter, ("torch.nn.parameter", "Parameter"))
    names[id(Tensor)] = (Tensor, ("torch", "Tensor"))
    names[id(_size)] = (_size, ("torch", "Size"))
    names[id(_device)] = (_device, ("torch", "device"))
    names[id(UNTYPED)] = (UNTYPED, ("torch.storage", "UntypedStorage"))
    for name, st in STORAGE_TYPES.items():
        names[id(st)] = (st, ("torch", name))
    for obj in (collections.OrderedDict, collections.Counter, set, frozenset, _bytearray,
                complex, _encode, TENSOR_TYPE, PARAMETER_TYPE):
        names.pop(id(obj), None)  # pickle names these itself
    return names


_SAVE_NAMES: dict = {}


def init_save_names() -> None:
    if not _SAVE_NAMES:
        _SAVE_NAMES.update(_save_names())
