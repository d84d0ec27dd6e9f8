"""Process-wide switches (threads, determinism, matmul precision, default device, warn-always,
flush-denormal, default tensor type) against torch's answers and errors."""

import warnings

import pytest
import torch

import graphgrad as gg


def outcome(m, f):
    try:
        return ("ok", f(m))
    except Exception as ex:  # noqa: BLE001 - the outcome is compared
        return (type(ex).__name__, str(ex))


def same(f):
    want, got = outcome(torch, f), outcome(gg, f)
    assert want == got


@pytest.fixture
def restore():
    saved = (torch.get_num_threads(), gg.get_num_threads(), torch.get_float32_matmul_precision(),
             gg.get_float32_matmul_precision())
    yield
    torch.set_num_threads(saved[0])
    gg.set_num_threads(saved[1])
    torch.set_float32_matmul_precision(saved[2])
    gg.set_float32_matmul_precision(saved[3])
    for m in (torch, gg):
        m.use_deterministic_algorithms(False)
        m.set_warn_always(False)
        m.set_default_dtype(m.float32)
        m.set_default_device(None)


def test_num_threads(restore):
    assert isinstance(gg.get_num_threads(), int) and gg.get_num_threads() >= 1
    assert isinstance(gg.get_num_interop_threads(), int) and gg.get_num_interop_threads() >= 1
    for n in (1, 3):
        same(lambda m: (m.set_num_threads(n), m.get_num_threads()))


@pytest.mark.parametrize("value", [0, -2, 1.5, True, "2"])
def test_num_threads_errors(value):
    same(lambda m: m.set_num_threads(value))


@pytest.mark.parametrize("value", [0, 1.5])
def test_num_interop_threads_errors(value):
    same(lambda m: m.set_num_interop_threads(value))


def test_interop_threads_only_once():
    # Both may already have been set in this process: what matters is the second call raising.
    for m in (torch, gg):
        try:
            m.set_num_interop_threads(2)
        except RuntimeError:
            pass
    same(lambda m: m.set_num_interop_threads(2))


def test_deterministic(restore):
    same(lambda m: (m.are_deterministic_algorithms_enabled(),
                    m.is_deterministic_algorithms_warn_only_enabled()))
    same(lambda m: (m.use_deterministic_algorithms(True, warn_only=True),
                    m.are_deterministic_algorithms_enabled(),
                    m.is_deterministic_algorithms_warn_only_enabled(),
                    m.get_deterministic_debug_mode()))
    same(lambda m: (m.use_deterministic_algorithms(True),
                    m.is_deterministic_algorithms_warn_only_enabled(),
                    m.get_deterministic_debug_mode()))
    same(lambda m: (m.use_deterministic_algorithms(False),
                    m.is_deterministic_algorithms_warn_only_enabled(),
                    m.get_deterministic_debug_mode()))
    same(lambda m: m.use_deterministic_algorithms(1))
    same(lambda m: m.use_deterministic_algorithms(True, warn_only=1))


@pytest.mark.parametrize("mode", ["default", "warn", "error", 0, 1, 2, 3, "x", 2.0])
def test_deterministic_debug_mode(restore, mode):
    same(lambda m: (m.set_deterministic_debug_mode(mode), m.get_deterministic_debug_mode(),
                    m.are_deterministic_algorithms_enabled()))


def test_matmul_precision(restore):
    for p in ("medium", "high", "highest"):
        same(lambda m: (m.set_float32_matmul_precision(p), m.get_float32_matmul_precision(),
                        m.backends.cuda.matmul.allow_tf32))
    same(lambda m: m.set_float32_matmul_precision(1))
    for m in (torch, gg):
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            m.set_float32_matmul_precision("bad")
    same(lambda m: m.get_float32_matmul_precision())


def test_allow_tf32_sets_precision(restore):
    same(lambda m: (setattr(m.backends.cuda.matmul, "allow_tf32", True),
                    m.get_float32_matmul_precision()))
    same(lambda m: (setattr(m.backends.cuda.matmul, "allow_tf32", False),
                    m.get_float32_matmul_precision()))


def test_warn_always(restore):
    same(lambda m: (m.is_warn_always_enabled(), m.set_warn_always(True),
                    m.is_warn_always_enabled()))
    same(lambda m: m.set_warn_always(1))


def test_flush_denormal():
    # NOTE: graphgrad cannot switch the CPU's flush-to-zero mode from NumPy, so it answers False
    # where torch answers True (torch's answer is whether the mode could be set).
    assert torch.set_flush_denormal(False) is True
    assert gg.set_flush_denormal(False) is False
    same(lambda m: m.set_flush_denormal(1))


def test_default_device(restore):
    same(lambda m: str(m.get_default_device()))
    same(lambda m: (m.set_default_device("cpu"), str(m.get_default_device())))
    same(lambda m: (m.set_default_device(m.device("cpu")), str(m.get_default_device())))
    same(lambda m: (m.set_default_device(None), str(m.get_default_device())))
    with pytest.raises(RuntimeError, match="Expected one of"):
        gg.set_default_device("foo")


def test_default_device_cuda_raises():
    # torch's CPU build accepts the call and fails when the device is used; graphgrad refuses it
    # at once, as graphgrad.device does for any device without a backend.
    with pytest.raises(RuntimeError, match="no backend for device 'cuda'"):
        gg.set_default_device("cuda")
    assert str(gg.get_default_device()) == "cpu"


@pytest.mark.parametrize("t", ["DoubleTensor", "FloatTensor", "HalfTensor"])
def test_set_default_tensor_type(restore, t):
    def prog(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.set_default_tensor_type(getattr(m, t))
        return str(m.get_default_dtype()), str(m.tensor([1.0]).dtype)

    same(prog)

    def by_name(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.set_default_tensor_type(f"torch.{t}")
        return str(m.get_default_dtype())

    same(by_name)


def test_set_default_tensor_type_warns(restore):
    # Both warn once per process, and again on every call when warn_always is on.
    for m in (torch, gg):
        m.set_warn_always(True)
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            m.set_default_tensor_type(m.DoubleTensor)


@pytest.mark.parametrize("arg", [
    lambda m: m.LongTensor, lambda m: "torch.cuda.FloatTensor", lambda m: m.float64])
def test_set_default_tensor_type_errors(restore, arg):
    def prog(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return m.set_default_tensor_type(arg(m))

    same(prog)
