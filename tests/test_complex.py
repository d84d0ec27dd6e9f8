"""Complex dtypes against torch: promotion, creation, printing, views, conj, comparisons and
their errors, and gradients on complex and real leaves through complex intermediates."""

import numpy as np
import pytest
import torch

import graphgrad as gg

RNG = np.random.default_rng(7)
Z = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
W = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
X = RNG.normal(size=(3, 4))

NAMES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
         "complex64", "complex128"]


def test_dtype_objects():
    assert gg.cfloat is gg.complex64 and gg.cdouble is gg.complex128
    for name in ("complex64", "complex128"):
        d, t = getattr(gg, name), getattr(torch, name)
        assert repr(d) == repr(t)
        assert (d.is_complex, d.is_floating_point, d.is_signed, d.itemsize) == \
            (t.is_complex, t.is_floating_point, t.is_signed, t.itemsize)
    assert not gg.float32.is_complex


@pytest.mark.parametrize("a", NAMES)
@pytest.mark.parametrize("b", ["complex64", "complex128"])
def test_promote_types(a, b):
    got = gg.promote_types(getattr(gg, a), getattr(gg, b))
    assert repr(got) == repr(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    assert gg.can_cast(getattr(gg, b), getattr(gg, a)) == \
        torch.can_cast(getattr(torch, b), getattr(torch, a))


PROGRAMS = [
    lambda m: m.ones(3, dtype=m.float32) + m.ones(3, dtype=m.complex64),
    lambda m: m.ones(3, dtype=m.float64) + m.ones(3, dtype=m.complex64),
    lambda m: m.ones(3, dtype=m.float64) + m.tensor(1j),
    lambda m: m.ones(3, dtype=m.float32) + m.tensor(1j, dtype=m.complex128),
    lambda m: m.ones(3, dtype=m.int64) + m.tensor(1j, dtype=m.complex128),
    lambda m: m.ones(3, dtype=m.float32) * 2j,
    lambda m: m.ones(3, dtype=m.float64) * (1 + 2j),
    lambda m: m.arange(3) + 1j,
    lambda m: m.tensor([True, False]) * 1j,
    lambda m: m.ones(2, dtype=m.complex64) * 2.5,
    lambda m: m.ones(2, dtype=m.complex64) + m.tensor(3.0, dtype=m.float64),
    lambda m: m.ones(2, dtype=m.complex64) / m.arange(1, 3),
    lambda m: m.tensor([1 + 2j, 3 - 4j]),
    lambda m: m.tensor([1, 2.5j]),
    lambda m: m.tensor(2j),
    lambda m: m.tensor([[1.5, 2]], dtype=m.complex128),
    lambda m: m.zeros(2, 2, dtype=m.complex64),
    lambda m: m.ones(3, dtype=m.cfloat).sum(),
    lambda m: m.tensor([1 + 1j, 2 - 1j]).mean(),
    lambda m: m.tensor([1 + 1j, 2 - 1j]) == m.tensor([1 + 1j, 2 + 1j]),
    lambda m: m.tensor([1 + 1j, 2 - 1j]) != 2 - 1j,
    lambda m: m.tensor([3 + 4j, -1j]).abs(),
    lambda m: m.tensor([3 + 4j, -1j], dtype=m.complex128).abs(),
    lambda m: m.tensor([3 + 4j, -1j, 0j]).angle(),
    lambda m: m.tensor([-2.0, 0.0, 3.0]).angle(),
    lambda m: m.complex(m.tensor([1.0, 2.0]), m.tensor([3.0, -4.0])),
    lambda m: m.polar(m.tensor([1.0, 2.0], dtype=m.float64), m.tensor([0.5, -1.0],
                                                                      dtype=m.float64)),
    lambda m: m.tensor([1 + 2j, 3 - 4j]).conj(),
    lambda m: m.tensor([1 + 2j, 3 - 4j]).conj_physical(),
    lambda m: m.tensor([1 + 2j, 3 - 4j]).resolve_conj(),
    lambda m: m.tensor([1 + 2j, 3 - 4j]).real,
    lambda m: m.tensor([1 + 2j, 3 - 4j]).imag,
    lambda m: m.tensor([1.0, 2.0]).real,
    lambda m: m.view_as_real(m.tensor([[1 + 2j, 3 - 4j]])),
    lambda m: m.view_as_real(m.tensor([[1 + 2j, 3 - 4j], [5j, 6]]).t()),
    lambda m: m.view_as_real(m.tensor(1 - 1j)),
    lambda m: m.view_as_complex(m.tensor([[1.0, 2.0], [3.0, 4.0]])),
    lambda m: m.tensor([1 + 2j, 3 - 4j]) ** 2,
    lambda m: m.tensor([1 + 2j, 3 - 4j]).exp(),
    lambda m: m.tensor([1 + 2j, 3 - 4j]).log(),
    lambda m: m.tensor([1 + 2j, -3 - 4j]).sqrt(),
    lambda m: m.tensor([1 + 2j, 3 - 4j]).sin() + m.tensor([1 + 2j, 3 - 4j]).cos(),
    lambda m: m.tensor([[1 + 2j, 3 - 4j]]) @ m.tensor([[1j], [2]]),
    lambda m: m.tensor([1 + 2j, 3 - 4j]).to(m.complex128),
    lambda m: m.tensor([1.0, 2.0]).to(m.complex64),
    lambda m: m.is_complex(m.tensor([1j])),
]


@pytest.mark.parametrize("prog", range(len(PROGRAMS)))
def test_values_dtypes_and_printing(prog):
    ref, ours = PROGRAMS[prog](torch), PROGRAMS[prog](gg)
    if isinstance(ref, bool):
        assert ours is ref
        return
    assert str(ours.dtype) == str(ref.dtype)
    np.testing.assert_allclose(ours.numpy(), ref.resolve_conj().numpy(), rtol=1e-6, atol=1e-6)
    assert repr(ours) == repr(ref.resolve_conj())


@pytest.mark.parametrize("values", [
    [1 + 2j, 3 - 4j], [0j, -0.5j, 1e-5 + 1j], [123456.7 + 1j, 0.001 - 2j],
    [[1 + 1j, 2], [3j, float("nan") + 1j]], [float("inf") - 2j, 1.5 + 0j],
    [1e10 + 1e-10j], list(np.arange(30) * (1 + 1j)), [[0.25 + 0.5j] * 8] * 3,
])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_repr_matches_torch(values, dtype):
    ref = torch.tensor(values, dtype=getattr(torch, dtype))
    ours = gg.tensor(values, dtype=getattr(gg, dtype))
    assert repr(ours) == repr(ref)
    assert repr(gg.tensor(values, dtype=getattr(gg, dtype), requires_grad=True) * 1) == \
        repr(torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True) * 1)


