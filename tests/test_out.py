"""``out=`` against torch 2.13: values written into ``out`` and ``out`` returned, the casting
and exact-dtype rules, resizing (with torch's warning), factories taking out's dtype, the
autograd refusal, multi-output tuples, writes through views; and the table of functions that
take ``out=`` (graphgrad/_out.py) against torch's own signatures."""

import inspect
import os
import re
import types
import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg
from graphgrad import _out


def _ns(m, path):
    for part in path.split(".")[1:]:
        m = getattr(m, part)
    return m


def _inputs(m, kind):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.5, (3, 3)).astype(np.float32)
    b = rng.uniform(0.5, 1.5, (3, 3)).astype(np.float32)
    return {"a": m.tensor(a), "b": m.tensor(b), "v": m.tensor(a[0]),
            "i": m.tensor([2, 0, 1]), "c": m.tensor(a > 1.0)}[kind]


# (namespace.function, argument kinds, extra keywords, out dtype (None: the result's))
CASES = [
    ("torch.add", "ab", {}, None), ("torch.add", "ab", {"alpha": 2}, "float64"),
    ("torch.sub", "ab", {}, None), ("torch.mul", "ab", {}, "float64"),
    ("torch.div", "ab", {"rounding_mode": "floor"}, None), ("torch.exp", "a", {}, "float64"),
    ("torch.sin", "a", {}, None), ("torch.eq", "ab", {}, None), ("torch.eq", "ab", {}, "float32"),
    ("torch.matmul", "ab", {}, None), ("torch.mm", "ab", {}, None), ("torch.mv", "av", {}, None),
    ("torch.clamp", "a", {"min": 0.7, "max": 1.2}, None), ("torch.cumsum", "a", {"dim": 1}, None),
    ("torch.where", "cab", {}, None), ("torch.pow", "ab", {}, "complex64"),
    ("torch.logsumexp", "a", {"dim": 0}, None), ("torch.softmax", "a", {"dim": 1}, None),
    ("torch.special.erf", "a", {}, None), ("torch.special.xlogy", "ab", {}, "float64"),
    ("torch.linalg.inv", "a", {}, None), ("torch.linalg.solve", "ab", {}, None),
    ("torch.linalg.vector_norm", "a", {}, None), ("torch.fft.rfft", "a", {}, None),
    ("torch.nn.functional.normalize", "a", {}, None), ("torch.argmax", "a", {"dim": 1}, None),
    ("torch.outer", "vv", {}, None),
]


@pytest.mark.parametrize("qual,kinds,kw,dtype", CASES, ids=[f"{c[0][6:]}-{c[3]}" for c in CASES])
def test_out_writes_and_returns_out(qual, kinds, kw, dtype):
    got = {}
    for m in (gg, torch):
        fn = _ns(m, qual)
        args = [_inputs(m, k) for k in kinds]
        expect = fn(*args, **kw)
        out = m.empty(0, dtype=getattr(m, dtype) if dtype else expect.dtype)
        res = fn(*args, **kw, out=out)
        assert res is out and out.shape == expect.shape and out.dtype == res.dtype
        got[m.__name__] = out.numpy().copy(), str(out.dtype).split(".")[-1], out._version
    a, b = got["graphgrad"], got["torch"]
    assert a[1] == b[1]
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-6)
    assert a[2] >= 1  # the write counts as an in-place change


def _raised(fn):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
    except Exception as e:  # noqa: BLE001 - the exception is the observed behaviour
        return type(e).__name__, str(e)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("case", [
    "cast_refused", "exact_refused", "index_dtype", "grad_input", "grad_out", "not_tensor",
    "tuple_length", "factory_dtype", "complex_to_real", "resize_warns", "empty_is_quiet",
    "index_float"])
def test_out_errors_and_warnings_as_torch(case):
    def run(m):
        a, b = _inputs(m, "a"), _inputs(m, "b")
        return {
            "cast_refused": lambda: m.add(a, b, out=m.empty(3, 3, dtype=m.int64)),
            "exact_refused": lambda: m.mm(a, b, out=m.empty(3, 3, dtype=m.float64)),
            "index_dtype": lambda: m.max(a, 1, out=(m.empty(3), m.empty(3, dtype=m.int32))),
            "index_float": lambda: m.argmax(a, 1, out=m.empty(3)),
            "grad_input": lambda: m.add(a.requires_grad_(), b, out=m.empty(3, 3)),
            "grad_out": lambda: m.add(a, b, out=m.empty(3, 3, requires_grad=True)),
            "not_tensor": lambda: m.add(a, b, out=[1]),
            "tuple_length": lambda: m.max(a, 1, out=(m.empty(3),)),
            "factory_dtype": lambda: m.zeros(2, dtype=m.float64, out=m.empty(2)),
            "complex_to_real": lambda: m.exp(a.to(m.complex64), out=m.empty(3, 3)),
            "resize_warns": lambda: m.add(a, b, out=m.empty(4)),
            "empty_is_quiet": lambda: m.add(a, b, out=m.empty(0)),
        }[case]
    a, b = _raised(run(gg)), _raised(run(torch))
    if isinstance(b, list):  # torch's warning adds where in ATen it was triggered
        b = [re.sub(r" \(Triggered internally at .*\)$", "", w) for w in b]
    assert a == b


