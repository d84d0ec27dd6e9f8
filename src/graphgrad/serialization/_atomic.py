"""Atomic writes to a path: a private temporary file, fsynced, renamed over the target.

Note [Atomic checkpoint writes]
* The temporary file sits next to the target (a rename is atomic within one file system) and
  is named ``.<name>.tmp-<pid>-<random>``; it is created 0600, so a checkpoint that is being
  written is never readable by others, and gets its final mode just before the rename: the mode
  of the file it replaces (a ``chmod 600`` checkpoint stays 0600), else what ``open()`` would
  give a new file (0666 minus the umask).
* A save killed by a signal cannot remove its temporary file; the next save to the same path
  removes the temporary files of processes that no longer exist.
* A missing parent directory raises torch's "Parent directory ... does not exist." before
  anything is created.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat

__all__ = ["atomic_write"]


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask would race with other threads)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process there: keep its file
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's), or we cannot tell: keep its file
    return True


def _remove_stale(directory: str, base: str) -> None:
    """Deletes temporary files of earlier saves to ``base`` whose process has died."""
    # this version's names, and the previous version's ``.<name>.<pid>.<hex>.tmp``
    pattern = re.compile(rf"\.{re.escape(base)}(?:\.tmp-(\d+)-[0-9a-f]+|\.(\d+)\.[0-9a-f]+\.tmp)")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    me = os.getpid()
    for name in names:
        m = pattern.fullmatch(name)
        if m is None:
            continue
        pid = int(m.group(1) or m.group(2))
        if pid != me and not _alive(pid):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))


def atomic_write(path, write) -> None:
    """Calls ``write(fh)`` on a temporary file, then renames it over ``path``."""
    path = os.fsdecode(os.fspath(path))
    if os.path.islink(path):
        path = os.path.realpath(path)  # replace the file the link points to, not the link
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(path) or directory} does not "
                           "exist.")
    base = os.path.basename(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    _remove_stale(directory, base)
    tmp = os.path.join(directory, f".{base}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if mode != 0o600:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    # The rename itself is durable once the directory entry is synced (POSIX only).
    if hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
