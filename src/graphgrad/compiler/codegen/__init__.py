"""Code generation for fused groups behind a small interface: a backend turns a KernelSpec into
a callable on arrays. ``numba`` (LLVM kernels, the default when numba is installed) and
``numpy`` (the fallback: the group's ops one by one); a GPU generator would be a third.
"""

from __future__ import annotations

import warnings

from .spec import KernelSpec, Lit, Term

__all__ = ["KernelSpec", "Lit", "Term", "get_backend", "numba_available", "lower"]

_backends: dict = {}
_warned = False


def numba_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def get_backend(name=None):
    """The backend called ``name`` ("numba" or "numpy"); None picks numba when it is
    installed, else numpy with a one-time warning saying how to get fused kernels."""
    global _warned
    if name is None:
        if numba_available():
            name = "numba"
        else:
            if not _warned:
                _warned = True
                warnings.warn("graphgrad.compile: numba is not installed, so elementwise ops "
                              "run unfused with NumPy; install graphgrad[compile] for fused "
                              "kernels", RuntimeWarning, stacklevel=3)
            name = "numpy"
    backend = _backends.get(name)
    if backend is None:
        if name == "numba":
            from .numba import NumbaBackend

            backend = NumbaBackend()
        elif name == "numpy":
            from .numpy import NumpyBackend

            backend = NumpyBackend()
        else:
            raise ValueError(f"unknown compiler backend {name!r}; expected 'numba' or 'numpy'")
        _backends[name] = backend
    return backend


def lower(graph, backend=None):
    """Binds every ``fused`` instr of ``graph`` to a compiled kernel of ``backend`` (a name, a
    backend object, or None for the default) and to the memory plan's buffers. Returns None:
    the plain Executor then runs the graph."""
    fused = [i for i in graph.instrs if i.op == "fused"]
    if not fused:
        return None
    be = backend if hasattr(backend, "compile") else get_backend(backend)
    plan = getattr(graph, "memory_plan", None)
    for instr in fused:
        call = instr.fn
        call.bind(be)
        if plan is not None:
            bufs = [plan.array_for(o) if o is not None else None for o in instr.outs]
            call.buffers = bufs if any(b is not None for b in bufs) else None
    return None
