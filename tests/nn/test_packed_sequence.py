"""``torch.nn.utils.rnn`` (PackedSequence, pack/pad/unpad) and the recurrent layers on packed
input, against torch: values, lengths, permutations, final states and every gradient, on
variable-length batches with ``enforce_sorted`` True and False; errors as torch raises them.
"""

import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as TR

import graphgrad as gg
import graphgrad.nn.utils.rnn as GR


def _pair(a, requires_grad=False):
    return (torch.tensor(a, requires_grad=requires_grad),
            gg.tensor(a, requires_grad=requires_grad))


def _close(t, g, tol=1e-5):
    assert tuple(t.shape) == tuple(g.shape)
    assert str(t.dtype) == str(g.dtype)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _same_packed(tp, gp):
    _close(tp.data, gp.data)
    assert tp.batch_sizes.tolist() == gp.batch_sizes.tolist()
    for a, b in ((tp.sorted_indices, gp.sorted_indices),
                 (tp.unsorted_indices, gp.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()


LENGTHS = [[4, 3, 3, 1], [2, 4, 1, 4, 3], [3], [1, 1]]


@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_roundtrip_and_grads(lengths, batch_first):
    rng = np.random.default_rng(0)
    B, T = len(lengths), max(lengths)
    a = rng.standard_normal((B, T, 3) if batch_first else (T, B, 3))
    tx, gx = _pair(a, True)
    sorted_ = lengths == sorted(lengths, reverse=True)
    for enforce in ([True, False] if sorted_ else [False]):
        outs = []
        for m, R, x in ((torch, TR, tx), (gg, GR, gx)):
            p = R.pack_padded_sequence(x, lengths, batch_first, enforce_sorted=enforce)
            pad, lens = R.pad_packed_sequence(p, batch_first, padding_value=-2.0,
                                              total_length=T + 1)
            w = m.tensor(np.arange(pad.numel(), dtype=np.float64).reshape(pad.shape))
            ((pad * w).sum() + (p.data ** 2).sum()).backward()
            outs.append((p, pad, lens, x.grad.clone()))
            x.grad = None
        _same_packed(outs[0][0], outs[1][0])
        for t, g in zip(outs[0][1:], outs[1][1:]):
            _close(t, g)


def test_pack_lengths_as_tensor_and_unsorted_hx_order():
    t = TR.pack_padded_sequence(torch.zeros(3, 3, 1), torch.tensor([1.0, 3.0, 2.0]),
                                enforce_sorted=False)
    g = GR.pack_padded_sequence(gg.zeros(3, 3, 1), gg.tensor([1.0, 3.0, 2.0]),
                                enforce_sorted=False)
    _same_packed(t, g)


@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence(padding_side, batch_first):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((n, 2)) for n in (2, 4, 1)]
    res = []
    for m, R in ((torch, TR), (gg, GR)):
        seqs = [m.tensor(a, requires_grad=True) for a in arrays]
        out = R.pad_sequence(seqs, batch_first, padding_value=1.5, padding_side=padding_side)
        (out * out).sum().backward()
        res.append([out] + [s.grad for s in seqs])
    for t, g in zip(*res):
        _close(t, g)


def test_pad_sequence_dtype_of_first_and_tensor_input():
    for arg in ([np.ones(2, np.float32), np.ones(3)], [np.ones(2, np.int64), np.ones(3)]):
        t = TR.pad_sequence([torch.tensor(a) for a in arg])
        g = GR.pad_sequence([gg.tensor(a) for a in arg])
        _close(t, g)
    _close(TR.pad_sequence(torch.ones(2, 3)), GR.pad_sequence(gg.ones(2, 3)))


def test_pack_sequence_unpad_unpack():
    arrays = [np.arange(n * 2, dtype=np.float64).reshape(n, 2) + n for n in (2, 5, 3)]
    for enforce in (True, False):
        args = sorted(arrays, key=len, reverse=True) if enforce else arrays
        tp = TR.pack_sequence([torch.tensor(a) for a in args], enforce)
        gp = GR.pack_sequence([gg.tensor(a) for a in args], enforce)
        _same_packed(tp, gp)
        for t, g in zip(TR.unpack_sequence(tp), GR.unpack_sequence(gp)):
            _close(t, g)
    padded = np.random.default_rng(2).standard_normal((4, 3, 2))
    lens = [4, 2, 3]
    tl = TR.unpad_sequence(torch.tensor(padded), torch.tensor(lens))
    gl = GR.unpad_sequence(gg.tensor(padded), gg.tensor(lens))
    for t, g in zip(tl, gl):
        _close(t, g)


def test_packed_sequence_class():
    for R, m in ((TR, torch), (GR, gg)):
        p = R.PackedSequence(m.ones(3), m.tensor([2, 1]))
        assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices",
                                                      "unsorted_indices")
        assert p.unsorted_indices is None and not p.is_cuda and not p.is_pinned()
        assert p.to(m.float32) is p and p.float() is p
        assert str(p.double().data.dtype) == "torch.float64"
        assert str(p.long().data.dtype) == "torch.int64"
        q = R.PackedSequence((m.ones(3), m.tensor([2, 1])), sorted_indices=m.tensor([1, 0]))
        assert q.unsorted_indices.tolist() == [1, 0]
        assert R.invert_permutation(m.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert repr(GR.PackedSequence(gg.ones(3), gg.tensor([2, 1]))) == \
        repr(TR.PackedSequence(torch.ones(3), torch.tensor([2, 1])))


ERRORS = [
    lambda m, R: R.pack_padded_sequence(m.zeros(4, 3, 2), [3, 4, 2]),
    lambda m, R: R.pack_padded_sequence(m.zeros(4, 3, 2), [3, 2]),
    lambda m, R: R.pack_padded_sequence(m.zeros(4, 3, 2), [4, 3, 0]),
    lambda m, R: R.pack_padded_sequence(m.zeros(4, 3, 2), m.tensor([[4, 3, 2]])),
    lambda m, R: R.pack_padded_sequence(m.zeros(4, 3, 2), [4, 3, 2], batch_first=True),
    lambda m, R: R.pack_padded_sequence(m.zeros(3), [3]),
    lambda m, R: R.pad_packed_sequence(R.pack_sequence([m.ones(4), m.ones(2)]), total_length=3),
    lambda m, R: R.pad_sequence([]),
    lambda m, R: R.pad_sequence(5),
    lambda m, R: R.pad_sequence([m.ones(2)], padding_side="up"),
    lambda m, R: R.pad_sequence([m.ones(2, 3), m.ones(3, 2)]),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    raised = []
    for m, R in ((torch, TR), (gg, GR)):
        with pytest.raises(Exception) as info:
            ERRORS[k](m, R)
        raised.append(info.value)
    assert type(raised[0]) is type(raised[1])
    if "size of tensor" not in str(raised[0]):
        assert str(raised[0]) == str(raised[1])


# -- recurrent layers on packed input -------------------------------------------------------------
CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
    ("RNN", {"num_layers": 2, "bidirectional": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"bidirectional": True, "num_layers": 2}),
    ("LSTM", {"proj_size": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2, "num_layers": 2}),
    ("GRU", {}),
    ("GRU", {"bidirectional": True, "num_layers": 2}),
    # batch_first changes nothing for a packed input (its data is time-major)
    ("GRU", {"batch_first": True}),
    ("LSTM", {"batch_first": True, "num_layers": 2, "bidirectional": True}),
]


def _modules(name, kw, seed=0):
    torch.manual_seed(seed)
    tm = getattr(torch.nn, name)(3, 4, **kw).double()
    gm = getattr(gg.nn, name)(3, 4, **kw).double()
    gm.load_state_dict({k: gg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, gm


@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("name,kw", CONFIGS)
def test_rnn_on_packed_input(name, kw, enforce_sorted, with_hx):
    tm, gm = _modules(name, kw)
    lengths = [5, 4, 2, 2, 1] if enforce_sorted else [2, 5, 1, 4, 2]
    B, T = len(lengths), max(lengths)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((B, T, 3))
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    hsize = kw.get("proj_size") or 4
    h0 = rng.standard_normal((L * D, B, hsize)) * 0.5
    c0 = rng.standard_normal((L * D, B, 4)) * 0.5
    res = []
    for m, R, mod in ((torch, TR, tm), (gg, GR, gm)):
        xi = m.tensor(x, requires_grad=True)
        states = [m.tensor(h0, requires_grad=True)] + \
            ([m.tensor(c0, requires_grad=True)] if name == "LSTM" else [])
        hx = None if not with_hx else (tuple(states) if name == "LSTM" else states[0])
        p = R.pack_padded_sequence(xi, lengths, batch_first=True, enforce_sorted=enforce_sorted)
        out, hn = mod(p, hx)
        assert isinstance(out, R.PackedSequence)
        finals = list(hn) if name == "LSTM" else [hn]
        pad, lens = R.pad_packed_sequence(out, batch_first=True)
        wo = m.tensor(np.linspace(-1, 1, out.data.numel()).reshape(out.data.shape))
        loss = (out.data * wo).sum()
        for k, f in enumerate(finals):
            loss = loss + (f * m.tensor(np.linspace(0.5, -1.5 + k, f.numel())
                                        .reshape(f.shape))).sum()
        loss.backward()
        grads = [xi.grad] + ([s.grad for s in states] if with_hx else []) + \
            [prm.grad for _, prm in sorted(mod.named_parameters())]
        res.append((out, [pad, lens] + finals + grads))
    _same_packed(res[0][0], res[1][0])
    for t, g in zip(res[0][1], res[1][1]):
        _close(t, g, 1e-8)


def test_rnn_packed_errors():
    tm, gm = _modules("GRU", {})
    for m, R, mod in ((torch, TR, tm), (gg, GR, gm)):
        p = R.pack_sequence([m.ones(3, 3, dtype=m.float64), m.ones(2, 3, dtype=m.float64)])
        with pytest.raises(RuntimeError, match="Expected hidden size"):
            mod(p, m.zeros(1, 3, 4, dtype=m.float64))
        with pytest.raises(RuntimeError, match="input must have 2 dimensions, got 3"):
            mod(R.PackedSequence(m.ones(3, 1, 3, dtype=m.float64), p.batch_sizes))
