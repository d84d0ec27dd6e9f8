"""Tensors in memory shared between processes (``share_memory_``, and tensors sent through
``graphgrad.multiprocessing``), as torch's ``file_descriptor`` strategy does it.

A shared storage is an anonymous memory file (``memfd_create``; an unlinked temporary file
where that is missing) mapped ``MAP_SHARED``. Nothing has a name, so nothing is left in
/dev/shm: the kernel frees the memory when the last process unmaps it and closes its
descriptor. Forked children inherit the mapping. Pickling for another process (spawn
arguments, ``Queue.put``: multiprocessing's ForkingPickler) sends the descriptor
(``multiprocessing.reduction.DupFd``), not the bytes; the receiver maps the same memory, once
per process however many tensors view it. Plain ``pickle`` (and ``graphgrad.save``) still
copies the values.

``share_memory_`` copies the storage's bytes into a new shared segment and re-points every
tensor on that storage (the tensor itself and its views) at it, so views stay views. NumPy
arrays outside tensors that alias the old memory (``from_numpy``'s source) keep the old
memory, as torch's do.
"""

from __future__ import annotations

import gc
import mmap
import os
import sys
import weakref

import numpy as np

__all__ = ["share_tensor", "share_base", "is_shared_array", "register_reducers"]


class _Segment:
    """One shared mapping in this process: its descriptor, size and identity."""

    __slots__ = ("fd", "nbytes", "key")

    def __init__(self, fd, nbytes, key):
        self.fd = fd
        self.nbytes = nbytes
        self.key = key


_segments: dict[int, _Segment] = {}  # id(base uint8 array) -> its segment
_by_key = weakref.WeakValueDictionary()  # (st_dev, st_ino) -> base array, one map per process

# Set in DataLoader workers: batches go back by value (a shared segment and a descriptor
# handshake per batch cost more than the copy, and would hold a descriptor per batch).
by_value = [False]


def _base(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _addr(a) -> int:
    return a.__array_interface__["data"][0]


# Descriptors travel between processes over Unix sockets (SCM_RIGHTS): POSIX only.
POSIX = os.name == "posix"


def _new_fd(nbytes: int) -> int:
    if not POSIX:
        raise RuntimeError("share_memory_: graphgrad shares tensors between processes on "
                           "POSIX systems only (it passes file descriptors of shared memory)")
    try:
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create("graphgrad-shared", os.MFD_CLOEXEC)
        else:
            import tempfile

            shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
            with tempfile.TemporaryFile(dir=shm) as f:  # unlinked at once: no litter
                fd = os.dup(f.fileno())
        os.ftruncate(fd, max(nbytes, 1))
    except OSError as e:
        raise RuntimeError(f"share_memory_: cannot allocate {nbytes} bytes of shared memory: "
                           f"{e} (each shared storage holds one file descriptor; raise "
                           f"`ulimit -n` if they ran out)") from e
    return fd


_libc = []


def _mmap_calls():
    # NOTE: libc's mmap through ctypes, not the mmap module: that one dups the descriptor
    # (Python < 3.13), which would hold two descriptors per shared storage.
    if not _libc:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.munmap.restype = ctypes.c_int
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        _libc[:] = [ctypes, libc]
    return _libc


def _unmap(ident, fd, addr, length):
    _segments.pop(ident, None)
    _libc[1].munmap(addr, length)
    try:
        os.close(fd)
    except OSError:
        pass


def _map(fd: int, nbytes: int, key) -> np.ndarray:
    """A uint8 array over the whole segment, registered as shared in this process; it owns
    ``fd`` from now on (closed, and the memory unmapped, when the last array on it is
    gone: every view holds its base)."""
    ctypes, libc = _mmap_calls()
    length = max(nbytes, 1)
    addr = libc.mmap(None, length, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        err = ctypes.get_errno()
        raise RuntimeError(f"share_memory_: mmap of {nbytes} bytes failed: "
                           f"{os.strerror(err)}")
    base = np.frombuffer((ctypes.c_ubyte * length).from_address(addr), np.uint8,
                         count=nbytes)
    ident = id(base)
    _segments[ident] = _Segment(fd, nbytes, key)
    _by_key[key] = base
    # Never at interpreter exit while arrays may still be read (the OS unmaps then).
    weakref.finalize(base, _unmap, ident, fd, addr, length).atexit = False
    return base


def _key(fd: int):
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino)


def is_shared_array(a: np.ndarray) -> bool:
    """Whether ``a`` looks into a shared segment of this process."""
    return id(_base(a)) in _segments


def _on(base, arr, new_base):
    """``arr`` (a view into ``base``) re-made over ``new_base`` at the same offset."""
    new = np.ndarray(arr.shape, arr.dtype, buffer=new_base, offset=_addr(arr) - _addr(base),
                     strides=arr.strides)
    if not arr.flags.writeable:
        new.flags.writeable = False
    return new


def _tensors_on(base, known):
    """Every live Tensor whose data looks into ``base``, besides ``known``."""
    from ._tensor import Tensor

    found, skip = [], {id(k) for k in known}
    for o in gc.get_objects():
        if issubclass(type(o), Tensor) and id(o) not in skip:
            d = getattr(o, "_data", None)
            if isinstance(d, np.ndarray) and (d is base or _base(d) is base):
                found.append(o)
    return found


def share_tensor(t) -> np.ndarray:
    """Moves ``t``'s storage into shared memory, re-pointing ``t`` and every other live tensor
    on it; returns the shared base array."""
    base = _base(t._data)
    if id(base) in _segments:
        return base
    # Holders of the old base besides this frame's name, getrefcount's argument and ``t``'s
    # array (the base itself, or a view whose .base it is) mean views or other tensors on it:
    # find them with a heap walk, only then.
    return _move(base, [t], scan=sys.getrefcount(base) > 3)


def share_base(base: np.ndarray) -> np.ndarray:
    """Moves the storage ``base`` into shared memory, re-pointing every live tensor on it;
    returns the shared base (``base`` itself when already shared)."""
    if id(base) in _segments:
        return base
    return _move(base, [], scan=True)


def _move(base, tensors, scan):
    if base.dtype.hasobject:
        raise RuntimeError(f"share_memory_: a storage of dtype {base.dtype} holds Python "
                           "objects and cannot be shared between processes")
    if not (base.flags.c_contiguous or base.flags.f_contiguous):
        raise RuntimeError(f"share_memory_: the storage of shape {base.shape} with strides "
                           f"{base.strides} is not one block of memory and cannot be shared")
    register_reducers()
    nbytes = base.nbytes
    fd = _new_fd(nbytes)
    try:
        new_base = _map(fd, nbytes, _key(fd))
    except BaseException:
        os.close(fd)
        raise
    if nbytes:
        np.copyto(new_base, base.ravel(order="A").view(np.uint8))
    if scan:
        tensors = tensors + _tensors_on(base, tensors)
    for t in tensors:
        t._data = _on(base, t._data, new_base)
    return new_base


# -- pickling for another process ---------------------------------------------------------------
def _reduce_tensor(t):
    from ._tensor import Tensor

    if t.requires_grad and t.grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries.  If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., putting "
            "it on the queue).")
    state = dict(getattr(t, "__dict__", None) or {})
    if (by_value[0] or not POSIX) and not is_shared_array(t._data):
        # A copy, and the receiver's is_shared() says so.
        return (_rebuild_value, (type(t), np.array(t._data), t._rg, state))
    # As torch: a tensor sent to another process moves to shared memory first.
    base = share_tensor(t)
    from multiprocessing.reduction import DupFd

    a = t._data
    seg = _segments[id(base)]
    assert isinstance(t, Tensor)
    return (_rebuild_shared, (type(t), DupFd(seg.fd), seg.nbytes, seg.key, a.dtype, a.shape,
                              a.strides, _addr(a) - _addr(base), a.flags.writeable, t._rg,
                              state))