def test_repr_empty_and_long():
    assert repr(gg.zeros(0, dtype=gg.complex64)) == repr(torch.zeros(0, dtype=torch.complex64))
    big = RNG.normal(size=2000) + 1j
    assert repr(gg.tensor(big)) == repr(torch.tensor(big))


def test_views_share_memory_and_setters():
    z = gg.tensor([1 + 2j, 3 - 4j])
    r = gg.view_as_real(z)
    r[0, 1] = 9.0
    assert z[0].item() == 1 + 9j
    z.real.mul_(2)
    z.imag = gg.tensor([0.5, 0.25])
    t = torch.tensor([1 + 2j, 3 - 4j])
    torch.view_as_real(t)[0, 1] = 9.0
    t.real.mul_(2)
    t.imag = torch.tensor([0.5, 0.25])
    np.testing.assert_array_equal(z.numpy(), t.numpy())
    x = gg.tensor([[1.0, 2.0], [3.0, 4.0]])
    c = gg.view_as_complex(x)
    c.mul_(1j)
    np.testing.assert_array_equal(x.numpy(), [[-2.0, 1.0], [-4.0, 3.0]])


def test_conj_is_a_copy_without_the_conj_bit():
    z = gg.tensor([1 + 2j])
    c = z.conj()
    assert not c.is_conj() and not gg.is_conj(c)
    assert c.resolve_conj() is c
    x = gg.tensor([1.0])
    assert x.conj() is x and gg.conj_physical(x) is x


