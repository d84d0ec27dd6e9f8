"""The walk behind tests/test_api_sweep.py: torch 2.13's public names, module by module, and
which of them graphgrad lacks. Rules (also in docs/compat.md):

- a module is public when no component of its dotted name starts with ``_``; its public names
  are its ``__all__`` or, without one, every name not starting with ``_`` except objects
  imported from outside torch (``typing.Any``, ``os``) and modules that are not its submodules;
  the top-level ``torch`` adds the names of the second kind that its ``__all__`` leaves out
  (``torch.channels_last``, ``torch.to_dlpack``);
- submodules are found as module attributes and, for packages, in their folders;
- whole subtrees in ``SKIPPED_TREES`` are not walked (each with its reason), and the device
  namespaces (``torch.cuda``, ``torch.xpu``, ``torch.mps``) are checked only for the names a
  CPU program calls to probe for a device (``DEVICE_PROBES``);
- a name of an implementation module (``torch.nn.modules.conv.Conv3d``) also counts as present
  when torch re-exports the same object from the parent package and graphgrad's parent has it;
- the public attributes of the classes in ``CLASSES`` (Tensor, nn.Module, Optimizer, ...) are
  swept as ``torch.<class>.<attribute>``.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
import warnings

SKIPPED_TREES = {
    "quantization: graphgrad has no quantized dtypes or kernels": [
        "torch.ao", "torch.quantization", "torch.nn.quantized", "torch.nn.quantizable",
        "torch.nn.intrinsic", "torch.nn.qat"],
    "FX / export graph capture: graphgrad.compile captures at its dispatch point instead": [
        "torch.fx", "torch.export"],
    "TorchScript's compiler internals (torch.jit itself is checked)": ["torch.jit."],
    "torch's ONNX exporter internals (graphgrad.onnx exports from its own IR; torch.onnx "
    "itself is checked)": ["torch.onnx."],
    "owner M: torch.distributed's subsystems (FSDP, RPC, elastic, DTensor, pipelining, "
    "checkpoint, ...); graphgrad.distributed is MPI-based (torch.distributed itself is "
    "checked)": ["torch.distributed."],
    "device-only internals: no CUDA/XPU/MPS/MTIA device here": [
        "torch.cuda.", "torch.xpu.", "torch.mps.", "torch.mtia", "torch.backends.xeon",
        "torch.backends.cusparselt", "torch.backends.python_native", "torch.backends.kleidiai",
        "torch.backends.nnpack", "torch.backends.opt_einsum", "torch.backends.quantized",
        "torch.backends.xnnpack", "torch.backends.mha", "torch.backends.cpu"],
    "torch's C++ toolchain, build, mobile and bundling utilities": [
        "torch.utils.hipify", "torch.utils.cpp_extension", "torch.utils.collect_env",
        "torch.utils.benchmark", "torch.utils.bottleneck", "torch.utils.jit",
        "torch.utils.mobile_optimizer", "torch.utils.model_dump", "torch.utils.show_pickle",
        "torch.utils.bundled_inputs", "torch.utils.viz", "torch.utils.backcompat",
        "torch.utils.throughput_benchmark", "torch.utils.file_baton", "torch.utils.mkldnn",
        "torch.utils.serialization", "torch.utils.flop_counter", "torch.utils.module_tracker",
        "torch.utils.debug_log", "torch.utils.cpp_backtrace", "torch.utils.backend_registration",
        "torch.utils.weak", "torch.utils.deterministic", "torch.utils.dlpack",
        "torch.utils.tensorboard.summary"],
    "owner M: the deprecated DataPipes of torch.utils.data": ["torch.utils.data.datapipes",
                                                               "torch.utils.data.graph"],
    "torch subsystems graphgrad does not have: hermetic packages, monitoring counters, "
    "ATen custom-op registration, masked and nested tensors, __torch_function__ overrides, "
    "the compiler's config": [
        "torch.package", "torch.monitor", "torch.library", "torch.masked", "torch.nested",
        "torch.overrides", "torch.compiler.config", "torch.contrib", "torch.testing.",
        "torch.utils.data.backward_compatibility", "torch.nn.cpp", "torch.nn.attention.",
        "torch.autograd.profiler_util", "torch.autograd.profiler_legacy", "torch.profiler.itt",
        "torch.nn.parallel.comm"],
}

# what a CPU program calls on a device namespace to probe it; the rest is device-only
DEVICE_PROBES = {
    "torch.cuda": ["is_available", "device_count", "is_initialized", "current_device",
                   "set_device", "synchronize", "empty_cache", "manual_seed", "manual_seed_all",
                   "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
                   "memory_allocated", "max_memory_allocated", "memory_reserved",
                   "reset_peak_memory_stats", "get_device_name", "get_device_capability",
                   "get_device_properties", "is_bf16_supported", "amp", "OutOfMemoryError"],
    "torch.xpu": ["is_available", "device_count", "is_initialized", "current_device",
                  "set_device", "synchronize", "empty_cache", "manual_seed", "manual_seed_all",
                  "seed", "initial_seed", "get_rng_state", "set_rng_state", "memory_allocated",
                  "max_memory_allocated", "get_device_name", "get_device_properties",
                  "is_bf16_supported"],
    "torch.mps": ["is_available", "device_count", "manual_seed", "seed", "synchronize",
                  "empty_cache", "get_rng_state", "set_rng_state", "current_allocated_memory",
                  "driver_allocated_memory"],
}


def _skipped(name):
    for prefixes in SKIPPED_TREES.values():
        for p in prefixes:
            if name == p.rstrip(".") and p.endswith("."):
                continue  # "torch.jit." skips the submodules, not torch.jit itself
            if name == p or name.startswith(p if p.endswith(".") else p + "."):
                return True
    return False


class _Unlisted:
    """A module seen without its ``__all__`` (for the top-level names it leaves out)."""

    def __init__(self, mod):
        self._mod = mod

    def __dir__(self):
        return dir(self._mod)

    def __getattr__(self, name):
        if name == "__all__":
            raise AttributeError(name)
        return getattr(self._mod, name)


def _public(mod, modname):
    names = getattr(mod, "__all__", None)
    explicit = names is not None
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    out = []
    for n in names:
        if n.startswith("_"):
            continue
        try:
            obj = getattr(mod, n)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails is not a public name
            continue
        if isinstance(obj, types.ModuleType):
            continue  # submodules are walked on their own
        origin = getattr(obj, "__module__", None)
        if not explicit and isinstance(origin, str) and not origin.startswith("torch"):
            continue
        out.append((n, obj))
    return out


def torch_api():
    """``{module name: [(public name, object), ...]}`` over torch's walked public modules."""
    import torch

    warnings.simplefilter("ignore")
    seen, api = set(), {}
    stack = ["torch"]
    while stack:
        modname = stack.pop()
        if modname in seen or _skipped(modname):
            continue
        seen.add(modname)
        try:
            mod = importlib.import_module(modname)
        except Exception:  # noqa: BLE001 - modules needing absent optional packages
            continue
        if not isinstance(mod, types.ModuleType) or modname in ("torch.classes", "torch.ops"):
            continue
        if modname in DEVICE_PROBES:
            api[modname] = [(n, getattr(mod, n)) for n in DEVICE_PROBES[modname]]
        else:
            api[modname] = _public(mod, modname)
        if modname == "torch":  # programs also use top-level names torch leaves out of __all__
            listed = {n for n, _ in api[modname]}
            api[modname] += [(n, obj) for n, obj in _public(_Unlisted(mod), modname)
                             if n not in listed]
        subs = {n for n in dir(mod) if not n.startswith("_")
                and isinstance(getattr(mod, n, None), types.ModuleType)
                and getattr(mod, n).__name__ == f"{modname}.{n}"}
        if isinstance(getattr(mod, "__path__", None), list):
            subs |= {i.name for i in pkgutil.iter_modules(mod.__path__)
                     if not i.name.startswith("_")}
        stack.extend(f"{modname}.{n}" for n in sorted(subs))
    del torch
    return api