def test_out_under_no_grad_and_aliasing_and_views():
    for m in (gg, torch):
        w = m.ones(3, requires_grad=True)
        with m.no_grad():
            m.mul(w, 2, out=w)  # an optimizer-style update into a leaf
        assert w.tolist() == [2.0, 2.0, 2.0] and w.requires_grad
    res = {}
    for m in (gg, torch):
        a = _inputs(m, "a")
        m.add(a, 1, out=a)  # out aliases an input
        base = m.zeros(3, 4)
        m.exp(_inputs(m, "v"), out=base[1, :3])  # through a view, into base's memory
        m.sort(_inputs(m, "a"), dim=1, out=(base[:, :3].contiguous(), m.empty(0, dtype=m.long)))
        vals, idx = m.empty(0), m.empty(0, dtype=m.long)
        r = m.sort(_inputs(m, "a"), 1, out=[vals, idx])
        assert r.values is vals and r.indices is idx
        z = m.empty(0, dtype=m.int32)
        m.zeros(2, 3, out=z)  # a factory takes out's dtype
        res[m.__name__] = [a.numpy(), base.numpy(), vals.numpy(), idx.numpy(), z.numpy()]
    for x, y in zip(res["graphgrad"], res["torch"]):
        assert x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_no_out_path_is_unchanged():
    a, b = _inputs(gg, "a"), _inputs(gg, "b")
    assert gg.add.__graphgrad_out__(a, b).tolist() == gg.add(a, b).tolist()
    y = gg.matmul(a.requires_grad_(), b)  # without out= autograd works as before
    y.sum().backward()
    assert a.grad is not None


def _torch_out_names(path):
    """The public functions of torch's namespace ``path`` whose signature has ``out``."""
    mod = _ns(torch, path)
    names = set()
    if path == "torch":
        pyi = os.path.join(os.path.dirname(torch.__file__), "_C", "_VariableFunctions.pyi")
        for mt in re.finditer(r"^def (\w+)\((.*?)\) ->", open(pyi).read(), re.S | re.M):
            if re.search(r"\bout: ", mt.group(2)):
                names.add(mt.group(1))
    public = [n for n in (getattr(mod, "__all__", None) or dir(mod)) if not n.startswith("_")]
    found = set()
    for n in public:
        f = getattr(mod, n, None)
        if isinstance(f, type) or not callable(f):
            continue
        if isinstance(f, types.FunctionType):
            try:
                if "out" in inspect.signature(f).parameters:
                    found.add(n)
            except (TypeError, ValueError):
                pass
        elif n in names or any(re.search(r"\bout=None|\bout \(", line) and "(" in line
                               for line in (f.__doc__ or "").splitlines()[:6]):
            found.add(n)
    return found


@pytest.mark.parametrize("key", list(_out.OUT_NAMES))
def test_out_table_matches_torch(key):
    path = "torch" + (f".{key}" if key else "")
    table = set(_out.OUT_NAMES[key].split())
    assert table == _torch_out_names(path)
    ns = _ns(gg, "graphgrad" + (f".{key}" if key else ""))
    for name in table:  # every function graphgrad has takes out=
        fn = getattr(ns, name, None)
        if fn is not None and not isinstance(fn, type):
            assert hasattr(fn, "__graphgrad_out__"), f"{path}.{name} lacks out="


def _templates(m):
    rng = np.random.default_rng(0)
    a, b, c = (m.tensor(rng.uniform(0.5, 1.5, (3, 3)).astype(np.float32)) for _ in range(3))
    v, i = a[0].clone(), m.tensor([2, 0, 1])
    return [(a,), (a, b), (a, 0), (a, 1), (a, b, c), ([a, b],), (a, v), (3, 3), ((3, 3),), (v,),
            (a, 2, 0), (a, 0, i), (a, i), (v, v), (a, a, a), (3,), (0, 3), (0, 1, 5)]


def _attempt(f, args, out=None):
    try:
        r = f(*args) if out is None else f(*args, out=out)
    except Exception as e:  # noqa: BLE001 - the outcome is compared with torch's
        return "raise", f"{type(e).__name__}: {e}"
    return "ok", r


