"""graphgrad.cuda, graphgrad.cpu and graphgrad.backends answer as torch's CPU-only build does."""

import pytest
import torch

import graphgrad as gg


def outcome(m, f):
    try:
        return ("ok", f(m))
    except Exception as ex:  # noqa: BLE001 - the outcome is compared
        return (type(ex).__name__, str(ex))


def same(f):
    assert outcome(torch, f) == outcome(gg, f)


@pytest.mark.parametrize("name", [
    "is_available", "device_count", "is_initialized", "seed", "seed_all", "synchronize",
    "empty_cache", "current_device", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "get_device_name", "get_device_capability",
    "initial_seed", "get_rng_state", "get_rng_state_all", "init", "is_bf16_supported",
    "ipc_collect", "mem_get_info", "get_device_properties", "current_stream", "get_arch_list",
    "get_gencode_flags", "default_stream",
])
def test_cuda_no_arg(name):
    same(lambda m: getattr(m.cuda, name)())


@pytest.mark.parametrize("call", [
    lambda m: m.cuda.manual_seed(1), lambda m: m.cuda.manual_seed_all(3),
    lambda m: m.cuda.manual_seed("a"), lambda m: m.cuda.set_rng_state_all([]),
    lambda m: m.cuda.set_rng_state(m.zeros(3, dtype=m.uint8)), lambda m: m.cuda.memory_allocated(0),
    lambda m: dict(m.cuda.memory_stats()),
    lambda m: issubclass(m.cuda.OutOfMemoryError, RuntimeError),
])
def test_cuda_calls(call):
    same(call)


@pytest.mark.parametrize("name", ["set_device", "reset_peak_memory_stats", "memory_summary"])
def test_cuda_raising_differently(name):
    # torch's CPU build fails inside its C extension here (AttributeError/KeyError); graphgrad
    # raises the missing-CUDA AssertionError its other device calls raise.
    with pytest.raises(Exception):  # noqa: B017 - torch's own error types vary
        getattr(torch.cuda, name)(0) if name == "set_device" else getattr(torch.cuda, name)()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        getattr(gg.cuda, name)(0) if name == "set_device" else getattr(gg.cuda, name)()


@pytest.mark.parametrize("call", [
    lambda m: m.cpu.is_available(), lambda m: m.cpu.device_count(),
    lambda m: m.cpu.current_device(), lambda m: m.cpu.synchronize(),
    lambda m: m.cpu.is_initialized(), lambda m: m.cpu.set_device("cpu"),
])
def test_cpu(call):
    same(call)


@pytest.mark.parametrize("call", [
    lambda m: m.backends.cudnn.is_available(), lambda m: m.backends.cudnn.version(),
    lambda m: (m.backends.cudnn.enabled, m.backends.cudnn.benchmark,
               m.backends.cudnn.deterministic, m.backends.cudnn.allow_tf32),
    lambda m: m.backends.mps.is_available(), lambda m: m.backends.mps.is_built(),
    lambda m: m.backends.cuda.is_built(),
    lambda m: (m.backends.cuda.flash_sdp_enabled(), m.backends.cuda.math_sdp_enabled(),
               m.backends.cuda.mem_efficient_sdp_enabled()),
    lambda m: m.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    lambda m: m.backends.cuda.matmul.foo,
    lambda m: setattr(m.backends.cuda.matmul, "foo", 1),
])
def test_backends(call):
    same(call)


def test_backends_flags_settable():
    for m in (torch, gg):
        cudnn = m.backends.cudnn
        saved = (cudnn.benchmark, cudnn.deterministic)
        try:
            cudnn.benchmark = True
            cudnn.deterministic = True
            assert (cudnn.benchmark, cudnn.deterministic) == (True, True)
            with cudnn.flags(enabled=False):
                assert cudnn.enabled is False
            assert cudnn.enabled is True
        finally:
            cudnn.benchmark, cudnn.deterministic = saved


def test_backend_switches_differing_from_torch():
    # graphgrad's kernels are NumPy's (OpenBLAS or MKL, no oneDNN, no OpenMP pool), so these say
    # what graphgrad uses, where torch's CPU build says True.
    assert gg.backends.mkldnn.is_available() is False
    assert gg.backends.openmp.is_available() is False
    assert isinstance(gg.backends.mkl.is_available(), bool)


def test_array_backend_untouched():
    assert gg.backends.get_backend("cpu") is gg.backends.numpy_backend
    with pytest.raises(RuntimeError, match="no backend for device 'cuda'"):
        gg.backends.get_backend("cuda")


def test_cuda_guarded_script_takes_cpu_path():
    def script(m):
        dev = m.device("cuda" if m.cuda.is_available() else "cpu")
        m.backends.cudnn.benchmark = False
        x = m.ones(2, 2, device=dev)
        if m.cuda.is_available():
            m.cuda.synchronize()
        return str(dev), (x @ x).tolist()

    same(script)