def _graphgrad_module(gg, modname):
    path = "graphgrad" + modname[len("torch"):]
    try:
        return importlib.import_module(path)
    except ImportError:
        pass
    obj = gg
    for part in modname.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def missing_names():
    """Qualified torch names (``torch.linalg.foo``) graphgrad lacks, by the rules above."""
    import torch

    import graphgrad as gg

    api = torch_api()
    missing = set()
    for modname, names in api.items():
        gmod = _graphgrad_module(gg, modname)
        parent = modname.rsplit(".", 1)[0]
        tparent = importlib.import_module(parent) if "." in modname else None
        gparent = _graphgrad_module(gg, parent) if "." in modname else None
        for name, obj in names:
            if gmod is not None and hasattr(gmod, name):
                continue
            moved = tparent is not None and getattr(tparent, name, None) is obj
            if moved and gparent is not None and hasattr(gparent, name):
                continue
            missing.add(f"{modname}.{name}")
    for path, make in CLASSES.items():
        ours, theirs = make(gg), make(torch)
        missing |= {f"torch.{path}.{n}" for n in dir(theirs)
                    if not n.startswith("_") and not hasattr(ours, n)}
    return missing


# classes whose public attributes programs use directly (an instance where attributes are set
# per instance, as a Generator's device)
CLASSES = {
    "Tensor": lambda m: m.Tensor,
    "nn.Module": lambda m: m.nn.Module,
    "optim.Optimizer": lambda m: m.optim.Optimizer,
    "optim.lr_scheduler.LRScheduler": lambda m: m.optim.lr_scheduler.LRScheduler,
    "utils.data.DataLoader": lambda m: m.utils.data.DataLoader,
    "Generator": lambda m: m.Generator(),
    "device": lambda m: m.device("cpu"),
    "dtype": lambda m: m.float32,
    "Size": lambda m: m.Size([1]),
    "finfo": lambda m: m.finfo(m.float32),
}
