"""The on-disk kernel cache: generated sources live in ``<cache_dir>/k_<key>.py`` and are loaded
under a stable module name, so numba's ``cache=True`` finds its compiled code again in the next
process (FACTS.md: exec() of a string cannot be cached).

The directory is ``$GRAPHGRAD_CACHE_DIR/kernels``, else ``$XDG_CACHE_HOME/graphgrad/kernels``,
else ``~/.cache/graphgrad/kernels``.

Note [Verified kernel cache]: an entry's key hashes its source together with the graphgrad,
numba and NumPy versions, and its first line carries the key and a SHA-256 of the source. An
entry is used only when the file holds exactly the bytes this process would write (so a
truncated, emptied, edited or foreign file is never run), and the code that runs is compiled
from the verified bytes in memory, not re-read from disk. Any other content is discarded and
rewritten with one warning. Writes go to a temporary file in the same directory, are fsynced
and then renamed over the entry (``os.replace``), so a reader sees either nothing or a whole
file; a process killed mid-write leaves only a ``.tmp-`` file, which readers ignore and a later
process removes once it is stale. The directory is created 0700; one that another user owns or
that is group/world-writable is refused with a warning, and this process uses a fresh private
temporary directory instead (whoever can write the cache directory can run code as its user).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
import types
import warnings

__all__ = ["cache_dir", "load_source", "source_hash", "entry_text", "CacheWarning"]

_modules: dict = {}  # key -> loaded module (this process)
_dirs: dict = {}  # the configured root -> the directory actually used
_TMP_PREFIX = ".tmp-"
_STALE_S = 600.0  # a temp file older than this belongs to a dead writer
_HEADER = "# graphgrad kernel cache entry: key={key} sha256={digest} versions={versions}\n"


class CacheWarning(RuntimeWarning):
    """An unusable kernel-cache entry or directory was replaced (see Note [Verified kernel
    cache])."""


def _configured_root() -> str:
    root = os.environ.get("GRAPHGRAD_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        root = os.path.join(base, "graphgrad")
    return os.path.join(root, "kernels")


def _unsafe(path: str) -> str | None:
    """Why ``path`` may not hold kernels (None when it is a directory private enough)."""
    try:
        st = os.lstat(path)
    except OSError as err:
        return f"cannot stat it ({err})"
    import stat

    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: no POSIX ownership to check
        return None
    if st.st_uid != getuid():
        return f"it is owned by uid {st.st_uid}, not by this user ({getuid()})"
    if st.st_mode & 0o022:
        return f"it is group- or world-writable (mode {oct(st.st_mode & 0o777)})"
    return None


def cache_dir() -> str:
    """The kernel directory: created private to the user (0700), or a fresh private temporary
    directory (with a warning) when the configured one is unsafe."""
    root = _configured_root()
    path = _dirs.get(root)
    if path is not None:
        return path
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
        why = _unsafe(root)
    except OSError as err:
        why = f"it cannot be created ({err})"
    if why is None:
        path = root
        _clean_stale(path)
    else:
        path = tempfile.mkdtemp(prefix="graphgrad-kernels-")  # 0700, ours
        warnings.warn(f"graphgrad.compile: kernel cache directory {root} is not used because "
                      f"{why}; kernels of this process go to {path} (set GRAPHGRAD_CACHE_DIR "
                      "to a directory only you can write)", CacheWarning, stacklevel=3)
    _dirs[root] = path
    return path


def _clean_stale(path: str) -> None:
    """Removes temporary files that a killed writer left (old enough that no live writer can
    still be about to rename them)."""
    now = time.time()
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        if name.startswith(_TMP_PREFIX):
            p = os.path.join(path, name)
            try:
                if now - os.lstat(p).st_mtime > _STALE_S:
                    os.unlink(p)
            except OSError:
                pass


def configure_numba() -> None:
    """Points numba's cache under ours unless the user chose one (must run before numba is
    imported: numba reads its configuration once)."""
    if "numba" not in sys.modules and not os.environ.get("NUMBA_CACHE_DIR"):
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(cache_dir(), "numba")


_versions_text: str | None = None


def _versions() -> str:
    """graphgrad, numba and NumPy versions: part of every entry's key."""
    global _versions_text
    if _versions_text is None:
        import numpy

        try:
            from importlib.metadata import version

            nb = version("numba")
        except Exception:  # noqa: BLE001 - numba absent: the key still names that
            nb = "none"
        from ... import __version__ as gg

        _versions_text = f"graphgrad-{gg},numba-{nb},numpy-{numpy.__version__}"
    return _versions_text


def source_hash(source: str) -> str:
    """The entry key: the source and the versions that compile it."""
    return hashlib.sha256(f"{_versions()}\n{source}".encode()).hexdigest()[:24]


def entry_text(source: str) -> str:
    """The exact content of the entry for ``source`` (header line, then the source)."""
    digest = hashlib.sha256(source.encode()).hexdigest()
    return _HEADER.format(key=source_hash(source), digest=digest, versions=_versions()) + source


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except OSError:
        return b""


def _write_atomic(path: str, data: bytes) -> None:
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=_TMP_PREFIX, suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable
        try:
            dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass


def load_source(source: str):
    """The module made from ``source``: its verified cache entry, written first when absent
    or unusable (see Note [Verified kernel cache])."""
    key = source_hash(source)
    mod = _modules.get(key)
    if mod is not None:
        return mod
    name = f"k_{key}"
    path = os.path.join(cache_dir(), name + ".py")
    text = entry_text(source)
    data = text.encode()
    found = _read(path)
    if found != data:
        if found is not None:
            what = ("empty" if not found else "truncated" if data.startswith(found)
                    else "not this key's source (edited, corrupt or written by another "
                         "version)")
            warnings.warn(f"graphgrad.compile: kernel cache entry {path} was {what}; it was "
                          "discarded and rebuilt", CacheWarning, stacklevel=3)
        _write_atomic(path, data)
    modname = f"graphgrad_kernel_{key}"
    mod = types.ModuleType(modname)
    mod.__file__ = path
    # numba's cache locator finds the module by name in later processes: register it first
    sys.modules[modname] = mod
    # The code comes from the verified bytes in memory (never re-read from disk), under the
    # entry's path so numba's cache=True can locate and stamp it.
    exec(compile(text, path, "exec"), mod.__dict__)  # noqa: S102
    _modules[key] = mod
    return mod
