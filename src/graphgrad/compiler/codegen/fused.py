"""FusedCall: the callable a ``fused`` instr runs. It compiles its KernelSpec with a backend on
first use (or when ``lower`` binds one), returns one array for a one-output group (the
executor's convention) and writes into the memory plan's preallocated buffers when given.
"""

from __future__ import annotations

__all__ = ["FusedCall"]


class FusedCall:
    __slots__ = ("spec", "kernel", "buffers", "backend")

    def __init__(self, spec, backend=None):
        self.spec = spec
        self.kernel = None
        self.backend = backend
        # per output: a preallocated array (planned by passes/memory_plan.py) or None
        self.buffers = None

    def bind(self, backend):
        """Compiles the spec with ``backend`` now; returns self."""
        self.backend = backend
        self.kernel = backend.compile(self.spec)
        return self

    def fast(self):
        """The replay callable (the executor's): the kernel's specialised call when the backend
        has one (no per-call lookups), else self."""
        spec_fn = getattr(self.kernel, "specialize", None)
        if spec_fn is None:
            return self
        call = spec_fn(self.buffers, single=len(self.spec.outputs) == 1)
        return self if call is None else call

    def __call__(self, *arrays):
        kernel = self.kernel
        if kernel is None:
            from . import get_backend

            kernel = self.bind(self.backend or get_backend()).kernel
        bufs = self.buffers
        if bufs is not None and len(bufs) == len(self.spec.outputs):
            outs = kernel(*arrays, out=bufs)
        else:
            outs = kernel(*arrays)
        return outs[0] if len(outs) == 1 else outs

    def __repr__(self):
        return f"FusedCall({len(self.spec.terms)} ops)"
