"""Runs one program on torch and on graphgrad from the same NumPy data and compares results
and gradients (the oracle is torch 2.13)."""

from __future__ import annotations

import warnings

import numpy as np
import torch

import graphgrad as gg

warnings.filterwarnings("ignore", message="Sparse invariant checks")


def leaf(m, a, requires_grad=True):
    t = m.tensor(np.array(a))
    return t.requires_grad_(requires_grad) if requires_grad and a.dtype.kind == "f" else t


def dense_of(x):
    if x.layout != (torch.strided if isinstance(x, torch.Tensor) else gg.strided):
        x = x.to_dense()
    return x.detach().numpy()


def compare(program, arrays, *, rtol=1e-5, atol=1e-6, grads=True):
    """``program(m, *leaves)`` on both libraries: same output (dense view), same grads of the
    float leaves."""
    results = {}
    for m in (torch, gg):
        leaves = [leaf(m, a) for a in arrays]
        out = program(m, *leaves)
        value = dense_of(out)
        gs = []
        if grads and out.requires_grad:
            loss = (out.to_dense() if out.layout != m.strided else out)
            w = m.tensor(np.linspace(-1, 1, loss.numel()).reshape(tuple(loss.shape))
                         .astype(value.dtype))
            (loss * w).sum().backward()
            gs = [None if x.grad is None else x.grad.numpy() for x in leaves
                  if x.is_floating_point()]
        results[m.__name__] = (value, gs, out)
    (tv, tg, tout), (gv, ggr, gout) = results["torch"], results["graphgrad"]
    np.testing.assert_allclose(gv, tv, rtol=rtol, atol=atol)
    assert len(tg) == len(ggr)
    for a, b in zip(ggr, tg):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    return tout, gout
