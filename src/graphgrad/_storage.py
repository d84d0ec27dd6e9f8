"""Storages and the Tensor memory methods scripts touch: ``untyped_storage()`` / ``storage()``
(minimal objects over the NumPy buffer a tensor and its views share), ``pin_memory`` (which a
CPU-only torch refuses), ``share_memory_`` / ``is_shared`` (real shared memory:
_shared_memory.py), ``resize_`` / ``resize_as_``, ``set_``, ``as_subclass``, ``output_nr`` and
``name``."""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import _shared_memory
from ._device import CPU
from ._tensor import Tensor

__all__ = ["UntypedStorage", "TypedStorage"]

_live = weakref.WeakValueDictionary()  # id(base array) -> its UntypedStorage


def _base(a):
    """The ndarray that owns the memory ``a`` looks into."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class UntypedStorage:
    """The bytes under a tensor: views of one tensor get the same object (as in torch)."""

    def __init__(self, base):
        self._base = base

    @classmethod
    def _of(cls, array):
        base = _base(array)
        s = _live.get(id(base))
        if s is None or s._base is not base:
            s = cls(base)
            _live[id(base)] = s
        return s

    def size(self) -> int:
        return self._base.nbytes

    nbytes = size
    __len__ = size

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return self._base.ctypes.data

    @property
    def device(self):
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False

    def is_shared(self) -> bool:
        return _shared_memory.is_shared_array(self._base)

    def share_memory_(self):
        old = self._base
        self._base = new = _shared_memory.share_base(old)
        if new is not old:
            _live[id(new)] = self
        return self

    def is_pinned(self, device="cuda") -> bool:
        return False

    def tolist(self):
        return list(self._base.reshape(-1).view(np.uint8).tolist())

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and other.data_ptr() == self.data_ptr()

    def __hash__(self):
        return hash(self.data_ptr())

    def __repr__(self):
        return f"[torch.storage.UntypedStorage(device=cpu) of size {self.size()}]"


class TypedStorage:
    """The deprecated typed view of a storage that ``Tensor.storage()`` returns."""

    def __init__(self, untyped, dtype):
        self._untyped_storage = untyped
        self.dtype = dtype

    def untyped(self):
        return self._untyped_storage

    def _np(self):
        return self._untyped_storage._base.reshape(-1).view(np.uint8).view(self.dtype.np)

    def element_size(self) -> int:
        return self.dtype.itemsize

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.element_size()

    __len__ = size

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    @property
    def device(self):
        return CPU

    def tolist(self):
        return self._np().tolist()

    def __getitem__(self, i):
        return self._np()[i].item()

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def __eq__(self, other):
        return isinstance(other, TypedStorage) and other.data_ptr() == self.data_ptr()

    def __hash__(self):
        return hash(self.data_ptr())

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return (f"{body}\n[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size "
                f"{self.size()}]")


def untyped_storage(self):
    return UntypedStorage._of(self._data)


def storage(self):
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter to "
                  "you if you are using storages directly.  To access UntypedStorage directly, "
                  "use tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=2)
    return TypedStorage(UntypedStorage._of(self._data), self.dtype)


def pin_memory(self, device=None):
    # NOTE: a CPU-only torch has no accelerator to pin host memory for, and refuses.
    raise RuntimeError("Cannot access accelerator device when none is available.")


def is_pinned(self, device=None) -> bool:
    return False


def _moved(old_id, new):
    """Keeps the storage object of the bytes at ``old_id``, if one is alive, the storage of
    the shared copy ``new`` they were moved to."""
    storage = _live.get(old_id)
    if storage is not None and id(storage._base) == old_id and storage._base is not new:
        storage._base = new
        _live[id(new)] = storage


def share_memory_(self):
    """Moves this tensor's storage into memory shared with other processes (a no-op when it
    is already there); the tensor and its views keep working on the same values."""
    old = id(_base(self._data))  # an id, not a reference: the move counts references
    _moved(old, _shared_memory.share_tensor(self))
    return self


def is_shared(self) -> bool:
    return _shared_memory.is_shared_array(self._data)


def _sizes(args):
    if len(args) == 1 and not isinstance(args[0], int):
        args = tuple(args[0])
    for s in args:
        if s < 0:
            raise RuntimeError("numel: integer multiplication overflow")
    return tuple(int(s) for s in args)


def resize_(self, *sizes, memory_format=None):
    """Reshapes in place to ``sizes``, keeping the first elements in row-major order; new
    elements are zeros (torch leaves them uninitialized)."""
    if self._rg:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _sizes(sizes)
    n = int(np.prod(shape, dtype=np.int64))
    if shape == self._data.shape:
        return self
    flat = self._data.reshape(-1)  # a view when contiguous
    if n <= flat.size and np.shares_memory(flat, self._data):
        self._data = flat[:n].reshape(shape)
    else:
        new = np.zeros(n, dtype=self._data.dtype)
        k = min(n, flat.size)
        new[:k] = flat[:k]
        self._data = new.reshape(shape)
        self._view = None  # new storage: no longer a view, a fresh version counter
        self._vc = None
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, tuple(the_template.shape))


def _check_leaf(self):
    from .autograd.grad_mode import is_grad_enabled

    if self._rg and self._fn is None and is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Makes ``self`` look at ``source``'s memory (a tensor or a storage), or empty."""
    _check_leaf(self)
    if source is None:
        self._data = np.zeros(0, dtype=self._data.dtype)
        self._view = None
        self._vc = None
    elif isinstance(source, Tensor):
        self._data = source._data
        from ._tensor import version_cell

        self._vc = version_cell(source)  # in-place writes to either are seen by both
        self._view = None
    else:
        if isinstance(source, TypedStorage):
            source = source.untyped()
        flat = source._base.reshape(-1).view(np.uint8).view(self._data.dtype)
        if size is None:
            self._data = flat
        else:
            size = tuple(size)
            if stride is None:
                stride = tuple(int(np.prod(size[i + 1:], dtype=np.int64))
                               for i in range(len(size)))
            item = flat.itemsize
            self._data = np.lib.stride_tricks.as_strided(
                flat[storage_offset:], shape=size, strides=tuple(s * item for s in stride))
    return self


def as_subclass(self, cls):
    """``self`` as an instance of the Tensor subclass ``cls``, sharing data and graph."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = object.__new__(cls)
    for slot in ("_data", "_rg", "_fn", "_grad", "_accum", "_inf", "_extra", "_vc", "_view"):
        object.__setattr__(out, slot, getattr(self, slot))
    return out


def _output_nr(self) -> int:
    # graphgrad gives each output of a multi-output op its own node, so every tensor is its
    # node's output 0.
    return 0


def _name(self):
    return None


for _fn in (untyped_storage, storage, pin_memory, is_pinned, share_memory_, is_shared, resize_,
            resize_as_, set_, as_subclass):
    setattr(Tensor, _fn.__name__, _fn)
Tensor.output_nr = property(_output_nr)
Tensor.name = property(_name)