# Where graphgrad's out= knowingly differs from torch's (function, out dtype): torch's parser
# refuses these overloads or torch has no kernel for the dtype, while graphgrad computes them.
KNOWN_DIFFERENCES = {
    ("sum", "*"), ("prod", "*"), ("median", "*"), ("nanmedian", "*"), ("argsort", "*"),
    ("arange", "complex64"), ("range", "complex64"), ("fft.fftfreq", "complex64"),
    ("fft.rfftfreq", "complex64"), ("nansum", "complex64"), ("nanmean", "complex64"),
    ("nansum", "int64"), ("fft.irfft", "complex64"), ("fft.irfft2", "complex64"),
    ("fft.irfftn", "complex64"), ("fft.hfft", "complex64"), ("chain_matmul", "int64"),
}
# random draws differ from torch's by design and torch's random out= paths have their own
# shape and range rules: they are tested in test_out_writes_and_returns_out and the random tests
_RANDOM = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "empty"}


@pytest.mark.parametrize("key", list(_out.OUT_NAMES))
def test_out_sweep_against_torch(key):
    """Every wrapped function, on the first argument pattern both libraries accept: an empty
    out of the result's dtype gets torch's values, and out of float64/int64/complex64 is
    accepted or refused as torch does."""
    mismatches, checked = [], 0
    gns, tns = _ns(gg, "graphgrad" + (f".{key}" if key else "")), \
        _ns(torch, "torch" + (f".{key}" if key else ""))
    for name in _out.OUT_NAMES[key].split():
        gf, tf = getattr(gns, name, None), getattr(tns, name, None)
        qual = f"{key}.{name}" if key else name
        if gf is None or not hasattr(gf, "__graphgrad_out__") or name in _RANDOM:
            continue
        for ga, ta in zip(_templates(gg), _templates(torch)):
            (sg, _), (st, rt) = _attempt(gf, ga), _attempt(tf, ta)
            if sg != "ok" or st != "ok" or not isinstance(rt, torch.Tensor):
                continue
            checked += 1
            dt = str(rt.dtype).split(".")[-1]
            for od in (dt, "float64", "int64", "complex64"):
                if (qual, "*") in KNOWN_DIFFERENCES or (qual, od) in KNOWN_DIFFERENCES:
                    continue
                go = gg.empty(0, dtype=getattr(gg, od))
                to = torch.empty(0, dtype=getattr(torch, od))
                (sg, _), (st, _) = _attempt(gf, ga, go), _attempt(tf, ta, to)
                if sg != st:
                    mismatches.append(f"{qual}[out {od}]: graphgrad {sg}, torch {st}")
                elif sg == "ok":
                    x, y = go.numpy(), to.numpy()
                    if x.shape != y.shape or not np.allclose(x.astype(np.complex128),
                                                             y.astype(np.complex128),
                                                             rtol=1e-4, atol=1e-5,
                                                             equal_nan=True):
                        mismatches.append(f"{qual}[out {od}]: values differ")
            break
    assert checked > 0
    assert not mismatches, "\n".join(mismatches)


def test_out_under_compile_breaks_the_graph_visibly():
    """graphgrad.compile's replay would skip the write into out: the call breaks the graph
    (a warning; fullgraph raises) and every call returns the eager results."""
    c = gg.empty(3)

    def f(a, b):
        gg.add(a, b, out=c)
        return c * 2

    def h(a):
        o = gg.empty(0)
        gg.exp(a, out=o)
        return o + 1

    cf, ch = gg.compile(f), gg.compile(h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(3):
            a = gg.full((3,), float(i))
            assert cf(a, gg.ones(3)).tolist() == [2.0 * (i + 1)] * 3 and c.tolist() == [i + 1.0] * 3
            assert ch(a[:2]).tolist() == h(a[:2]).tolist()
    with pytest.raises(gg.compiler.GraphBreak, match=r"exp\(out=...\)"):
        gg.compile(h, fullgraph=True)(gg.ones(2))


def test_out_view_needing_a_resize_is_refused():
    """torch resizes a view's shared storage (deprecated); graphgrad cannot grow shared memory,
    so it refuses instead of writing elsewhere, and a view of the right shape is written
    through, as torch."""
    base = gg.zeros(4)
    with pytest.raises(RuntimeError, match=r"add\(\): out= is a view"):
        gg.add(gg.ones(3), 1, out=base[:2])
    assert base.tolist() == [0.0] * 4
    gg.add(gg.ones(2), 1, out=base[1:3])
    tbase = torch.zeros(4)
    torch.add(torch.ones(2), 1, out=tbase[1:3])
    assert base.tolist() == tbase.tolist()
