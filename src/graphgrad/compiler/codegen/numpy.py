"""The NumPy fallback backend: a fused group runs its ops one by one through their own
forwards (exactly eager's arithmetic), used when numba is not installed or backend="numpy".
It still saves the executor's per-instr bookkeeping and frees intermediates at once.
"""

from __future__ import annotations

import numpy as np

from .spec import KernelSpec, Lit

__all__ = ["NumpyBackend", "NumpyKernel"]


class NumpyKernel:
    """``kernel(*arrays)`` -> tuple of outputs; ``out=`` buffers are filled by copying."""

    def __init__(self, spec: KernelSpec):
        self.spec = spec
        steps = []
        for term in spec.terms:
            steps.append((_forward(term), tuple(a if isinstance(a, int) else Lit(a.value)
                                                for a in term.args), term.dtype))
        self._steps = steps
        self._outputs = tuple(spec.outputs)
        self.source = None

    def __call__(self, *arrays, out=None):
        vals = list(arrays)
        for fn, args, dtype in self._steps:
            r = fn(*[vals[a] if type(a) is int else a.value for a in args])
            if type(r) is not np.ndarray:
                r = np.asarray(r)
            if r.dtype != dtype:
                r = r.astype(dtype)
            vals.append(r)
        results = tuple(vals[s] for s in self._outputs)
        if out is None:
            return results
        for buf, r in zip(out, results):
            if buf is not None:
                np.copyto(buf, r)
        return tuple(r if buf is None else buf for buf, r in zip(out, results))

    def compile(self):
        return self


def _forward(term):
    if term.op == "cast":
        dtype, shape = term.dtype, term.shape

        def cast(a):
            return np.broadcast_to(a, shape).astype(dtype)
        return cast
    forward, params = term.op.forward, term.params
    if params:
        return lambda *a: forward(np, *a, **params)
    return lambda *a: forward(np, *a)


class NumpyBackend:
    name = "numpy"

    def supports(self, spec, term) -> bool:
        return True

    def compile(self, spec: KernelSpec) -> NumpyKernel:
        return NumpyKernel(spec)
