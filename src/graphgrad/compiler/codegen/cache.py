"""The on-disk kernel cache: generated sources live in ``<cache_dir>/k_<hash>.py`` and are loaded
with importlib under a stable module name, so numba's ``cache=True`` finds its compiled code
again in the next process (FACTS.md: exec() of a string cannot be cached).

The directory is ``$GRAPHGRAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/graphgrad/kernels``, else
``~/.cache/graphgrad/kernels``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile

__all__ = ["cache_dir", "load_source", "source_hash"]

_modules: dict = {}  # hash -> loaded module (this process)


def cache_dir() -> str:
    root = os.environ.get("GRAPHGRAD_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        root = os.path.join(base, "graphgrad")
    path = os.path.join(root, "kernels")
    os.makedirs(path, exist_ok=True)
    return path


def configure_numba() -> None:
    """Points numba's cache under ours unless the user chose one (must run before numba is
    imported: numba reads its configuration once)."""
    if "numba" not in sys.modules and not os.environ.get("NUMBA_CACHE_DIR"):
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(cache_dir(), "numba")


def source_hash(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()[:20]


def load_source(source: str):
    """The module made from ``source``: written once to the cache directory (atomically, so
    concurrent processes never read half a file) and imported from there."""
    h = source_hash(source)
    mod = _modules.get(h)
    if mod is not None:
        return mod
    name = f"k_{h}"
    path = os.path.join(cache_dir(), name + ".py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    modname = f"graphgrad_kernel_{h}"
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    # numba's cache locator imports the module by name in later processes: register it first
    sys.modules[modname] = mod
    spec.loader.exec_module(mod)
    _modules[h] = mod
    return mod
