"""Window functions (torch.*_window and torch.signal.windows) against torch: values, dtypes,
leaf/grad_fn structure, gradients and errors."""

import numpy as np
import pytest
import torch

import graphgrad as gg

LENGTHS = [0, 1, 2, 3, 4, 7, 10, 33]
ATEN = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
DTYPES = [("float32", 2e-6), ("float64", 1e-12), ("float16", 2e-3)]


def _close(ours, ref, atol):
    assert str(ours.dtype) == str(ref.dtype)
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(ours.detach().numpy().astype(np.float64),
                               ref.detach().numpy().astype(np.float64), atol=atol, rtol=0)


@pytest.mark.parametrize("name", ATEN)
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dt,atol", DTYPES)
def test_aten_windows(name, n, periodic, dt, atol):
    ref = getattr(torch, name)(n, periodic, dtype=getattr(torch, dt))
    ours = getattr(gg, name)(n, periodic, dtype=getattr(gg, dt))
    _close(ours, ref, atol)


def test_aten_window_defaults_and_parameters():
    _close(gg.hann_window(8), torch.hann_window(8), 2e-6)
    _close(gg.hamming_window(9, False, 0.6, 0.3), torch.hamming_window(9, False, 0.6, 0.3), 2e-6)
    _close(gg.kaiser_window(9, False, 5.0), torch.kaiser_window(9, False, 5.0), 2e-6)
    _close(gg.kaiser_window(12, True, 0.0, dtype=gg.float64),
           torch.kaiser_window(12, True, 0.0, dtype=torch.float64), 1e-12)


@pytest.mark.parametrize("name", ATEN)
def test_aten_window_is_a_leaf_requiring_grad(name):
    ref = getattr(torch, name)(6, requires_grad=True)
    ours = getattr(gg, name)(6, requires_grad=True)
    assert ours.is_leaf and ref.is_leaf and ours.requires_grad and ours.grad_fn is None


@pytest.mark.parametrize("name", ATEN)
def test_aten_window_errors(name):
    for args, kw in [((5,), {"dtype": "int64"}), ((-1,), {}), ((2.0,), {})]:
        kw = dict(kw)
        if "dtype" in kw:
            kw_t, kw_g = {"dtype": torch.int64}, {"dtype": gg.int64}
        else:
            kw_t = kw_g = kw
        with pytest.raises(Exception) as ref:
            getattr(torch, name)(*args, **kw_t)
        with pytest.raises(type(ref.value)) as ours:
            getattr(gg, name)(*args, **kw_g)
        assert str(ours.value) == str(ref.value)


SIGNAL = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann",
          "kaiser", "nuttall"]


@pytest.mark.parametrize("name", SIGNAL)
@pytest.mark.parametrize("M", LENGTHS)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dt,atol", DTYPES[:2])
def test_signal_windows(name, M, sym, dt, atol):
    ref = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dt))
    ours = getattr(gg.signal.windows, name)(M, sym=sym, dtype=getattr(gg, dt))
    _close(ours, ref, atol * 4)


@pytest.mark.parametrize("fn,kw", [
    ("exponential", {"tau": 3.0}), ("exponential", {"center": 2.5, "sym": False}),
    ("gaussian", {"std": 2.5}), ("kaiser", {"beta": 4.0}), ("general_hamming", {"alpha": 0.6}),
    ("general_cosine", {"a": [0.5, 0.3, 0.2]}), ("general_cosine", {"a": (1.0,)}),
])
def test_signal_window_parameters(fn, kw):
    ref = getattr(torch.signal.windows, fn)(9, dtype=torch.float64, **kw)
    ours = getattr(gg.signal.windows, fn)(9, dtype=gg.float64, **kw)
    _close(ours, ref, 1e-12)


@pytest.mark.parametrize("name", SIGNAL)
def test_signal_window_graph_and_gradient(name):
    # NOTE: an even length keeps bartlett off its kink: torch's linspace(-1, 1, 7)[3] is 5.6e-17
    # (graphgrad's is 0.0), so |k|'s gradient there is a sign apart.
    ref = getattr(torch.signal.windows, name)(8, dtype=torch.float64, requires_grad=True)
    ours = getattr(gg.signal.windows, name)(8, dtype=gg.float64, requires_grad=True)
    assert type(ours.grad_fn).__name__ == type(ref.grad_fn).__name__
    # The leaves (the linspace, and the coefficients of general_cosine) get torch's gradients.
    w = torch.arange(8, dtype=torch.float64)
    ref_leaves = _leaves(ref.grad_fn)
    our_leaves = _leaves(ours.grad_fn)
    gr = torch.autograd.grad((ref * w).sum(), ref_leaves)
    go = gg.autograd.grad((ours * gg.tensor(w.numpy())).sum(), our_leaves)
    assert len(gr) == len(go)
    for a, b in zip(go, gr):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-10)


def _leaves(fn):
    """The leaf tensors under a grad_fn, in graph order (torch and graphgrad alike)."""
    out, stack, seen = [], [fn], set()
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        if hasattr(f, "variable"):
            out.append(f.variable)
        stack.extend(reversed([n for n, _ in f.next_functions]))
    return out


@pytest.mark.parametrize("call", [
    lambda m: m.signal.windows.hann(-1),
    lambda m: m.signal.windows.hann(4, dtype=m.float16),
    lambda m: m.signal.windows.blackman(4, dtype=m.int64),
    lambda m: m.signal.windows.exponential(4, tau=0.0),
    lambda m: m.signal.windows.exponential(4, center=1.0),
    lambda m: m.signal.windows.gaussian(4, std=-1.0),
    lambda m: m.signal.windows.kaiser(4, beta=-1.0),
    lambda m: m.signal.windows.general_cosine(4, a=[]),
    lambda m: m.signal.windows.general_cosine(4, a=3.0),
])
def test_signal_window_errors(call):
    with pytest.raises(Exception) as ref:
        call(torch)
    with pytest.raises(type(ref.value)) as ours:
        call(gg)
    assert str(ours.value) == str(ref.value)
