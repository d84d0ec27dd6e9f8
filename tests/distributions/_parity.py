"""The torch-vs-graphgrad checks shared by the distribution tables (test_distributions.py and
test_distributions_extra.py). Each takes ``build(m, name) -> (distribution, parameter
leaves)`` for m = torch or graphgrad, and a relative tolerance ``tol`` (absolute: tol / 100)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import graphgrad as gg


def to_np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def close(a, b, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=rtol, atol=atol)


def _tols(tol):
    return {"rtol": tol, "atol": tol * 1e-2}


def check_log_prob(build, name, values, tol=1e-7):
    """log_prob of ``values`` and its gradients with respect to the parameters."""
    results = {}
    for m in (torch, gg):
        dist, leaves = build(m, name)
        value = m.tensor(values, dtype=m.float64 if values.dtype.kind == "f" else m.int64)
        lp = dist.log_prob(value)
        grads = m.autograd.grad(lp.sum(), leaves) if leaves else ()
        results[m] = lp, grads
    close(results[gg][0], results[torch][0], **_tols(tol))
    for g_ours, g_torch in zip(results[gg][1], results[torch][1]):
        close(g_ours, g_torch, **_tols(tol))


def check_moments(build, name, tol=1e-7):
    """Shapes, has_rsample, the support's kind, mean/mode/variance/stddev and entropy."""
    t, g = build(torch, name)[0], build(gg, name)[0]
    assert tuple(g.batch_shape) == tuple(t.batch_shape)
    assert tuple(g.event_shape) == tuple(t.event_shape)
    assert g.has_rsample == t.has_rsample
    assert type(g.support).__name__ == type(t.support).__name__
    for attr in ("mean", "mode", "variance", "stddev"):
        try:
            expected = getattr(t, attr)
        except NotImplementedError:
            continue
        close(getattr(g, attr), expected, **_tols(tol))
    try:
        expected = t.entropy()
    except NotImplementedError:
        return
    close(g.entropy(), expected, **_tols(tol))


def check_cdf_icdf(build, name, values, has_icdf):
    dists = {m: build(m, name)[0] for m in (torch, gg)}
    cdf = {m: d.cdf(m.tensor(values)) for m, d in dists.items()}
    close(cdf[gg], cdf[torch])
    if has_icdf:
        q = np.clip(to_np(cdf[torch]), 0.05, 0.95)
        close(dists[gg].icdf(gg.tensor(q)), dists[torch].icdf(torch.tensor(q)), rtol=1e-6)


def check_samples(build, name, n, check_mean=True):
    """Samples have torch's shape, no gradient, lie in the support and (where the moments are
    finite) have a mean within 5 standard errors of the true mean."""
    torch_dist, gg_dist = build(torch, name)[0], build(gg, name)[0]
    gg.manual_seed(0)
    s = gg_dist.sample((n,))
    assert tuple(s.shape) == tuple(torch_dist.sample((n,)).shape)
    assert not s.requires_grad
    assert bool(gg_dist.support.check(s).all())
    if not check_mean:
        return
    try:
        mean, var = to_np(torch_dist.mean), to_np(torch_dist.variance)
    except NotImplementedError:
        return
    ok = np.isfinite(mean) & np.isfinite(var)
    err = np.abs(to_np(s.double().mean(0)) - mean)
    np.testing.assert_array_less(err[ok], (5 * np.sqrt(var / n) + 1e-12)[ok])


def check_rsample(build, name):
    gg.manual_seed(1)
    dist, leaves = build(gg, name)
    s = dist.rsample((3,))
    assert s.requires_grad
    grads = gg.autograd.grad(s.sum(), leaves, allow_unused=True)
    assert any(g is not None and bool(g.abs().sum() > 0) for g in grads)


def check_expand(build, name, tol=1e-7):
    t, g = build(torch, name)[0], build(gg, name)[0]
    shape = (2,) + tuple(t.batch_shape)
    te, ge = t.expand(shape), g.expand(shape)
    assert tuple(ge.batch_shape) == tuple(te.batch_shape), name
    assert tuple(ge.event_shape) == tuple(te.event_shape), name
    value = te.sample()
    # scalar-parameter families sample float32: compared at float32's precision
    tols = {"rtol": 1e-6} if value.dtype == torch.float32 else _tols(tol)
    close(ge.log_prob(gg.tensor(value.numpy())), te.log_prob(value), **tols)


def check_kl(build, p, q):
    """KL(p || q) and its gradients with respect to both distributions' parameters (the
    gradients only where torch's KL is finite)."""
    out = {}
    for m in (torch, gg):
        dp, leaves = build(m, p)
        dq, q_leaves = build(m, q)
        kl = m.distributions.kl_divergence(dp, dq)
        grads = (m.autograd.grad(kl.sum(), leaves + q_leaves, allow_unused=True)
                 if kl.requires_grad else ())
        out[m] = kl, grads
    close(out[gg][0], out[torch][0], rtol=1e-6)
    for a, b in zip(out[gg][1], out[torch][1]):
        if b is not None and np.isfinite(to_np(out[torch][0])).all():
            close(a, b, rtol=1e-6, atol=1e-9)


@pytest.fixture
def default_validation():
    """Both libraries validate distribution arguments by default (torch's ``__debug__``
    default); a test elsewhere in the same worker process that switched either off must not
    change what the error-parity tests compare."""
    import graphgrad as gg

    before = (torch.distributions.Distribution._validate_args,
              gg.distributions.Distribution._validate_args)
    torch.distributions.Distribution.set_default_validate_args(True)
    gg.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(before[0])
    gg.distributions.Distribution.set_default_validate_args(before[1])