def _finish(cls, data, requires_grad, state):
    from ._tensor import Tensor, wrap

    t = wrap(data, False, None)
    if cls is not Tensor:
        out = object.__new__(cls)
        for slot in ("_data", "_rg", "_fn", "_grad", "_accum", "_inf", "_extra", "_vc",
                     "_view"):
            object.__setattr__(out, slot, getattr(t, slot))
        t = out
        if state:
            t.__dict__.update(state)
    t._rg = bool(requires_grad)
    return t


def _rebuild_value(cls, data, requires_grad, state):
    return _finish(cls, data, requires_grad, state)


def _rebuild_shared(cls, handle, nbytes, key, dtype, shape, strides, offset, writeable,
                    requires_grad, state):
    try:
        fd = handle.detach()
    except OSError as e:
        # The same exception type as torch's (its file_descriptor strategy fails alike), with
        # the reason spelled out.
        raise type(e)(e.errno, f"{e.strerror}: the process that sent this tensor exited (or "
                      "closed it) before it was received; a tensor travels as a handle to the "
                      "sender's shared memory, so keep the sender alive until the receiver "
                      "has taken it off the queue") from e
    base = _by_key.get(key)  # mapped once per process, whatever views arrive
    if base is None:
        base = _map(fd, nbytes, key)  # which owns fd from now on
    elif _segments[id(base)].fd != fd:
        # A fresh duplicate (the resource sharer's, for Queue.put). One passed with a spawned
        # child's arguments is the same number each time it is detached: the map's own.
        os.close(fd)
    arr = np.ndarray(shape, dtype, buffer=base, offset=offset, strides=strides)
    if not writeable:
        arr.flags.writeable = False
    return _finish(cls, arr, requires_grad, state)


_registered: set = set()


def register_reducers() -> None:
    """Makes multiprocessing's pickler send Tensors (and every Tensor subclass defined so
    far: it looks types up exactly) through shared memory."""
    from multiprocessing.reduction import ForkingPickler

    from ._tensor import Tensor

    todo = [Tensor]
    while todo:
        cls = todo.pop()
        if cls not in _registered:
            ForkingPickler.register(cls, _reduce_tensor)
            _registered.add(cls)
        todo.extend(cls.__subclasses__())
