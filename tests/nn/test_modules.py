"""Every ModuleInfo (tests/nn/moduleinfo.py) against its torch twin: with torch's state copied in,
the forward output, input and parameter gradients and buffers match (float64 and float32); the
state_dict keys, parameter names/shapes and repr are torch's.
"""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest
import torch

import graphgrad as gg

_spec = importlib.util.spec_from_file_location(
    "_gg_moduleinfo", pathlib.Path(__file__).parent / "moduleinfo.py")
mi = sys.modules.setdefault("_gg_moduleinfo", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(mi)

INFOS = mi.MODULE_INFOS
_DTYPE_NAME = {np.float64: "float64", np.float32: "float32"}


def _cases():
    for info in INFOS:
        for dtype in info.dtypes:
            yield pytest.param(info, dtype, id=f"{info.id}-{_DTYPE_NAME[dtype]}")


def _require(info):
    missing = [n for n in info.needs if not hasattr(gg.nn.functional, n)]
    if missing:
        pytest.skip(f"graphgrad.nn.functional lacks {', '.join(missing)}")
    if not hasattr(gg.nn, info.name):
        pytest.fail(f"graphgrad.nn.{info.name} is missing")


def _np(t):
    return t.detach().numpy()


def _pair(info, dtype):
    """The torch module and its graphgrad twin holding the same state, in ``dtype``."""
    t_mod = mi.build(info, torch).to(getattr(torch, _DTYPE_NAME[dtype]))
    g_mod = mi.build(info, gg).to(getattr(gg, _DTYPE_NAME[dtype]))
    state = {k: gg.tensor(_np(v).copy()) for k, v in t_mod.state_dict().items()}
    result = g_mod.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    t_mod.train(info.train)
    g_mod.train(info.train)
    return t_mod, g_mod


def _leaves(info, dtype):
    arrays = mi.make_inputs(info, dtype)
    t_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f" and info.grad) for a in arrays]
    g_in = [gg.tensor(a, requires_grad=a.dtype.kind == "f" and info.grad) for a in arrays]
    return t_in, g_in


def _outputs(out):
    """The output tensors, flattened (an LSTM returns ``(out, (h, c))``)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _outputs(o)]
    return [out]


def _close(actual, expected, tol, what):
    rtol, atol = tol
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64),
                               np.asarray(expected, dtype=np.float64), rtol=rtol, atol=atol,
                               err_msg=what)


@pytest.mark.parametrize("info, dtype", list(_cases()))
def test_forward_backward_match_torch(info, dtype):
    _require(info)
    tol = info.tolerance(dtype)
    t_mod, g_mod = _pair(info, dtype)
    t_in, g_in = _leaves(info, dtype)
    t_out = _outputs(t_mod(*t_in, **info.kwargs_inputs))
    g_out = _outputs(g_mod(*g_in, **info.kwargs_inputs))
    assert len(g_out) == len(t_out)
    for i, (a, b) in enumerate(zip(t_out, g_out)):
        assert str(b.dtype) == str(a.dtype), f"output {i} dtype"
        assert tuple(b.shape) == tuple(a.shape), f"output {i} shape"
        _close(_np(b), _np(a), tol, f"output {i}")
    for (name, a), (g_name, b) in zip(t_mod.named_buffers(), g_mod.named_buffers()):
        assert g_name == name
        _close(_np(b), _np(a), tol, f"buffer {name} after forward")
    if not info.grad:
        return
    rng = np.random.default_rng(info.seed + 1)
    pairs = [(a, b) for a, b in zip(t_out, g_out) if a.requires_grad]
    if not pairs:
        return
    ups = [rng.standard_normal(tuple(a.shape)).astype(dtype) for a, _ in pairs]
    torch.autograd.backward([a for a, _ in pairs], [torch.tensor(u) for u in ups])
    gg.autograd.backward([b for _, b in pairs], [gg.tensor(u) for u in ups])
    for i, (a, b) in enumerate(zip(t_in, g_in)):
        if a.requires_grad:
            assert (b.grad is None) == (a.grad is None), f"input {i} grad presence"
            if a.grad is not None:
                _close(_np(b.grad), _np(a.grad), tol, f"grad of input {i}")
    g_params = dict(g_mod.named_parameters())
    for name, a in t_mod.named_parameters():
        b = g_params[name]
        assert (b.grad is None) == (a.grad is None), f"{name}.grad presence"
        if a.grad is not None:
            assert str(b.grad.dtype) == str(a.grad.dtype)
            _close(_np(b.grad), _np(a.grad), tol, f"grad of {name}")


@pytest.mark.parametrize("info", INFOS, ids=[i.id for i in INFOS])
def test_structure_matches_torch(info):
    """state_dict keys/shapes/dtypes, named parameters and buffers, and the repr."""
    t_mod, g_mod = mi.build(info, torch), mi.build(info, gg)
    t_sd, g_sd = t_mod.state_dict(), g_mod.state_dict()
    assert type(g_sd).__name__ == "OrderedDict"
    assert list(g_sd) == list(t_sd)
    for k in t_sd:
        assert tuple(g_sd[k].shape) == tuple(t_sd[k].shape), k
        assert str(g_sd[k].dtype) == str(t_sd[k].dtype), k
    assert [(n, tuple(p.shape), p.requires_grad) for n, p in g_mod.named_parameters()] == [
        (n, tuple(p.shape), p.requires_grad) for n, p in t_mod.named_parameters()]
    assert [n for n, _ in g_mod.named_buffers()] == [n for n, _ in t_mod.named_buffers()]
    assert [n for n, _ in g_mod.named_modules()] == [n for n, _ in t_mod.named_modules()]
    assert repr(g_mod) == repr(t_mod)
    assert all(isinstance(p, gg.nn.Parameter) for p in g_mod.parameters())