@pytest.mark.parametrize("call", [
    lambda m, z: z < z, lambda m, z: z >= 1, lambda m, z: z.max(), lambda m, z: m.maximum(z, z),
    lambda m, z: z.clamp(0, 1), lambda m, z: z.floor(), lambda m, z: z.sign(),
    lambda m, z: z.logit(), lambda m, z: z.round(), lambda m, z: z.relu(),
    lambda m, z: m.view_as_real(m.tensor([1.0])), lambda m, z: m.tensor([1.0]).imag,
    lambda m, z: m.view_as_complex(m.ones(3, 2).t()),
    lambda m, z: m.view_as_complex(m.ones(3, 3)),
    lambda m, z: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m, z: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m, z: m.tensor([1.0]).requires_grad_() * m.ones(1, dtype=m.int64).requires_grad_(),
    lambda m, z: (z * m.tensor(1j, requires_grad=True)).sum().backward(),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as ref:
        call(torch, torch.tensor([1 + 1j, 2j]))
    with pytest.raises(type(ref.value)) as ours:
        call(gg, gg.tensor([1 + 1j, 2j]))
    assert isinstance(ours.value, RuntimeError)  # NotImplementedError is a RuntimeError too
    if type(ref.value) is NotImplementedError:
        assert str(ours.value) == str(ref.value)


GRAD_PROGRAMS = [
    lambda m, z, w, x: (z * w).abs().sum(),
    lambda m, z, w, x: ((z + w) / (z - w + 3)).real.sum() + (z * x).imag.pow(2).sum(),
    lambda m, z, w, x: (z.exp() * w.conj()).angle().sum(),
    lambda m, z, w, x: m.view_as_real(z @ w.mT).pow(2).mean(),
    lambda m, z, w, x: (m.complex(x, x * 2) * z).abs().sum(),
    lambda m, z, w, x: (m.polar(x.abs() + 0.1, x) * w).real.sum(),
    lambda m, z, w, x: (m.view_as_complex(m.view_as_real(z) * 2) * w).imag.sum(),
    lambda m, z, w, x: (z.log() + z.sqrt() + z.sin() * z.cos() + z ** 3).abs().sum(),
    lambda m, z, w, x: ((z * 1j + 2.5) * x).sum().real + z.mean().imag,
    lambda m, z, w, x: m.conj_physical(z * w).real.sum() + (z - x).abs().max(),
    lambda m, z, w, x: (z.sgn() * w).real.sum() + (z.sigmoid() * w).abs().sum(),
    lambda m, z, w, x: (z.tanh() + z.reciprocal() + z.square() + z.rsqrt() - z).abs().sum(),
]


@pytest.mark.parametrize("prog", range(len(GRAD_PROGRAMS)))
@pytest.mark.parametrize("create_graph", [False, True])
def test_gradients_on_complex_and_real_leaves(prog, create_graph):
    results = []
    for m in (torch, gg):
        z = m.tensor(Z, requires_grad=True)
        w = m.tensor(W, requires_grad=True)
        x = m.tensor(X, requires_grad=True)
        loss = GRAD_PROGRAMS[prog](m, z, w, x)
        grads = m.autograd.grad(loss, (z, w, x), create_graph=create_graph, allow_unused=True)
        out = [float(loss)] + [None if g is None else g.detach().resolve_conj().numpy()
                              for g in grads]
        if create_graph:
            live = [g for g in grads if g is not None and g.requires_grad]
            if live:
                second = sum((g.abs() ** 2).sum() for g in live)
                out += [None if h is None else h.resolve_conj().numpy()
                        for h in m.autograd.grad(second, (z, w, x), allow_unused=True)]
        results.append(out)
    for a, b in zip(*results):
        if a is None or b is None:
            assert a is None and b is None or not np.any(a if b is None else b)
            continue
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)


def test_backward_into_complex_leaf_accumulates():
    for m in (torch, gg):
        z = m.tensor([1 + 1j, 2 - 1j], requires_grad=True)
        (z * z).abs().sum().backward()
        (z.conj() * 3).real.sum().backward()
        if m is torch:
            ref = z.grad.numpy()
        else:
            np.testing.assert_allclose(z.grad.numpy(), ref, rtol=1e-6)
            assert z.grad.dtype == gg.complex64


GRADCHECK_PROGRAMS = [
    lambda m, z, x: (z * z).exp() * z.conj(),
    lambda m, z, x: ((z * z).abs() * x, z.angle() + x * z),
    lambda m, z, x: m.view_as_real(z / (z + 3)) * x.unsqueeze(-1),
    lambda m, z, x: m.polar(x.abs() + 0.5, x) * z + m.complex(x, -x),
    lambda m, z, x: (z.log() * z.sqrt()).real + z.sin().imag,
    lambda m, z, x: z.reshape(2, 2) @ z.reshape(2, 2).mT.conj(),
    lambda m, z, x: m.fft.fft(z * x) + m.fft.ifft(z, n=3).sum(),
    lambda m, z, x: (m.fft.rfft(x, norm="ortho"), m.fft.irfft(z, n=5), m.fft.hfft(z)),
]


@pytest.mark.parametrize("prog", range(len(GRADCHECK_PROGRAMS)))
def test_gradcheck_complex128(prog):
    """Finite differences of the real and imaginary parts (graphgrad's gradcheck treats a
    complex number as two reals, as torch's does); torch's gradcheck agrees on each program."""
    z0 = np.array([1 + 2j, 3 - 1j, -0.5 + 0.7j, 0.9 - 1.1j])
    x0 = np.array([0.5, -1.5, 0.8, 1.2])
    for m in (torch, gg):
        z = m.tensor(z0, requires_grad=True)
        x = m.tensor(x0, requires_grad=True)
        fn = lambda z, x, m=m: GRADCHECK_PROGRAMS[prog](m, z, x)  # noqa: E731
        assert m.autograd.gradcheck(fn, (z, x))
        assert m.autograd.gradgradcheck(fn, (z, x))


def test_gradcheck_catches_a_wrong_complex_rule():
    from graphgrad.ops.complex import CONJ

    z = gg.tensor(np.array([1 + 2j, 3 - 1j]), requires_grad=True)
    rule = CONJ.vjp
    CONJ.vjp = lambda ns, g: g  # missing the conjugation
    try:
        assert not gg.autograd.gradcheck(lambda t: t.conj() * 2, (z,), raise_exception=False)
    finally:
        CONJ.vjp = rule
    assert gg.autograd.gradcheck(lambda t: t.conj() * 2, (z,))
