"""``graphgrad.compile``'s ``mode``, ``backend`` and ``options``, checked as torch.compile
checks them: an unknown value raises, naming the accepted ones.

Modes: None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs" and
"lite" (torch's names). They all run the same pipeline here (there are no CUDA graphs or
autotuned kernels on the CPU to choose between). Backends: None or "inductor" (the default:
fused numba kernels when numba is installed, else NumPy), "numba", "numpy" (unfused, eager's
arithmetic), "eager" and "aot_eager" (capture, guards and the clean-up passes, replayed op by op
with no fusion or code generation).
"""

from __future__ import annotations

__all__ = ["MODES", "BACKENDS", "resolve", "list_backends"]

MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs",
         "lite")
# backend name -> (codegen backend, options it implies)
BACKENDS = {None: (None, {}), "inductor": (None, {}), "numba": ("numba", {}),
            "numpy": ("numpy", {}), "eager": (None, {"core_only": True}),
            "aot_eager": (None, {"core_only": True})}


def list_backends() -> list[str]:
    """The accepted backend names (torch._dynamo.list_backends())."""
    return sorted(k for k in BACKENDS if k is not None)


def resolve(mode, backend, options):
    """(codegen backend, options) for compile's arguments; raises on unknown values."""
    if mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(m for m in MODES if m is not None)}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"graphgrad.compile: options must be a dict, got "
                        f"{type(options).__name__}")
    if hasattr(backend, "compile") and hasattr(backend, "supports"):
        return backend, dict(options or {})  # a codegen backend object (tests, extensions)
    if callable(backend):
        raise RuntimeError("graphgrad.compile: a callable backend is not supported (graphgrad "
                           "has no FX graphs to hand it); use one of: "
                           f"{', '.join(list_backends())}")
    if backend not in BACKENDS:
        raise RuntimeError(f"Invalid backend: {backend!r}, expected one of: "
                           f"{', '.join(list_backends())} (graphgrad.compiler.list_backends())")
    name, implied = BACKENDS[backend]
    return name, {**implied, **(options or {})}
